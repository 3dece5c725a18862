// Step 2 of 07_shuffle: seed 001's scan4, an inclusive scan in groups of 8
// lanes with __shfl_up_sync, and its mirror on the host (emulate_scan4).
// (Seed 001: the top README's Sources section.)
#pragma once
#include <cuda_runtime.h>
#include "07_shuffle/steps/lane_emulator.cuh"

namespace shuffle {

// ---- The kernel ----------------------------------------------------------------
// scan4: an inclusive scan in each group of 8 lanes (width 8), Hillis-Steele:
// log2(8) = 3 steps. The shuffle runs unconditionally (every lane in the mask
// must call it); only the add is conditional. Lanes 0..7 start with 31..24,
// so lane 7 ends with 31 + 30 + ... + 24 = 220.
__global__ void scan4(int* out) {
    const int laneId = threadIdx.x % kWarp;
    int value = 31 - laneId;
    for (int i = 1; i <= 4; i *= 2) {
        const int n = __shfl_up_sync(kFullMask, value, i, 8);
        if ((laneId & 7) >= i) value += n;
    }
    out[threadIdx.x] = value;
}

// scan4Width: scan4 with the width as a parameter. Unlike groupBcast (step 1)
// it is NOT a width test: its guard (laneId & 7) >= i keeps every add inside
// the 8-lane group, so it gives the same answer with width 32 - the width
// only changes what unused lanes get.
__global__ void scan4Width(int* out, int width) {
    const int laneId = threadIdx.x % kWarp;
    int value = 31 - laneId;
    for (int i = 1; i <= 4; i *= 2) {
        const int n = __shfl_up_sync(kFullMask, value, i, width);
        if ((laneId & 7) >= i) value += n;
    }
    out[threadIdx.x] = value;
}

// ---- On the host ---------------------------------------------------------------
// Seed 001's scan4 on the host: Hillis-Steele in groups of `width` lanes.
inline Warp<int> emulate_scan4(int width) {
    Warp<int> v;
    for (int l = 0; l < kWarp; ++l) v[l] = 31 - l;
    for (int i = 1; i <= 4; i *= 2) {
        const Shuffled<int> s = emulate(Op::Up, kFullMask, v, i, width);
        for (int l = 0; l < kWarp; ++l)
            if ((l & 7) >= i) v[l] += s.value[l];
    }
    return v;
}

}  // namespace shuffle
