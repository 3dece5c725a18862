// Step 6 of 01_matmul: the tiles of step 5 with 16-byte accesses everywhere
// (float4 global loads and stores, LDS.128 from shared memory).
#pragma once
#include <cstdint>
#include <string>
#include <cuda_runtime.h>
#include "common/check.cuh"
#include "common/launch.cuh"
#include "01_matmul/steps/05_sgemm2DBlocktiling.cuh"
#include "01_matmul/steps/operands.cuh"  // aligned16

namespace matmul {

// ---- When 16-byte accesses are allowed --------------------------------------
// A float4 access needs a 16-byte-aligned address: the matrices must start
// on 16 bytes (an offset sub-matrix such as A + 1 does not) and every row
// must too (K % 4 == 0 for A, N % 4 == 0 for B and C).

// "" if A (M x K), B (K x N) and C (M x N) can be read and written as float4,
// else why not (the launchers then run a 4-byte kernel and say so).
inline std::string why_not_16_bytes(const float* A, const float* B, const float* C, int N, int K) {
    if (K % 4 != 0 || N % 4 != 0) return "K or N % 4 != 0";
    if (!aligned16(A) || !aligned16(B) || !aligned16(C)) return "A, B or C not 16-byte aligned";
    return "";
}

// ---- The kernel ------------------------------------------------------------
// sgemmVectorize: the same tiles with 16-byte accesses everywhere. A is
// stored TRANSPOSED (k-major) in shared memory so that a thread's 8 A values
// for one k are contiguous: 2 LDS.128 + 2 LDS.128 instead of 16 LDS.32.
// Needs 16-byte-aligned matrices and rows (why_not_16_bytes); the launcher
// runs sgemm2DBlocktiling otherwise and says so.
// Look for: fewer instructions per FMA (SASS: LDS.128), but still bank
// conflicts on B (16 threads read float4s 32 bytes apart) that warp tiling removes.
__global__ void __launch_bounds__(blocktiling2d::THREADS)
sgemmVectorize(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N, int K) {
    using namespace blocktiling2d;
    __shared__ __align__(16) float As[BK * BM];  // As[k][m]
    __shared__ __align__(16) float Bs[BK * BN];  // Bs[k][n]
    const int bm = blockIdx.y * BM, bn = blockIdx.x * BN, tid = threadIdx.x;
    const int threadCol = tid % (BN / TN), threadRow = tid / (BN / TN);
    const int aRow = tid / (BK / 4), aK = (tid % (BK / 4)) * 4;  // one float4 of A per thread
    const int bK = tid / (BN / 4), bCol = (tid % (BN / 4)) * 4;  // one float4 of B per thread
    float acc[TM][TN] = {};
    float regM[TM], regN[TN];
    for (int k0 = 0; k0 < K; k0 += BK) {
        const int gr = bm + aRow, gk = k0 + aK;  // K % 4 == 0: gk < K means all 4 are inside
        const float4 a = (gr < M && gk < K) ? *reinterpret_cast<const float4*>(&A[size_t(gr) * K + gk])
                                            : make_float4(0, 0, 0, 0);
        As[(aK + 0) * BM + aRow] = a.x;
        As[(aK + 1) * BM + aRow] = a.y;
        As[(aK + 2) * BM + aRow] = a.z;
        As[(aK + 3) * BM + aRow] = a.w;
        const int gkb = k0 + bK, gc = bn + bCol;  // N % 4 == 0: likewise
        *reinterpret_cast<float4*>(&Bs[bK * BN + bCol]) =
            (gkb < K && gc < N) ? *reinterpret_cast<const float4*>(&B[size_t(gkb) * N + gc]) : make_float4(0, 0, 0, 0);
        __syncthreads();
#pragma unroll
        for (int dot = 0; dot < BK; ++dot) {
#pragma unroll
            for (int i = 0; i < TM; i += 4)
                *reinterpret_cast<float4*>(&regM[i]) =
                    *reinterpret_cast<const float4*>(&As[dot * BM + threadRow * TM + i]);
#pragma unroll
            for (int j = 0; j < TN; j += 4)
                *reinterpret_cast<float4*>(&regN[j]) =
                    *reinterpret_cast<const float4*>(&Bs[dot * BN + threadCol * TN + j]);
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] += regM[i] * regN[j];
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int row = bm + threadRow * TM + i;
        if (row >= M) continue;
#pragma unroll
        for (int j = 0; j < TN; j += 4) {
            const int col = bn + threadCol * TN + j;
            if (col < N)  // N % 4 == 0: all four are inside
                *reinterpret_cast<float4*>(&C[size_t(row) * N + col]) =
                    make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]);
        }
    }
}

// ---- The launcher ----------------------------------------------------------
inline std::string launch_sgemmVectorize(const float* A, const float* B, float* C, int M, int N, int K) {
    const std::string why = why_not_16_bytes(A, B, C, N, K);
    if (!why.empty()) return launch_sgemm2DBlocktiling(A, B, C, M, N, K) + " (ran 2D: " + why + ")";
    using namespace blocktiling2d;
    const dim3 block(THREADS), grid(common::ceil_div(N, BN), common::ceil_div(M, BM));
    sgemmVectorize<<<grid, block>>>(A, B, C, M, N, K);
    CHECK_LAUNCH();
    return common::launch_string(grid, block);
}

}  // namespace matmul
