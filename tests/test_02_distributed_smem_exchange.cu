// clusterHistExchange (02_distributed_smem/histogram_exchange.cuh) beyond what
// the all-kernels suite (test_02_distributed_smem.cu) covers: n around the
// tile and the int4 (1, 3, 5, one tile +- 1, not a multiple of anything),
// bins 1, 2, one block + 1, a prime, 2^19 and the largest, every cluster size,
// starts 1-3 ints past a 16-byte boundary, more groups of bins than the plan
// picks (unequal shares of the samples), and a planted bug the checks catch.
#include <string>
#include <vector>
#include <gtest/gtest.h>
#include "02_distributed_smem/distributed_smem.cuh"
#include "common/buffer.cuh"
#include "common/kernel_list.hpp"
#include "common/verify.hpp"
#include "tests/gpu_test.hpp"

namespace {

using namespace distributed_smem;

// ---- CPU-only ---------------------------------------------------------------

TEST(ExchangePlan, SharedMemoryAndRefusals) {
    // The counters, 16-byte aligned, then the fixed part (two staging buffers, tables).
    EXPECT_EQ(exchange_smem(1), 16 + kExExtraSmem);
    EXPECT_EQ(exchange_smem(32768), 131088 + kExExtraSmem);  // 32768 + 1 counters, 16-byte aligned
    EXPECT_LE(exchange_smem(32768), size_t(232448)) << "2^17 bins in a cluster of 4 must fit an H200 block";
    EXPECT_GT(exchange_smem(58112), size_t(232448)) << "a full block of counters leaves no room: groups needed";
    const common::Gpu h200 = common::gpu_of(testing_gpu::kH200);
    const Plan p = exchange_plan(4096, h200, 1);
    EXPECT_FALSE(p.ok);
    EXPECT_NE(p.why_not.find("2 or more"), std::string::npos) << p.why_not;
}

// ---- GPU ---------------------------------------------------------------------

common::Comparison run_exchange(const Plan& p, const std::vector<int>& in, const std::vector<unsigned>& ref,
                                int num_bins, size_t offset = 0) {
    common::DeviceBuffer<int> d_in(in.size() + offset);
    common::DeviceBuffer<unsigned> d_out{size_t(num_bins)};
    CHECK(cudaMemcpy(d_in.get() + offset, in.data(), in.size() * sizeof(int), cudaMemcpyHostToDevice));
    d_out.poison();
    CHECK(launch(p, d_in.get() + offset, in.size(), d_out.get(), num_bins));
    CHECK(cudaDeviceSynchronize());
    std::vector<unsigned> got;
    d_out.download(got);
    return common::compare(got.data(), ref.data(), size_t(num_bins));
}

const Variant& exchange() { return common::kernel_named(kernels(), "clusterHistExchange"); }

// Every n x bins x distribution at every cluster size that holds the bins.
TEST(Exchange, AwkwardSizesAtEveryClusterSize) {
    SKIP_WITHOUT_CC(90, "thread-block clusters");
    const common::Gpu& g = common::gpu();
    const int largest = largest_cluster_bins(g);
    const int tile = kExTile;
    for (int bins : {1, 2, bins_per_block(g) + 1, 131071, 1 << 19, largest})
        for (int64_t n : {int64_t(1), int64_t(3), int64_t(5), int64_t(tile - 1), int64_t(tile + 1),
                          int64_t(7 * tile + 13), int64_t(1000003)})
            for (bool skewed : {false, true}) {
                std::vector<int> in;
                std::vector<unsigned> ref;
                make_samples(in, size_t(n), bins, skewed, 0.01, uint64_t(n * 13 + bins + skewed));
                histogram_cpu(in.data(), size_t(n), bins, ref);
                for (int c : {0, 2, 4, 8, 16}) {
                    const Plan p = make_plan(exchange(), bins, g, c);
                    if (!p.ok) {
                        EXPECT_EQ(p.why_not.find("WAIVED"), std::string::npos) << p.why_not;
                        continue;
                    }
                    const common::Comparison r = run_exchange(p, in, ref, bins);
                    EXPECT_TRUE(r.pass()) << "c=" << p.cluster << " groups " << p.cluster_arg << " n=" << n << " bins=" << bins
                                          << (skewed ? " skewed" : " uniform") << ": " << r.mismatches
                                          << " bins wrong, first " << r.first_bad;
                }
            }
}

// The plan: 2^17 bins in a cluster of 4 with 32-bit counters; the largest
// bin count with 16-bit counters in one group (every sample read once).
TEST(Exchange, PlansForTheLargeBinCounts) {
    SKIP_WITHOUT_CC(90, "thread-block clusters");
    const common::Gpu& g = common::gpu();
    const Plan p = make_plan(exchange(), largest_cluster_bins(g), g);
    ASSERT_TRUE(p.ok) << p.why_not;
    EXPECT_EQ(p.cluster_arg, 1) << p.describe();  // the exchange's last argument: its groups
    const Plan q = make_plan(exchange(), 1 << 17, g);
    ASSERT_TRUE(q.ok) << q.why_not;
    EXPECT_EQ(q.cluster_arg, 1) << q.describe();
    EXPECT_EQ(q.note, "") << q.describe();
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
                for (int c : {2, 16}) {
                    const Plan p = make_plan(exchange(), bins, g, c);
                    ASSERT_TRUE(p.ok) << p.why_not;
                    EXPECT_TRUE(run_exchange(p, in, ref, bins, offset).pass())
                        << "c=" << c << " offset " << offset << " n=" << n << " bins " << bins;
                }
            }
}

