// Step 5 of 01_matmul: register blocking in two dimensions, an 8 x 8 outer
// product per thread.
#pragma once
#include <string>
#include <cuda_runtime.h>
#include "common/check.cuh"
#include "common/launch.cuh"
#include "01_matmul/steps/04_sgemm1DBlocktiling.cuh"

namespace matmul {

// ---- The kernel ------------------------------------------------------------
// sgemm2DBlocktiling: a 128 x 128 tile, 256 threads, each computing an 8 x 8
// outer product per k from 8 A and 8 B values in registers: 16 shared loads
// for 64 FMAs. Loads are still 4 bytes and A is kept m-major, so reading a
// column of it is 8 separate LDS.32.
// Look for: the big jump of the worklog; ncu: shared ld wavefronts drop again.
namespace blocktiling2d {
constexpr int BM = 128, BN = 128, BK = 8, TM = 8, TN = 8, THREADS = (BM / TM) * (BN / TN);
}
__global__ void __launch_bounds__(blocktiling2d::THREADS)
sgemm2DBlocktiling(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N,
                   int K) {
    using namespace blocktiling2d;
    __shared__ float As[BM * BK];
    __shared__ float Bs[BK * BN];
    const int bm = blockIdx.y * BM, bn = blockIdx.x * BN, tid = threadIdx.x;
    const int threadCol = tid % (BN / TN), threadRow = tid / (BN / TN);
    float acc[TM][TN] = {};
    float regM[TM], regN[TN];
    for (int k0 = 0; k0 < K; k0 += BK) {
#pragma unroll
        for (int i = 0; i < BM * BK / THREADS; ++i) {  // 4 elements of A, 4 of B per thread
            const int idx = i * THREADS + tid;
            const int ar = idx / BK, ak = idx % BK, br = idx / BN, bc = idx % BN;
            const int gr = bm + ar, gk = k0 + ak, gkb = k0 + br, gc = bn + bc;
            As[ar * BK + ak] = (gr < M && gk < K) ? A[size_t(gr) * K + gk] : 0.0f;
            Bs[br * BN + bc] = (gkb < K && gc < N) ? B[size_t(gkb) * N + gc] : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int dot = 0; dot < BK; ++dot) {
#pragma unroll
            for (int i = 0; i < TM; ++i) regM[i] = As[(threadRow * TM + i) * BK + dot];
#pragma unroll
            for (int j = 0; j < TN; ++j) regN[j] = Bs[dot * BN + threadCol * TN + j];
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] += regM[i] * regN[j];
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) {
            const int row = bm + threadRow * TM + i, col = bn + threadCol * TN + j;
            if (row < M && col < N) C[size_t(row) * N + col] = acc[i][j];
        }
}

// ---- The launcher ----------------------------------------------------------
inline std::string launch_sgemm2DBlocktiling(const float* A, const float* B, float* C, int M, int N, int K) {
    using namespace blocktiling2d;
    const dim3 block(THREADS), grid(common::ceil_div(N, BN), common::ceil_div(M, BM));
    sgemm2DBlocktiling<<<grid, block>>>(A, B, C, M, N, K);
    CHECK_LAUNCH();
    return common::launch_string(grid, block);
}

}  // namespace matmul
