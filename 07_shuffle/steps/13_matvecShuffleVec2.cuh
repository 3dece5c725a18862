// Step 13 of 07_shuffle: y = A x at bandwidth on long rows - 16-byte loads,
// 8 in flight per lane, streamed past L1; and the kernel behind it,
// matvecVec2<LANES, ROWS, EVEN>, which step 17 also runs with fewer lanes
// and more rows per segment for short rows.
#pragma once
#include <string>
#include <cuda_runtime.h>
#include "common/check.cuh"
#include "common/launch.cuh"
#include "07_shuffle/steps/lane_emulator.cuh"
#include "07_shuffle/steps/12_matvecShuffle.cuh"
#include "07_shuffle/steps/row_loop.cuh"

namespace shuffle {

// ---- The kernel ----------------------------------------------------------------
// matvecVec2<LANES, ROWS, EVEN>: bandwidth.
//   - 16-byte loads: A as double2 (LDG.128), 8 of them in flight per lane
//     before the first is used (U per row x ROWS rows), streamed past L1
//     (__ldcs: evict-first) so that x stays cached.
//   - LANES lanes per row (a power of two): a short row does not leave most
//     of the warp idle; the reduction is a shuffle with width LANES.
//   - ROWS rows per segment: a warp of S = 32 / LANES segments owns
//     ROWS * S rows, and segment s takes rows s, s + S, s + 2S, ... of them.
//     So the i-th load of the S segments reads S consecutive rows: when a row
//     is at most LANES pairs long, one warp load is 512 contiguous bytes.
//     (Consecutive rows per segment instead: each load touches 32 lines,
//     16 bytes of each; the README's worklog has what that cost.)
// Row alignment: A and x start on 16 bytes (the launcher checks), so with an
// even cols every row starts on 16 bytes (EVEN). With an odd cols every other row starts
// 8 bytes off: its pairs start at column 1 (o = 1) and column 0 is the one
// element left over; an aligned row leaves its last column. Either way a row
// has cols / 2 pairs and, if cols is odd, one single; x is then read as two
// scalars, since its pairs are not aligned for both kinds of row.
// No lane returns early: the width-LANES shuffles name the full warp.
// What to look for: one warp per row (32 lanes, 1 row) reaches CUB on long
// rows and collapses on short ones (28 of 32 lanes idle at 8 columns: 4 pairs).
template <int LANES, int ROWS, bool EVEN>
__global__ void __launch_bounds__(kMatvecBlock)
matvecVec2(const double* __restrict__ A, const double* __restrict__ x, double* __restrict__ y, int rows, int cols) {
    static_assert(valid_width(LANES), "LANES: a power of two <= 32");
    constexpr int U = ROWS >= 8 ? 1 : 8 / ROWS;  // loads of A in flight per lane: U * ROWS = 8
    constexpr int S = kWarp / LANES;              // segments per warp
    const int sl = threadIdx.x % LANES;           // lane within the segment
    const size_t warp_row0 = global_thread() / kWarp * (size_t(ROWS) * S);
    const size_t row0 = warp_row0 + (threadIdx.x % kWarp) / LANES;  // this segment's rows: row0 + i * S
    const size_t first = row0 < size_t(rows) ? row0 : size_t(rows) - 1;
    const int pairs = cols / 2;

    const double2* a[ROWS];
    size_t start[ROWS];
    int o[ROWS];
    bool valid[ROWS];
#pragma unroll
    for (int i = 0; i < ROWS; ++i) {
        // A row past the end re-reads the segment's first row, so the loads
        // need no per-row branch; its sum is dropped.
        valid[i] = row0 + size_t(i) * S < size_t(rows);
        start[i] = (valid[i] ? row0 + size_t(i) * S : first) * size_t(cols);
        o[i] = EVEN ? 0 : int(start[i] & 1);
        a[i] = reinterpret_cast<const double2*>(A + start[i] + o[i]);
    }
    const double2* x2 = reinterpret_cast<const double2*>(x);
    auto xpair = [&](int i, int p) {
        if constexpr (EVEN) return __ldg(x2 + p);
        else return make_double2(__ldg(x + o[i] + 2 * p), __ldg(x + o[i] + 2 * p + 1));
    };

    double s[ROWS];
#pragma unroll
    for (int i = 0; i < ROWS; ++i) s[i] = 0.0;
    const int np = valid[0] ? pairs : 0;  // a segment past the last row skips the loads
    // (row0 is the segment's lowest row: if it is past the end, all its rows are)
    int p = sl;
    for (; p + (U - 1) * LANES < np; p += U * LANES) {
        double2 av[U][ROWS];
#pragma unroll
        for (int u = 0; u < U; ++u)
#pragma unroll
            for (int i = 0; i < ROWS; ++i)
                av[u][i] = __ldcs(a[i] + p + u * LANES);
#pragma unroll
        for (int u = 0; u < U; ++u)
#pragma unroll
            for (int i = 0; i < ROWS; ++i) {
                const double2 xv = xpair(i, p + u * LANES);
                s[i] = fma(av[u][i].x, xv.x, s[i]);
                s[i] = fma(av[u][i].y, xv.y, s[i]);
            }
    }
    for (; p < np; p += LANES)
#pragma unroll
        for (int i = 0; i < ROWS; ++i) {
            const double2 av = __ldcs(a[i] + p), xv = xpair(i, p);
            s[i] = fma(av.x, xv.x, s[i]);
            s[i] = fma(av.y, xv.y, s[i]);
        }
    if (!EVEN && sl == 0)
#pragma unroll
        for (int i = 0; i < ROWS; ++i)
            if (valid[i]) {
                const int c = o[i] ? 0 : cols - 1;
                s[i] = fma(A[start[i] + c], x[c], s[i]);
            }
#pragma unroll
    for (int i = 0; i < ROWS; ++i)
#pragma unroll
        for (int m = LANES / 2; m > 0; m /= 2) s[i] += __shfl_xor_sync(kFullMask, s[i], m, LANES);
    if (sl == 0)
#pragma unroll
        for (int i = 0; i < ROWS; ++i)
            if (valid[i]) y[row0 + size_t(i) * S] = s[i];
}

// ---- The launchers -------------------------------------------------------------
// "" if A and x start on 16 bytes, as matvecVec2 (and steps 14 and 15, which
// read them the same way) relies on; else why not.
inline std::string vec2_refusal(const double* A, const double* x) {
    return aligned16(A) && aligned16(x) ? "" : "A or x not 16-byte aligned";
}

// One (LANES, ROWS) variant: as many warps as cover the rows, ROWS * (32 / L)
// rows each. Where vec2_refusal says no it launches nothing and returns "".
template <int L, int R>
std::string launch_matvecVec2(const double* A, const double* x, double* y, int rows, int cols) {
    if (!vec2_refusal(A, x).empty()) return "";
    const size_t rows_per_warp = size_t(R) * (kWarp / L);
    const size_t warps = common::ceil_div(size_t(rows), rows_per_warp);
    const unsigned g = unsigned(common::ceil_div(warps * kWarp, kMatvecBlock));
    if (cols % 2 == 0) matvecVec2<L, R, true><<<g, kMatvecBlock>>>(A, x, y, rows, cols);
    else matvecVec2<L, R, false><<<g, kMatvecBlock>>>(A, x, y, rows, cols);
    CHECK_LAUNCH();
    return common::launch_string(g, kMatvecBlock) + " lanes/row " + std::to_string(L) + " rows/seg " +
           std::to_string(R);
}

// matvecShuffleVec2: a warp per row, one row per segment. Where A or x is off
// 16 bytes, step 12's matvecShuffle (8-byte loads) instead, and the launch
// column says so.
inline std::string launch_matvecShuffleVec2(const double* A, const double* x, double* y, int rows, int cols,
                                            double* scratch) {
    const std::string why = vec2_refusal(A, x);
    if (!why.empty()) return launch_matvecShuffle(A, x, y, rows, cols, scratch) + " (matvecShuffle: " + why + ")";
    return launch_matvecVec2<32, 1>(A, x, y, rows, cols);
}

}  // namespace shuffle
