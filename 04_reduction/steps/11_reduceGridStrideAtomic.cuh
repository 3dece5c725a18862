// Step 11 of 04_reduction: a grid that fits the GPU (seed 004): as many blocks
// as can be resident at once, each thread looping over the array with the
// grid's stride. No block waits for a free SM, and there are few partial
// sums; here they go straight into the result with one atomicAdd per block.
#pragma once
#include <algorithm>
#include <string>
#include <cuda_runtime.h>
#include "common/check.cuh"
#include "common/launch.cuh"
#include "04_reduction/steps/10_reduceShflXor.cuh"
#include "04_reduction/steps/resident_grid.cuh"

namespace reduction {

constexpr int kStrideThreads = 256;

// ---- The kernel ------------------------------------------------------------
// reduceGridStrideAtomic: grid-stride sum, block_sum, one atomicAdd per block
// into the result, so no second kernel; the result must be zeroed first (a
// cudaMemsetAsync, counted in the time).
// Look for: floating-point atomics land in whatever order the blocks finish:
// the float sum is not bit-identical from run to run (--accuracy shows it).
template <class T>
__global__ void __launch_bounds__(kStrideThreads) reduceGridStrideAtomic(const T* __restrict__ in, size_t n, T* out) {
    T v = 0;
    for (size_t i = size_t(blockIdx.x) * kStrideThreads + threadIdx.x; i < n; i += size_t(gridDim.x) * kStrideThreads)
        v += in[i];
    v = block_sum<kStrideThreads>(v);
    if (threadIdx.x == 0) atomicAdd(out, v);
}

// ---- The launcher ----------------------------------------------------------
// A resident grid, but no more blocks than give each thread 4 elements.
template <class T>
std::string launch_reduceGridStrideAtomic(const T* in, size_t n, Workspace<T>& ws) {
    static const size_t most = resident_grid(reduceGridStrideAtomic<T>, kStrideThreads, SIZE_MAX / 2, 1);
    const size_t grid = std::min(most, common::ceil_div(n, size_t(kStrideThreads) * 4));
    CHECK(cudaMemsetAsync(ws.out, 0, sizeof(T)));  // part of the operation, timed with it
    reduceGridStrideAtomic<T><<<grid, kStrideThreads>>>(in, n, ws.out);
    CHECK_LAUNCH();
    return "memset + " + common::launch_string(grid, kStrideThreads);
}

}  // namespace reduction
