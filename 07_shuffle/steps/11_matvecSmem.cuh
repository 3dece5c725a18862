// Step 11 of 07_shuffle: y = A x, seed 004's second version - the same
// reduction in shared memory, with the __syncwarp()s the seed leaves out; and
// beside it the seed's version as written (matvecSmemNoSyncwarp, a pitfall).
// (Seed 004: the top README's Sources section.)
#pragma once
#include <string>
#include <cuda_runtime.h>
#include "07_shuffle/steps/lane_emulator.cuh"
#include "07_shuffle/steps/row_loop.cuh"

namespace shuffle {

// ---- The kernel ----------------------------------------------------------------
// matvecSmem (seed 004, second version): the same reduction in shared memory,
// with the __syncwarp()s the seed leaves out (see matvecSmemNoSyncwarp).
// What to look for: at long rows the reduction costs little; at 8 columns per
// row it is the work.
__global__ void __launch_bounds__(kMatvecBlock)
matvecSmem(const double* __restrict__ A, const double* __restrict__ x, double* __restrict__ y, int rows, int cols) {
    __shared__ double cache[kMatvecBlock];
    const int lane = threadIdx.x % kWarp;
    const int t = threadIdx.x;
    for (size_t r = global_thread() / kWarp; r < size_t(rows); r += total_warps()) {
        cache[t] = row_partial(A, x, r, cols, lane);
        __syncwarp();
        for (int off = 16; off > 0; off /= 2) {
            const double other = lane < off ? cache[t + off] : 0.0;
            __syncwarp();
            if (lane < off) cache[t] += other;
            __syncwarp();
        }
        if (lane == 0) y[r] = cache[t];
        __syncwarp();  // lane 0's read before the next row's writes
    }
}

// ---- The launcher --------------------------------------------------------------
inline std::string launch_matvecSmem(const double* A, const double* x, double* y, int rows, int cols, double*) {
    return launch_row_loop(matvecSmem, A, x, y, rows, cols);
}

// ---- The pitfall: no __syncwarp() ----------------------------------------------
// PITFALL (never in the default run; --pitfalls): seed 004's shared-memory
// version as written - warp-synchronous `volatile` steps with no __syncwarp().
// It assumes the 32 lanes run in lockstep, which no GPU since Volta promises:
// lane 0 may read cache[8] before or after lane 8 has added into it. On the
// H200 it usually prints the right answer, so values do not catch it;
// `compute-sanitizer --tool racecheck` does (README: the command and its report).
__global__ void __launch_bounds__(kMatvecBlock)
matvecSmemNoSyncwarp(const double* __restrict__ A, const double* __restrict__ x, double* __restrict__ y, int rows,
                     int cols) {
    volatile __shared__ double cache[kMatvecBlock];
    const int lane = threadIdx.x % kWarp;
    const int t = threadIdx.x;
    for (size_t r = global_thread() / kWarp; r < size_t(rows); r += total_warps()) {
        cache[t] = row_partial(A, x, r, cols, lane);
        if (lane < 16) {
            cache[t] += cache[t + 16];
            cache[t] += cache[t + 8];
            cache[t] += cache[t + 4];
            cache[t] += cache[t + 2];
            cache[t] += cache[t + 1];
        }
        if (lane == 0) y[r] = cache[t];
    }
}

inline std::string launch_matvecSmemNoSyncwarp(const double* A, const double* x, double* y, int rows, int cols,
                                               double*) {
    return launch_row_loop(matvecSmemNoSyncwarp, A, x, y, rows, cols);
}

}  // namespace shuffle
