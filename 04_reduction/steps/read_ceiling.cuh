// The yardstick of 04_reduction: how fast this GPU can READ the input at all.
// readCeiling does nothing but 16-byte loads (8 in flight per thread, a
// resident grid) and folds them with XOR, the cheapest operation that keeps
// every load alive; no sum, no final step. The program times it in the same
// run as the kernels and prints "best / read ceiling" under each table: how
// much of what the memory system delivers to plain loads a reduction gets.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <cuda_runtime.h>
#include "common/check.cuh"
#include "common/launch.cuh"
#include "04_reduction/steps/resident_grid.cuh"
#include "04_reduction/steps/workspace.cuh"

namespace reduction {

constexpr int kCeilingThreads = 1024;
constexpr int kCeilingUnroll = 8;

// Reads in[0..nv) (16-byte vectors); writes *sink only if the XOR of all it
// read is one particular value, which keeps the compiler from dropping the
// loads and practically never happens (the sink is scratch anyway).
__global__ void __launch_bounds__(kCeilingThreads) readCeiling(const uint4* __restrict__ in, size_t nv, unsigned* sink) {
    const size_t stride = size_t(gridDim.x) * kCeilingThreads;
    size_t i = size_t(blockIdx.x) * kCeilingThreads + threadIdx.x;
    unsigned x = 0;
    for (; i + (kCeilingUnroll - 1) * stride < nv; i += kCeilingUnroll * stride) {
        uint4 v[kCeilingUnroll];
#pragma unroll
        for (int u = 0; u < kCeilingUnroll; ++u) v[u] = __ldcs(in + i + u * stride);  // all loads first
#pragma unroll
        for (int u = 0; u < kCeilingUnroll; ++u) x ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
    }
    for (; i < nv; i += stride) {
        const uint4 v = __ldcs(in + i);
        x ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (x == 0x9E3779B9u) *sink = x;
}

// The bytes readCeiling reads of an n-element input: its whole 16-byte vectors
// (the input is a cudaMalloc'ed buffer: aligned; at most 15 bytes are left out).
template <class T>
size_t ceiling_bytes(size_t n) {
    return n * sizeof(T) / 16 * 16;
}

// Launches readCeiling over the input; returns the launch ("grid(132) block(1024)").
// The sink is the workspace's partials (scratch).
template <class T>
std::string launch_read_ceiling(const T* in, size_t n, Workspace<T>& ws) {
    static const size_t most = resident_grid(readCeiling, kCeilingThreads, SIZE_MAX / 2, 1);
    const size_t nv = ceiling_bytes<T>(n) / 16;
    const size_t grid = std::max<size_t>(1, std::min(most, common::ceil_div(nv, size_t(kCeilingThreads) * kCeilingUnroll)));
    readCeiling<<<grid, kCeilingThreads>>>(reinterpret_cast<const uint4*>(in), nv, reinterpret_cast<unsigned*>(ws.partial));
    CHECK_LAUNCH();
    return common::launch_string(grid, kCeilingThreads);
}

}  // namespace reduction
