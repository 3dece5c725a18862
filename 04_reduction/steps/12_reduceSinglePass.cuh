// Step 12 of 04_reduction: step 11's grid, finished without atomics on the
// result: the last block to finish adds the partials (CUDA's
// threadFenceReduction). One launch, no memset, the same order every run.
#pragma once
#include <algorithm>
#include <string>
#include <cuda/atomic>
#include <cuda_runtime.h>
#include "common/check.cuh"
#include "common/launch.cuh"
#include "04_reduction/steps/11_reduceGridStrideAtomic.cuh"

namespace reduction {

// The last block to finish sums the partials. Thread 0 of each block stores
// its partial, then __threadfence() makes that store visible to the whole GPU
// BEFORE the atomic takes a ticket: without the fence the last block could
// take the last ticket and still read a stale partial (the ordering seeds 000
// and 004 describe). The last block fences again after its ticket (the
// acquire side), reads the partials from L2 (__ldcg; after the acquire a plain
// load would be right too: belt and braces), and resets the counter for the
// next launch. A grid of one block (small n) skips all of that: its sum is the
// result. Steps 13 and 14 finish the same way (14 with kAcqRel, below).
//
// kAcqRel = true says the same thing with one instruction instead of three:
// fetch_add with memory_order_acq_rel on the ticket is a RELEASE (this
// thread's partial store is visible before the ticket is taken) and an
// ACQUIRE (the last block, having seen every other block's ticket, sees
// their partials) at device scope. Thread 0 acquires; the __syncthreads()
// after it passes that on to the threads that read the partials. Step 14
// finishes this way; `--final` times both.
template <int kThreads, bool kAcqRel = false, class T>
__device__ __forceinline__ void last_block_finishes(T block_total, T* partial, unsigned* ticket, T* out) {
    if (gridDim.x == 1) {
        if (threadIdx.x == 0) *out = block_total;
        return;
    }
    __shared__ bool am_last;
    if (threadIdx.x == 0) {
        partial[blockIdx.x] = block_total;
        if constexpr (kAcqRel) {
            cuda::atomic_ref<unsigned, cuda::thread_scope_device> t(*ticket);
            am_last = t.fetch_add(1u, cuda::memory_order_acq_rel) == gridDim.x - 1;
        } else {  // CUDA's threadFenceReduction
            __threadfence();
            am_last = atomicAdd(ticket, 1u) == gridDim.x - 1;
            if (am_last) __threadfence();
        }
    }
    __syncthreads();  // also separates the two uses of block_sum's shared array
    if (!am_last) return;
    T v = 0;
    for (unsigned b = threadIdx.x; b < gridDim.x; b += kThreads) v += __ldcg(&partial[b]);
    v = block_sum<kThreads>(v);
    if (threadIdx.x == 0) {
        *out = v;
        *ticket = 0;  // the kernel leaves the counter as it found it
    }
}

// ---- The kernel ------------------------------------------------------------
// reduceSinglePass: grid-stride accumulation, block sum, last block adds the
// partials.
// Look for: one launch, and bit-identical float results run after run; but
// each thread has one 4-byte load in flight (compare step 13).
template <class T>
__global__ void __launch_bounds__(kStrideThreads)
reduceSinglePass(const T* __restrict__ in, size_t n, T* partial, unsigned* ticket, T* out) {
    T v = 0;
    for (size_t i = size_t(blockIdx.x) * kStrideThreads + threadIdx.x; i < n; i += size_t(gridDim.x) * kStrideThreads)
        v += in[i];
    v = block_sum<kStrideThreads>(v);
    last_block_finishes<kStrideThreads>(v, partial, ticket, out);
}

// ---- The launcher ----------------------------------------------------------
template <class T>
std::string launch_reduceSinglePass(const T* in, size_t n, Workspace<T>& ws) {
    static const size_t most = resident_grid(reduceSinglePass<T>, kStrideThreads, SIZE_MAX / 2, 1);
    const size_t grid = std::min(most, common::ceil_div(n, size_t(kStrideThreads) * 4));
    reduceSinglePass<T><<<grid, kStrideThreads>>>(in, n, ws.partial, ws.ticket, ws.out);
    CHECK_LAUNCH();
    return common::launch_string(grid, kStrideThreads);
}

}  // namespace reduction
