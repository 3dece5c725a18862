// Step 3 of 07_shuffle: seed 001's warpReduce, the xor butterfly, and who
// holds the total afterwards. (Seed 001: the top README's Sources section.)
#pragma once
#include <cuda_runtime.h>
#include "07_shuffle/steps/lane_emulator.cuh"

namespace shuffle {

// ---- The kernel ----------------------------------------------------------------
// warpReduce: the xor butterfly. After the k-th step (lane masks 16, 8, 4, 2,
// 1) every lane holds the sum of 2^k lanes, those equal to it modulo 32 / 2^k,
// so after 5 steps EVERY lane holds the total, 496 (seed 001 says "to lane 0";
// it is in all of them: compare with warpReduceDown, step 6).
__global__ void warpReduce(int* out) {
    const int laneId = threadIdx.x % kWarp;
    int value = 31 - laneId;
    for (int i = 16; i >= 1; i /= 2) value += __shfl_xor_sync(kFullMask, value, i, 32);
    out[threadIdx.x] = value;
}

}  // namespace shuffle
