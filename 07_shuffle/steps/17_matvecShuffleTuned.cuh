// Step 17 of 07_shuffle: y = A x at bandwidth for every shape - the launcher
// that fits the work to the shape: lanes per row and rows per segment of
// matvecVec2 (step 13), a block per row (step 14), several blocks per row
// (step 15), or two rows a thread (step 16). The rules come from the --tune
// tables on the H200 (the README's worklog has the numbers).
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include "common/launch.cuh"
#include "07_shuffle/steps/12_matvecShuffle.cuh"
#include "07_shuffle/steps/13_matvecShuffleVec2.cuh"
#include "07_shuffle/steps/14_matvecBlockRow.cuh"
#include "07_shuffle/steps/15_matvecSplitRow.cuh"
#include "07_shuffle/steps/16_matvecThinRows.cuh"
#include "07_shuffle/steps/row_loop.cuh"

namespace shuffle {

// A (LANES, ROWS) variant of matvecVec2: one segment of LANES lanes per ROWS
// rows; or, with block_per_row, matvecBlockRow; with split_rows,
// matvecSplitRow; with thin_rows, matvecThinRows.
struct Vec2Shape {
    int lanes, rows_per_segment;
    bool block_per_row = false, split_rows = false, thin_rows = false;
};

constexpr int kLaneChoices[] = {1, 2, 4, 8, 16, 32};
constexpr int kRowChoices[] = {1, 2, 4, 8};

// Launches the variant `v` names (what --tune and the tests run one by one).
// split_rows without a scratch array falls back to a block per row. Where the
// variant's launcher refuses (pointers off 16 bytes, a split too large for the
// scratch array) nothing is launched and this returns "".
inline std::string launch_shape(Vec2Shape v, const double* A, const double* x, double* y, int rows, int cols,
                                double* scratch = nullptr) {
    using F = std::string (*)(const double*, const double*, double*, int, int);
#define SHUFFLE_VEC2_ROW(L) \
    {launch_matvecVec2<L, 1>, launch_matvecVec2<L, 2>, launch_matvecVec2<L, 4>, launch_matvecVec2<L, 8>}
    static const F table[6][4] = {SHUFFLE_VEC2_ROW(1),  SHUFFLE_VEC2_ROW(2),  SHUFFLE_VEC2_ROW(4),
                                  SHUFFLE_VEC2_ROW(8), SHUFFLE_VEC2_ROW(16), SHUFFLE_VEC2_ROW(32)};
#undef SHUFFLE_VEC2_ROW
    if (v.thin_rows && cols <= kMaxThinCols) return launch_matvecThinRows(A, x, y, rows, cols);
    if (v.split_rows && scratch) return launch_matvecSplitRow(A, x, y, rows, cols, scratch);
    if (v.block_per_row || v.split_rows) return launch_matvecBlockRow(A, x, y, rows, cols);
    int li = 0, ri = 0;
    while (li < 5 && kLaneChoices[li] < v.lanes) ++li;
    while (ri < 3 && kRowChoices[ri] < v.rows_per_segment) ++ri;
    return table[li][ri](A, x, y, rows, cols);
}

// ---- The choice ----------------------------------------------------------------
// tuned_shape: the variant for a shape, from the --tune tables (README).
// Long rows (cols >= 4096): a block per row - it beat the best warp-per-row
// variant at every shape with cols >= 8191 - or, with fewer rows than half a
// GPU of blocks, several blocks per row. Rows of 1-3 columns: two rows a
// thread. Otherwise about 2 pairs per lane (but at least 4 lanes unless the
// row is shorter), and rows per segment so that each lane has about 8 loads
// in flight (at least 2 for full-warp rows), unless that leaves fewer warps
// than the GPU holds. What to look for: the launch column says what ran.
inline Vec2Shape tuned_shape(int rows, int cols) {
    const int pairs = cols / 2;
    const int64_t resident_blocks = int64_t(common::sm_count()) * blocks_per_sm();
    // Few long rows: fewer rows than half a GPU of blocks -> split each row;
    // more rows: a block per row, which measured as fast or faster (at
    // 1000 x 33333: README, worklog step 4).
    if (pairs >= 8 * kMatvecBlock && rows < resident_blocks / 2) return {32, 1, false, true};
    if (pairs >= 8 * kMatvecBlock) return {32, 1, true};
    if (cols <= kMaxThinCols) return {1, 1, false, false, true};  // two rows a thread, no shuffles
    int lanes = 1;
    while (lanes < 32 && 2 * lanes < pairs) lanes *= 2;
    if (lanes < 4) {  // very short rows: one pair per lane
        lanes = 1;
        while (lanes < 4 && lanes < pairs) lanes *= 2;
    }
    const int per_lane = std::max(1, (pairs + lanes - 1) / lanes);  // loads per lane per row
    int r = 1;
    while (r < 8 && 2 * r * per_lane <= 8) r *= 2;
    // Odd rows (every other one 8 bytes off, x read as scalars): one row per
    // segment, which --tune measured faster at 1048576 x 17.
    if (cols % 2 == 1 && lanes < 32) r = 1;
    if (lanes == 32 && r < 2) r = 2;
    const size_t full_gpu_warps = size_t(common::sm_count()) * blocks_per_sm() * kMatvecBlock / kWarp;
    while (r > 1 && size_t(rows) / (size_t(r) * (kWarp / lanes)) < full_gpu_warps) r /= 2;
    return {lanes, r};
}

// ---- The launcher --------------------------------------------------------------
// "" if the variant `v` (tuned_shape's pick) can take these pointers, else why
// not: A and x on 16 bytes (steps 13 to 15 read them as double2s); for
// matvecThinRows A and y (it reads A and stores y as double2s, x as scalars).
inline std::string tuned_refusal(const Vec2Shape& v, const double* A, const double* x, const double* y) {
    if (v.thin_rows) return aligned16(A) && aligned16(y) ? "" : "A or y not 16-byte aligned (matvecThinRows)";
    return aligned16(A) && aligned16(x) ? "" : "A or x not 16-byte aligned";
}

// Where tuned_refusal says no, step 12's matvecShuffle (8-byte loads) instead,
// and the launch column says so.
inline std::string launch_matvecShuffleTuned(const double* A, const double* x, double* y, int rows, int cols,
                                             double* scratch) {
    const Vec2Shape v = tuned_shape(rows, cols);
    const std::string why = tuned_refusal(v, A, x, y);
    if (!why.empty()) return launch_matvecShuffle(A, x, y, rows, cols, scratch) + " (matvecShuffle: " + why + ")";
    return launch_shape(v, A, x, y, rows, cols, scratch);
}

}  // namespace shuffle
