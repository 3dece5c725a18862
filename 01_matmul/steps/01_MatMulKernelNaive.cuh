// Step 1 of 01_matmul (seed 004): one thread per element of C, everything from
// global memory, and threadIdx.x walking the ROWS of C. (The seeds: the top
// README's Sources section.)
#pragma once
#include <string>
#include <cuda_runtime.h>
#include "common/check.cuh"
#include "common/launch.cuh"

namespace matmul {

// ---- The kernel ------------------------------------------------------------
// MatMulKernelNaive (seed 004, question 3): threadIdx.x walks the ROWS of C.
// The 32 threads of a warp read A at 32 different rows (K floats apart: 32
// sectors per request), all read the same B element (one broadcast), and
// write C in 32 different rows (N floats apart). "Neither A nor B is coalesced: how to improve?"
// Look for: the slowest row, and ncu's ~32 global sectors per load request.
__global__ void MatMulKernelNaive(float* C, const float* A, const float* B, int M, int N, int K) {
    const unsigned ix = blockIdx.x * blockDim.x + threadIdx.x;  // row of C
    const unsigned iy = blockIdx.y * blockDim.y + threadIdx.y;  // column of C
    if (ix < unsigned(M) && iy < unsigned(N)) {
        float t = 0;
        for (int k = 0; k < K; ++k) t += A[size_t(ix) * K + k] * B[size_t(k) * N + iy];
        C[size_t(ix) * N + iy] = t;
    }
}

// ---- The launcher ----------------------------------------------------------
inline std::string launch_MatMulKernelNaive(const float* A, const float* B, float* C, int M, int N, int K) {
    const dim3 block(32, 8), grid(common::ceil_div(M, 32), common::ceil_div(N, 8));  // x over rows, as in the seed
    MatMulKernelNaive<<<grid, block>>>(C, A, B, M, N, K);
    CHECK_LAUNCH();
    return common::launch_string(grid, block);
}

}  // namespace matmul
