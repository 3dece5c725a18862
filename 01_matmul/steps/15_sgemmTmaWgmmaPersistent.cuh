// Step 15 of 01_matmul: a persistent grid. Step 13 launches one block per
// tile, and one block fills an SM (192 KB of shared memory, 384 threads):
// each SM runs its tiles one after the other, and each new block starts
// with an empty ring (the producer's first loads have nothing underneath)
// and ends with the consumers storing C while the tensor cores idle.
//
// Here the same kernel runs with one block per SM, each walking the tiles
// t = blockIdx.x, blockIdx.x + gridDim.x, ... (step 12's tile loop). The
// ring's k-tile counter and the mbarriers' phases run on across tiles, so
// while the consumers store tile t the producer is already loading tile t +
// gridDim.x into the stages they have released. The tiles of one "wave" are
// still consecutive in tile_origin's grouped order, so L2 reuse is as before.
// The plan (tile width, split-K) is step 13's.
// Look for: the launch column's "persistent P132"; the time at 4096^3 and
// 8192^3 against step 13 (README, worklog).
#pragma once
#include <string>
#include "common/launch.cuh"
#include "01_matmul/steps/13_sgemmTmaWgmmaWide.cuh"

namespace matmul {

inline std::string launch_sgemmTmaWgmmaPersistent(const float* A, const float* B, float* C, int M, int N, int K) {
    const int sms = common::sm_count();
    const Tf32Plan p = plan_tf32(M, N, K, sms);
    return p.wide ? launch_sgemmTmaWgmma_with<WgmmaTile256>(A, B, C, M, N, K, p.splits, sms)
                  : launch_sgemmTmaWgmma_with<WgmmaTile128>(A, B, C, M, N, K, p.splits, sms);
}

}  // namespace matmul
