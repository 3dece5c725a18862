// Step 13 of 04_reduction: step 12 with 16-byte loads and more bytes in
// flight per thread. Rows reduceVec4 (4 loads in flight per thread) and
// reduceVec4Unroll8 (8). The --final table's variants (Finish) live here too.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <cuda_runtime.h>
#include "common/check.cuh"
#include "common/launch.cuh"
#include "04_reduction/steps/12_reduceSinglePass.cuh"

namespace reduction {

// 16 bytes of T, loaded in one instruction (LDG.E.128 in SASS).
template <class T> struct Vec16;
template <> struct Vec16<int> { using type = int4; };
template <> struct Vec16<float> { using type = float4; };
template <> struct Vec16<double> { using type = double2; };
__device__ __forceinline__ int hsum(int4 v) { return (v.x + v.y) + (v.z + v.w); }
__device__ __forceinline__ float hsum(float4 v) { return (v.x + v.y) + (v.z + v.w); }
__device__ __forceinline__ double hsum(double2 v) { return v.x + v.y; }

// How the block sums become the result; reduceVec4 can do all four, which
// is how the --final table measures what each costs. LastBlockAcqRel is
// LastBlock with one acq_rel fetch_add in place of the two fences (step 12).
enum class Finish { Partials, Atomic, LastBlock, LastBlockAcqRel };

constexpr int kVecThreads = 512;
constexpr int kVecUnroll = 4;

// ---- The kernel ------------------------------------------------------------
// reduceVec4<T, F, U>: each thread keeps U independent 16-byte loads in
// flight per loop trip, sums them into separate accumulators, and the grid is
// exactly what fits on the GPU at once. With U = 4 and 2048 threads per SM
// that is 128 KiB requested per SM, several times what Little's law asks of
// HBM; U = 8 doubles it (if the registers still let 2048 threads fit). The
// loads are __ldcs (streaming: the data is read once, do not keep it).
// A misaligned start (a pointer into the middle of an array) is handled: the
// head before the first 16-byte boundary and the tail after the last whole
// vector are added by single loads.
// Look for: the bytes in flight per SM, not the tree, decide the speed; does
// U = 8 move anything over U = 4?
template <class T, Finish F = Finish::LastBlock, int U = kVecUnroll>
__global__ void __launch_bounds__(kVecThreads)
reduceVec4(const T* __restrict__ in, size_t n, T* partial, unsigned* ticket, T* out) {
    using V = typename Vec16<T>::type;
    constexpr int W = 16 / sizeof(T);  // elements per vector
    const size_t misalign = reinterpret_cast<uintptr_t>(in) % 16 / sizeof(T);
    const size_t head = misalign ? (W - misalign < n ? W - misalign : n) : 0;
    const size_t nv = (n - head) / W;  // whole vectors
    const size_t tail = head + nv * W; // first element after them
    const V* body = reinterpret_cast<const V*>(in + head);

    const size_t stride = size_t(gridDim.x) * kVecThreads;
    const size_t g = size_t(blockIdx.x) * kVecThreads + threadIdx.x;
    T acc[U];
#pragma unroll
    for (int u = 0; u < U; ++u) acc[u] = T(0);
    size_t i = g;
    for (; i + (U - 1) * stride < nv; i += U * stride) {
        V v[U];
#pragma unroll
        for (int u = 0; u < U; ++u) v[u] = __ldcs(body + i + u * stride);  // all loads first
#pragma unroll
        for (int u = 0; u < U; ++u) acc[u] += hsum(v[u]);
    }
    for (; i < nv; i += stride) acc[0] += hsum(__ldcs(body + i));
    if (g < head) acc[1 % U] += in[g];
    if (g < n - tail) acc[2 % U] += in[tail + g];
    T v = acc[0];
#pragma unroll
    for (int u = 1; u < U; ++u) v += acc[u];
    v = block_sum<kVecThreads>(v);
    if constexpr (F == Finish::Partials) {
        if (threadIdx.x == 0) partial[blockIdx.x] = v;
    } else if constexpr (F == Finish::Atomic) {
        if (threadIdx.x == 0) atomicAdd(out, v);
    } else {
        last_block_finishes<kVecThreads, F == Finish::LastBlockAcqRel>(v, partial, ticket, out);
    }
}

// ---- The launcher ----------------------------------------------------------
// reduceVec4's grid: resident blocks, but no more than give each thread one
// full trip of U vectors.
template <class T, Finish F = Finish::LastBlock, int U = kVecUnroll>
size_t vec4_grid(size_t n) {
    static const size_t most = resident_grid(reduceVec4<T, F, U>, kVecThreads, SIZE_MAX / 2, 1);
    const size_t want = common::ceil_div(n, size_t(kVecThreads) * U * (16 / sizeof(T)));
    return std::min(most, want);
}

template <class T, Finish F = Finish::LastBlock, int U = kVecUnroll>
std::string launch_reduceVec4(const T* in, size_t n, Workspace<T>& ws) {
    const size_t grid = vec4_grid<T, F, U>(n);
    std::string s;
    if constexpr (F == Finish::Atomic) {
        CHECK(cudaMemsetAsync(ws.out, 0, sizeof(T)));
        s = "memset + ";
    }
    reduceVec4<T, F, U><<<grid, kVecThreads>>>(in, n, ws.partial, ws.ticket, ws.out);
    CHECK_LAUNCH();
    s += common::launch_string(grid, kVecThreads);
    if constexpr (F == Finish::Partials) s += launch_final(grid, ws);
    return s;
}

// An empty kernel: what a launch costs with nothing in it (the --final table).
__global__ void emptyKernel() {}

}  // namespace reduction
