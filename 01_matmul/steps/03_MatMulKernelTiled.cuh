// Step 3 of 01_matmul (seed 000, shared memory): 16 x 16 tiles of A and B
// staged in shared memory; and, beside it, the seed's own version of it with
// the unguarded grid (the chapter's pitfall). (The seeds: the top README's
// Sources section.)
#pragma once
#include <string>
#include <cuda_runtime.h>
#include "common/check.cuh"
#include "common/launch.cuh"
#include "01_matmul/steps/02_MatMulKernel.cuh"

namespace matmul {

// Seed 000's helpers for the tiled kernel, kept recognisable. One change: a
// sub-matrix knows how much of it lies inside its parent (width/height less
// than BLOCK_SIZE at the right and bottom edges), and GetElement reads 0
// outside it, so the tiled kernel is correct for any size.
__device__ float GetElement(const Matrix A, int row, int col) {
    return (row < A.height && col < A.width) ? A.elements[size_t(row) * A.stride + col] : 0.0f;
}
__device__ void SetElement(Matrix A, int row, int col, float value) {
    if (row < A.height && col < A.width) A.elements[size_t(row) * A.stride + col] = value;
}
// The BLOCK_SIZE x BLOCK_SIZE sub-matrix of A at block (row, col), clipped to A.
__device__ Matrix GetSubMatrix(Matrix A, int row, int col) {
    Matrix Asub;
    Asub.width = min(BLOCK_SIZE, A.width - BLOCK_SIZE * col);
    Asub.height = min(BLOCK_SIZE, A.height - BLOCK_SIZE * row);
    Asub.stride = A.stride;
    Asub.elements = &A.elements[size_t(A.stride) * BLOCK_SIZE * row + size_t(BLOCK_SIZE) * col];
    return Asub;
}

// ---- The kernel ------------------------------------------------------------
// MatMulKernelTiled (seed 000, shared memory): each block stages a 16 x 16
// tile of A and of B in shared memory and every thread reuses each loaded
// element 16 times. A is now read N / 16 times and B M / 16 times from global
// memory. Look for: global load bytes / 16 in ncu; the kernel is now bound by
// shared-memory loads (two LDS per FMA), which is what the next steps cut.
__global__ void MatMulKernelTiled(Matrix A, Matrix B, Matrix C) {
    const int blockRow = blockIdx.y, blockCol = blockIdx.x;
    Matrix Csub = GetSubMatrix(C, blockRow, blockCol);
    float Cvalue = 0;
    const int row = threadIdx.y, col = threadIdx.x;
    // Every thread runs every iteration (no early return): the barriers below
    // must be reached by the whole block.
    for (int m = 0; m < (A.width + BLOCK_SIZE - 1) / BLOCK_SIZE; ++m) {
        Matrix Asub = GetSubMatrix(A, blockRow, m);
        Matrix Bsub = GetSubMatrix(B, m, blockCol);
        __shared__ float As[BLOCK_SIZE][BLOCK_SIZE];
        __shared__ float Bs[BLOCK_SIZE][BLOCK_SIZE];
        As[row][col] = GetElement(Asub, row, col);  // 0 outside A: adds nothing
        Bs[row][col] = GetElement(Bsub, row, col);
        __syncthreads();  // the tiles are complete
        for (int e = 0; e < BLOCK_SIZE; ++e) Cvalue += As[row][e] * Bs[e][col];
        __syncthreads();  // nobody still reads them when the next ones are stored
    }
    SetElement(Csub, row, col, Cvalue);
}

// ---- The launcher ----------------------------------------------------------
inline std::string launch_MatMulKernelTiled(const float* A, const float* B, float* C, int M, int N, int K) {
    const dim3 block(BLOCK_SIZE, BLOCK_SIZE), grid(common::ceil_div(N, BLOCK_SIZE), common::ceil_div(M, BLOCK_SIZE));
    MatMulKernelTiled<<<grid, block>>>(make_matrix(A, M, K), make_matrix(B, K, N), make_matrix(C, M, N));
    CHECK_LAUNCH();
    return common::launch_string(grid, block);
}

// ---- The pitfall: the seed's unguarded grid --------------------------------
// PITFALL (never in the default run; --pitfalls and the tests): seed 000's
// tiled kernel as written. Its host code sizes the grid as B.width /
// BLOCK_SIZE and A.height / BLOCK_SIZE, and the kernel loops A.width /
// BLOCK_SIZE times without guards: it assumes every size is a multiple of 16.
// Elsewhere the last rows and columns of C are never written, and the last
// A.width % 16 terms of every sum are dropped. (It reads nothing out of
// bounds: the rounded-down grid only touches whole tiles.) MatMulKernelTiled
// above is the same kernel with the guards.
__device__ Matrix GetSubMatrixSeed(Matrix A, int row, int col) {
    Matrix Asub;
    Asub.width = BLOCK_SIZE;
    Asub.height = BLOCK_SIZE;
    Asub.stride = A.stride;
    Asub.elements = &A.elements[size_t(A.stride) * BLOCK_SIZE * row + size_t(BLOCK_SIZE) * col];
    return Asub;
}
__global__ void MatMulKernelSeedGrid(Matrix A, Matrix B, Matrix C) {
    Matrix Csub = GetSubMatrixSeed(C, blockIdx.y, blockIdx.x);
    float Cvalue = 0;
    const int row = threadIdx.y, col = threadIdx.x;
    for (int m = 0; m < (A.width / BLOCK_SIZE); ++m) {
        Matrix Asub = GetSubMatrixSeed(A, blockIdx.y, m);
        Matrix Bsub = GetSubMatrixSeed(B, m, blockIdx.x);
        __shared__ float As[BLOCK_SIZE][BLOCK_SIZE];
        __shared__ float Bs[BLOCK_SIZE][BLOCK_SIZE];
        As[row][col] = Asub.elements[size_t(row) * Asub.stride + col];
        Bs[row][col] = Bsub.elements[size_t(row) * Bsub.stride + col];
        __syncthreads();
        for (int e = 0; e < BLOCK_SIZE; ++e) Cvalue += As[row][e] * Bs[e][col];
        __syncthreads();
    }
    Csub.elements[size_t(row) * Csub.stride + col] = Cvalue;
}

inline std::string launch_MatMulKernelSeedGrid(const float* A, const float* B, float* C, int M, int N, int K) {
    const dim3 block(BLOCK_SIZE, BLOCK_SIZE), grid(N / BLOCK_SIZE, M / BLOCK_SIZE);  // the seed's grid
    if (grid.x == 0 || grid.y == 0) return "grid(0) (nothing launched: a side < 16)";
    MatMulKernelSeedGrid<<<grid, block>>>(make_matrix(A, M, K), make_matrix(B, K, N), make_matrix(C, M, N));
    CHECK_LAUNCH();
    return common::launch_string(grid, block) + " (seed: sizes / 16)";
}

}  // namespace matmul