// More groups than needed: 3 groups over the clusters of 2 (shares of the
// samples differ by a cluster), 5 groups where a group may own no bin at all.
TEST(Exchange, MoreGroupsThanThePlanPicks) {
    SKIP_WITHOUT_CC(90, "thread-block clusters");
    const common::Gpu& g = common::gpu();
    for (int groups : {3, 5})
        for (int bins : {7, 4099, 131071}) {
            Plan p = make_plan(exchange(), bins, g, 2);
            ASSERT_TRUE(p.ok) << p.why_not;
            ASSERT_GE(p.grid / p.cluster, groups);
            p.cluster_arg = groups;  // smaller slices: the shared memory planned is enough
            std::vector<int> in;
            std::vector<unsigned> ref;
            make_samples(in, 1000003, bins, true, 0.01, 31 + groups);
            histogram_cpu(in.data(), in.size(), bins, ref);
            EXPECT_TRUE(run_exchange(p, in, ref, bins).pass()) << groups << " groups, bins " << bins;
        }
}

// 16-bit counters (the plan takes them for the largest bin counts) at a few
// bins with millions of samples each: every count wraps at 65536 dozens of
// times, low and high halves, and the words themselves overflow and borrow.
TEST(Exchange, NarrowCountersWrapExactly) {
    SKIP_WITHOUT_CC(90, "thread-block clusters");
    const common::Gpu& g = common::gpu();
    for (int bins : {1, 2, 5, 4099})
        for (bool skewed : {false, true}) {
            Plan p = make_plan(exchange(), bins, g, 2);
            ASSERT_TRUE(p.ok) << p.why_not;
            p.cluster_kernel = clusterHistExchange<1, true>;  // the 32-bit plan's shared memory is more than enough
            ASSERT_GE(active_clusters(p.cluster_kernel, 2, p.smem, g, kExThreads), 1);
            std::vector<int> in;
            std::vector<unsigned> ref;
            make_samples(in, (size_t(1) << 24) + 7, bins, skewed, 0.01, 77 + bins);
            histogram_cpu(in.data(), in.size(), bins, ref);
            EXPECT_TRUE(run_exchange(p, in, ref, bins).pass()) << "16-bit counters, bins " << bins
                                                               << (skewed ? " skewed" : " uniform");
        }
    const Plan largest = make_plan(exchange(), largest_cluster_bins(g), g);
    ASSERT_TRUE(largest.ok) << largest.why_not;
    EXPECT_NE(largest.describe().find("16-bit"), std::string::npos) << largest.describe();
}

// The planted bug: the pipeline's drain left out (the last round is staged but
// never counted). Right only where there is no round at all (n < 4).
TEST(ExchangeBroken, ALostLastRoundIsCaught) {
    SKIP_WITHOUT_CC(90, "thread-block clusters");
    const common::Gpu& g = common::gpu();
    Plan p = make_plan(exchange(), 131071, g, 4);
    ASSERT_TRUE(p.ok) << p.why_not;
    p.cluster_kernel = clusterHistExchange<2, false, false>;
    ASSERT_GE(active_clusters(p.cluster_kernel, 4, p.smem, g, kExThreads), 1);
    for (int64_t n : {int64_t(3), int64_t(1000003)}) {
        std::vector<int> in;
        std::vector<unsigned> ref;
        make_samples(in, size_t(n), 131071, false, 0.01, 5);
        histogram_cpu(in.data(), size_t(n), 131071, ref);
        const bool pass = run_exchange(p, in, ref, 131071).pass();
        if (n < 4) EXPECT_TRUE(pass) << "no round: nothing to lose";
        else EXPECT_FALSE(pass) << "the lost last round must be caught at n = " << n;
    }
}

}  // namespace
