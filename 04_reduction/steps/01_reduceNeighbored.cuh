// Step 1 of 04_reduction: in place in global memory, neighbouring pairs.
// Each block sums its own kBlock elements and writes one partial sum; the
// second kernel (reduceFinal) adds the partials.
#pragma once
#include <string>
#include <cuda_runtime.h>
#include "common/check.cuh"
#include "common/launch.cuh"
#include "04_reduction/steps/two_pass.cuh"

namespace reduction {

// ---- The kernel ------------------------------------------------------------
// reduceNeighbored: stride 1, 2, 4, ...: thread t adds x[t + s] into x[t]
// when t is a multiple of 2s. Correct, and the slowest way: after the first
// step only every other thread of a warp works, then every 4th..., so warps
// stay busy to do a fraction of the adds, and every step reads and writes
// global memory (through L1/L2).
// Look for: its time, and the ncu load/store sectors (make profile): many
// times the n * sizeof(T) bytes of the data.
// `x` is a scratch copy of the input (the program restores it before every run).
template <class T>
__global__ void reduceNeighbored(T* x, size_t n, T* partial) {
    const unsigned tid = threadIdx.x;
    const size_t base = size_t(blockIdx.x) * blockDim.x;
    T* bx = x + base;
    // Elements of this block that exist: the last block may be partial, and
    // any read past them would be out of bounds.
    const size_t m = n - base < blockDim.x ? n - base : blockDim.x;
    for (unsigned s = 1; s < blockDim.x; s *= 2) {
        if (tid % (2 * s) == 0 && tid + s < m) bx[tid] += bx[tid + s];
        __syncthreads();  // every thread reaches it: only the work is guarded
    }
    if (tid == 0) partial[blockIdx.x] = bx[0];
}

// ---- The launcher ----------------------------------------------------------
// One block per kBlock elements (of the scratch copy), then reduceFinal.
template <class T>
std::string launch_reduceNeighbored(const T*, size_t n, Workspace<T>& ws) {
    const size_t grid = common::ceil_div(n, size_t(kBlock));
    reduceNeighbored<T><<<grid, kBlock>>>(ws.work, n, ws.partial);
    CHECK_LAUNCH();
    return common::launch_string(grid, kBlock) + launch_final(grid, ws);
}

}  // namespace reduction
