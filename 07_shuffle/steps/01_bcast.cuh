// Step 1 of 07_shuffle: seed 001's bcast, one lane's value to the whole warp,
// and beside it the slip that breaks a broadcast in groups: a forgotten
// `width`. (Seed 001: the top README's Sources section. The seed's demos
// print with printf; here every lane writes its result.)
#pragma once
#include <cuda_runtime.h>
#include "07_shuffle/steps/lane_emulator.cuh"

namespace shuffle {

// ---- The kernel ----------------------------------------------------------------
// bcast: lane 0's value to the whole warp. `value` is set to arg only in
// lane 0; the other lanes' copies (0 here) are never read (their source is
// lane 0), which is why the seed could leave them uninitialized. What to look
// for: 32 x arg.
__global__ void bcast(int arg, int* out) {
    const int laneId = threadIdx.x % kWarp;
    int value = 0;
    if (laneId == 0) value = arg;
    value = __shfl_sync(kFullMask, value, 0);
    out[threadIdx.x] = value;
}

// ---- The pitfall: the wrong width ----------------------------------------------
// groupBcast: each group of 8 lanes takes its first lane's value,
// __shfl_sync(mask, v, 0, 8). Called with `width` 32 by mistake it hands
// lane 0's value to the whole warp; the tests check that comparing with the
// 8-lane emulator catches that (scan4, step 2, is no such test).
__global__ void groupBcast(int* out, int width) {
    const int laneId = threadIdx.x % kWarp;
    out[threadIdx.x] = __shfl_sync(kFullMask, 100 + laneId, 0, width);
}

}  // namespace shuffle
