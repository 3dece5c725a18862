// Every 02_distributed_smem histogram kernel (part 1) against the CPU histogram:
// every kernel x every cluster size, n in {1, 31, 1000003, 2^24 + 7}, bins in
// {1, 7, 256, 4096, 65537, the largest a cluster holds}, uniform and skewed,
// 1% of the samples out of range (the clamp), outputs poisoned, exact counts.
#include <string>
#include <tuple>
#include <vector>
#include <thread>
#include <gtest/gtest.h>
#include "02_distributed_smem/distributed_smem.cuh"
#include "common/buffer.cuh"
#include "common/device.cuh"
#include "common/kernel_list.hpp"
#include "common/verify.hpp"
#include "tests/gpu_test.hpp"
#include "tests/histogram_test.hpp"

namespace {

using namespace distributed_smem;

// ---- CPU-only: the reference, the inputs, the plans ------------------------

TEST(HistogramCpu, ClampsLikeTheSeed) {
    EXPECT_EQ(bin_of(-1, 10), 0);
    EXPECT_EQ(bin_of(INT32_MIN, 10), 0);
    EXPECT_EQ(bin_of(0, 10), 0);
    EXPECT_EQ(bin_of(9, 10), 9);
    EXPECT_EQ(bin_of(10, 10), 9);
    EXPECT_EQ(bin_of(INT32_MAX, 10), 9);
    EXPECT_EQ(bin_of(5, 1), 0);
    const std::vector<int> in = {3, -7, 0, 4, 99, 2, 3, 3};
    std::vector<unsigned> h;
    histogram_cpu(in.data(), in.size(), 5, h);
    EXPECT_EQ(h, (std::vector<unsigned>{2, 0, 1, 3, 2}));
}

TEST(HistogramCpu, SamplesAreReproducibleAndShapedAsStated) {
    std::vector<int> a, b;
    make_samples(a, 3000017, 4096, false, 0.0, 5);
    make_samples(b, 3000017, 4096, false, 0.0, 5);
    EXPECT_EQ(a, b);
    std::vector<unsigned> h;
    histogram_cpu(a.data(), a.size(), 4096, h);
    for (int x : a) ASSERT_TRUE(x >= 0 && x < 4096);
    for (unsigned c : h) EXPECT_GT(c, 500u);  // uniform: ~732 each, none empty
    make_samples(a, 1000003, 4096, true, 0.0, 5);
    histogram_cpu(a.data(), a.size(), 4096, h);
    size_t hot = 0;
    for (int k = 0; k < 8; ++k) hot += h[size_t(k) * 4096 / 8];
    EXPECT_GT(hot, 0.89 * 1000003);  // skewed: 90% (+ their share of the uniform rest) in 8 bins
    make_samples(a, 1000003, 4096, false, 0.01, 5);
    size_t below = 0, above = 0;
    for (int x : a) { below += x < 0; above += x >= 4096; }
    EXPECT_GT(below, 4000u);
    EXPECT_GT(above, 4000u);
}

TEST(HistogramPlans, SizesEachKernelCannotHoldAreRefusedWithTheLimit) {
    const common::Gpu ampere = common::gpu_of(testing_gpu::preset_named("a100"));  // no clusters
    for (const Variant& v : kernels())
        if (needs_cluster(v.algo)) {
            // 256 bins fit one block: the fast kernels take C = 1, a plain launch (planned on the GPU:
            // EveryPresetsPlansFitItsLimits); the seed's kernel and the exchange are waived.
            if (launches_clusters(v, cluster_for(v, 256, ampere))) {
                const Plan p = make_plan(v, 256, ampere);
                EXPECT_FALSE(p.ok) << v.name;
                EXPECT_NE(p.why_not.find("WAIVED"), std::string::npos) << v.name;
            }
            // One bin more than a block holds needs a cluster: every cluster variant is waived.
            const Plan p = make_plan(v, bins_per_block(ampere) + 1, ampere);
            EXPECT_FALSE(p.ok) << v.name;
            EXPECT_NE(p.why_not.find("WAIVED"), std::string::npos) << v.name;
        }
    for (const char* fast : {"clusterHistVec4", "clusterHistVec4Agg", "clusterHistSliced", "clusterHistSlicedAgg",
                             "clusterHistBest"})
        EXPECT_FALSE(launches_clusters(common::kernel_named(kernels(), fast), 1)) << fast;
    const Plan p = make_plan(common::kernel_named(kernels(), "histSmemStatic"), kStaticBins + 1, ampere);
    EXPECT_FALSE(p.ok);
    EXPECT_NE(p.why_not.find("12288"), std::string::npos);
    const common::Gpu h200 = common::gpu_of(testing_gpu::kH200);
    EXPECT_EQ(pick_cluster(256, h200), 1);
    EXPECT_EQ(pick_cluster(58112, h200), 1);
    EXPECT_EQ(pick_cluster(58113, h200), 2);
    EXPECT_EQ(pick_cluster(131072, h200), 4);
    EXPECT_EQ(pick_cluster(16 * 58112, h200), 16);
    EXPECT_EQ(pick_cluster(16 * 58112 + 1, h200), 0);
}

// Under every preset (GPU_PROFILE's limits, planned for without a GPU): cluster launches are
// waived below 9.0 before any CUDA call, and no cluster size picked is larger than the preset runs.
TEST(HistogramPlans, EveryPresetWaivesClusterLaunchesBelow90AndPicksClustersItRuns) {
    for (const common::Gpu& g : testing_gpu::preset_gpus()) {
        for (const Variant& v : kernels())
            if (g.cc < 90 && launches_clusters(v, cluster_for(v, 4096, g))) {
                const Plan p = make_plan(v, 4096, g);
                EXPECT_FALSE(p.ok) << g.profile << " " << v.name;
                EXPECT_NE(p.why_not.find("WAIVED: needs sm_90"), std::string::npos) << g.profile << ": " << p.why_not;
            }
        for (int bins : {1, 256, 4096, 58112, 131072, 1 << 19, 1 << 20})
            EXPECT_LE(pick_cluster(bins, g), std::max(1, g.max_cluster)) << g.profile << " bins " << bins;
    }
}

// On the GPU, under every preset: no plan asks for more shared memory per block or a larger
// cluster than the preset allows, a cluster launch only where it has clusters, and the fast
// kernels run (C = 1, plainly) wherever histSmem runs the same bins (a preset larger than the
// GPU the test runs on, or its GPU_PROFILE, waives both: request_dynamic_smem asks that GPU).
TEST(HistogramPlans, EveryPresetsPlansFitItsLimits) {
    SKIP_WITHOUT_GPU();
    for (const common::Gpu& g : testing_gpu::preset_gpus())
        for (const std::vector<Variant>* list : {&kernels(), &pitfalls()})
            for (const Variant& v : *list)
                for (int bins : {256, 4096, 12289, 16384, 58112, 131072, 1 << 19, 1000003, 1 << 20})
                    for (int c : {0, 1, 2, 4, 8, 16}) {
                        const Plan p = make_plan(v, bins, g, c);
                        const std::string at = g.profile + " " + v.name + " bins " + std::to_string(bins) + " c=" +
                                               std::to_string(c) + ": " + (p.ok ? p.describe() : p.why_not);
                        if (needs_cluster(v.algo) && !launches_clusters(v, cluster_for(v, bins, g, c)) &&
                            make_plan(common::kernel_named(kernels(), "histSmem"), bins, g).ok) {
                            EXPECT_TRUE(p.ok && p.plain_launch) << at;
                        }
                        if (!p.ok) continue;
                        EXPECT_LE(p.smem, g.smem_per_block) << at;
                        EXPECT_LE(p.cluster, std::max(1, g.max_cluster)) << at;
                        EXPECT_TRUE(p.plain_kernel || p.plain_launch || g.has(90)) << at;
                        EXPECT_GE(p.grid, 1) << at;
                    }
}

// make_plan refuses what is not a bin count at all, before any CUDA call (so this runs without a
// GPU): 0 bins (a launch would index hist[-1], histSmem would ask for -1 counters of shared
// memory) and more than kMaxBins (histGlobalAtomics has no limit of its own).
TEST(HistogramPlans, BinCountsOutsideTheRangeAreRefused) {
    const common::Gpu h200 = common::gpu_of(testing_gpu::kH200);
    for (const std::vector<Variant>* list : {&kernels(), &pitfalls()})
        for (const Variant& v : *list)
            for (int bad : {0, -1, kMaxBins + 1}) {
                const Plan p = make_plan(v, bad, h200);
                EXPECT_FALSE(p.ok) << v.name << " bins " << bad;
                EXPECT_NE(p.why_not.find("invalid"), std::string::npos) << v.name << ": " << p.why_not;
                EXPECT_NE(p.why_not.find(std::to_string(bad)), std::string::npos) << p.why_not;
            }
    EXPECT_EQ(bins_problem(1), "");
    EXPECT_EQ(bins_problem(kMaxBins), "");
    EXPECT_NE(bins_problem(0), "");
    EXPECT_NE(bins_problem(int64_t(kMaxBins) + 1), "");
    EXPECT_NE(bins_problem(int64_t(1) << 40), "");
}

// ---- GPU: every kernel x cluster size x size x distribution -----------------

// The CPU histogram of a large input on every core (the same counts as histogram_cpu).
void histogram_cpu_parallel(const std::vector<int>& in, int num_bins, std::vector<unsigned>& hist) {
    const unsigned nt = std::max(1u, std::min(32u, std::thread::hardware_concurrency()));
    std::vector<std::vector<unsigned>> part(nt);
    std::vector<std::thread> pool;
    const size_t chunk = (in.size() + nt - 1) / nt;
    for (unsigned t = 0; t < nt; ++t)
        pool.emplace_back([&, t] {
            const size_t lo = std::min(in.size(), t * chunk), hi = std::min(in.size(), lo + chunk);
            histogram_cpu(in.data() + lo, hi - lo, num_bins, part[t]);
        });
    for (std::thread& th : pool) th.join();
    hist.assign(size_t(num_bins), 0u);
    for (const auto& p : part) for (int b = 0; b < num_bins; ++b) hist[size_t(b)] += p[size_t(b)];
}

TEST(HistogramCpu, ParallelReferenceMatches) {
    std::vector<int> in;
    std::vector<unsigned> a, b;
    make_samples(in, 1000003, 777, true, 0.01, 3);
    histogram_cpu(in.data(), in.size(), 777, a);
    histogram_cpu_parallel(in, 777, b);
    EXPECT_EQ(a, b);
}

const int kLargest = -1;  // replaced by largest_cluster_bins() on the device
const std::vector<int64_t> kN = {1, 31, 1000003, (int64_t(1) << 24) + 7};
const std::vector<int> kBins = {1, 7, 256, 4096, 65537, kLargest};

using histogram_test::run;  // a plan on the GPU against the CPU (tests/histogram_test.hpp)

class Histogram : public ::testing::TestWithParam<std::tuple<int64_t, int, bool>> {
  protected:
    // Every plan the test must check: cluster kernels at every cluster size that holds the bins.
    void check_all(bool cluster_kernels) {
        const common::Gpu& g = common::gpu();
        const int64_t n = std::get<0>(GetParam());
        int bins = std::get<1>(GetParam());
        if (bins == kLargest) bins = cluster_refusal(g).empty() ? largest_cluster_bins(g) : bins_per_block(g);
        const bool skewed = std::get<2>(GetParam());
        std::vector<int> in;
        std::vector<unsigned> ref;
        make_samples(in, size_t(n), bins, skewed, 0.01, uint64_t(n * 31 + bins * 7 + skewed));
        histogram_cpu(in.data(), size_t(n), bins, ref);
        int ran = 0;
        for (const Variant& v : kernels()) {
            const std::vector<int> sizes = v.cluster == 0 ? std::vector<int>{0, 1, 2, 4, 8, 16}
                                                          : std::vector<int>{v.cluster};
            for (int c : sizes) {
                if (launches_clusters(v, cluster_for(v, bins, g, c)) != cluster_kernels) continue;
                const Plan p = make_plan(v, bins, g, c);
                if (!p.ok) {  // "n/a": more bins than this kernel and cluster size hold; "WAIVED": a cluster
                              // larger than this GPU (or GPU_PROFILE) allows (8 on a 12.0 GPU), or one the
                              // occupancy calculator places nowhere (a MIG slice); runs_here fails it where all
                              // must run
                    if (p.why_not.find("WAIVED") != std::string::npos)
                        testing_gpu::runs_here(std::string(v.name) + " c=" + std::to_string(c), p.why_not);
                    continue;
                }
                EXPECT_EQ(p.plain_kernel != nullptr || p.plain_launch, !cluster_kernels) << v.name << " c=" << c;
                const common::Comparison r = run(p, in, ref, bins);
                ++ran;
                EXPECT_TRUE(r.pass()) << v.name << " cluster " << p.cluster << " n=" << n << " bins=" << bins
                                      << (skewed ? " skewed" : " uniform") << ": " << r.mismatches << " of " << r.n
                                      << " bins wrong, first " << r.first_bad;
            }
        }
        EXPECT_GT(ran, 0);
    }
};

// Plain launches: the kernels before clusterHist, and the fast ones at C = 1.
TEST_P(Histogram, PlainKernelsMatchCpu) {
    SKIP_WITHOUT_GPU();
    check_all(false);
}

TEST_P(Histogram, ClusterKernelsMatchCpu) {
    SKIP_WITHOUT_CC(90, "thread-block clusters");
    check_all(true);
}

INSTANTIATE_TEST_SUITE_P(
    AllSizes, Histogram,
    ::testing::Combine(::testing::ValuesIn(kN), ::testing::ValuesIn(kBins), ::testing::Bool()),
    [](const ::testing::TestParamInfo<Histogram::ParamType>& p) {
        const int b = std::get<1>(p.param);
        return "n" + std::to_string(std::get<0>(p.param)) + "_bins" + (b == kLargest ? "Largest" : std::to_string(b)) +
               (std::get<2>(p.param) ? "_skewed" : "_uniform");
    });

// The vectorized kernels peel samples before the first 16-byte boundary: start the input 1, 2, 3 ints in.
TEST(HistogramVec4, UnalignedInputs) {
    SKIP_WITHOUT_GPU();
    const common::Gpu& g = common::gpu();
    const bool clusters = cluster_refusal(g).empty();  // without them, C = 1 only (a plain launch)
    for (size_t offset : {1, 2, 3})
        for (int64_t n : {1, 2, 3, 5, 7, 1000003}) {
            std::vector<int> in;
            std::vector<unsigned> ref;
            make_samples(in, size_t(n), 4099, false, 0.01, 99 + n + offset);
            histogram_cpu(in.data(), size_t(n), 4099, ref);
            for (const Variant& v : kernels())
                if (v.cluster == 0)
                    for (int c : {1, 4}) {
                        if (v.algo == Algo::Exchange && c == 1) continue;  // needs 2 or more blocks
                        if (!clusters && launches_clusters(v, c)) continue;
                        const Plan p = make_plan(v, 4099, g, c);
                        ASSERT_TRUE(p.ok) << p.why_not;
                        EXPECT_TRUE(run(p, in, ref, 4099, offset).pass()) << v.name << " c=" << c << " offset " << offset
                                                                          << " n=" << n;
                    }
        }
}

// The largest n the program admits (2^32 - 1 samples, 16 GiB): every index past 2^31 must be
// 64-bit. Every kernel (the cluster ones at the size they pick), and the planted bug below.
__global__ void histSmemWrapBug(const int* in, size_t n, unsigned* hist, int num_bins);

TEST(HistogramLargest, EveryKernelAtTheLargestN) {
    SKIP_WITHOUT_GPU();
    const size_t n = size_t(kMaxSamples);
    const int bins = 4099;
    SKIP_UNLESS_MEMORY("n = 2^32 - 1", 4.0 * n + (1 << 30), 2.5 * 4.0 * n);
    // Allocated right after the check, not after the seconds of CPU work below, in which another
    // process on the GPU could take the memory (as with three copies of check_gpus.sh at once).
    common::DeviceBuffer<int> d_in(n);
    common::DeviceBuffer<unsigned> d_out{size_t(bins)};
    std::vector<int> in;
    std::vector<unsigned> ref;
    make_samples(in, n, bins, false, 0.01, 4242);
    histogram_cpu_parallel(in, bins, ref);
    d_in.upload(in);
    std::vector<int>().swap(in);
    const common::Gpu& g = common::gpu();
    std::vector<unsigned> got;
    int ran = 0, waived = 0;
    for (const Variant& v : kernels()) {
        const Plan p = make_plan(v, bins, g);
        if (!p.ok) {
            EXPECT_EQ(p.why_not.find("n/a"), std::string::npos) << v.name << ": " << p.why_not;
            if (testing_gpu::everything_must_run()) ADD_FAILURE() << v.name << " waived on this 9.0 GPU: " << p.why_not;
            ++waived;
            continue;
        }
        d_out.poison();
        CHECK(launch(p, d_in.get(), n, d_out.get(), bins));
        CHECK(cudaDeviceSynchronize());
        d_out.download(got);
        const common::Comparison c = common::compare(got.data(), ref.data(), size_t(bins));
        EXPECT_TRUE(c.pass()) << v.name << " at n = 2^32 - 1: " << common::describe(c, got.data(), ref.data());
        ++ran;
    }
    EXPECT_EQ(ran + waived, int(kernels().size()));
    EXPECT_GE(ran, 8) << "the three kernels before clusterHist and the five fast ones (C = 1) run on every GPU";
    Plan bug;
    bug.ok = true;
    bug.num_bins = bins;
    bug.plain_kernel = histSmemWrapBug;
    bug.grid = 2 * g.sms;
    bug.smem = bins * 4;
    d_out.poison();
    CHECK(launch(bug, d_in.get(), n, d_out.get(), bins));
    CHECK(cudaDeviceSynchronize());
    d_out.download(got);
    const common::Comparison c = common::compare(got.data(), ref.data(), size_t(bins));
    EXPECT_FALSE(c.pass()) << "the planted wrap-around bug must fail at the largest n too";
    std::printf("planted bug at n = 2^32 - 1: %s\n", common::describe(c, got.data(), ref.data()).c_str());
}

// ---- A deliberately wrong kernel must be caught ------------------------------
// histSmem with the clamp replaced by a wrap-around (v mod bins): right for
// every in-range sample, so a test on in-range data alone passes it; the 1% of
// out-of-range samples every case above includes catches it.
__global__ void histSmemWrapBug(const int* in, size_t n, unsigned* hist, int num_bins) {
    extern __shared__ unsigned smem_bug[];
    for (int i = threadIdx.x; i < num_bins; i += blockDim.x) smem_bug[i] = 0;
    __syncthreads();
    for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
        atomicAdd(&smem_bug[unsigned(in[i]) % unsigned(num_bins)], 1u);
    __syncthreads();
    for (int i = threadIdx.x; i < num_bins; i += blockDim.x)
        if (smem_bug[i]) atomicAdd(&hist[i], smem_bug[i]);
}

TEST(HistogramBroken, WrapInsteadOfClampIsCaught) {
    SKIP_WITHOUT_GPU();
    Plan p;
    p.ok = true;
    p.num_bins = 4096;
    p.plain_kernel = histSmemWrapBug;
    p.grid = 264;
    p.smem = 4096 * 4;
    for (double oor : {0.0, 0.01}) {
        std::vector<int> in;
        std::vector<unsigned> ref;
        make_samples(in, 1000003, 4096, false, oor, 7);
        histogram_cpu(in.data(), in.size(), 4096, ref);
        const bool pass = run(p, in, ref, 4096).pass();
        if (oor == 0.0) EXPECT_TRUE(pass) << "in range, the bug is invisible";
        else EXPECT_FALSE(pass) << "out of range, the wrap-around must be caught";
    }
}

// ---- launch() and make_plan() on the GPU ------------------------------------

// A plan made for many bins must still launch after a plan for few bins of the
// same kernel (the kernel's dynamic shared memory limit is the kernel's, not the plan's).
TEST(HistogramPlans, AnEarlierLargerPlanStillLaunches) {
    SKIP_WITHOUT_GPU();
    const common::Gpu& g = common::gpu();
    // histSmem and the fast kernel at C = 1 (plain launches, any GPU); at C = 2 (a cluster launch).
    std::vector<std::pair<const char*, int>> plans = {{"histSmem", 1}, {"clusterHistSliced", 1}};
    if (cluster_refusal(g).empty() && g.max_cluster >= 2) plans.push_back({"clusterHistSliced", 2});
    const int few = 256;
    for (const auto& [name, c] : plans) {
        const Variant& v = common::kernel_named(kernels(), name);
        const int many = c * bins_per_block(g);
        const Plan big = make_plan(v, many, g, c);
        ASSERT_TRUE(big.ok) << name << ": " << big.why_not;
        const Plan small = make_plan(v, few, g, c);
        ASSERT_TRUE(small.ok) << name << ": " << small.why_not;
        std::vector<int> in;
        std::vector<unsigned> ref;
        make_samples(in, 1000003, many, false, 0.01, 11);
        histogram_cpu(in.data(), in.size(), many, ref);
        EXPECT_TRUE(run(big, in, ref, many).pass()) << name << " c=" << c << ": the plan for " << many
                                                    << " bins, launched after one for " << few;
    }
}

// launch() reports a launch the GPU refuses instead of leaving zeroed counts and no error.
TEST(HistogramPlans, LaunchReturnsTheLaunchError) {
    SKIP_WITHOUT_GPU();
    const common::Gpu& g = common::gpu();
    common::DeviceBuffer<int> d_in(1000);
    common::DeviceBuffer<unsigned> d_out(4096);
    CHECK(cudaMemset(d_in.get(), 0, d_in.bytes()));
    Plan p = make_plan(common::kernel_named(kernels(), "histSmem"), 4096, g);
    ASSERT_TRUE(p.ok) << p.why_not;
    p.threads = 4096;  // more threads than a block may have
    EXPECT_NE(launch(p, d_in.get(), 1000, d_out.get(), 4096), cudaSuccess);
    EXPECT_EQ(cudaGetLastError(), cudaSuccess) << "the error was returned, not left behind";
    if (cluster_refusal(g).empty()) {
        Plan c = make_plan(common::kernel_named(kernels(), "clusterHist_c2"), 4096, g);
        ASSERT_TRUE(c.ok) << c.why_not;
        c.cluster = 64;  // no device runs clusters of 64
        EXPECT_NE(launch(c, d_in.get(), 1000, d_out.get(), 4096), cudaSuccess);
        (void)cudaGetLastError();
    }
    CHECK(cudaDeviceSynchronize());
}

// The limits the command line enforces hold where launch() is entered: too many samples (a
// 32-bit count could wrap), a bad bin count, a bin count the plan was not made for (its slices
// and shared memory are sized for its own) or a refused plan return an error before any CUDA
// call (so no GPU is needed to see it).
TEST(HistogramPlans, LaunchRefusesWhatTheCommandLineRefuses) {
    Plan p;
    p.ok = true;
    p.num_bins = 256;
    EXPECT_EQ(launch(p, nullptr, size_t(kMaxSamples) + 1, nullptr, 256), cudaErrorInvalidValue);
    EXPECT_EQ(launch(p, nullptr, 1000, nullptr, 512), cudaErrorInvalidValue);
    for (int bad : {0, kMaxBins + 1}) {
        p.num_bins = bad;
        EXPECT_EQ(launch(p, nullptr, 1000, nullptr, bad), cudaErrorInvalidValue) << bad;
    }
    p.num_bins = 256;
    p.ok = false;
    EXPECT_EQ(launch(p, nullptr, 1000, nullptr, 256), cudaErrorInvalidValue);
}

}  // namespace
