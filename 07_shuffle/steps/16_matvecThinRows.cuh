// Step 16 of 07_shuffle: y = A x for rows of 1 to 3 columns - no shuffles at
// all: two rows a thread, a copy kernel's access pattern. Step 17 picks it
// from the shape.
#pragma once
#include <string>
#include <cuda_runtime.h>
#include "common/check.cuh"
#include "common/launch.cuh"
#include "07_shuffle/steps/row_loop.cuh"

namespace shuffle {

constexpr int kMaxThinCols = 3;

// ---- The kernel ----------------------------------------------------------------
// matvecThinRows<C>: rows of C <= 3 doubles. As 1-lane segments of
// matvecVec2 every lane loads and stores 8 bytes and runs a shuffle step per
// row for nothing. A row is too short to share: each thread takes two
// consecutive rows, 2C contiguous doubles starting on 16 bytes (A does), loads
// them as C double2s and writes its two results as one double2 (y starts on
// 16 bytes too) - a copy's access pattern. No shuffles at all; the last row of an odd count is done alone.
// What to look for: the rate of a copy, not of a reduction.
template <int C>
__global__ void __launch_bounds__(kMatvecBlock)
matvecThinRows(const double* __restrict__ A, const double* __restrict__ x, double* __restrict__ y, int rows) {
    const size_t pair = global_thread();
    const size_t r = 2 * pair;
    if (r >= size_t(rows)) return;  // no shuffles or barriers below
    double xv[C];
#pragma unroll
    for (int c = 0; c < C; ++c) xv[c] = __ldg(x + c);
    if (r + 1 < size_t(rows)) {
        const double2* a = reinterpret_cast<const double2*>(A + r * C);  // 16 C bytes per pair: aligned
        double v[2 * C];
#pragma unroll
        for (int k = 0; k < C; ++k) {
            const double2 t = __ldcs(a + k);
            v[2 * k] = t.x;
            v[2 * k + 1] = t.y;
        }
        double s0 = 0.0, s1 = 0.0;
#pragma unroll
        for (int c = 0; c < C; ++c) {
            s0 = fma(v[c], xv[c], s0);
            s1 = fma(v[C + c], xv[c], s1);
        }
        *reinterpret_cast<double2*>(y + r) = make_double2(s0, s1);
    } else {
        double s0 = 0.0;
#pragma unroll
        for (int c = 0; c < C; ++c) s0 = fma(A[r * C + c], xv[c], s0);
        y[r] = s0;
    }
}

// ---- The launcher --------------------------------------------------------------
// Only 1 .. kMaxThinCols columns (a row lives in registers), and A and y on 16 bytes: other
// shapes and pointers launch nothing and return "" (a launch description is never empty),
// for the caller to decide.
inline std::string launch_matvecThinRows(const double* A, const double* x, double* y, int rows, int cols) {
    if (rows < 1 || cols < 1 || cols > kMaxThinCols || !aligned16(A) || !aligned16(y)) return "";
    const unsigned g = unsigned(common::ceil_div((size_t(rows) + 1) / 2, kMatvecBlock));
    switch (cols) {
        case 1: matvecThinRows<1><<<g, kMatvecBlock>>>(A, x, y, rows); break;
        case 2: matvecThinRows<2><<<g, kMatvecBlock>>>(A, x, y, rows); break;
        case 3: matvecThinRows<3><<<g, kMatvecBlock>>>(A, x, y, rows); break;
    }
    CHECK_LAUNCH();
    return common::launch_string(g, kMatvecBlock) + " thin rows: 2 rows a thread";
}

}  // namespace shuffle
