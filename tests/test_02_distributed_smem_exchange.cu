// clusterHistExchange (02_distributed_smem/histogram_exchange.cuh) beyond what
// the all-kernels suite (test_02_distributed_smem.cu) covers: n around the
// tile and the int4 (1, 3, 5, one tile +- 1, not a multiple of anything),
// bins 1, 2, one block + 1, a prime, 2^19, the largest and 2^20, every cluster
// size, starts 1-3 ints past a 16-byte boundary, more groups of bins than the
// plan picks (unequal shares of the samples), 16-bit counters at every budget,
// and planted bugs the checks catch.
#include <cstdio>
#include <string>
#include <vector>
#include <gtest/gtest.h>
#include "02_distributed_smem/distributed_smem.cuh"
#include "common/kernel_list.hpp"
#include "common/verify.hpp"
#include "tests/gpu_test.hpp"
#include "tests/histogram_test.hpp"

namespace {

using namespace distributed_smem;

// ---- CPU-only ---------------------------------------------------------------

TEST(ExchangePlan, SharedMemoryAndRefusals) {
    // The counters, 16-byte aligned, then the fixed part (two staging buffers, tables).
    EXPECT_EQ(exchange_smem(1), 16 + kExExtraSmem);
    EXPECT_EQ(exchange_smem(32768), 131072 + kExExtraSmem);
    EXPECT_EQ(exchange_smem(32767, true), 65536 + kExExtraSmem);  // 16-bit: two to a word
    EXPECT_LE(exchange_smem(32768), size_t(232448)) << "2^17 bins in a cluster of 4 must fit an H200 block";
    EXPECT_GT(exchange_smem(58112), size_t(232448)) << "a full block of counters leaves no room: groups needed";
    EXPECT_LE(exchange_smem(65536, true), size_t(232448)) << "2^20 bins in a cluster of 16, 16-bit, on an H200";
    // Slices: rounded up, at least 2 (the kernel's division needs it), at most 65536 (16-bit slots).
    EXPECT_EQ(exchange_slice(1 << 20, 16, 1), 65536);
    EXPECT_EQ(exchange_slice(1000003, 16, 1), 62501);
    EXPECT_EQ(exchange_slice(1000003, 16, 3), 20834);
    EXPECT_EQ(exchange_slice(1, 2, 1), 2);
    const common::Gpu h200_limits = common::gpu_of(testing_gpu::kH200);
    EXPECT_TRUE(exchange_slice_fits(65536, true, h200_limits));
    EXPECT_FALSE(exchange_slice_fits(65537, true, h200_limits)) << "a slot is 16 bits";
    EXPECT_FALSE(exchange_slice_fits(65536, false, h200_limits));
    const common::Gpu h200 = common::gpu_of(testing_gpu::kH200);
    const Plan p = exchange_plan(4096, h200, 1);
    EXPECT_FALSE(p.ok);
    EXPECT_NE(p.why_not.find("2 or more"), std::string::npos) << p.why_not;
}

// ---- GPU ---------------------------------------------------------------------

using histogram_test::run;  // a plan on the GPU against the CPU (tests/histogram_test.hpp)

const Variant& exchange() { return common::kernel_named(kernels(), "clusterHistExchange"); }

// Where the clusters leave SMs idle (7 clusters of 16 on the H200's 132 SMs),
// the plan puts histShareAtomics on them, and it and the clusters claim slices
// of the samples from one counter: exact for uniform and skewed data (its hot
// bins make the share kernel slow: it takes fewer slices), n around a slice and
// a round, an input off 16 bytes; and the same plan without the share kernel.
TEST(Exchange, IdleSMsShareTheSamplesExactly) {
    SKIP_WITHOUT_CC(90, "thread-block clusters");
    const common::Gpu& g = common::gpu();
    if (g.profile.empty() && g.sms == 132 && g.max_cluster >= 16)
        EXPECT_GT(make_plan(exchange(), 1 << 20, g).share_grid, 0) << "7 clusters of 16 leave 20 SMs idle";
    int shared = 0;
    for (int bins : {1 << 20, 524288, 131071}) {
        const Plan p = make_plan(exchange(), bins, g);
        ASSERT_TRUE(p.ok) << p.why_not;
        shared += p.share_grid > 0;
        for (bool share : {true, false}) {
            Plan q = p;
            if (!share) q.share_grid = 0;
            for (int64_t n : {int64_t(5), int64_t(4 * kExSliceVecs - 1), int64_t(7 * kExTile * 16 + 13),
                              (int64_t(1) << 22) + 3})
                for (bool skewed : {false, true})
                    for (size_t offset : {size_t(0), size_t(1)}) {
                        std::vector<int> in;
                        std::vector<unsigned> ref;
                        make_samples(in, size_t(n), bins, skewed, 0.01, 41 + n);
                        histogram_cpu(in.data(), in.size(), bins, ref);
                        EXPECT_TRUE(run(q, in, ref, bins, offset).pass())
                            << bins << " bins, n " << n << (skewed ? " skewed" : " uniform") << " offset " << offset
                            << ": " << q.describe();
                    }
        }
    }
    if (shared == 0) std::printf("(no plan here leaves an SM idle: the share kernel did not run)\n");
}

// Every n x bins x distribution at every cluster size that holds the bins.
TEST(Exchange, AwkwardSizesAtEveryClusterSize) {
    SKIP_WITHOUT_CC(90, "thread-block clusters");
    const common::Gpu& g = common::gpu();
    const int largest = largest_cluster_bins(g);
    const int tile = kExTile;
    for (int bins : {1, 2, bins_per_block(g) + 1, 131071, 1 << 19, largest, 1 << 20})
        for (int64_t n : {int64_t(1), int64_t(3), int64_t(5), int64_t(tile - 1), int64_t(tile + 1),
                          int64_t(7 * tile + 13), int64_t(1000003)})
            for (bool skewed : {false, true}) {
                std::vector<int> in;
                std::vector<unsigned> ref;
                make_samples(in, size_t(n), bins, skewed, 0.01, uint64_t(n * 13 + bins + skewed));
                histogram_cpu(in.data(), size_t(n), bins, ref);
                for (int c : {0, 2, 4, 8, 16}) {
                    const Plan p = make_plan(exchange(), bins, g, c);
                    if (c > g.max_cluster) {  // e.g. GPU_PROFILE=rtx5090: clusters of 8 at most
                        EXPECT_FALSE(p.ok) << "c=" << c << ": " << p.describe();
                        continue;
                    }
                    if (!p.ok) {  // "n/a: ..." where the bins need more; "WAIVED" only where the occupancy
                                  // calculator places no such cluster (a MIG slice, say); runs_here fails it where all must run
                        if (p.why_not.find("WAIVED") != std::string::npos) testing_gpu::runs_here(p.describe(), p.why_not);
                        continue;
                    }
                    const common::Comparison r = run(p, in, ref, bins);
                    EXPECT_TRUE(r.pass()) << "c=" << p.cluster << " groups " << p.cluster_arg << " n=" << n << " bins=" << bins
                                          << (skewed ? " skewed" : " uniform") << ": " << r.mismatches
                                          << " bins wrong, first " << r.first_bad;
                }
            }
}

// The most counters one block holds on this GPU.
int most_counters(bool narrow, const common::Gpu& g) {
    int s = 1;
    while (exchange_slice_fits(s + 1, narrow, g)) ++s;
    return s;
}

// The plan's choices as properties of this GPU's limits (H200: 2^17 bins in a
// cluster of 4 with 32-bit counters, one group; the README's figures): the
// plan fits; the fewest groups with the counters it chose; 16-bit counters
// only where 32-bit ones would need more groups; one group of 32-bit
// counters wherever some allowed cluster holds them, else one of 16-bit ones.
TEST(Exchange, PlansTakeTheFewestGroupsThatFit) {
    SKIP_WITHOUT_CC(90, "thread-block clusters");
    const common::Gpu& g = common::gpu();
    const int most = std::min(16, g.max_cluster);
    const int wide = most * most_counters(false, g), narrow = most * most_counters(true, g);
    for (int bins : {1 << 17, wide, wide + 1, narrow, narrow + 1, largest_cluster_bins(g), 1 << 20}) {
        const Plan p = make_plan(exchange(), bins, g);
        ASSERT_TRUE(p.ok) << bins << " bins: " << p.why_not;
        EXPECT_LE(p.smem, g.smem_per_block) << p.describe();
        const int c = p.cluster, groups = p.cluster_arg;
        const bool is_narrow = p.note.find("16-bit") != std::string::npos;
        auto slice = [&](int gr) { return exchange_slice(bins, c, gr); };
        EXPECT_TRUE(exchange_slice_fits(slice(groups), is_narrow, g)) << bins << " bins: " << p.describe();
        if (groups > 1)
            EXPECT_FALSE(exchange_slice_fits(slice(groups - 1), is_narrow, g)) << bins << " bins: " << p.describe();
        if (is_narrow) EXPECT_FALSE(exchange_slice_fits(slice(groups), false, g)) << bins << " bins: " << p.describe();
        if (bins <= wide) EXPECT_TRUE(groups == 1 && !is_narrow) << bins << " bins: " << p.describe();
        if (bins > wide && bins <= narrow) EXPECT_TRUE(groups == 1 && is_narrow) << bins << " bins: " << p.describe();
        // The one-group kernel (fewer instructions per sample) exactly where there is one group.
        EXPECT_TRUE(p.cluster_kernel == exchange_kernel(c, is_narrow, groups == 1)) << bins << " bins: " << p.describe();
    }
}

// Starts 1, 2, 3 ints past a 16-byte boundary: the head samples go by remote atomics.
TEST(Exchange, UnalignedInputs) {
    SKIP_WITHOUT_CC(90, "thread-block clusters");
    const common::Gpu& g = common::gpu();
    for (size_t offset : {1, 2, 3})
        for (int64_t n : {1, 2, 3, 4, 7, 8195, 1000003})
            for (int bins : {5, 131071}) {
                std::vector<int> in;
                std::vector<unsigned> ref;
                make_samples(in, size_t(n), bins, false, 0.01, 7 + n + offset);
                histogram_cpu(in.data(), size_t(n), bins, ref);
                for (int c : {2, std::min(16, g.max_cluster)}) {
                    const Plan p = make_plan(exchange(), bins, g, c);
                    ASSERT_TRUE(p.ok) << p.why_not;
                    EXPECT_TRUE(run(p, in, ref, bins, offset).pass())
                        << "c=" << c << " offset " << offset << " n=" << n << " bins " << bins;
                }
            }
}

// More groups than the plan picks: 2 more (shares of the samples differ by a
// cluster), 4 more (at 7 bins, groups that own no bin at all), with the
// kernel for several groups (the plan's may be the one-group kernel).
TEST(Exchange, MoreGroupsThanThePlanPicks) {
    SKIP_WITHOUT_CC(90, "thread-block clusters");
    const common::Gpu& g = common::gpu();
    for (int more : {2, 4})
        for (int bins : {7, 4099, 131071}) {
            Plan p = make_plan(exchange(), bins, g, 2);
            ASSERT_TRUE(p.ok) << p.why_not;
            const bool narrow = p.note.find("16-bit") != std::string::npos;
            const int groups = p.cluster_arg + more;
            ASSERT_GE(p.grid / p.cluster, groups);
            // Smaller slices than planned: the shared memory planned is enough.
            ASSERT_LE(exchange_smem(exchange_slice(bins, 2, groups), narrow), p.smem) << p.describe();
            p.cluster_arg = groups;
            p.cluster_kernel = exchange_kernel(2, narrow, false);
            ASSERT_GE(active_clusters(p.cluster_kernel, 2, p.smem, g, kExThreads), 1);  // (and its shared memory asked for)
            std::vector<int> in;
            std::vector<unsigned> ref;
            make_samples(in, 1000003, bins, true, 0.01, 31 + groups);
            histogram_cpu(in.data(), in.size(), bins, ref);
            EXPECT_TRUE(run(p, in, ref, bins).pass()) << groups << " groups, bins " << bins << p.describe();
        }
}

// 16-bit counters (the plan takes them for the largest bin counts) at a few
// bins with millions of samples each: counts pass 65535 dozens of times.
// Where one round brings a block no more than the budget (C = 2), every round
// counts with plain atomics and the scans move the large counts out; where it
// brings more (C = 16, a few bins: every sample to one or two blocks), the
// careful add carries each wrap itself: low and high halves, words that
// overflow and borrow. Also at the extremes of the scan floor: 1 (a scan moves
// every count, the budget is 65535) and 32768 (the budget is 32768: C = 2 is
// careful at 1 bin, scans every other round at 4099).
template <int kLog2C, unsigned kFloor>
void narrow_counts_exactly(const char* what) {
    const common::Gpu& g = common::gpu();
    constexpr int c = 1 << kLog2C;
    if (c > g.max_cluster) return;  // e.g. GPU_PROFILE=rtx5090: clusters of 8 at most
    for (int bins : {1, 2, 5, 4099})
        for (bool skewed : {false, true}) {
            Plan p = make_plan(exchange(), bins, g, c);
            ASSERT_TRUE(p.ok) << p.why_not;
            ASSERT_EQ(p.cluster_arg, 1) << p.describe();
            // The 32-bit plan's shared memory is more than enough for 16-bit counters.
            p.cluster_kernel = clusterHistExchange<kLog2C, true, true, kFloor>;
            ASSERT_GE(active_clusters(p.cluster_kernel, c, p.smem, g, kExThreads), 1);
            std::vector<int> in;
            std::vector<unsigned> ref;
            make_samples(in, (size_t(1) << 24) + 7, bins, skewed, 0.01, 77 + bins);
            histogram_cpu(in.data(), in.size(), bins, ref);
            EXPECT_TRUE(run(p, in, ref, bins).pass())
                << what << ", C = " << c << ", bins " << bins << (skewed ? " skewed" : " uniform");
        }
}

TEST(Exchange, NarrowCountersWrapExactly) {
    SKIP_WITHOUT_CC(90, "thread-block clusters");
    narrow_counts_exactly<1, kExScanFloor>("16-bit counters");
    narrow_counts_exactly<4, kExScanFloor>("16-bit counters");
    narrow_counts_exactly<1, 1>("16-bit counters, scan floor 1");
    narrow_counts_exactly<1, 0x8000>("16-bit counters, scan floor 32768");
    narrow_counts_exactly<4, 0x8000>("16-bit counters, scan floor 32768");
}

// The planted bug: the pipeline's drain left out (the last round is staged but
// never counted). Right only where there is no round at all (n < 4). The bug
// is planted in the 32-bit, one-group kernel of a cluster of 4, so the plan
// must be that kernel's: 16383 bins (4096 32-bit counters a block, 83 KiB with
// the staging buffers) fit every preset with clusters (a plan with 16-bit
// counters or groups sizes shared memory for another kernel: with 131071 bins,
// GPU_PROFILE=rtx5090's 99 KiB block took 16-bit counters, and the planted
// 32-bit kernel wrote past them).
TEST(ExchangeBroken, ALostLastRoundIsCaught) {
    SKIP_WITHOUT_CC(90, "thread-block clusters");
    const common::Gpu& g = common::gpu();
    constexpr int kBins = 16383;
    Plan p = make_plan(exchange(), kBins, g, 4);
    ASSERT_TRUE(p.ok) << p.why_not;
    ASSERT_EQ(p.cluster_kernel, exchange_kernel(4, false, true)) << "not the 32-bit one-group plan: " << p.describe();
    p.cluster_kernel = clusterHistExchange<2, false, true, kExScanFloor, ExchangeBug::NoLastRound>;
    ASSERT_GE(active_clusters(p.cluster_kernel, 4, p.smem, g, kExThreads), 1);
    for (int64_t n : {int64_t(3), int64_t(1000003)}) {
        std::vector<int> in;
        std::vector<unsigned> ref;
        make_samples(in, size_t(n), kBins, false, 0.01, 5);
        histogram_cpu(in.data(), size_t(n), kBins, ref);
        const bool pass = run(p, in, ref, kBins).pass();
        if (n < 4) EXPECT_TRUE(pass) << "no round: nothing to lose";
        else EXPECT_FALSE(pass) << "the lost last round must be caught at n = " << n;
    }
}

// The other planted bug: 16-bit counters never scanned and never careful. A
// count that passes 65535 wraps unseen: 1 bin and 2^24 samples must show it.
TEST(ExchangeBroken, UnscannedNarrowCountersAreCaught) {
    SKIP_WITHOUT_CC(90, "thread-block clusters");
    const common::Gpu& g = common::gpu();
    Plan p = make_plan(exchange(), 1, g, 2);
    ASSERT_TRUE(p.ok) << p.why_not;
    p.cluster_kernel = clusterHistExchange<1, true, true, kExScanFloor, ExchangeBug::NoScan>;
    ASSERT_GE(active_clusters(p.cluster_kernel, 2, p.smem, g, kExThreads), 1);
    for (int64_t n : {int64_t(60000), int64_t(1) << 24}) {
        std::vector<int> in;
        std::vector<unsigned> ref;
        make_samples(in, size_t(n), 1, false, 0.01, 9);
        histogram_cpu(in.data(), size_t(n), 1, ref);
        const bool pass = run(p, in, ref, 1).pass();
        if (n < 65536) EXPECT_TRUE(pass) << "no count (padding included) reaches 65536: nothing to lose";
        else EXPECT_FALSE(pass) << "a wrapped 16-bit count must be caught at n = " << n;
    }
}

}  // namespace
