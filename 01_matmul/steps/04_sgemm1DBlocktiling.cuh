// Step 4 of 01_matmul: more work per thread, a column of results each
// (register blocking in one dimension).
#pragma once
#include <string>
#include <cuda_runtime.h>
#include "common/check.cuh"
#include "common/launch.cuh"
#include "01_matmul/steps/03_MatMulKernelTiled.cuh"

namespace matmul {

// ---- The kernel ------------------------------------------------------------
// sgemm1DBlocktiling: a 64 x 64 block tile, BK = 8, and each of 512 threads
// computes a column of TM = 8 results. One B value loaded from shared memory
// now feeds 8 FMAs: shared loads per FMA fall from 2 to 9/8.
// Look for: the step over MatMulKernelTiled; ncu's shared wavefronts per FMA.
namespace blocktiling1d {
constexpr int BM = 64, BN = 64, BK = 8, TM = 8, THREADS = BM * BN / TM;
}
__global__ void __launch_bounds__(blocktiling1d::THREADS)
sgemm1DBlocktiling(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N,
                   int K) {
    using namespace blocktiling1d;
    __shared__ float As[BM * BK];
    __shared__ float Bs[BK * BN];
    const int bm = blockIdx.y * BM, bn = blockIdx.x * BN;
    const int tid = threadIdx.x;
    const int threadCol = tid % BN, threadRow = tid / BN;            // 64 columns x 8 row groups of TM
    const int aRow = tid / BK, aCol = tid % BK, bRow = tid / BN, bCol = tid % BN;  // one load of each
    float acc[TM] = {};
    for (int k0 = 0; k0 < K; k0 += BK) {
        const int ar = bm + aRow, ak = k0 + aCol, bk = k0 + bRow, bc = bn + bCol;
        As[aRow * BK + aCol] = (ar < M && ak < K) ? A[size_t(ar) * K + ak] : 0.0f;
        Bs[bRow * BN + bCol] = (bk < K && bc < N) ? B[size_t(bk) * N + bc] : 0.0f;
        __syncthreads();
        for (int dot = 0; dot < BK; ++dot) {
            const float b = Bs[dot * BN + threadCol];
#pragma unroll
            for (int r = 0; r < TM; ++r) acc[r] += As[(threadRow * TM + r) * BK + dot] * b;
        }
        __syncthreads();
    }
    const int col = bn + threadCol;
#pragma unroll
    for (int r = 0; r < TM; ++r) {
        const int row = bm + threadRow * TM + r;
        if (row < M && col < N) C[size_t(row) * N + col] = acc[r];
    }
}

// ---- The launcher ----------------------------------------------------------
inline std::string launch_sgemm1DBlocktiling(const float* A, const float* B, float* C, int M, int N, int K) {
    using namespace blocktiling1d;
    const dim3 block(THREADS), grid(common::ceil_div(N, BN), common::ceil_div(M, BM));
    sgemm1DBlocktiling<<<grid, block>>>(A, B, C, M, N, K);
    CHECK_LAUNCH();
    return common::launch_string(grid, block);
}

}  // namespace matmul
