// Step 8 of 04_reduction: step 7's tree down to 64 values, then the last warp
// in registers with __shfl_down_sync.
#pragma once
#include <string>
#include <cuda_runtime.h>
#include "common/check.cuh"
#include "common/launch.cuh"
#include "04_reduction/steps/07_reduceCompleteUnroll.cuh"

namespace reduction {

// ---- The kernel ------------------------------------------------------------
// reduceLastWarpShfl: the last warp sums with warp_sum_down (block_sum.cuh):
// a shuffle is one instruction all 32 lanes execute together.
// Look for: no shared memory traffic for the last 5 steps (the 64 -> 32 step
// still reads two values), no __syncwarp().
template <class T>
__global__ void __launch_bounds__(kBlock) reduceLastWarpShfl(const T* __restrict__ in, size_t n, T* __restrict__ partial) {
    __shared__ T s[kBlock];
    const unsigned tid = threadIdx.x;
    s[tid] = load_unrolled<8>(in, n, size_t(blockIdx.x) * kBlock * 8, tid);
    __syncthreads();
    if (tid < 64) s[tid] += s[tid + 64];
    __syncthreads();
    if (tid < 32) {
        const T v = warp_sum_down(s[tid] + s[tid + 32]);
        if (tid == 0) partial[blockIdx.x] = v;
    }
}

// ---- The launcher ----------------------------------------------------------
template <class T>
std::string launch_reduceLastWarpShfl(const T* in, size_t n, Workspace<T>& ws) {
    const size_t grid = common::ceil_div(n, size_t(8) * kBlock);
    reduceLastWarpShfl<T><<<grid, kBlock>>>(in, n, ws.partial);
    CHECK_LAUNCH();
    return common::launch_string(grid, kBlock) + launch_final(grid, ws);
}

}  // namespace reduction
