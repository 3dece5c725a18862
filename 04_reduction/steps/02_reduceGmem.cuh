// Step 2 of 04_reduction: in place in global memory, halving (the seeds'
// order). Same layout as step 1; only the pairing of the threads changes.
#pragma once
#include <string>
#include <cuda_runtime.h>
#include "common/check.cuh"
#include "common/launch.cuh"
#include "04_reduction/steps/01_reduceNeighbored.cuh"

namespace reduction {

// ---- The kernel ------------------------------------------------------------
// reduceGmem (seed 002's reduce_global, seed 000's reduceGmem): halve the
// active range each step, thread t adds x[t + offset] into x[t]. The working
// threads are now the first `offset` ones, so whole warps finish early
// instead of every warp idling lane by lane, and a warp's accesses are
// contiguous. Still in place in global memory.
// Look for: the same DRAM bytes as step 1, far fewer L1/L2 sectors (ncu).
template <class T>
__global__ void reduceGmem(T* x, size_t n, T* partial) {
    const unsigned tid = threadIdx.x;
    const size_t base = size_t(blockIdx.x) * blockDim.x;
    T* bx = x + base;
    const size_t m = n - base < blockDim.x ? n - base : blockDim.x;
    for (unsigned offset = blockDim.x / 2; offset > 0; offset /= 2) {
        if (tid < offset && tid + offset < m) bx[tid] += bx[tid + offset];
        __syncthreads();
    }
    if (tid == 0) partial[blockIdx.x] = bx[0];
}

// ---- The launcher ----------------------------------------------------------
template <class T>
std::string launch_reduceGmem(const T*, size_t n, Workspace<T>& ws) {
    const size_t grid = common::ceil_div(n, size_t(kBlock));
    reduceGmem<T><<<grid, kBlock>>>(ws.work, n, ws.partial);
    CHECK_LAUNCH();
    return common::launch_string(grid, kBlock) + launch_final(grid, ws);
}

}  // namespace reduction
