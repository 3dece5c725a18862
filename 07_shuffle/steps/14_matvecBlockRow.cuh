// Step 14 of 07_shuffle: y = A x for few long rows - a whole block per row,
// reduced with the block reduction of step 8. Step 17 picks it from the shape.
#pragma once
#include <string>
#include <cuda_runtime.h>
#include "common/check.cuh"
#include "common/launch.cuh"
#include "07_shuffle/steps/08_reduceShuffle.cuh"
#include "07_shuffle/steps/13_matvecShuffleVec2.cuh"
#include "07_shuffle/steps/row_loop.cuh"

namespace shuffle {

// x's pair p for a row whose pairs start at column o (0 or 1): one 16-byte
// load when every row is aligned (EVEN), else two 8-byte ones (matvecVec2's
// xpair, for one row).
template <bool EVEN, class I>
__device__ __forceinline__ double2 x_pair(const double* __restrict__ x, int o, I p) {
    if constexpr (EVEN) return __ldg(reinterpret_cast<const double2*>(x) + p);
    else return make_double2(__ldg(x + o + 2 * p), __ldg(x + o + 2 * p + 1));
}

// One thread's share of the pairs [p, end) of a row, kMatvecBlock threads
// apart: 16-byte loads of A with U = 8 in flight before the first is used.
// `a` points at the row's first pair, which starts at column o.
template <bool EVEN, class I>
__device__ __forceinline__ double block_pairs_dot(const double2* __restrict__ a, const double* __restrict__ x, int o,
                                                  I p, I end) {
    constexpr int U = 8;
    double s = 0.0;
    for (; p + (U - 1) * kMatvecBlock < end; p += U * kMatvecBlock) {
        double2 av[U];
#pragma unroll
        for (int u = 0; u < U; ++u) av[u] = __ldcs(a + p + u * kMatvecBlock);
#pragma unroll
        for (int u = 0; u < U; ++u) {
            const double2 xv = x_pair<EVEN>(x, o, p + u * kMatvecBlock);
            s = fma(av[u].x, xv.x, s);
            s = fma(av[u].y, xv.y, s);
        }
    }
    for (; p < end; p += kMatvecBlock) {
        const double2 av = __ldcs(a + p), xv = x_pair<EVEN>(x, o, p);
        s = fma(av.x, xv.x, s);
        s = fma(av.y, xv.y, s);
    }
    return s;
}

// ---- The kernel ----------------------------------------------------------------
// matvecBlockRow<EVEN>: few long rows. With fewer rows than the warps a GPU
// holds (132 SMs x 64 on an H200), one warp per row leaves SMs short of loads
// in flight (the README's worklog: matvecShuffleVec2 at 2048 x 65536). Here a
// whole block of 256 threads shares a row: 16-byte loads, 8 in flight per
// thread, then the block reduction of step 8 (warp shuffles, one
// shared-memory hop). Alignment as in matvecVec2: A and x on 16 bytes, one
// offset o and at most one single per row. What to look for: the same loads as matvecShuffleVec2,
// 8 times the threads per row.
template <bool EVEN>
__global__ void __launch_bounds__(kMatvecBlock)
matvecBlockRow(const double* __restrict__ A, const double* __restrict__ x, double* __restrict__ y, int cols) {
    const size_t start = size_t(blockIdx.x) * size_t(cols);
    const int o = EVEN ? 0 : int(start & 1);
    const double2* a = reinterpret_cast<const double2*>(A + start + o);
    const int pairs = cols / 2;
    double s = block_pairs_dot<EVEN>(a, x, o, int(threadIdx.x), pairs);
    if (!EVEN && threadIdx.x == 0) {  // the one element outside the pairs
        const int c = o ? 0 : cols - 1;
        s = fma(A[start + c], x[c], s);
    }
    s = blockReduce<double, kMatvecBlock>(s);
    if (threadIdx.x == 0) y[blockIdx.x] = s;
}

// ---- The launcher --------------------------------------------------------------
// A or x off 16 bytes (vec2_refusal): nothing launched, "" returned.
inline std::string launch_matvecBlockRow(const double* A, const double* x, double* y, int rows, int cols) {
    if (!vec2_refusal(A, x).empty()) return "";
    if (cols % 2 == 0) matvecBlockRow<true><<<rows, kMatvecBlock>>>(A, x, y, cols);
    else matvecBlockRow<false><<<rows, kMatvecBlock>>>(A, x, y, cols);
    CHECK_LAUNCH();
    return common::launch_string(unsigned(rows), kMatvecBlock) + " block per row";
}

}  // namespace shuffle
