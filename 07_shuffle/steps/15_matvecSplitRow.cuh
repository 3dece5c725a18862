// Step 15 of 07_shuffle: y = A x for rows too few and too long for a block
// each - every row cut into chunks, a block per chunk, and a second kernel
// that adds each row's partial sums in a fixed order. Step 17 picks it from
// the shape.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <cuda_runtime.h>
#include "common/check.cuh"
#include "common/launch.cuh"
#include "07_shuffle/steps/08_reduceShuffle.cuh"
#include "07_shuffle/steps/14_matvecBlockRow.cuh"
#include "07_shuffle/steps/row_loop.cuh"

namespace shuffle {

// ---- The kernel ----------------------------------------------------------------
// matvecSplitRow<EVEN>: rows too few and too long for a block each: a block
// per row of 8 rows of 4 million columns runs on 8 of an H200's 132 SMs.
// Here each row is cut into chunks of `chunk_pairs` pairs, one block per
// chunk, 16-byte loads with 8 in flight per thread as in matvecBlockRow; each
// block writes its partial sum to partial[row * chunks + chunk]. A second
// kernel (matvecSplitRowSum) adds each row's partials in chunk order.
// No atomics: the result is bit-reproducible from run to run for a given
// shape and GPU (the chunking depends on the shape and the SM count only).
// Block b takes chunk b / rows of row b % rows: blocks that run together read
// the same slice of x, so x comes from DRAM once even when it exceeds L2
// (3 x 10000019: x is 80 MB, a third of A). What to look for: a row of
// millions of columns at the bandwidth of many rows.
template <bool EVEN>
__global__ void __launch_bounds__(kMatvecBlock)
matvecSplitRow(const double* __restrict__ A, const double* __restrict__ x, double* __restrict__ partial, int rows,
               int cols, int64_t chunk_pairs) {
    const int64_t row = blockIdx.x % unsigned(rows), chunk = blockIdx.x / unsigned(rows);
    const int64_t chunks = gridDim.x / unsigned(rows);
    const size_t start = size_t(row) * size_t(cols);
    const int o = EVEN ? 0 : int(start & 1);
    const double2* a = reinterpret_cast<const double2*>(A + start + o);
    const int64_t pairs = cols / 2;
    const int64_t end = min(pairs, (chunk + 1) * chunk_pairs);
    double s = block_pairs_dot<EVEN>(a, x, o, chunk * chunk_pairs + threadIdx.x, end);
    if (!EVEN && chunk == 0 && threadIdx.x == 0) {  // the one element outside the pairs
        const int64_t c = o ? 0 : cols - 1;
        s = fma(A[start + c], x[c], s);
    }
    s = blockReduce<double, kMatvecBlock>(s);
    if (threadIdx.x == 0) partial[row * chunks + chunk] = s;
}

// The second pass: one warp per row adds the row's partials (lane-strided,
// then the xor butterfly): a fixed order, so a fixed result.
__global__ void __launch_bounds__(kMatvecBlock)
matvecSplitRowSum(const double* __restrict__ partial, double* __restrict__ y, int rows, int chunks) {
    const int lane = threadIdx.x % kWarp;
    const size_t r = global_thread() / kWarp;
    if (r >= size_t(rows)) return;  // warp-uniform: the whole warp leaves together
    double t = 0.0;
    for (int c = lane; c < chunks; c += kWarp) t += partial[r * chunks + c];
    for (int m = 16; m > 0; m /= 2) t += __shfl_xor_sync(kFullMask, t, m);
    if (lane == 0) y[r] = t;
}

// ---- The launcher --------------------------------------------------------------
// Chunks of whole 2048-pair block steps (256 threads x 8 loads), sized so that
// the grid is about 4 full GPUs of blocks.
inline int64_t split_chunk_pairs(int rows, int cols) {
    constexpr int64_t step = int64_t(8) * kMatvecBlock;
    const int64_t target_blocks = int64_t(4) * common::sm_count() * blocks_per_sm();
    const int64_t total = int64_t(rows) * (cols / 2);
    const int64_t per_block = std::max<int64_t>(step, common::ceil_div(total, target_blocks));
    return common::ceil_div(per_block, step) * step;
}

// The number of chunks (blocks) per row.
inline int64_t split_chunks(int rows, int cols) {
    const int64_t cp = split_chunk_pairs(rows, cols);
    return std::max<int64_t>(1, common::ceil_div(int64_t(cols / 2), cp));
}

// Whether the rows x chunks partial sums fit the scratch array.
inline bool split_fits_scratch(int rows, int cols) {
    return size_t(rows) * size_t(split_chunks(rows, cols)) <= scratch_doubles();
}

// Needs A and x on 16 bytes (vec2_refusal) and split_fits_scratch (true where tuned_shape
// picks it). Otherwise it launches nothing and returns "" (a launch description is never
// empty): the caller decides, the process goes on.
inline std::string launch_matvecSplitRow(const double* A, const double* x, double* y, int rows, int cols,
                                         double* scratch) {
    if (rows < 1 || cols < 1 || !scratch || !vec2_refusal(A, x).empty() || !split_fits_scratch(rows, cols)) return "";
    const int64_t cp = split_chunk_pairs(rows, cols);
    const int64_t chunks = split_chunks(rows, cols);
    const unsigned g = unsigned(rows * chunks);
    if (cols % 2 == 0) matvecSplitRow<true><<<g, kMatvecBlock>>>(A, x, scratch, rows, cols, cp);
    else matvecSplitRow<false><<<g, kMatvecBlock>>>(A, x, scratch, rows, cols, cp);
    CHECK_LAUNCH();
    const unsigned g2 = unsigned(common::ceil_div(size_t(rows) * kWarp, kMatvecBlock));
    matvecSplitRowSum<<<g2, kMatvecBlock>>>(scratch, y, rows, int(chunks));
    CHECK_LAUNCH();
    return common::launch_string(g, kMatvecBlock) + " split rows: " + std::to_string(chunks) + " blocks/row + sum";
}

}  // namespace shuffle
