// Step 13 of 01_matmul: a wider tile, the registers to hold it, and a plan
// for the shapes it does not fill.
//
// Step 12 reads (BM + BN) x BK floats from L2 per BM x BN x BK multiply-adds:
// 1/16 byte per multiply-add with 128 x 128 tiles, ~9 TB/s of L2 traffic at
// 300 TFLOP/s, and its wgmmas are m64n128k8. Here the tile is 256 rows of C
// (wgmma m64n256k8, one instruction per warpgroup per k8 step) by the same
// 128 columns: 3/64 byte per multiply-add (-25%), and half as many wgmma
// instructions and fragment loads per multiply-add.
//
// The cost is registers: each consumer thread holds a 64 x 256 / 128 = 128
// accumulators, plus two sets of 16 fragment registers (step 12 explains why
// two). The block's 384 threads get 65536 / 384 = 170 each at launch
// (__launch_bounds__(384, 1)), which does not fit: ptxas warns that it must
// serialize the wgmmas (C7512, "insufficient register resources") and spills.
// `setmaxnreg` moves registers between warpgroups at run time: the producer,
// which needs few, gives them back (setmaxnreg.dec to 40) and each consumer
// warpgroup takes more (setmaxnreg.inc to 232): 128 x 40 + 256 x 232 =
// 64512 <= 65536. The stages grow to 48 KB, so 4 of them fit (192 KB).
//
// The plan. One block per SM and 256 x 128 tiles leave most SMs idle where C
// has few tiles (1024 x 1024: 32 tiles for 132 SMs). plan_tf32() picks, per
// shape, the tile (256 or 128 rows) and a split-K factor (the slices' partial
// results added by step 8's splitKReduce) with the best modelled rate, the
// same kind of model as step 8's: rate x used part of the tiles x filled
// part of the last wave x useful part of each block's k. The launch column
// says what ran.
// Look for: HGMMA.64x256x8.F32.TF32 in the SASS, no C7512 warning and no
// spills in `make EXTRA_NVFLAGS=-Xptxas=-v matmul`; the % of cuBLAS TF32 at
// 4096^3 and 8192^3 (README).
#pragma once
#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include "common/launch.cuh"
#include "01_matmul/steps/12_sgemmTmaWgmma.cuh"

namespace matmul {

using WgmmaTile256 = WgmmaTile<256, 4, 40, 232>;  // 48 KB a stage, 4 stages, registers 40 / 232

// The plan of one shape: 256- or 128-row tiles, and split-K slices.
struct Tf32Plan {
    bool wide = true;
    int splits = 1;
    double score = -1;
};

// The model's numbers: each tile's rate as a fraction of cuBLAS TF32 at
// 4096^3 and 8192^3 (H200, README), and the per-block cost of filling the
// pipeline and storing the tile, in units of k.
constexpr double kWideRate = 1.00, kNarrowRate = 0.80;
constexpr double kWideFixed = 96, kNarrowFixed = 64;
constexpr std::array<int, 7> kTf32Splits = {1, 2, 3, 4, 6, 8, 16};
constexpr double kTf32SplitCost = 0.9;  // the partials' extra pass over C

inline Tf32Plan plan_tf32(int M, int N, int K, int sms) {
    Tf32Plan best;
    for (bool wide : {true, false}) {
        const int bm = wide ? WgmmaTile256::BM : WgmmaTile128::BM, bn = WgmmaTile128::BN;
        const double rate = wide ? kWideRate : kNarrowRate, fixed = wide ? kWideFixed : kNarrowFixed;
        const double tiles = double(common::ceil_div(M, bm)) * common::ceil_div(N, bn);
        for (int s : kTf32Splits) {
            if (s > 1 && (K / s < kMinSplitK || s > max_splits_in_scratch(M, N))) break;
            const int k_slice = common::ceil_div(common::ceil_div(K, 32), s) * 32;
            const double blocks = tiles * s, waves = std::ceil(blocks / sms);
            const double used = double(M) * N / (tiles * bm * bn);
            const double score = rate * used * (blocks / (waves * sms)) * (double(K) / s) / (k_slice + fixed) *
                                 (s > 1 ? kTf32SplitCost : 1.0);
            if (score > best.score) best = {wide, s, score};
        }
    }
    return best;
}

inline std::string launch_sgemmTmaWgmmaWide(const float* A, const float* B, float* C, int M, int N, int K) {
    const Tf32Plan p = plan_tf32(M, N, K, common::sm_count());
    return p.wide ? launch_sgemmTmaWgmma_with<WgmmaTile256>(A, B, C, M, N, K, p.splits)
                  : launch_sgemmTmaWgmma_with<WgmmaTile128>(A, B, C, M, N, K, p.splits);
}

}  // namespace matmul
