// The two-pass layout of steps 1-10 of 04_reduction: block b sums its own
// chunk of the input and writes partial[b]; a second kernel, reduceFinal (one
// block), adds the partials. Each step's launcher ends with launch_final.
#pragma once
#include <string>
#include <cuda_runtime.h>
#include "common/check.cuh"
#include "common/launch.cuh"
#include "04_reduction/steps/block_sum.cuh"
#include "04_reduction/steps/workspace.cuh"

namespace reduction {

constexpr int kFinalThreads = 1024;

// reduceFinal: the second kernel of every block-per-chunk step: one block of
// 1024 threads adds the m partial sums. With one partial per 128 (or 1024)
// elements this is a real cost at large n (the README's "where the final sum
// happens").
template <class T>
__global__ void __launch_bounds__(kFinalThreads) reduceFinal(const T* __restrict__ partial, size_t m, T* __restrict__ out) {
    T v = 0;
    for (size_t i = threadIdx.x; i < m; i += kFinalThreads) v += partial[i];
    v = block_sum<kFinalThreads>(v);
    if (threadIdx.x == 0) *out = v;
}

// The second pass: one block sums the first m partials into ws.out.
template <class T>
std::string launch_final(size_t m, Workspace<T>& ws) {
    reduceFinal<T><<<1, kFinalThreads>>>(ws.partial, m, ws.out);
    CHECK_LAUNCH();
    return " + " + common::launch_string(1, kFinalThreads);
}

}  // namespace reduction
