// plans.cuh - 01_matmul's choices. The steps hold kernels, each with a
// launcher that takes its configuration as a parameter; this file holds
// every configuration, the one model that scores them for a shape, the rule
// that a plan must fit the GPU it runs on (common/gpu.cuh: shared memory per
// block and per SM, SMs; GPU_PROFILE lowers them), and the launchers the
// kernel list calls, which ask it what to run.
//
//   modelled_rate()          the one scoring function (fp32 and TF32 plans alike)
//   configs()                sgemmCpAsync / sgemmStreamK configurations (steps 8-10)
//   plan_for()               sgemmCpAsync x split-K, or sgemmStreamK: what steps 8-10 run
//   autotune_candidates()    what sgemmAutotuned (step 10) times
//   plan_tf32()              tile and split-K of the TMA + wgmma steps (13-17),
//                            a split's second pass priced in time (with_split_pass)
//   split_a_in_kernel()      where 3xTF32 (step 16) splits A: a pre-pass or in the kernel
//   pick_3xtf32()            step 16's plan, where it splits A, and whether C's last rows and last
//                            columns go to strips (row_strip.cuh; sgemmAutotuned times the row
//                            strip instead)
//
// Every plan is picked from what fits: a configuration whose shared memory
// exceeds what one block may have is never a candidate, and blocks per SM
// count only the blocks whose shared memory fits one SM. Where nothing
// fits, the kernel is waived with the reason (waived_*()).
#pragma once
#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <vector>
#include "common/gpu.cuh"
#include "common/launch.cuh"
#include "01_matmul/steps/08_sgemmCpAsync.cuh"
#include "01_matmul/steps/09_sgemmStreamK.cuh"
#include "01_matmul/steps/11_sgemmTf32Mma.cuh"
#include "01_matmul/steps/12_sgemmTmaWgmma.cuh"
#include "01_matmul/steps/13_sgemmTmaWgmmaWide.cuh"
#include "01_matmul/steps/14_sgemmTmaWgmmaPersistent.cuh"
#include "01_matmul/steps/15_sgemmTmaWgmmaSplitK.cuh"
#include "01_matmul/steps/16_sgemm3xTf32.cuh"
#include "01_matmul/steps/17_sgemmTmaWgmmaMulticast.cuh"
#include "01_matmul/steps/row_strip.cuh"

