// Part 2 of 02_distributed_smem (synchronization): the litmus tests' fenced and atomic variants
// never show a weak outcome, every bounded wait ends, the barrier kernels check themselves, the
// correct block reduction matches the CPU at many sizes, a deliberately broken one is caught, and
// the barrier pitfalls run under compute-sanitizer synccheck (on this very binary, as DISABLED_
// tests that no normal run executes): the correct kernels are clean, the divergent ones finish
// (synccheck did not flag them on the H200: README, Part 2, section 6), and the barrier after an
// early return is caught by the CPU reference. (Seeds 000 and 004: the top README's Sources section.)
#include <algorithm>
#include <array>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>
#include <unistd.h>
#include <sys/wait.h>
#include <gtest/gtest.h>
#include "02_distributed_smem/sync.cuh"
#include "common/buffer.cuh"
#include "common/cluster.cuh"
#include "common/data.hpp"
#include "tests/gpu_test.hpp"

namespace {

using namespace distributed_smem::sync;

common::DeviceInfo device() {
    int id = 0;
    CHECK(cudaGetDevice(&id));
    return common::require_device(id);
}

// ------------------------------------------------------------------------------ CPU only
TEST(SyncCpu, BlockSumsReference) {
    std::vector<int> in(2 * kReduceBlock + 3);
    for (size_t i = 0; i < in.size(); ++i) in[i] = int(i) - 100;
    const std::vector<int> s = block_sums_cpu(in);
    ASSERT_EQ(s.size(), 3u);
    long long total = 0;
    for (int v : s) total += v;
    long long expect = 0;
    for (int v : in) expect += v;
    EXPECT_EQ(total, expect);
    EXPECT_EQ(s[2], (2 * kReduceBlock - 100) + (2 * kReduceBlock + 1 - 100) + (2 * kReduceBlock + 2 - 100));
}

TEST(SyncCpu, LitmusShapeReachesTheInstanceCount) {
    common::DeviceInfo d;
    for (int sms : {1, 2, 3, 78, 108, 132, 144})
        for (unsigned long long want : {1ull, 1000ull, 1000000ull, 1048577ull}) {
            d.sms = sms;
            const LitmusShape s = litmus_shape(d, want);
            EXPECT_GE(s.instances(), want) << sms << " SMs";
            EXPECT_GE(s.pairs, 1);
            EXPECT_LE(2 * s.pairs, std::max(2, sms)) << "a litmus grid must fit one block per SM";
        }
}

TEST(SyncCpu, CsvRowsAndNumbers) {
    SyncReport r;
    testing::internal::CaptureStdout();
    r.add({"litmus MP", "plain", "a, b", 12, "weak outcomes", "say \"x\"", "-"});
    r.add({"fence", "__threadfence", "1 x 32", 812.25, "cycles/iter", "", "-"});
    testing::internal::GetCapturedStdout();
    const std::string csv = r.csv({{"gpu", "X"}});
    EXPECT_NE(csv.find("# gpu: X\nexperiment,variant,config,value,unit,result,note\n"), std::string::npos);
    EXPECT_NE(csv.find("litmus MP,plain,\"a, b\",12,weak outcomes,-,\"say \"\"x\"\"\""), std::string::npos);
    EXPECT_NE(csv.find("fence,__threadfence,1 x 32,812.2,cycles/iter,-,"), std::string::npos) << csv;
    EXPECT_TRUE(r.all_pass());
    testing::internal::CaptureStdout();  // add() prints the row: keep the test log clean
    r.add({"x", "y", "z", 1, "u", "", "FAIL"});
    testing::internal::GetCapturedStdout();
    EXPECT_FALSE(r.all_pass());
}

// ------------------------------------------------------------------------------ litmus tests
// The parameter of the litmus suites is an Order; its test name.
std::string order_test_name(const ::testing::TestParamInfo<int>& info) {
    return info.param == 0 ? "plain" : info.param == 1 ? "volatile" : info.param == 2 ? "fence" : "atomic";
}

class MessagePassing : public ::testing::TestWithParam<int> {};
TEST_P(MessagePassing, FencedAndAtomicNeverWeakAndEveryWaitEnds) {
    SKIP_WITHOUT_GPU();
    const common::DeviceInfo dev = device();
    const Order o = Order(GetParam());
    const LitmusResult r = run_message_passing(dev, o, litmus_shape(dev, 1000000));
    ASSERT_EQ(r.refused, "") << order_name(o) << ": nothing launched";
    EXPECT_GE(r.instances, 1000000u);
    EXPECT_EQ(r.timeouts, 0u) << order_name(o) << ": a wait timed out (producer and consumer not co-resident?)";
    if (!testing_gpu::profile_set())  // a profile's smaller blocks may share an SM (sync_litmus.cuh)
        EXPECT_EQ(r.same_sm_pairs, 0) << "producer and consumer must run on different SMs";
    if (litmus_must_be_strong(o)) EXPECT_EQ(r.weak, 0u) << order_name(o) << " showed the weak outcome";
    std::printf("    MP %-14s weak %llu of %llu\n", order_name(o), r.weak, r.instances);
}
INSTANTIATE_TEST_SUITE_P(AllOrders, MessagePassing, ::testing::Range(0, kOrders), order_test_name);

class StoreBuffering : public ::testing::TestWithParam<int> {};
TEST_P(StoreBuffering, FencedAndSeqCstNeverWeakAndEveryInstanceRuns) {
    SKIP_WITHOUT_GPU();
    const common::DeviceInfo dev = device();
    const Order o = Order(GetParam());
    const LitmusResult r = run_store_buffering(dev, o, litmus_shape(dev, 1000000));
    ASSERT_EQ(r.refused, "") << order_name(o) << ": nothing launched";
    EXPECT_EQ(r.timeouts, 0u) << order_name(o);
    if (!testing_gpu::profile_set()) EXPECT_EQ(r.same_sm_pairs, 0);
    EXPECT_EQ(r.outcome[0] + r.outcome[1] + r.outcome[2] + r.outcome[3], r.instances);
    if (litmus_must_be_strong(o)) EXPECT_EQ(r.weak, 0u) << order_name(o) << " showed r1 = r2 = 0";
    std::printf("    SB %-14s (0,0)/(0,1)/(1,0)/(1,1) = %llu/%llu/%llu/%llu\n", order_name(o), r.outcome[0],
                r.outcome[1], r.outcome[2], r.outcome[3]);
}
INSTANTIATE_TEST_SUITE_P(AllOrders, StoreBuffering, ::testing::Range(0, kOrders), order_test_name);

// ------------------------------------------------------------------------------ volatile
TEST(SpinWait, VolatileAndAtomicSeeTheFlag) {
    SKIP_WITHOUT_GPU();
    const common::DeviceInfo dev = device();
    for (int which : {1, 2}) {
        const WaitResult w = run_wait(dev, which, 20000, 1 << 20);
        ASSERT_EQ(w.refused, "") << "nothing launched";
        EXPECT_TRUE(w.seen) << (which == 1 ? "volatile" : "atomic") << " wait timed out after " << w.spins << " spins";
        EXPECT_LT(w.spins, 1 << 20);
    }
}

// The plain load is hoisted out of the loop: the wait cannot see the flag, and the bound ends it.
TEST(SpinWait, PlainLoadTimesOutInsteadOfHanging) {
    SKIP_WITHOUT_GPU();
    const common::DeviceInfo dev = device();
    const WaitResult w = run_wait(dev, 0, 20000, 1 << 20);
    ASSERT_EQ(w.refused, "") << "nothing launched";
    EXPECT_FALSE(w.seen) << "the plain load saw the flag: the compiler did not hoist it this time";
    EXPECT_EQ(w.spins, 1 << 20);
}

// ------------------------------------------------------------------------------ barriers
TEST(Barriers, GridSyncAndClusterSyncCheckThemselves) {
    SKIP_WITHOUT_GPU();
    const common::DeviceInfo dev = device();
    // Not a limit a profile lowers: every GPU since Pascal has it.
    ASSERT_TRUE(common::gpu().cooperative) << "cooperative launch not supported";
    {
        common::DeviceBuffer<long long> cyc(dev.sms), ns(dev.sms);
        common::DeviceBuffer<unsigned> counters(2);
        CHECK(cudaMemset(counters.get(), 0, 2 * sizeof(unsigned)));
        int iters = 10, checks = 50;
        unsigned* arrived = counters.get();
        unsigned* wrong = counters.get() + 1;
        long long* c = cyc.get();
        long long* t = ns.get();
        void* args[] = {&iters, &checks, &arrived, &wrong, &c, &t};
        CHECK(cudaLaunchCooperativeKernel((void*)barrierGridSync, dim3(dev.sms), dim3(256), args, 0, 0));
        CHECK(cudaDeviceSynchronize());
        std::vector<unsigned> w;
        counters.download(w);
        EXPECT_EQ(w[0], unsigned(dev.sms * checks));
        EXPECT_EQ(w[1], 0u);
    }
    SKIP_IF_WAIVED(cluster_sync_refusal());
    for (int cs : {2, 8}) {
        const int grid = cs * 4;
        if (!testing_gpu::runs_here("cluster " + std::to_string(cs), cluster_sync_active(cs, grid) > 0
                                                                          ? ""
                                                                          : "the GPU places no such cluster"))
            continue;
        common::DeviceBuffer<long long> cyc(grid), ns(grid);
        common::DeviceBuffer<unsigned> wrong(1);
        CHECK(cudaMemset(wrong.get(), 0, sizeof(unsigned)));
        CHECK(common::launch_cluster(barrierClusterSync, grid, 128, 0, cs, 10, 50, wrong.get(), cyc.get(), ns.get()));
        CHECK(cudaDeviceSynchronize());
        std::vector<unsigned> w;
        wrong.download(w);
        EXPECT_EQ(w[0], 0u) << "cluster " << cs;
        std::vector<long long> c;
        cyc.download(c);
        EXPECT_GT(c[0], 0) << "cluster kernel did not run its sm_90 body";
    }
}

TEST(Barriers, BlockReductionMatchesCpuAtManySizes) {
    SKIP_WITHOUT_GPU();
    for (int n : {1, kReduceBlock - 1, kReduceBlock, kReduceBlock + 1, 1000, 10007, 65536 + 17, 1 << 20}) {
        std::vector<int> in(n);
        common::fill_uniform(in.data(), in.size(), 77u + n, -1000, 1000);
        EXPECT_EQ(count_wrong_block_sums(reduceBlockSmem, in), 0) << "n = " << n;
    }
}

// A deliberately broken reduction (drops each block's last element): the check must catch it.
__global__ void reduceDropsLast(const int* in, int n, int* out) {
    __shared__ int s[kReduceBlock];
    const int tid = threadIdx.x;
    const size_t i = size_t(blockIdx.x) * blockDim.x + tid;
    s[tid] = i < size_t(n) && tid != kReduceBlock - 1 ? in[i] : 0;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if (tid < stride) s[tid] += s[tid + stride];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = s[0];
}
TEST(Barriers, BrokenReductionIsCaught) {
    SKIP_WITHOUT_GPU();
    std::vector<int> in(4 * kReduceBlock);
    common::fill_uniform(in.data(), in.size(), 5u, 1, 1000);  // never 0: a dropped element always shows
    EXPECT_EQ(count_wrong_block_sums(reduceDropsLast, in), 4);
}

// ------------------------------------------------------------------------------ pitfalls under synccheck
// Children: run only by the parent tests below, under compute-sanitizer (DISABLED_ otherwise).
std::vector<int> pitfall_input() {
    std::vector<int> in(1000);
    common::fill_uniform(in.data(), in.size(), 3u, 1, 1000);
    return in;
}
void run_kernel_once(ReduceKernel k, const std::vector<int>& in, size_t outputs) {
    common::DeviceBuffer<int> d_in(in.size()), d_out(outputs);
    d_in.upload(in);
    k<<<int((in.size() + kReduceBlock - 1) / kReduceBlock), kReduceBlock>>>(d_in.get(), int(in.size()), d_out.get());
    CHECK_LAUNCH();
    CHECK(cudaDeviceSynchronize());
}
TEST(SyncPitfallChild, DISABLED_Correct) {
    EXPECT_EQ(count_wrong_block_sums(reduceBlockSmem, pitfall_input()), 0);
    run_kernel_once(syncPairSwap, pitfall_input(), 1000);
}
TEST(SyncPitfallChild, DISABLED_DivergentBarrier) { count_wrong_block_sums(reduceDivergentBarrier, pitfall_input()); }
// (No child for syncIfElse, seed 000's form: it hangs on the H200, with or without synccheck.)
TEST(SyncPitfallChild, DISABLED_DivergentLoop) { run_kernel_once(syncInDivergentLoop, pitfall_input(), 4); }
// The threads that return early never write their shared-memory words, so the tree adds
// whatever the SM held: here the partial sums of a large reduction launched just before, in the
// same stream with no host wait between (a wait lets another process's kernels onto the SMs on
// a shared GPU, e.g. make check-gpus running chapters side by side, and they may leave zeros;
// compute-sanitizer waits after every kernel). Up to 10 tries; returns the wrong block sums.
int early_return_wrong_sums(int& tries) {
    std::vector<int> big(1 << 20);
    common::fill_uniform(big.data(), big.size(), 9u, 1, 1000);
    const std::vector<int> in = pitfall_input(), ref = block_sums_cpu(in);
    common::DeviceBuffer<int> d_big(big.size()), d_sums(big.size() / kReduceBlock), d_in(in.size()), d_out(ref.size());
    d_big.upload(big);
    d_in.upload(in);
    int wrong = 0;
    for (tries = 1; tries <= 10; ++tries) {
        d_out.poison();
        reduceBlockSmem<<<int(d_sums.size()), kReduceBlock>>>(d_big.get(), int(big.size()), d_sums.get());
        reduceEarlyReturn<<<int(ref.size()), kReduceBlock>>>(d_in.get(), int(in.size()), d_out.get());
        CHECK_LAUNCH();
        CHECK(cudaDeviceSynchronize());
        std::vector<int> got;
        d_out.download(got);
        for (size_t b = 0; b < ref.size(); ++b) wrong += got[b] != ref[b];
        if (wrong > 0) break;
    }
    tries = std::min(tries, 10);
    return wrong;
}
TEST(SyncPitfallChild, DISABLED_EarlyReturn) {
    int tries = 0;
    const int wrong = early_return_wrong_sums(tries);
    std::printf("reduceEarlyReturn: %d wrong block sums of 4 (try %d)\n", wrong, tries);
}

// The child's exit code and output; ran: its one test ran (a filter that matches nothing also
// exits 0, and compute-sanitizer prints its summary all the same).
struct Child {
    int code;
    std::string out;
    bool ran() const { return out.find("[==========] 1 test from 1 test ") != std::string::npos; }
};
Child run_child_under(const std::string& tool, const std::string& test) {
    std::string sanitizer;
    for (const char* s : {"compute-sanitizer", "/usr/local/cuda/bin/compute-sanitizer"}) {
        if (std::system((std::string("command -v ") + s + " >/dev/null 2>&1").c_str()) == 0) { sanitizer = s; break; }
    }
    if (sanitizer.empty()) return {-2, "compute-sanitizer not found"};
    char self[PATH_MAX] = {};
    const ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len <= 0) return {-3, "cannot find this binary"};
    // timeout kills its whole process group (the sanitizer and the program under it) if a pitfall hangs.
    const std::string cmd = "timeout -k 5 90 " + sanitizer + " --tool " + tool + " --error-exitcode 99 " + self +
                            " --gtest_also_run_disabled_tests --gtest_filter=SyncPitfallChild." + test + " 2>&1";
    Child c{-1, ""};
    FILE* p = popen(cmd.c_str(), "r");
    if (!p) return c;
    char buf[4096];
    size_t got;
    while ((got = fread(buf, 1, sizeof buf, p)) > 0) c.out.append(buf, got);
    const int status = pclose(p);
    c.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return c;
}

