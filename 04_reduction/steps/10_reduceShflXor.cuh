// Step 10 of 04_reduction: step 9 with the butterfly, __shfl_xor_sync: every
// lane ends with its warp's sum.
#pragma once
#include <string>
#include <cuda_runtime.h>
#include "common/check.cuh"
#include "common/launch.cuh"
#include "04_reduction/steps/09_reduceShflDown.cuh"

namespace reduction {

// ---- The kernel ------------------------------------------------------------
// reduceShflXor: warp_sum_xor (block_sum.cuh) in place of warp_sum_down.
// Look for: the same instruction count and the same time as reduceShflDown;
// the difference is only that every lane ends with the sum.
template <class T>
__global__ void __launch_bounds__(kBlock) reduceShflXor(const T* __restrict__ in, size_t n, T* __restrict__ partial) {
    __shared__ T warp_sums[kBlock / 32];
    const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    T v = warp_sum_xor(load_unrolled<8>(in, n, size_t(blockIdx.x) * kBlock * 8, threadIdx.x));
    if (lane == 0) warp_sums[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = warp_sum_xor(lane < kBlock / 32 ? warp_sums[lane] : T(0));
        if (lane == 0) partial[blockIdx.x] = v;
    }
}

// ---- The launcher ----------------------------------------------------------
template <class T>
std::string launch_reduceShflXor(const T* in, size_t n, Workspace<T>& ws) {
    const size_t grid = common::ceil_div(n, size_t(8) * kBlock);
    reduceShflXor<T><<<grid, kBlock>>>(in, n, ws.partial);
    CHECK_LAUNCH();
    return common::launch_string(grid, kBlock) + launch_final(grid, ws);
}

}  // namespace reduction
