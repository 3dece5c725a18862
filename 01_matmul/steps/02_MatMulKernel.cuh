// Step 2 of 01_matmul (seed 000, no shared memory): one thread per element of
// C, threadIdx.x walking the COLUMNS; seed 000's Matrix struct. (The seeds:
// the top README's Sources section.)
#pragma once
#include <string>
#include <cuda_runtime.h>
#include "common/check.cuh"
#include "common/launch.cuh"
#include "01_matmul/steps/01_MatMulKernelNaive.cuh"

namespace matmul {

// Seed 000's row-major matrix: M(row, col) = *(M.elements + row * M.stride + col).
// (The seed's first version has no stride: stride == width.)
struct Matrix {
    int width;
    int height;
    int stride;
    float* elements;
};

inline Matrix make_matrix(const float* p, int height, int width) {
    return Matrix{width, height, width, const_cast<float*>(p)};
}

// ---- The kernel ------------------------------------------------------------
// MatMulKernel (seed 000, no shared memory): threadIdx.x walks the COLUMNS,
// so a warp reads 16 consecutive B elements per row (coalesced), one A
// element per row (a broadcast) and writes consecutive C. A is read from
// global memory N times and B M times: every FMA needs 8 bytes from L1/L2.
// Look for: the jump over MatMulKernelNaive with the same arithmetic (only
// the access order changed; WORKLOG.md has the numbers).
constexpr int BLOCK_SIZE = 16;
__global__ void MatMulKernel(Matrix A, Matrix B, Matrix C) {
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < C.height && col < C.width) {  // the seed has no guard: see step 3's pitfall
        float Cvalue = 0;
        for (int e = 0; e < A.width; ++e)
            Cvalue += A.elements[size_t(row) * A.stride + e] * B.elements[size_t(e) * B.stride + col];
        C.elements[size_t(row) * C.stride + col] = Cvalue;
    }
}

// ---- The launcher ----------------------------------------------------------
inline std::string launch_MatMulKernel(const float* A, const float* B, float* C, int M, int N, int K) {
    const dim3 block(BLOCK_SIZE, BLOCK_SIZE), grid(common::ceil_div(N, BLOCK_SIZE), common::ceil_div(M, BLOCK_SIZE));
    MatMulKernel<<<grid, block>>>(make_matrix(A, M, K), make_matrix(B, K, N), make_matrix(C, M, N));
    CHECK_LAUNCH();
    return common::launch_string(grid, block);
}

}  // namespace matmul