namespace matmul {

// ---- The model ---------------------------------------------------------------
// What a tile configuration is to the model: its shape, how many of its
// blocks one SM holds, its rate at large sizes (a fraction of the peer's, so
// that configurations compare) and the per-block cost of filling and
// draining its pipeline, in columns of k.
struct TileModel {
    int bm, bn, bk, blocks_per_sm;
    double rate, fixed;
};

// The modelled rate of M x N x K on `sms` SMs with K cut into `splits` slices:
//     rate x used x (blocks / (waves x slots)) x k / (k rounded up to BK + fixed) x (split_cost if split),
// i.e. the rate at large sizes, times the part of the tiles inside C (M x N
// over the tiles' area), times the fraction of the last wave that has work,
// times the share of a block's time spent on useful k (short slices pay the
// pipeline's fill and drain), less the extra pass over C that split-K costs:
// a constant share for the fp32 plans (kSplitKCost); the TF32 plans pass 1
// and add the pass's time instead (with_split_pass, below).
inline double modelled_rate(const TileModel& t, int M, int N, int K, int splits, int sms, double split_cost) {
    const double tiles = double(common::ceil_div(M, t.bm)) * common::ceil_div(N, t.bn);
    const double slots = double(sms) * t.blocks_per_sm, blocks = tiles * splits, waves = std::ceil(blocks / slots);
    const int k_slice = common::ceil_div(common::ceil_div(K, t.bk), splits) * t.bk;
    const double used = double(M) * N / (tiles * t.bm * t.bn);
    return t.rate * used * (blocks / (waves * slots)) * (double(K) / splits) / (k_slice + t.fixed) *
           (splits > 1 ? split_cost : 1.0);
}

// Split-K factors the plans consider; a slice keeps >= kMinSplitK of K, and
// the slices' partials fit kSplitKScratchMaxBytes (operands.cuh).
constexpr std::array<int, 7> kSplitFactors = {1, 2, 3, 4, 6, 8, 16};  // also --tune's columns
constexpr int kMinSplitK = 256;
inline bool split_allowed(int splits, int M, int N, int K, int min_slice = kMinSplitK) {
    return splits == 1 || (K / splits >= min_slice && splits <= max_splits_in_scratch(M, N));
}

// ---- fp32: sgemmCpAsync and sgemmStreamK (steps 8-10) --------------------------
// The configurations --tune compares (block tile, warp tile, stages, blocks
// per SM asked of the register allocator).
using Tile128 = Tile<128, 128, 16, 64, 32, 3, 2>;        // 8 warps, 8 x 8 per thread, 2 blocks per SM
using Tile128k32 = Tile<128, 128, 32, 64, 32, 3, 2>;     // BK 32: half the barriers per FMA
using Tile128x256 = Tile<128, 256, 16, 64, 64, 3, 1>;    // 8 x 16 per thread: 6 LDS.128 per 128 FFMA
using Tile128x256k32 = Tile<128, 256, 32, 64, 64, 3, 1>; // the same, BK 32
using Tile256x128 = Tile<256, 128, 16, 64, 64, 3, 1>;    // 8 x 16 per thread, tall
using Tile128x64 = Tile<128, 64, 16, 64, 32, 4, 3>;      // 4 warps, for grids with few large tiles
using Tile64 = Tile<64, 64, 16, 32, 32, 4, 4>;           // 4 warps, 4 x 8 per thread

// rate: the configuration's fraction of cuBLAS SGEMM at 4096^3 and 8192^3 (the
// mean), as `./matmul --tune` and `./matmul --tune --m 8192 --n 8192 --k 8192`
// measured it on the H200 (WORKLOG.md, step 8f). fixed: columns of k per
// block for the pipeline's fill and drain, set so that the model ranks
// `./matmul --tune --m 1024 --n 1024 --k 1024`'s measured times in order.
struct Config {
    const char* name;
    std::string (*launch)(const float*, const float*, float*, int, int, int, int splits, bool pad_b);
    std::string (*streamk)(const float*, const float*, float*, int, int, int, bool pad_b, int slots);
    int bm, bn, bk;
    size_t smem;
    int threads;
    int blocks_per_sm;  // the register allocator's target (MINB); shared memory or threads may allow fewer
    double rate, fixed;
};
#define MATMUL_CONFIG(T) launch_sgemmCpAsync_with<T>, launch_sgemmStreamK_with<T>, T::BM, T::BN, T::BK, T::SMEM, T::THREADS, T::MINB
inline const std::vector<Config>& configs() {
    static const std::vector<Config> c = {
        {"128x128x16 s3", MATMUL_CONFIG(Tile128), 0.88, 20},
        {"128x128x32 s3", MATMUL_CONFIG(Tile128k32), 0.86, 20},
        {"128x256x16 s3", MATMUL_CONFIG(Tile128x256), 0.97, 50},
        {"128x256x32 s3", MATMUL_CONFIG(Tile128x256k32), 0.93, 50},
        {"256x128x16 s3", MATMUL_CONFIG(Tile256x128), 0.86, 50},
        {"128x64x16 s4", MATMUL_CONFIG(Tile128x64), 0.87, 15},
        {"64x64x16 s4", MATMUL_CONFIG(Tile64), 0.77, 10},
    };
    return c;
}
#undef MATMUL_CONFIG

// Blocks of configuration c that one SM of `g` holds (0: it does not fit):
// by its shared memory, and by the threads and blocks an SM holds, as
// common::resident_blocks caps every other plan.
inline int blocks_per_sm(const Config& c, const common::Gpu& g) {
    if (c.smem > g.smem_per_block) return 0;
    return common::cap_by_sm_slots(std::min(c.blocks_per_sm, common::blocks_per_sm_by_smem(g, c.smem)), c.threads, g);
}
inline TileModel model_of(const Config& c, const common::Gpu& g) {
    return {c.bm, c.bn, c.bk, blocks_per_sm(c, g), c.rate, c.fixed};
}

// What a launcher of steps 8-10 runs for one shape, and what `--tune` marks with a `*`.
struct Plan {
    int config = 0;       // index into configs()
    int splits = 1;       // sgemmCpAsync's split-K slices (1: none); unused for stream-K
    bool streamk = false; // sgemmStreamK instead of sgemmCpAsync
    bool pad_b = false;   // where B cannot be read with 16-byte copies, copy it to a 16-byte pitch first
    int strip = 0;        // the last `strip` rows of C go to sgemmRowStrip (sgemmAutotuned's candidates only)
    double score = -1;    // the model's rate (fraction of cuBLAS); -1: nothing qualifies
};

// Padding B costs a pass over it and a launch: only worth it where the
// product is large (kPadBMinMacs multiply-adds and more).
constexpr double kPadBMinMacs = double(1 << 30);
inline bool pad_b_pays(int M, int N, int K) { return double(M) * N * K >= kPadBMinMacs; }

// sgemmCpAsync: the fitting configuration and split-K factor with the best modelled rate.
constexpr double kSplitKCost = 0.95;
inline Plan choose_sgemmCpAsync(int M, int N, int K, const common::Gpu& g) {
    Plan best;
    best.pad_b = pad_b_pays(M, N, K);
    for (size_t c = 0; c < configs().size(); ++c) {
        const TileModel t = model_of(configs()[c], g);
        if (t.blocks_per_sm == 0) continue;
        for (int s : kSplitFactors) {
            if (!split_allowed(s, M, N, K)) break;
            const double score = modelled_rate(t, M, N, K, s, g.sms, kSplitKCost);
            if (score > best.score) {
                best.config = int(c);
                best.splits = s;
                best.score = score;
            }
        }
    }
    return best;
}

// sgemmStreamK pays where the tiles leave the last wave mostly idle. Among
// the fitting configurations with tiles of at least kStreamKMinTile square
// (the smaller tiles' persistent loop measured slower; WORKLOG.md)
// whose plan_streamk() splits a last wave at most half full, the best of
//     rate x used x (mean k-tiles per slot) / (k-tiles of the busiest block + fixed / BK);
// score -1 if none qualifies.
constexpr int kStreamKMinTile = 128;
inline Plan choose_sgemmStreamK(int M, int N, int K, const common::Gpu& g) {
    Plan best;
    best.streamk = true;
    best.pad_b = pad_b_pays(M, N, K);
    for (size_t c = 0; c < configs().size(); ++c) {
        const Config& cfg = configs()[c];
        const int per_sm = blocks_per_sm(cfg, g);
        if (per_sm == 0 || cfg.bm < kStreamKMinTile || cfg.bn < kStreamKMinTile) continue;
        const int slots = g.sms * per_sm;
        const StreamKLaunch L = plan_streamk(M, N, K, cfg.bm, cfg.bn, cfg.bk, slots);
        if (!L.split()) continue;
        const StreamK& p = L.plan;
        const double tiles = double(p.tiles_m) * p.tiles_n;
        const double busiest = double(p.dp_count(0, L.blocks)) * p.iters + p.sk_base + (p.sk_extra > 0);
        const double used = double(M) * N / (tiles * cfg.bm * cfg.bn);
        const double score = cfg.rate * used * (tiles * p.iters / slots) / (busiest + cfg.fixed / cfg.bk);
        if (score > best.score) {
            best.config = int(c);
            best.score = score;
        }
    }
    return best;
}

// What steps 8-10's model runs for M x N x K: sgemmStreamK where it pays (a
// mostly idle last wave), else sgemmCpAsync's own choice.
inline Plan plan_for(int M, int N, int K, const common::Gpu& g) {
    const Plan sk = choose_sgemmStreamK(M, N, K, g), dp = choose_sgemmCpAsync(M, N, K, g);
    return sk.score > dp.score ? sk : dp;
}
inline Plan plan_for(int M, int N, int K) { return plan_for(M, N, K, common::gpu()); }

inline std::string run_plan(const Plan& p, const float* A, const float* B, float* C, int M, int N, int K) {
    const Config& cfg = configs()[p.config];
    return with_row_strip(p.strip, A, B, C, M, N, K, [&](int m) {
        return p.streamk ? cfg.streamk(A, B, C, m, N, K, p.pad_b, 0) : cfg.launch(A, B, C, m, N, K, p.splits, p.pad_b);
    });
}

// sgemmAutotuned's candidates: every fitting configuration as sgemmStreamK,
// then as sgemmCpAsync x split-K up to kAutotuneMaxSplits slices (only those
// whose partials fit kSplitKScratchMaxBytes); where M is 1..16 rows past a
// multiple of 128 (strip_rows), each of them again on the rows before those,
// with the last rows as a strip.
constexpr int kAutotuneMaxSplits = 8;
inline std::vector<Plan> autotune_candidates(int M, int N, int K, const common::Gpu& g) {
    std::vector<int> strips = {0};
    if (strip_rows(M) > 0) strips.push_back(strip_rows(M));
    std::vector<Plan> v;
    for (int strip : strips) {
        for (int c = 0; c < int(configs().size()); ++c) {
            if (blocks_per_sm(configs()[c], g) == 0) continue;
            Plan p;
            p.config = c;
            p.pad_b = pad_b_pays(M, N, K);
            p.strip = strip;
            p.streamk = true;
            v.push_back(p);
            p.streamk = false;
            for (int s : kSplitFactors)
                if (s <= kAutotuneMaxSplits && s <= max_splits_in_scratch(M - strip, N)) {
                    p.splits = s;
                    v.push_back(p);
                }
        }
    }
    return v;
}

// "" where some configuration fits this GPU, else why not (steps 8-10).
inline std::string waived_fp32_plans() {
    for (const Config& c : configs())
        if (blocks_per_sm(c, common::gpu()) > 0) return "";
    return common::smem_refusal(configs().back().smem);
}

inline std::string launch_sgemmCpAsync(const float* A, const float* B, float* C, int M, int N, int K) {
    return run_plan(choose_sgemmCpAsync(M, N, K, common::gpu()), A, B, C, M, N, K);
}
// The launch column says which kernel ran.
inline std::string launch_sgemmStreamK(const float* A, const float* B, float* C, int M, int N, int K) {
    const Plan p = plan_for(M, N, K);
    return run_plan(p, A, B, C, M, N, K) + (p.streamk ? "" : " (ran sgemmCpAsync: no idle wave)");
}

// ---- TF32: sgemmTf32Mma (step 11) ----------------------------------------------
// 3 stages of 35 KB (two blocks per SM) where a block may have 105 KB, else 2
// stages. A and B are padded to 16-byte rows where that pays (pad_b_pays, as
// for steps 8-10's B), else read with 4-byte copies. A small product (no
// padding) whose 128 x 128 tiles would not give every SM a block runs 64 x 64
// tiles of 4 warps of 32 x 32 (step 11c): four times the blocks.
using MmaTile128 = MmaTile<128, 128, 32, 64, 64, 3, 2>;
using MmaTile128s2 = MmaTile<128, 128, 32, 64, 64, 2, 2>;
using MmaTile64 = MmaTile<64, 64, 32, 32, 32, 3, 4>;
inline bool small_mma_tiles(int M, int N, int K, const common::Gpu& g) {
    return !pad_b_pays(M, N, K) && common::ceil_div(M, 128) * common::ceil_div(N, 128) < g.sms &&
           common::smem_refusal(MmaTile64::SMEM, g).empty();
}
inline std::string waived_sgemmTf32Mma() {
    std::string why = common::cc_refusal(80, "TF32 mma.sync");
    if (why.empty()) why = common::code_refusal(reinterpret_cast<const void*>(sgemmTf32Mma<MmaTile128s2, true>), 80);
    if (why.empty()) why = common::smem_refusal(MmaTile128s2::SMEM);
    return why;
}
inline std::string launch_sgemmTf32Mma(const float* A, const float* B, float* C, int M, int N, int K) {
    const bool pad = pad_b_pays(M, N, K);
    if (small_mma_tiles(M, N, K, common::gpu())) return launch_sgemmTf32Mma_with<MmaTile64>(A, B, C, M, N, K, pad);
    return common::smem_refusal(MmaTile128::SMEM).empty()
               ? launch_sgemmTf32Mma_with<MmaTile128>(A, B, C, M, N, K, pad)
               : launch_sgemmTf32Mma_with<MmaTile128s2>(A, B, C, M, N, K, pad);
}

// ---- TF32: the TMA + wgmma steps (13-17) ----------------------------------------
// Wide: 256 x 128 tiles, 4 stages of 48 KB, setmaxnreg 40 / 232 (step 13);
// narrow: 128 x 128 tiles, 6 stages of 32 KB (step 12's). 3xTF32 (step 16):
// 128 x 128 tiles, 4 stages of 48 KB (A_big, A_small, B), setmaxnreg.
template <template <int, int, int, int> class Tile>
struct WgmmaTiles {
    using Wide = Tile<256, 4, 40, 232>;
    using Narrow = Tile<128, 6, 0, 0>;
};
using Split3Tile = step16::Tile<128, 4>;

// rate: each tile's fraction of cuBLAS TF32 at 4096^3 and 8192^3, as
// `./matmul --kernel sgemmTmaWgmmaWide` and `--kernel sgemmTmaWgmma` measured
// them on the H200 (README); fixed: the per-block pipeline fill and the
// epilogue, in columns of k. One block resident per SM (each takes most of
// its shared memory), whether or not K is split.
constexpr TileModel kWideModel = {256, 128, 32, 1, 1.00, 96}, kNarrowModel = {128, 128, 32, 1, 0.80, 64};

// Split-K's second pass, priced in time rather than as a constant factor.
// The slices write splits x M x N partial floats that splitKReduce reads
// back: 2 x splits x M x N x 4 bytes more than storing C once, at the DRAM
// rate, plus a second launch. Against a TF32 product that runs at ~400
// TFLOP/s, the pass costs 2 x splits x 4 x 100 / (2 K) of the product's time:
// 53% at 3000^3 with 4 slices (a sweep of 2026-11-25 measured +27% over no
// split there, with the waves the split filled; this model leaves it
// unsplit), 20% at 1024 x 1024 x 8192
// (where the split is 1.9x faster). The constants, measured on the H200:
// the copy kernels' ~4.0 TB/s (05_transpose), step 14's 400 TFLOP/s at
// 4096^3 (rate 1.00 of the wide tile), and a launch and drain of ~5 us
// (what the sweep's split-K times exceed the bytes by at the small shapes).
constexpr double kTf32FlopsPerSecond = 400e12, kDramBytesPerSecond = 4.0e12, kSecondPassLaunchSeconds = 5e-6;
// Step 16's passes over A and B are launched programmatically (step 16h): the
// launch and placing of each overlap the kernel before it, and what is left
// beyond its bytes is ~2 us (ncu at 1025^3 on the H200: A's split 5.3 us for
// 3.2 us of bytes, B's padded copy 4.3 for 2.1; the call took the sum of its
// kernels). The strips and split-K's sum keep kSecondPassLaunchSeconds: ncu
// put the row strip at 6.4 us for 1 us of bytes, the 3-slice sum at
// 1031 x 2053 x 4099 at 12 us for 8.5.
constexpr double kProgrammaticPassSeconds = 2e-6;
// A split must model at least 3% faster than the best plan before it: the
// model is not closer than that to the measured times, and a split that
// gains less on paper can lose in fact (more launches, more scratch).
constexpr double kSplitMargin = 1.03;
// `rate` (a fraction of peer_flops, the modelled rate of the slices) with the
// second pass's time added; 3xTF32 runs three products, so its peer_flops is a third.
// pair_sum: two slices are added in a cluster, inside the product (step 16d): no pass.
inline double with_split_pass(double rate, double peer_flops, int M, int N, int K, int splits, bool pair_sum = false) {
    if (splits == 1 || rate <= 0 || (pair_sum && splits == 2)) return rate;
    const double flops = 2.0 * M * N * K;
    const double pass = 2.0 * splits * M * N * sizeof(float) / kDramBytesPerSecond + kSecondPassLaunchSeconds;
    return 1.0 / (1.0 / rate + pass * peer_flops / flops);
}

// The plan of one shape for steps 13-17: the tile (wide or narrow) and split-K slices.
struct Tf32Plan {
    bool wide = true;
    int splits = 1;
    double score = -1;  // -1: no tile fits this GPU
};
// Among the tiles that fit (wide_smem, narrow_smem: 0 = not a candidate)
// and, where max_splits > 1, split-K factors, the best modelled rate
// (fractions of peer_flops, the rate of a wide tile at large sizes).
// pair_sum: 2 slices need no second pass (with_split_pass); min_slice: the
// shortest slice of K a split may leave; min_splits: the fewest slices (step
// 16k: beside a column strip, pick_3xtf32).
inline Tf32Plan plan_tf32(int M, int N, int K, const common::Gpu& g, size_t wide_smem, size_t narrow_smem,
                          int max_splits, double peer_flops = kTf32FlopsPerSecond, bool pair_sum = false,
                          int min_slice = kMinSplitK, int min_splits = 1) {
    Tf32Plan best;
    for (bool wide : {true, false}) {
        const size_t smem = wide ? wide_smem : narrow_smem;
        if (smem == 0 || smem > g.smem_per_block) continue;
        for (int s : kSplitFactors) {
            if (s > max_splits || !split_allowed(s, M, N, K, min_slice)) break;
            if (s < min_splits) continue;
            const double slices = modelled_rate(wide ? kWideModel : kNarrowModel, M, N, K, s, g.sms, 1.0);
            const double score = with_split_pass(slices, peer_flops, M, N, K, s, pair_sum);
            if (score > best.score * (s > 1 ? kSplitMargin : 1.0)) best = {wide, s, score};
        }
    }
    return best;
}
constexpr int kNoSplit = 1, kAnySplit = 1 << 20;
template <template <int, int, int, int> class Tile>
Tf32Plan plan_wgmma(int M, int N, int K, const common::Gpu& g, int max_splits) {
    return plan_tf32(M, N, K, g, WgmmaTiles<Tile>::Wide::SMEM, WgmmaTiles<Tile>::Narrow::SMEM, max_splits);
}
// 3xTF32's slices may be as short as two k-tiles (kMinSplitK's 256 kept
// 256^3 and 384^3 in one slice, 4 and 9 blocks on 132 SMs: two slices measured
// 13% and 23% faster on the H100; 1000 x 333 x 77's 77 cut into 64 + 13 lost).
constexpr int kMin3xTf32Slice = 2 * Split3Tile::BK;
inline Tf32Plan plan_3xtf32(int M, int N, int K, const common::Gpu& g, int min_splits = 1) {
    return plan_tf32(M, N, K, g, 0, Split3Tile::SMEM, kAnySplit, kTf32FlopsPerSecond / 3,
                     pair_sum_refusal<Split3Tile>(g).empty(), kMin3xTf32Slice, min_splits);
}

// ---- Where the wgmma steps (12-17) run -----------------------------------------
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
__global__ void hopperProbe(int* has_sm90a) { *has_sm90a = 1; }
#else
__global__ void hopperProbe(int* has_sm90a) { *has_sm90a = 0; }
#endif

// "" where this program's wgmma code runs on this GPU, else why not: the GPU
// must be compute capability 9.0 (sm_90a code runs there only; GPU_PROFILE
// may say otherwise) and the build must contain sm_90a code (asked of the
// GPU by a one-thread kernel: a build for sm_80 runs its compute_80 PTX on a
// Hopper GPU, without wgmma; cudaFuncGetAttributes cannot tell sm_90 from sm_90a).
inline std::string hopper_waiver() {
    const common::Gpu& g = common::gpu();
    if (!g.sm90a())
        return "needs sm_90a (TMA + wgmma, Hopper); this GPU is sm_" + std::to_string(g.cc) +
               (g.cc != g.real_cc ? " (GPU_PROFILE)" : "");
    static int has = -1;  // per process: the build is the same for every device
    if (has < 0) {
        int* d = nullptr;
        CHECK(cudaMalloc(&d, sizeof(int)));
        hopperProbe<<<1, 1>>>(d);
        CHECK_LAUNCH();
        CHECK(cudaMemcpy(&has, d, sizeof(int), cudaMemcpyDeviceToHost));
        CHECK(cudaFree(d));
    }
    return has ? std::string() : std::string("needs sm_90a code; this build has none (make ARCH=sm_90)");
}

// "" where it runs here, else why not.
inline std::string waived_sgemmTmaWgmma() {
    const std::string why = hopper_waiver();
    return why.empty() ? common::smem_refusal(step12::Tile::SMEM) : why;
}

// "" where the step's sm_90a code runs here and one of its tiles fits, else why not.
inline std::string waived_wgmma(size_t smallest_smem) {
    const std::string why = hopper_waiver();
    return why.empty() ? common::smem_refusal(smallest_smem) : why;
}
inline std::string waived_sgemmTmaWgmmaWide() { return waived_wgmma(WgmmaTiles<step13::Tile>::Narrow::SMEM); }
inline std::string waived_sgemmTmaWgmmaPersistent() { return waived_wgmma(WgmmaTiles<step14::Tile>::Narrow::SMEM); }
inline std::string waived_sgemmTmaWgmmaSplitK() { return waived_wgmma(WgmmaTiles<step15::Tile>::Narrow::SMEM); }
inline std::string waived_sgemm3xTf32() { return waived_wgmma(Split3Tile::SMEM); }
inline std::string waived_sgemmTmaWgmmaMulticast() {
    const std::string why = waived_wgmma(WgmmaTiles<step17::Tile>::Narrow::SMEM);
    return why.empty() ? multicast_refusal() : why;
}

inline std::string launch_sgemmTmaWgmmaWide(const float* A, const float* B, float* C, int M, int N, int K) {
    using W = WgmmaTiles<step13::Tile>;
    return plan_wgmma<step13::Tile>(M, N, K, common::gpu(), kNoSplit).wide
               ? launch_sgemmTmaWgmmaWide_with<W::Wide>(A, B, C, M, N, K)
               : launch_sgemmTmaWgmmaWide_with<W::Narrow>(A, B, C, M, N, K);
}
inline std::string launch_sgemmTmaWgmmaPersistent(const float* A, const float* B, float* C, int M, int N, int K) {
    using W = WgmmaTiles<step14::Tile>;
    const common::Gpu& g = common::gpu();
    return plan_wgmma<step14::Tile>(M, N, K, g, kNoSplit).wide
               ? launch_sgemmTmaWgmmaPersistent_with<W::Wide>(A, B, C, M, N, K, g.sms)
               : launch_sgemmTmaWgmmaPersistent_with<W::Narrow>(A, B, C, M, N, K, g.sms);
}
inline std::string launch_sgemmTmaWgmmaSplitK(const float* A, const float* B, float* C, int M, int N, int K) {
    using W = WgmmaTiles<step15::Tile>;
    const common::Gpu& g = common::gpu();
    const Tf32Plan p = plan_wgmma<step15::Tile>(M, N, K, g, kAnySplit);
    return p.wide ? launch_sgemmTmaWgmmaSplitK_with<W::Wide>(A, B, C, M, N, K, p.splits, g.sms)
                  : launch_sgemmTmaWgmmaSplitK_with<W::Narrow>(A, B, C, M, N, K, p.splits, g.sms);
}
// Step 17 runs step 15's plan (tile and split-K), its blocks in pairs, where
// that paid in the H100 sweep with multicast everywhere (WORKLOG.md, step 17):
// 256-row tiles (half an A tile is 16 KB, a third of what a block reads a
// k-tile; with 128-row tiles a quarter), K in one slice, at least two pairs of
// tiles for every cluster the GPU holds and four k-tiles: 0.99-1.11x step 15
// there. It was 3-16% slower where a cluster had one pair or less (1024^3,
// 2048^3, 512 x 4096 x 4096, 8192 x 128 x 8192; our reading, not profiled:
// the pair waits on its slower block, with no next pair to overlap), at K = 64
// (two k-tiles), with 128-row tiles (2049 x 2047 x 2051 0.91, 4097 x 4095 x 257
// 0.95) and split-K (1031 x 2053 x 4099 0.96). Elsewhere step 15 runs, and the
// launch column says so.
inline bool multicast_pays(int M, int N, int K, const Tf32Plan& p, const common::Gpu& g) {
    using T = WgmmaTiles<step17::Tile>::Wide;
    return p.wide && p.splits == 1 && tile_pairs<T>(M, N) >= 2LL * (g.sms / T::CLUSTER) && common::ceil_div(K, T::BK) >= 4;
}
inline std::string launch_sgemmTmaWgmmaMulticast(const float* A, const float* B, float* C, int M, int N, int K) {
    using W = WgmmaTiles<step17::Tile>;
    const common::Gpu& g = common::gpu();
    const Tf32Plan p = plan_wgmma<step15::Tile>(M, N, K, g, kAnySplit);
    if (!multicast_pays(M, N, K, p, g))
        return launch_sgemmTmaWgmmaSplitK(A, B, C, M, N, K) + " (ran sgemmTmaWgmmaSplitK: pairs pay on large grids only)";
    return launch_sgemmTmaWgmmaMulticast_with<W::Wide>(A, B, C, M, N, K, 1, g.sms / W::Wide::CLUSTER);
}
// Where 3xTF32 splits A (step 16): a pre-pass reads A and writes A_small
// (8 M K bytes at the DRAM rate, and a programmatic launch; the TMA rounds A
// into A_big: step 16m), or A_big too where A's rows are not 16-byte aligned
// (12 M K bytes); split in
// the kernel, each A tile is split once for every tile column it meets, with no
// pass, but the k-loop runs slower: `./matmul --tune` on the H100 with step 16h
// put the kernel's split 21% behind at 2048^3 and 4096^3 once the pre-pass's
// share is taken out (it was 12-15% at 4096^3 and 8192^3 before steps 16b-16g
// made the rest faster), and it costs the pipeline's fill and drain nothing
// (at 256^3 with 8 slices of one k-tile the kernel's split was 22% faster than
// the pre-pass). Where A's rows are not 16-byte aligned (K % 4 != 0) the TMA
// needs a padded copy of A either way (8 M K bytes and a launch): then the
// kernel's split saves only a third of the bytes. So the kernel splits where
// what it saves would cost more than kSplitInKernelCost of the k-loop's share
// of the product's modelled time: where N is small (the pass is a large share
// of a product with few tile columns) or the slices are short. (0.25 before
// step 16m halved the pass's writes; 0.23 keeps the picks `--tune` measured
// with it on the H200: 4096 x 512 x 4096, whose pass costs 0.214 of the loop,
// by the pre-pass, 2.31x cuBLAS SGEMM against 2.25x; 512^3, 0.243, in the
// kernel, 1.25x against 1.21x. The H100, with less DRAM bandwidth, measured
// 4096 x 512 x 4096 the other way, 2.22x in the kernel against 2.08x: the
// rule prices the pass at one DRAM rate for every GPU.)
constexpr double kSplitInKernelCost = 0.23;
// The length of each of `splits` slices of K: whole k-tiles (launch_sgemm3xTf32_with).
static_assert(kNarrowModel.bk == Split3Tile::BK, "the model's k-tile is 3xTF32's");
inline int slice_of(int K, int splits) { return k_slice_length(K, Split3Tile::BK, splits); }
inline bool split_a_in_kernel(int M, int N, int K, const Tf32Plan& p, bool a_aligned) {
    if (p.score <= 0) return false;
    const double product = 2.0 * M * N * K / (p.score * kTf32FlopsPerSecond / 3);
    const int k_slice = slice_of(K, p.splits);
    const double loop = double(k_slice) / (k_slice + kNarrowModel.fixed);  // the k-loop's share of a block's time
    const double bytes = double(M) * K * sizeof(float);
    const double pre_pass = (a_aligned ? 2.0 : 3.0) * bytes / kDramBytesPerSecond + kProgrammaticPassSeconds;
    const double padding = a_aligned ? 0.0 : 2.0 * bytes / kDramBytesPerSecond + kProgrammaticPassSeconds;
    return pre_pass - padding > kSplitInKernelCost * loop * product;
}
// A row strip (row_strip.cuh) reads B once at the DRAM rate, in a launch of
// its own; a column strip reads A once. (Since step 16j a strip of 1 or 2
// rows or columns runs in the launch of the operands' passes and costs less
// than this; the price was not re-fitted: exercise 19.)
inline double strip_seconds(int N, int K) {
    return double(K) * N * sizeof(float) / kDramBytesPerSecond + kSecondPassLaunchSeconds;
}
// What launch_sgemm3xTf32 runs for A (M x K): the plan (split-K) of the
// tiles, where A is split, and the rows and columns of C left to strips:
// none, the last strip_rows(M) rows, the last strip_cols(N) columns (of the
// other rows), or both, whichever the model says takes least time, the tiles
// on what is left plus the strips (--tune marks the same pick). Both at once
// can pay where neither alone does: 1025^3 leaves 1024^3 to the tiles, 64 of
// them, which split-K 2 makes 128 blocks on 132 SMs. Beside a column strip
// the tiles' slices of K may be no longer than the whole plan's, or than
// kMaxStripSlice where that is longer: each slice is one fp32 sum of its
// k-tiles' products in a block, and the error grows with it (the model prices
// time only). Measured on the H200 with step 16k (2026-11-26; the committed
// sweeps, after 16l-16n, have the picks at 0.66, 0.48 and 0.31), max error /
// cuBLAS fp32's: 1021 x 1031 x
// 16381 with a 7-column strip 1.21 with slices of 8191 (split-K 2, the tiles'
// own plan), 0.78 with 4096 (4: the pick), 0.69 with 1024 (16, no strip);
// 1031 x 2053 x 4099 with both strips 0.87 with one slice of 4099, 0.56 with
// 2050 (the pick), 0.50 with 1376 (split-K 3, no strips). The row strip keeps
// the rule it was measured with (2049 x 2047 x 2051: split-K 2 to 1, error
// 0.29 x cuBLAS fp32's).
constexpr int kMaxStripSlice = 4096;
struct Pick3xTf32 {
    Tf32Plan plan;
    bool a_in_kernel;
    int strip;      // last rows of C: sgemmRowStrip
    int col_strip;  // last columns of C's other rows: sgemmColStrip
};
inline Pick3xTf32 pick_3xtf32(const float* A, int M, int N, int K, const common::Gpu& g) {
    constexpr double peer = kTf32FlopsPerSecond / 3;
    const Tf32Plan whole = plan_3xtf32(M, N, K, g);
    Pick3xTf32 best{whole, false, 0, 0};
    if (whole.score > 0) {
        double best_s = 2.0 * M * N * K / (whole.score * peer);
        for (int r : {0, strip_rows(M)})
            for (int c : {0, strip_cols(N)}) {
                if (r == 0 && c == 0) continue;
                const int min_splits = c > 0 ? common::ceil_div(K, std::max(slice_of(K, whole.splits), kMaxStripSlice)) : 1;
                const Tf32Plan body = plan_3xtf32(M - r, N - c, K, g, min_splits);
                if (body.score <= 0) continue;
                const double s = 2.0 * (M - r) * (N - c) * K / (body.score * peer) + (r ? strip_seconds(N, K) : 0) +
                                 (c ? strip_seconds(M - r, K) : 0);
                if (s < best_s) best_s = s, best = {body, false, r, c};
            }
    }
    best.a_in_kernel = split_a_in_kernel(M - best.strip, N - best.col_strip, K, best.plan, rows16(A, K));
    return best;
}
// The pick's strips around the tiles, with `splits` slices of K and A split
// where `a_in_kernel` says (the launcher passes the pick's; --tune tries others).
// Strips of 1 or 2 rows or columns run in the launch of the operands' passes
// (step 16j), wider ones after the product.
inline std::string launch_3xtf32_strips(const Pick3xTf32& pick, const float* A, const float* B, float* C, int M, int N,
                                        int K, int splits, bool a_in_kernel) {
    return launch_sgemm3xTf32_with<Split3Tile>(A, B, C, M, N, K, splits, common::gpu().sms, a_in_kernel, true,
                                               {pick.strip, pick.col_strip});
}
inline std::string launch_sgemm3xTf32(const float* A, const float* B, float* C, int M, int N, int K) {
    const Pick3xTf32 pick = pick_3xtf32(A, M, N, K, common::gpu());
    return launch_3xtf32_strips(pick, A, B, C, M, N, K, pick.plan.splits, pick.a_in_kernel);
}

}  // namespace matmul
