// Step 4 of 07_shuffle: seed 004's xor table, read back from the GPU: which
// lane each lane reads through __shfl_xor_sync for laneMask 1, 2, 4, 8, 16.
// (Seed 004: the top README's Sources section.)
#pragma once
#include <cuda_runtime.h>
#include "07_shuffle/steps/lane_emulator.cuh"

namespace shuffle {

// ---- The kernel ----------------------------------------------------------------
// xorTable: every lane shuffles its own lane id; out[m * 32 + lane] = the lane
// that lane `lane` read with laneMask 1 << m. What to look for: the table
// equals source_lane(Op::Xor, ...) of the emulator, lane ^ laneMask.
__global__ void xorTable(int* out) {
    const int lane = threadIdx.x;
    for (int m = 0; m < 5; ++m) out[m * kWarp + lane] = __shfl_xor_sync(kFullMask, lane, 1 << m);
}

}  // namespace shuffle
