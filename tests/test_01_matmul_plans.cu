// 01_matmul's plans (plans.cuh) on the CPU alone: stream-K's division of the
// work, and the rules every plan keeps on any GPU (the presets of
// common/gpu.cuh): it fits the GPU's shared memory, its splits and padding
// follow their rules, its candidates stay under the scratch bound.
#include "tests/matmul_test.hpp"

namespace {

using matmul::Shape;
using matmul::name_of;

// plan_streamk() on the CPU, for many tile counts, k-tiles and slots: every
// k-tile of every tile is computed by exactly one block; every block has
// work; a split tile's owner (the block with its first k-tile) finishes with
// it, and the blocks the kernel waits for are exactly the others that hold a
// piece of it, each as their first split piece.
TEST(StreamKPlan, EveryKTileOnceAndOwnersWaitForTheRightBlocks) {
    int plans = 0, split_plans = 0;
    for (int m : {1, 100, 128, 129, 1000, 2049, 4097})
        for (int n : {1, 256, 257, 2047, 4095})
            for (int k : {1, 31, 32, 33, 257, 2051})
                for (int slots : {1, 2, 7, 132, 264}) {
                    const matmul::StreamKLaunch L = matmul::plan_streamk(m, n, k, 128, 256, 32, slots);
                    const matmul::StreamK& p = L.plan;
                    const int tiles = p.tiles_m * p.tiles_n;
                    ASSERT_GE(L.blocks, 1);
                    ASSERT_LE(L.blocks, slots);
                    std::vector<int> done(size_t(tiles) * p.iters, 0);
                    std::vector<std::vector<int>> holders(tiles);  // blocks with a piece not starting the tile
                    std::vector<int> owner(tiles, -1);
                    for (int c = 0; c < L.blocks; ++c) {
                        const int total = matmul::block_iters(p, c, L.blocks);
                        const int first_split = p.dp_count(c, L.blocks) * p.iters;
                        ASSERT_GT(total, 0) << "block " << c << " has no work";
                        int piece_first = 0;  // j of the current piece's first k-tile
                        for (int j = 0; j < total; ++j) {  // the kernel's loop
                            const matmul::Step st = matmul::locate(p, c, L.blocks, j);
                            ASSERT_TRUE(st.t >= 0 && st.t < tiles && st.kb >= 0 && st.kb <= st.kt && st.kt < p.iters);
                            ++done[size_t(st.t) * p.iters + st.kt];
                            if (j == piece_first) EXPECT_EQ(st.kb, st.kt) << "kb is the piece's first k-tile";
                            if (st.kt + 1 < p.iters && j + 1 < total) continue;
                            if (st.kb > 0) {  // parks a partial sum
                                EXPECT_GE(st.t, p.dp_tiles);
                                EXPECT_EQ(piece_first, first_split) << "a partial must be the first split piece";
                                holders[st.t].push_back(c);
                            } else if (st.kt + 1 < p.iters) {
                                owner[st.t] = c;  // the last piece of the block, by the loop's construction
                            }
                            piece_first = j + 1;
                        }
                    }
                    for (int v : done) ASSERT_EQ(v, 1) << m << "x" << n << "x" << k << " slots " << slots;
                    bool split = false;
                    for (int t = 0; t < tiles; ++t) {
                        if (holders[t].empty()) continue;
                        split = true;
                        ASSERT_GE(owner[t], 0);
                        std::vector<int> waited;  // what the kernel's owner loop waits for
                        const int tile_end = (t - p.dp_tiles + 1) * p.iters;
                        for (int c = owner[t] + 1; c < L.blocks && p.sk_begin(c) < tile_end; ++c) waited.push_back(c);
                        EXPECT_EQ(waited, holders[t]);
                        if (p.dp_tiles > 0) EXPECT_EQ(p.dp_tiles % L.blocks, 0);
                    }
                    ++plans;
                    split_plans += split;
                }
    EXPECT_GT(split_plans, plans / 8) << "too few plans split any tile";
}

// ---- CPU-only: the launchers' decisions, on any GPU ----------------------------
// The limits of a GPU like the H100 / H200 (132 SMs, 227 KB per block), with `sms` SMs.
common::Gpu hopper(int sms = 132) {
    common::Gpu g = common::gpu_of(testing_gpu::preset_named("h100"));
    g.sms = sms;
    return g;
}

// Under every preset (and a small explicit GPU), what any launcher of 01 may
// run fits that GPU: no configuration asks for more shared memory than one
// block may have, and every chosen one has at least one block per SM.
TEST(MatmulPlan, EveryPresetPlansOnlyWhatFits) {
    std::vector<common::Gpu> gpus;
    for (const common::GpuPreset& p : common::kGpuPresets) gpus.push_back(common::gpu_of(p));
    common::Gpu small = gpus[0];
    small.sms = 16, small.smem_per_block = 48 * 1024, small.smem_per_sm = 64 * 1024, small.profile = "small";
    gpus.push_back(small);
    for (const common::Gpu& g : gpus) {
        for (Shape s : {Shape{1, 1, 1}, Shape{1000, 333, 77}, Shape{2049, 2047, 2051}, Shape{4096, 4096, 4096},
                        Shape{1024, 1024, 8192}, Shape{8192, 8192, 8192}}) {
            for (const matmul::Plan& p : {matmul::choose_sgemmCpAsync(s.m, s.n, s.k, g),
                                          matmul::plan_for(s.m, s.n, s.k, g)}) {
                ASSERT_GT(p.score, 0) << g.profile << " " << name_of(s);
                EXPECT_LE(matmul::configs()[p.config].smem, g.smem_per_block) << g.profile << " " << name_of(s);
                EXPECT_GE(matmul::blocks_per_sm(matmul::configs()[p.config], g), 1) << g.profile;
            }
            for (const matmul::Plan& p : matmul::autotune_candidates(s.m, s.n, s.k, g))
                EXPECT_LE(matmul::configs()[p.config].smem, g.smem_per_block) << g.profile << " " << name_of(s);
            const matmul::Tf32Plan w = matmul::plan_wgmma<matmul::step15::Tile>(s.m, s.n, s.k, g, matmul::kAnySplit);
            if (w.score > 0) {
                const size_t smem = w.wide ? matmul::WgmmaTiles<matmul::step15::Tile>::Wide::SMEM
                                           : matmul::WgmmaTiles<matmul::step15::Tile>::Narrow::SMEM;
                EXPECT_LE(smem, g.smem_per_block) << g.profile << " " << name_of(s);
            }
        }
        // The kernels that need Hopper are the ones the description rules out elsewhere:
        // clusters and TMA from 9.0 on, wgmma (sm_90a code) on 9.0 only.
        EXPECT_EQ(g.sm90a(), g.cc == 90) << g.profile;
        EXPECT_EQ(g.has(90), g.cc >= 90) << g.profile;
        if (g.has(80)) EXPECT_LE(matmul::MmaTile128s2::SMEM, g.smem_per_block) << g.profile << ": step 11 has no tile";
    }
    // The 99 KB GPUs (RTX 30/40/50, L4) lose the 149 KB configurations but keep the 100 KB one ...
    const common::Gpu rtx = common::gpu_of(testing_gpu::preset_named("rtx4090"));
    const matmul::Plan p4096 = matmul::plan_for(4096, 4096, 4096, rtx);
    EXPECT_LE(matmul::configs()[p4096.config].smem, size_t(99 * 1024));
    // ... and on H100-like limits nothing is left out.
    EXPECT_EQ(matmul::autotune_candidates(1024, 1024, 1024, hopper()).size(), 49u);
    EXPECT_LT(matmul::autotune_candidates(1024, 1024, 1024, rtx).size(), 49u);
}

// An SM holds no more blocks of a configuration than its threads and block
// slots allow (an explicit GPU_PROFILE's threads_sm and blocks_sm), as
// common::resident_blocks caps every other chapter's plans.
TEST(MatmulPlan, BlocksPerSmAreCappedByThreadsAndBlocks) {
    for (const matmul::Config& c : matmul::configs()) {
        common::Gpu g = common::gpu_of(common::kGpuPresets[0]);
        g.smem_per_sm = g.smem_per_block = 1 << 30;  // shared memory no limit here
        g.threads_per_sm = g.blocks_per_sm = 0;      // unknown: the register target decides
        EXPECT_EQ(matmul::blocks_per_sm(c, g), c.blocks_per_sm) << c.name;
        g.threads_per_sm = c.threads;
        EXPECT_EQ(matmul::blocks_per_sm(c, g), 1) << c.name;
        g.threads_per_sm = 0, g.blocks_per_sm = 1;
        EXPECT_EQ(matmul::blocks_per_sm(c, g), 1) << c.name;
    }
}

// Wide tiles and no split where the tiles fill the GPU, split-K where C has
// few tiles and K is long.
TEST(MatmulPlan, Tf32PlanFillsTheGpu) {
    const common::Gpu g = hopper();
    for (Shape s : {Shape{4096, 4096, 4096}, Shape{8192, 8192, 8192}, Shape{8191, 8193, 127}}) {
        const matmul::Tf32Plan p = matmul::plan_wgmma<matmul::step15::Tile>(s.m, s.n, s.k, g, matmul::kAnySplit);
        EXPECT_TRUE(p.wide) << name_of(s);
        EXPECT_EQ(p.splits, 1) << name_of(s);
    }
    const matmul::Tf32Plan skinny = matmul::plan_wgmma<matmul::step15::Tile>(1024, 1024, 8192, g, matmul::kAnySplit);
    EXPECT_GT(skinny.splits, 1);
    EXPECT_GT(skinny.score, 0.5);
    EXPECT_EQ(matmul::plan_wgmma<matmul::step13::Tile>(1024, 1024, 8192, g, matmul::kNoSplit).splits, 1);
    for (Shape s : {Shape{1, 1, 1}, Shape{1000, 333, 77}, Shape{2049, 2047, 2051}, Shape{128, 8192, 8192}}) {
        for (const matmul::Tf32Plan& p : {matmul::plan_wgmma<matmul::step15::Tile>(s.m, s.n, s.k, g, matmul::kAnySplit),
                                          matmul::plan_3xtf32(s.m, s.n, s.k, g)}) {
            EXPECT_GT(p.score, 0.0) << name_of(s);
            EXPECT_GE(p.splits, 1) << name_of(s);
            EXPECT_LE(p.splits, std::max(1, matmul::max_splits_in_scratch(s.m, s.n))) << name_of(s);
        }
        EXPECT_FALSE(matmul::plan_3xtf32(s.m, s.n, s.k, g).wide);
    }
}

// Split-K's second pass costs bytes, not a constant share: at the shapes
// where the committed H200 sweep measured step 15's split slower than
// step 14 without one (3000^3: 0.249 against 0.196 ms; 2049 x 2047 x 2051:
// 0.174 against 0.135; 1025^3: 0.043 against 0.035; 1024^3: 0.0228 against
// 0.0218) the plan does not split; where it measured the split faster
// (1024 x 1024 x 8192: 0.058 against 0.111; 128 x 8192 x 8192: 0.086
// against 0.114) it still does.
TEST(MatmulPlan, Tf32SplitsOnlyWhereThePartialsCostLessThanTheIdleSms) {
    const common::Gpu g = hopper();
    for (Shape s : {Shape{3000, 3000, 3000}, Shape{2049, 2047, 2051}, Shape{1025, 1025, 1025}, Shape{1024, 1024, 1024}})
        EXPECT_EQ(matmul::plan_wgmma<matmul::step15::Tile>(s.m, s.n, s.k, g, matmul::kAnySplit).splits, 1) << name_of(s);
    for (Shape s : {Shape{1024, 1024, 8192}, Shape{128, 8192, 8192}, Shape{8192, 128, 8192}})
        EXPECT_GT(matmul::plan_wgmma<matmul::step15::Tile>(s.m, s.n, s.k, g, matmul::kAnySplit).splits, 1) << name_of(s);
    // The pass's share falls as K grows (same M x N, same slices) ...
    double last = 0;
    for (int k : {1024, 2048, 4096, 8192, 16384}) {
        const double r = matmul::with_split_pass(0.9, matmul::kTf32FlopsPerSecond, 1024, 1024, k, 4);
        EXPECT_GT(r, last) << "K " << k;
        EXPECT_LT(r, 0.9) << "K " << k;
        last = r;
    }
    // ... and weighs a third as much against 3xTF32's three products.
    EXPECT_GT(matmul::with_split_pass(0.9, matmul::kTf32FlopsPerSecond / 3, 3000, 3000, 3000, 4),
              matmul::with_split_pass(0.9, matmul::kTf32FlopsPerSecond, 3000, 3000, 3000, 4));
    EXPECT_EQ(matmul::with_split_pass(0.9, matmul::kTf32FlopsPerSecond, 3000, 3000, 3000, 1), 0.9);
}

// Where 3xTF32 splits A: in the kernel at the shapes where that measured
// faster than the pre-pass (H100: 8192 x 128 x 8192: 0.179 against 0.541 ms;
// `--tune` with step 16h, x cuBLAS SGEMM: 384^3 0.98 against 0.95; on the
// H200 with step 16m, whose pass writes only A_small: 512^3 with 2 slices
// 1.25 against 1.21), by the pre-pass where that did (H200 with step 16m:
// 4096 x 512 x 4096 2.31 against 2.25, where the H100 measured 2.22 in the kernel against
// 2.08: the rule has one DRAM rate; in the kernel 0.169 against 0.222 ms on the H100
// before it; 4096^3: 1.12 against 1.27 ms; 8192^3: 9.48
// against 10.79; 2049 x 2047 x 2051: 0.252 against 0.282; with step 16h's
// programmatic pre-pass 1024^3 too: 2.02 against 1.95 on the H100, 2.17
// against 2.05 on the H200; 1024 x 1024 x 8192 2.39 against 2.26 on the
// H200, even on the H100), and at small shapes whose A must be padded anyway
// (K % 4 != 0: 129 x 65 x 33 and 1000 x 333 x 77 measured slower with the
// split in the kernel, the padding's launch taking the pre-pass's place).
TEST(MatmulPlan, ThreeTf32SplitsAInTheKernelWhereThePassWouldCostMore) {
    const common::Gpu g = hopper();
    auto in_kernel = [&](Shape s, bool aligned) {
        return matmul::split_a_in_kernel(s.m, s.n, s.k, matmul::plan_3xtf32(s.m, s.n, s.k, g), aligned);
    };
    for (Shape s : {Shape{8192, 128, 8192}, Shape{384, 384, 384}, Shape{512, 512, 512}, Shape{1, 1, 4}})
        EXPECT_TRUE(in_kernel(s, true)) << name_of(s);
    for (Shape s : {Shape{4096, 4096, 4096}, Shape{8192, 8192, 8192}, Shape{2049, 2047, 2051}, Shape{128, 8192, 8192},
                    Shape{1024, 1024, 1024}, Shape{1024, 1024, 8192}, Shape{4096, 512, 4096}})
        EXPECT_FALSE(in_kernel(s, s.k % 4 == 0)) << name_of(s);
    for (Shape s : {Shape{129, 65, 33}, Shape{1000, 333, 77}, Shape{384, 384, 384}})
        EXPECT_FALSE(in_kernel(s, false)) << name_of(s);
    EXPECT_TRUE(in_kernel(Shape{8192, 128, 8191}, false));  // N small: the pass is most of the time, padded or not
}

// 3xTF32's slices may be two k-tiles long (kMin3xTf32Slice), where the other
// plans keep kMinSplitK: 256^3 and 384^3 then split in two (4 and 9 tiles on
// 132 SMs: 1.13x and 1.23x faster on the H100), 1000 x 333 x 77 (3 k-tiles)
// does not (cut into 64 + 13 it measured slower on the H200).
TEST(MatmulPlan, ThreeTf32SlicesMayBeTwoKTiles) {
    const common::Gpu g = hopper();
    EXPECT_EQ(matmul::plan_3xtf32(256, 256, 256, g).splits, 2);
    EXPECT_EQ(matmul::plan_3xtf32(384, 384, 384, g).splits, 2);
    EXPECT_EQ(matmul::plan_3xtf32(1000, 333, 77, g).splits, 1);
    for (int k : {64, 77, 128, 256, 1000})
        for (int mn : {128, 256, 1024}) {
            const matmul::Tf32Plan p = matmul::plan_3xtf32(mn, mn, k, g);
            if (p.splits > 1) EXPECT_GE(k / p.splits, matmul::kMin3xTf32Slice) << mn << " x " << mn << " x " << k;
        }
}

// Strips take 1..16 rows past a multiple of 128, never all of M; 3xTF32
// takes one where its tiles would spend a whole tile row on a few rows of a
// large product (2049 x 2047 x 2051: 272 tiles of 128 x 128 against 256, two
// full waves on 132 SMs), not where the rows fill their tiles.
TEST(MatmulPlan, StripsTakeAFewRowsPastTheTiles) {
    EXPECT_EQ(matmul::strip_rows(2049), 1);
    EXPECT_EQ(matmul::strip_rows(1031), 7);
    EXPECT_EQ(matmul::strip_rows(144), 16);
    for (int m : {1, 16, 128, 145, 2047, 4096, 4095}) EXPECT_EQ(matmul::strip_rows(m), 0) << m;
    const common::Gpu g = hopper();
    EXPECT_EQ(matmul::pick_3xtf32(nullptr, 2049, 2047, 2051, g).strip, 1);
    for (Shape s : {Shape{4096, 4096, 4096}, Shape{2047, 2049, 2051}, Shape{129, 65, 33}})
        EXPECT_EQ(matmul::pick_3xtf32(nullptr, s.m, s.n, s.k, g).strip, 0) << name_of(s);
}

// The same rule on N (step 16e): 3xTF32 leaves the last 1..16 columns to a
// column strip where its tiles would spend a whole tile column on them
// (1025^3: 81 tiles of 128 x 128 on 132 SMs, against 64 and split-K 2), not
// where the columns fill their tiles; and beside a column strip the tiles'
// slices of K are no longer than the whole plan's or kMaxStripSlice (longer
// sums, larger errors: 1031 x 2053 x 4099 takes both strips with split-K 2,
// not 1; 1021 x 1031 x 16381 its 7-column strip with split-K 4, not 2).
TEST(MatmulPlan, ColumnStripsTakeAFewColumnsPastTheTiles) {
    EXPECT_EQ(matmul::strip_cols(1025), 1);
    EXPECT_EQ(matmul::strip_cols(2053), 5);
    for (int n : {1, 16, 128, 2047, 4096}) EXPECT_EQ(matmul::strip_cols(n), 0) << n;
    const common::Gpu g = hopper();
    const matmul::Pick3xTf32 p = matmul::pick_3xtf32(nullptr, 1025, 1025, 1025, g);
    EXPECT_EQ(p.col_strip, 1);
    EXPECT_EQ(p.strip, 1);
    EXPECT_EQ(p.plan.splits, 2);
    for (Shape s : {Shape{4096, 4096, 4096}, Shape{2049, 2047, 2051}, Shape{129, 65, 33}}) {
        const matmul::Pick3xTf32 q = matmul::pick_3xtf32(nullptr, s.m, s.n, s.k, g);
        EXPECT_EQ(q.col_strip, 0) << name_of(s);
        if (q.strip == 0) EXPECT_EQ(q.plan.splits, matmul::plan_3xtf32(s.m, s.n, s.k, g).splits) << name_of(s);
    }
    const matmul::Pick3xTf32 both = matmul::pick_3xtf32(nullptr, 1031, 2053, 4099, g);
    EXPECT_EQ(both.strip, 7);
    EXPECT_EQ(both.col_strip, 5);
    EXPECT_EQ(both.plan.splits, 2);  // the tiles' own plan is 1: one slice of 4099
    EXPECT_EQ(matmul::plan_3xtf32(1024, 2048, 4099, g).splits, 1);
    const matmul::Pick3xTf32 cols = matmul::pick_3xtf32(nullptr, 1021, 1031, 16381, g);
    EXPECT_EQ(cols.col_strip, 7);
    EXPECT_EQ(cols.plan.splits, 4);  // slices of 4096; the tiles' own plan is 2
    EXPECT_EQ(matmul::plan_3xtf32(1021, 1024, 16381, g).splits, 2);
    // Every preset GPU: the slices beside a column strip stay within the bound.
    for (const common::GpuPreset& q : common::kGpuPresets) {
        const common::Gpu gq = common::gpu_of(q);
        for (Shape s : {Shape{1031, 2053, 4099}, Shape{1021, 1031, 16381}, Shape{1025, 1025, 1025},
                        Shape{4999, 5003, 5009}}) {
            const matmul::Pick3xTf32 p = matmul::pick_3xtf32(nullptr, s.m, s.n, s.k, gq);
            if (p.col_strip == 0 || p.plan.score <= 0) continue;
            const int whole = matmul::slice_of(s.k, matmul::plan_3xtf32(s.m, s.n, s.k, gq).splits);
            EXPECT_LE(matmul::slice_of(s.k, p.plan.splits), std::max(whole, matmul::kMaxStripSlice))
                << name_of(s) << " on " << q.name;
        }
    }
}

// 3xTF32's split-K 2 runs in clusters of 2 that add the two sums in shared
// memory (step 16d): no second pass to price, where the GPU has clusters and
// the block's larger shared memory fits. Without them the pass is priced
// and fewer shapes split.
TEST(MatmulPlan, PairSumsNeedClustersAndTheirSharedMemory) {
    common::Gpu g = hopper();
    EXPECT_EQ(matmul::pair_sum_refusal<matmul::Split3Tile>(g), "");
    const double with_pairs = matmul::plan_3xtf32(1024, 1024, 1024, g).score;
    EXPECT_EQ(matmul::plan_3xtf32(1024, 1024, 1024, g).splits, 2);
    common::Gpu no_clusters = g, less_smem = g;
    no_clusters.max_cluster = 0;
    less_smem.smem_per_block = matmul::Split3Tile::PAIR_SMEM - 1;
    for (const common::Gpu& h : {no_clusters, less_smem}) {
        EXPECT_NE(matmul::pair_sum_refusal<matmul::Split3Tile>(h), "");
        EXPECT_LT(matmul::plan_3xtf32(1024, 1024, 1024, h).score, with_pairs);  // the pass is priced again
    }
    EXPECT_LE(matmul::Split3Tile::PAIR_SMEM, size_t(227) * 1024);  // one H100 / H200 block
}

// Step 17 needs clusters of 2 (its blocks share A's tiles); where the GPU
// has none it is waived with that reason, not launched.
TEST(MatmulPlan, MulticastNeedsClusters) {
    common::Gpu g = hopper();
    EXPECT_EQ(matmul::multicast_refusal(g), "");
    g.max_cluster = 0;
    EXPECT_EQ(matmul::multicast_refusal(g).rfind("no thread-block clusters on this GPU", 0), 0u)
        << matmul::multicast_refusal(g);
}

// Step 17 runs in pairs only where it paid in the H100 sweep: 256-row tiles,
// one slice of K, two pairs for every cluster the GPU holds, four k-tiles.
TEST(MatmulPlan, MulticastOnlyOnLargeGridsOfWideTiles) {
    const common::Gpu g = hopper();
    auto pays = [&](Shape s) {
        return matmul::multicast_pays(s.m, s.n, s.k, matmul::plan_wgmma<matmul::step15::Tile>(s.m, s.n, s.k, g, matmul::kAnySplit), g);
    };
    for (Shape s : {Shape{4096, 4096, 4096}, Shape{8192, 8192, 8192}, Shape{3000, 3000, 3000}, Shape{4999, 5003, 5009},
                    Shape{8191, 8193, 127}, Shape{16384, 16384, 256}})
        EXPECT_TRUE(pays(s)) << name_of(s);
    for (Shape s : {Shape{1024, 1024, 1024}, Shape{2048, 2048, 2048}, Shape{4096, 4096, 64}, Shape{8192, 128, 8192},
                    Shape{512, 4096, 4096}, Shape{1031, 2053, 4099}, Shape{2049, 2047, 2051}})
        EXPECT_FALSE(pays(s)) << name_of(s);
    EXPECT_FALSE(matmul::multicast_pays(4096, 4096, 4096, matmul::plan_wgmma<matmul::step15::Tile>(4096, 4096, 4096, g, matmul::kAnySplit),
                                        hopper(600)));  // 256 pairs: under two for each of 300 clusters
}

// Step 11c: sgemmTf32Mma takes 64 x 64 tiles only for small products (no
// padding) whose 128 x 128 tiles leave SMs without a block.
TEST(MatmulPlan, Tf32MmaTakesSmallTilesOnlyForSmallProducts) {
    const common::Gpu g = hopper();
    for (Shape s : {Shape{1000, 333, 77}, Shape{384, 384, 384}, Shape{129, 65, 33}, Shape{512, 512, 512}})
        EXPECT_TRUE(matmul::small_mma_tiles(s.m, s.n, s.k, g)) << name_of(s);
    for (Shape s : {Shape{1024, 1024, 1024}, Shape{4096, 4096, 4096}, Shape{8192, 128, 8192}, Shape{2048, 2048, 200}})
        EXPECT_FALSE(matmul::small_mma_tiles(s.m, s.n, s.k, g)) << name_of(s);
    EXPECT_FALSE(matmul::small_mma_tiles(1000, 333, 77, hopper(16)));  // 24 tiles fill 16 SMs
}

TEST(MatmulPlan, PadAndSplitsFollowTheirRules) {
    for (int m : {1, 128, 1000, 2049, 4096, 8192})
        for (int n : {1, 127, 1024, 4095, 8192})
            for (int k : {1, 77, 257, 4096, 8192})
                for (int sms : {1, 16, 132}) {
                    const common::Gpu g = hopper(sms);
                    const matmul::Plan dp = matmul::choose_sgemmCpAsync(m, n, k, g), both = matmul::plan_for(m, n, k, g);
                    const bool big = double(m) * n * k >= matmul::kPadBMinMacs;
                    EXPECT_EQ(dp.pad_b, big);
                    EXPECT_EQ(both.pad_b, big);
                    EXPECT_GE(dp.config, 0);
                    EXPECT_LT(dp.config, int(matmul::configs().size()));
                    EXPECT_GT(dp.score, 0);
                    EXPECT_NE(std::find(matmul::kSplitFactors.begin(), matmul::kSplitFactors.end(), dp.splits),
                              matmul::kSplitFactors.end());
                    EXPECT_LE(dp.splits, matmul::max_splits_in_scratch(m, n));
                    if (dp.splits > 1) EXPECT_GE(k / dp.splits, matmul::kMinSplitK);
                    EXPECT_GE(both.score, dp.score);
                    if (both.streamk) {
                        EXPECT_GE(matmul::configs()[both.config].bm, matmul::kStreamKMinTile);
                        EXPECT_GE(matmul::configs()[both.config].bn, matmul::kStreamKMinTile);
                    } else {
                        EXPECT_EQ(both.config, dp.config);
                        EXPECT_EQ(both.splits, dp.splits);
                    }
                }
}

TEST(MatmulPlan, SplitKScratchBound) {
    EXPECT_EQ(matmul::max_splits_in_scratch(8192, 8192), 1);  // one slice: 256 MiB, no partials
    EXPECT_EQ(matmul::max_splits_in_scratch(4096, 4096), 4);
    EXPECT_GE(matmul::max_splits_in_scratch(1024, 1024), 16);
    EXPECT_GE(matmul::max_splits_in_scratch(1, 1), 16);
    for (int mn : {1, 1000, 4096, 5000, 8192, 46340}) {
        const int s = matmul::max_splits_in_scratch(mn, mn);
        EXPECT_GE(s, 1);
        if (s > 1) EXPECT_LE(double(s) * mn * mn * sizeof(float), double(matmul::kSplitKScratchMaxBytes));
    }
}

TEST(MatmulPlan, SplitKSlicesCoverKWithNoneEmpty) {
    const matmul::KSlices a = matmul::k_slices(4 * 32, 32, 3, 64, 64);  // 3 asked of 4 k-tiles
    EXPECT_EQ(a.splits, 2);
    EXPECT_EQ(a.k_split, 64);
    const matmul::KSlices b = matmul::k_slices(1000, 32, 100, 64, 64);  // at most one slice a k-tile
    EXPECT_EQ(b.splits, 32);
    EXPECT_EQ(b.k_split, 32);
    const matmul::KSlices c = matmul::k_slices(8192, 32, 4, 8192, 8192);  // the scratch holds no partials
    EXPECT_EQ(c.splits, 1);
    EXPECT_EQ(c.k_split, 8192);
    for (int K : {1, 31, 32, 33, 257, 1000, 4099, 16381})
        for (int bk : {16, 32})
            for (int want = 0; want <= 9; ++want) {
                const matmul::KSlices s = matmul::k_slices(K, bk, want, 512, 512);
                EXPECT_GE(s.splits, 1);
                EXPECT_LE(s.splits, std::max(1, want));
                EXPECT_EQ(s.k_split % bk, 0);
                EXPECT_LT(size_t(s.splits - 1) * s.k_split, size_t(K)) << "an empty slice: K " << K << ", " << want;
                EXPECT_GE(size_t(s.splits) * s.k_split, size_t(K)) << "K not covered: K " << K << ", " << want;
                EXPECT_EQ(s.k_split, matmul::k_slice_length(K, bk, s.splits)) << "the plans' slice_of must agree";
            }
}

TEST(MatmulPlan, AutotunerCandidatesStayUnderTheScratchBound) {
    // 7 configurations x (stream-K + split-K {1, 2, 3, 4, 6, 8}) where the scratch allows it ...
    EXPECT_EQ(matmul::autotune_candidates(1024, 1024, 1024, hopper()).size(), 49u);
    // ... twice where M is 1..16 rows past a multiple of 128: the second time with those rows as a strip.
    const std::vector<matmul::Plan> v = matmul::autotune_candidates(1025, 1024, 1024, hopper());
    EXPECT_EQ(v.size(), 98u);
    EXPECT_EQ(std::count_if(v.begin(), v.end(), [](const matmul::Plan& p) { return p.strip == 1; }), 49);
    EXPECT_EQ(matmul::autotune_candidates(8192, 8192, 8192, hopper()).size(), 14u);  // stream-K and one slice only
    for (int mn : {512, 4096, 8192})
        for (const matmul::Plan& p : matmul::autotune_candidates(mn, mn, 1024, hopper())) {
            EXPECT_LE(p.splits, matmul::kAutotuneMaxSplits);
            if (!p.streamk && p.splits > 1)
                EXPECT_LE(double(p.splits) * mn * mn * sizeof(float), double(matmul::kSplitKScratchMaxBytes));
        }
}

// A candidate that was not launched (its time < 0) never wins, however fast
// its refusal returned; none launched: none picked (the model's plan runs).
TEST(MatmulPlan, AutotunerPicksTheFastestCandidateThatLaunched) {
    const std::vector<matmul::Plan> v = matmul::autotune_candidates(1024, 1024, 1024, hopper());
    ASSERT_GE(v.size(), 3u);
    const auto timed = [&](std::vector<double> ms) {
        ms.resize(v.size(), 9.0);
        return matmul::fastest_plan(v, [&](const matmul::Plan& p) { return ms[size_t(&p - v.data())]; });
    };
    EXPECT_EQ(timed({-1.0, 2.0, 1.0}), &v[2]);
    EXPECT_EQ(timed({0.5, 2.0, 1.0}), &v[0]);
    EXPECT_EQ(timed(std::vector<double>(v.size(), -1.0)), nullptr);
}

TEST(MatmulPlan, SixteenByteRule) {
    const float* p = reinterpret_cast<const float*>(uintptr_t(1) << 20);  // 16-byte aligned (never dereferenced)
    EXPECT_EQ(matmul::why_not_16_bytes(p, p, p, 128, 64), "");
    EXPECT_EQ(matmul::why_not_16_bytes(p, p, p, 130, 64), "K or N % 4 != 0");
    EXPECT_EQ(matmul::why_not_16_bytes(p, p, p, 128, 66), "K or N % 4 != 0");
    EXPECT_EQ(matmul::why_not_16_bytes(p + 1, p, p, 128, 64), "A, B or C not 16-byte aligned");
    EXPECT_EQ(matmul::why_not_16_bytes(p, p + 2, p, 128, 64), "A, B or C not 16-byte aligned");
    EXPECT_EQ(matmul::why_not_16_bytes(p, p, p + 3, 128, 64), "A, B or C not 16-byte aligned");
    EXPECT_EQ(matmul::why_not_16_bytes(p + 4, p + 8, p + 12, 128, 64), "");
}

// Padded copies (prepare_b, the 3xTF32 pre-pass) get rows of whole 128-byte
// lines, the least such pitch (WORKLOG.md, step 16b).
TEST(MatmulPlan, PaddedRowsAreWhole128ByteLines) {
    for (int n : {1, 4, 31, 32, 33, 2047, 2051, 4099, 5003, 5009, 16381}) {
        const int ld = matmul::padded_pitch(n);
        EXPECT_EQ(ld * sizeof(float) % 128, 0u) << n;
        EXPECT_GE(ld, n) << n;
        EXPECT_LT(ld - n, 32) << n;
    }
}

}  // namespace
