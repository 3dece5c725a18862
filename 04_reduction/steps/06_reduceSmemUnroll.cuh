// Step 6 of 04_reduction: step 5's unrolled loads, step 3's tree in shared
// memory. Rows reduceSmemUnroll4 and reduceSmemUnroll8.
#pragma once
#include <string>
#include <cuda_runtime.h>
#include "common/check.cuh"
#include "common/launch.cuh"
#include "04_reduction/steps/05_reduceGmemUnroll.cuh"

namespace reduction {

// ---- The kernel ------------------------------------------------------------
// reduceSmemUnroll<4> (seed 000's reduceSmemUnroll) / <8> (seed 003's
// reduceSharedMemUnroll8): the unrolled sum goes to shared memory.
// Look for: ncu: the same load sectors as reduceSmem, 1/U of its stores.
template <int U, class T>
__global__ void __launch_bounds__(kBlock) reduceSmemUnroll(const T* __restrict__ in, size_t n, T* __restrict__ partial) {
    __shared__ T s[kBlock];
    const unsigned tid = threadIdx.x;
    s[tid] = load_unrolled<U>(in, n, size_t(blockIdx.x) * kBlock * U, tid);
    __syncthreads();
    for (unsigned offset = kBlock / 2; offset > 0; offset /= 2) {
        if (tid < offset) s[tid] += s[tid + offset];
        __syncthreads();
    }
    if (tid == 0) partial[blockIdx.x] = s[0];
}

// ---- The launcher ----------------------------------------------------------
template <int U, class T>
std::string launch_reduceSmemUnroll(const T* in, size_t n, Workspace<T>& ws) {
    const size_t grid = common::ceil_div(n, size_t(U) * kBlock);
    reduceSmemUnroll<U, T><<<grid, kBlock>>>(in, n, ws.partial);
    CHECK_LAUNCH();
    return common::launch_string(grid, kBlock) + launch_final(grid, ws);
}

}  // namespace reduction
