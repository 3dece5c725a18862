// Grid sizing for the grid-stride steps of 04_reduction (11 onwards): as many
// blocks as fit on the GPU at once, or fewer when n is small.
#pragma once
#include <cstddef>
#include <cuda_runtime.h>
#include "common/check.cuh"
#include "common/launch.cuh"

namespace reduction {

// Blocks of `threads` (with `smem` bytes of dynamic shared memory each) that
// fit on the GPU at once (occupancy x SMs), or fewer when n is small: at
// least `per_thread` elements per thread. Under GPU_PROFILE: its SMs and
// shared memory per SM.
template <class KernelPtr>
size_t resident_grid(KernelPtr kernel, int threads, size_t n, size_t per_thread, size_t smem = 0) {
    const int per_sm = common::resident_blocks(reinterpret_cast<const void*>(kernel), threads, smem);
    const size_t want = common::ceil_div(n, size_t(threads) * per_thread);
    const size_t most = size_t(common::sm_count()) * size_t(per_sm > 0 ? per_sm : 1);
    return want < 1 ? 1 : want < most ? want : most;
}

}  // namespace reduction
