// Step 12 of 07_shuffle: y = A x, seed 004's third version - the partial sums
// meet in registers through __shfl_xor_sync. (Seed 004: the top README's
// Sources section.)
#pragma once
#include <string>
#include <cuda_runtime.h>
#include "07_shuffle/steps/lane_emulator.cuh"
#include "07_shuffle/steps/row_loop.cuh"

namespace shuffle {

// ---- The kernel ----------------------------------------------------------------
// matvecShuffle (seed 004, third version): the partial sums meet in
// registers, five __shfl_xor_sync steps, no shared memory, no barrier. The
// mask is the full warp: every lane reaches the shuffles because the row loop
// is warp-uniform. What to look for: the reduction is no longer the cost;
// 8-byte loads with one request in flight per lane are.
__global__ void __launch_bounds__(kMatvecBlock)
matvecShuffle(const double* __restrict__ A, const double* __restrict__ x, double* __restrict__ y, int rows, int cols) {
    const int lane = threadIdx.x % kWarp;
    for (size_t r = global_thread() / kWarp; r < size_t(rows); r += total_warps()) {
        double t = row_partial(A, x, r, cols, lane);
        for (int m = 16; m > 0; m /= 2) t += __shfl_xor_sync(kFullMask, t, m);
        if (lane == 0) y[r] = t;
    }
}

// ---- The launcher --------------------------------------------------------------
inline std::string launch_matvecShuffle(const double* A, const double* x, double* y, int rows, int cols, double*) {
    return launch_row_loop(matvecShuffle, A, x, y, rows, cols);
}

}  // namespace shuffle