// Skips without compute-sanitizer; fails where the child did not run.
#define SKIP_WITHOUT_SANITIZER(child)                                                                 \
    do {                                                                                             \
        if ((child).code == -2) {                                                                    \
            if (testing_gpu::gpu_required()) FAIL() << "REQUIRE_GPU is set but compute-sanitizer is missing"; \
            GTEST_SKIP() << "compute-sanitizer not found";                                           \
        }                                                                                            \
        ASSERT_TRUE((child).ran()) << "the child test did not run:\n" << (child).out;              \
    } while (0)

TEST(SyncPitfalls, SynccheckPassesTheCorrectBarrier) {
    SKIP_WITHOUT_GPU();
    const Child c = run_child_under("synccheck", "DISABLED_Correct");
    SKIP_WITHOUT_SANITIZER(c);
    EXPECT_EQ(c.code, 0) << c.out;
}

// Two divergent barriers: seed 004's (which nvcc turns into a predicated barrier that the
// hardware lets through) and a loop with per-thread trip counts (a diverged warp at the barrier).
// Measured on the H200 (CUDA 13.0): both finish and synccheck reports neither (README, Part 2,
// section 6). The test keeps running them under synccheck, prints what it says, and requires
// that both finish; it does not require a report that the tool was never seen to make. (Seed
// 000's if/else form is not run: it hangs on the H200.)
TEST(SyncPitfalls, DivergentBarriersFinishUnderSynccheck) {
    SKIP_WITHOUT_GPU();
    for (const char* child : {"DISABLED_DivergentBarrier", "DISABLED_DivergentLoop"}) {
        const Child c = run_child_under("synccheck", child);
        SKIP_WITHOUT_SANITIZER(c);
        const size_t e = c.out.find("ERROR SUMMARY");
        std::printf("    synccheck on %-26s exit %d, %s\n", child, c.code,
                    e == std::string::npos ? "no summary (timed out?)" : c.out.substr(e, c.out.find('\n', e) - e).c_str());
        EXPECT_NE(e, std::string::npos) << child << " did not finish under synccheck (exit " << c.code << "):\n" << c.out;
        EXPECT_TRUE(c.code == 0 || c.code == 99) << child << ": exit " << c.code << "\n" << c.out;
    }
}

// The barrier after an early return: caught by synccheck, or by the wrong block sums (stale
// partial sums for the returned threads' words to add), under the tool or without it.
TEST(SyncPitfalls, EarlyReturnIsCaught) {
    SKIP_WITHOUT_GPU();
    const Child c = run_child_under("synccheck", "DISABLED_EarlyReturn");
    SKIP_WITHOUT_SANITIZER(c);
    const bool synccheck_caught = c.code == 99;
    const bool wrong_under_tool = c.out.find("reduceEarlyReturn: 0 wrong") == std::string::npos &&
                                  c.out.find("reduceEarlyReturn: ") != std::string::npos;
    int tries = 0;
    const int wrong = early_return_wrong_sums(tries);
    std::printf("    early return: synccheck %s, block sums under it %s, without it %d of 4 wrong (try %d)\n",
                synccheck_caught ? "reported it" : "silent", wrong_under_tool ? "wrong" : "right", wrong, tries);
    EXPECT_TRUE(synccheck_caught || wrong_under_tool || wrong > 0) << c.out;
}

}  // namespace
