// Step 10 of 07_shuffle: y = A x, seed 004's first version - a warp per row,
// the 32 partial sums reduced through a scratch array in global memory.
// (Seed 004: the top README's Sources section.)
#pragma once
#include <string>
#include <cuda_runtime.h>
#include "07_shuffle/steps/lane_emulator.cuh"
#include "07_shuffle/steps/row_loop.cuh"

namespace shuffle {

// ---- The kernel ----------------------------------------------------------------
// matvecGmemCache (seed 004, first version): one warp per row; the 32 partial
// sums are reduced through a scratch array in GLOBAL memory, one slot per
// thread. The seed relied on `volatile` and lockstep warps; since Volta the
// lanes of a warp are scheduled independently, so every step reads, waits at
// __syncwarp(), writes, waits again. What to look for: 5 round trips through
// L1/L2 per row - only visible when rows are short (skinny shapes).
// The pitfall beside it: `cache` is deliberately NOT __restrict__. With it
// the compiler may assume nothing else (no other thread either) touches the
// array while the kernel runs, and nvcc (13.0, -O3, sm_90) keeps each lane's
// cache[t] in a register through the whole ladder and stores it once, after
// the row loop: the other lanes' loads of cache[t + off] (plain ld.global)
// read stale memory, never that lane's partial. In the PTX (nvcc -ptx) the
// code below has a st.global of cache[t] ahead of the bar.warp.sync
// (__syncwarp) after every write; with __restrict__ the only one is after
// the loop. The first H200 run of this chapter had it: every row wrong.
// Never restrict-qualify (or read through __ldg) memory that other threads
// of the kernel read or write while it runs.
__global__ void __launch_bounds__(kMatvecBlock)
matvecGmemCache(const double* __restrict__ A, const double* __restrict__ x, double* __restrict__ y, int rows, int cols,
                double* cache) {
    const int lane = threadIdx.x % kWarp;
    const size_t t = global_thread();
    for (size_t r = t / kWarp; r < size_t(rows); r += total_warps()) {  // warp-uniform loop
        cache[t] = row_partial(A, x, r, cols, lane);
        __syncwarp();
        for (int off = 16; off > 0; off /= 2) {
            const double other = lane < off ? cache[t + off] : 0.0;
            __syncwarp();  // all reads of this step before any write
            if (lane < off) cache[t] += other;
            __syncwarp();  // all writes before the next step's reads
        }
        if (lane == 0) y[r] = cache[t];
    }
}

// ---- The launcher --------------------------------------------------------------
inline std::string launch_matvecGmemCache(const double* A, const double* x, double* y, int rows, int cols,
                                          double* scratch) {
    return launch_row_loop(matvecGmemCache, A, x, y, rows, cols, scratch);
}

}  // namespace shuffle
