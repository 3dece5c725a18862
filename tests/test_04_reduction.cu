// Every 04_reduction kernel, for int, float and double, against the CPU at
// sizes chosen to break edge handling: 1, 2, one less / equal / one more than
// a warp and than the 128-thread block, a prime, 2^24 + 7, and one large n;
// and once more at the largest n the program admits (2^31 - 1).
//
// int: exact (the 32-bit wrap of the int64 sum). float and double, twice:
//  - binary-grid data (reduction::fill_grid: k * 2^-b, k a nonzero integer):
//    every add is exact in any order (see grid_scale in tolerance.hpp), so
//    the result must EQUAL the exact integer sum: one dropped, doubled or
//    (with chance 1 - 1/2K) wrong element fails, at every size;
//  - random data in [-1, 1): within reduction::tolerance, a worst-case style
//    bound that catches garbage but not one lost element (the broken-kernel
//    tests below print by how much it misses).
// The result and the partial sums are poisoned (0xFF bytes: NaN, or -1 for
// int) before every run, so a result nobody wrote cannot pass. Kernels are
// looked up by name. The Hopper kernel (reduceBulkCopy) is skipped, saying
// why, where it cannot run (compute capability < 9.0, or a build without
// sm_90 code); its own tests below add misaligned starts and its pitfall.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>
#include <gtest/gtest.h>
#include "04_reduction/reduction.cuh"
#include "common/buffer.cuh"
#include "common/data.hpp"
#include "common/kernel_list.hpp"
#include "tests/gpu_test.hpp"

namespace {

using namespace reduction;

const std::vector<size_t> kSizes = {1,   2,   31,  32,      33,  127,
                                    128, 129, 1000003, (size_t(1) << 24) + 7, (size_t(1) << 26) + 3};

enum class Data { Grid, Random };

struct Outcome {
    double got = 0, want = 0, tol = 0;
    bool ok = false;
    bool launched = false;  // a launcher that refuses returns "" and leaves the poison in place
};

// Poisoned elements past the input's end (and past the in-place kernels' copy of it): a
// kernel that reads past n adds a NaN (or -1) and fails, whatever the allocator left there.
constexpr size_t kGuard = 4096;

// Runs kernel k once on fresh data and compares with the CPU.
template <class T>
Outcome run(const Kernel<T>& k, size_t n, uint64_t seed, Data data) {
    std::vector<T> x(n);
    Outcome o;
    if (data == Data::Grid) {
        const GridScale g = grid_scale<T>(n);
        const int64_t k_sum = fill_grid(x.data(), n, seed, g);
        o.want = double(grid_sum<T>(k_sum, g));  // NaN (never passes) if not representable
        o.tol = 0;                               // exact: every add is
    } else {
        common::fill_uniform(x.data(), n, seed, T(-1), T(1));
        const Reference r = reference_float(x.data(), n);
        o.want = double(r.sum);
        o.tol = tolerance<T>(n, r.sum_abs);
    }
    std::vector<T> guarded(n + kGuard);
    std::memcpy(guarded.data(), x.data(), n * sizeof(T));
    std::memset(static_cast<void*>(guarded.data() + n), common::kPoisonByte, kGuard * sizeof(T));
    common::DeviceBuffer<T> d_in(guarded.size());
    d_in.upload(guarded);
    Workspace<T> ws(guarded.size());
    ws.poison();
    if (k.in_place) restore_work(d_in.get(), guarded.size(), ws);
    o.launched = !k.launch(d_in.get(), n, ws).empty();
    CHECK(cudaDeviceSynchronize());
    T got;
    CHECK(cudaMemcpy(&got, ws.out, sizeof(T), cudaMemcpyDeviceToHost));
    o.got = double(got);
    o.ok = !std::isnan(o.got) && !std::isnan(o.want) && std::fabs(o.got - o.want) <= o.tol;
    // The input must be left alone (the in-place kernels work on a copy), guard included.
    std::vector<T> after;
    d_in.download(after);
    if (std::memcmp(after.data(), guarded.data(), guarded.size() * sizeof(T)) != 0) o.ok = false;
    return o;
}

template <class T>
void check_kernel(const Kernel<T>& k, size_t n, uint64_t seed) {
    const Outcome a = run(k, n, seed, Data::Grid);
    EXPECT_TRUE(a.ok) << k.name << " n=" << n << " grid data: got " << a.got << ", exact " << a.want;
    if constexpr (!std::is_integral_v<T>) {
        const Outcome b = run(k, n, seed + 1, Data::Random);
        EXPECT_TRUE(b.ok) << k.name << " n=" << n << " random data: got " << b.got << ", reference " << b.want
                          << ", |error| " << std::fabs(b.got - b.want) << " > tolerance " << b.tol;
    }
}

// The kernel called `name` for element type T.
template <class T>
const Kernel<T>& kernel(const std::string& name) {
    return common::kernel_named(kernels<T>(), name);
}

// The pitfall called `name` for element type T.
template <class T>
const Kernel<T>& pitfall(const char* name) {
    return common::kernel_named(pitfalls<T>(), name);
}

// (type 0 int / 1 float / 2 double, kernel name, size)
class ReductionKernel : public ::testing::TestWithParam<std::tuple<int, std::string, size_t>> {};

template <class T>
void check_named(const std::string& name, size_t n, uint64_t seed) {
    const Kernel<T>& k = kernel<T>(name);
    SKIP_IF_WAIVED(waiver(k));
    check_kernel(k, n, seed);
}

TEST_P(ReductionKernel, MatchesCpu) {
    SKIP_WITHOUT_GPU();
    const auto [type, name, n] = GetParam();
    // The seed of each (kernel, type, size) as when the kernels were numbered by position.
    const auto names = common::kernel_names(kernels<int>());
    const uint64_t ki = uint64_t(std::find(names.begin(), names.end(), name) - names.begin());
    const uint64_t seed = 7919ull * n + 104729ull * ki + type;
    if (type == 0) check_named<int>(name, n, seed);
    else if (type == 1) check_named<float>(name, n, seed);
    else check_named<double>(name, n, seed);
}

const char* kTypeNames[] = {"int", "float", "double"};

INSTANTIATE_TEST_SUITE_P(
    AllKernelsAllTypesAllSizes, ReductionKernel,
    ::testing::Combine(::testing::Range(0, 3), ::testing::ValuesIn(common::kernel_names(kernels<int>())),
                       ::testing::ValuesIn(kSizes)),
    [](const ::testing::TestParamInfo<ReductionKernel::ParamType>& p) {
        return std::get<1>(p.param) + "_" + kTypeNames[std::get<0>(p.param)] + "_" + std::to_string(std::get<2>(p.param));
    });

// Runs kernel k on x[offset .. offset + n) of a device copy of x, so the start
// is offset * sizeof(T) bytes past a 256-byte boundary: offsets 1..3 leave a
// head before the first 16-byte boundary (for double, offset 1 does; 2 is
// aligned again). Returns the result.
template <class T>
T run_at(const Kernel<T>& k, const common::DeviceBuffer<T>& d, size_t offset, size_t n, Workspace<T>& ws) {
    ws.poison();
    EXPECT_FALSE(k.launch(d.get() + offset, n, ws).empty()) << k.name << " launched nothing";
    CHECK(cudaDeviceSynchronize());
    T got;
    CHECK(cudaMemcpy(&got, ws.out, sizeof(T), cudaMemcpyDeviceToHost));
    return got;
}

// Grid data (exact sums in any order) on the GPU, and the exact sum of any
// range of it, from the prefix sums of its integers k = x * 2^b.
template <class T>
struct GridRanges {
    std::vector<T> x;
    GridScale g;
    std::vector<int64_t> k_prefix;
    common::DeviceBuffer<T> d;
    GridRanges(size_t n, uint64_t seed) : x(n), g(grid_scale<T>(n)), k_prefix(n + 1, 0), d(n) {
        fill_grid(x.data(), n, seed, g);
        for (size_t i = 0; i < n; ++i) k_prefix[i + 1] = k_prefix[i] + int64_t(std::ldexp(double(x[i]), g.b));
        d.upload(x);
    }
    T sum(size_t offset, size_t n) const { return grid_sum<T>(k_prefix[offset + n] - k_prefix[offset], g); }
};

// reduceVec4 (4 and 8 loads in flight) from a pointer that is not 16-byte
// aligned (a sub-array): the head before the first aligned vector and the
// tail after the last one. Exact sums (grid data) for int, float and double:
// offsets 1..3 leave a head of 3..1 elements for the 4-byte types; for double
// (2 elements per 16 bytes) offsets 1 and 3 leave one, 2 is aligned again.
template <class T>
void vec4_misaligned(const char* type) {
    const size_t total = 100003;
    const GridRanges<T> data(total, 5);
    Workspace<T> ws(total);
    for (const char* name : {"reduceVec4", "reduceVec4Unroll8"})
        for (size_t offset : {0, 1, 2, 3})
            for (size_t n : {size_t(1), size_t(2), size_t(3), size_t(5), size_t(17), size_t(4099), total - 3}) {
                const T want = data.sum(offset, n);
                const T got = run_at(kernel<T>(name), data.d, offset, n, ws);
                EXPECT_TRUE(got == want) << name << " " << type << " offset " << offset << " n " << n << ": got "
                                         << double(got) << ", exact " << double(want);
            }
}

TEST(ReductionVec4, MisalignedStartAndOddLengths) {
    SKIP_WITHOUT_GPU();
    vec4_misaligned<int>("int");
    vec4_misaligned<float>("float");
    vec4_misaligned<double>("double");
}

// The four ways reduceVec4 can finish give the same (exact) int sum, and the
// last-block counter is back at 0 after each launch (the next one relies on it).
// The result and the partial sums are poisoned before every launch, so each
// finish is checked on its own, not against what the one before it left.
TEST(ReductionVec4, EveryFinishAndTheTicketResets) {
    SKIP_WITHOUT_GPU();
    const size_t n = (size_t(1) << 22) + 1;
    std::vector<int> x(n);
    common::fill_uniform(x.data(), n, 11, -100, 100);
    common::DeviceBuffer<int> d(n);
    d.upload(x);
    Workspace<int> ws(n);
    const int want = reference_int(x.data(), n);
    ASSERT_NE(want, -1) << "the poison (0xFF bytes) must not be the sum";
    auto finish = [&](LaunchFn<int> launch, const char* name) {
        ws.poison();
        EXPECT_FALSE(launch(d.get(), n, ws).empty()) << name << " launched nothing";
        CHECK(cudaDeviceSynchronize());
        int got = 0;
        CHECK(cudaMemcpy(&got, ws.out, sizeof(int), cudaMemcpyDeviceToHost));
        EXPECT_EQ(got, want) << name;
        unsigned ticket = 1;
        CHECK(cudaMemcpy(&ticket, ws.ticket, sizeof(unsigned), cudaMemcpyDeviceToHost));
        EXPECT_EQ(ticket, 0u) << name << ": the last-block counter must be back at 0";
    };
    for (int rep = 0; rep < 3; ++rep) {
        finish(launch_reduceVec4<int, Finish::Partials>, "Partials");
        finish(launch_reduceVec4<int, Finish::Atomic>, "Atomic");
        finish(launch_reduceVec4<int, Finish::LastBlock>, "LastBlock");
        finish(launch_reduceVec4<int, Finish::LastBlockAcqRel>, "LastBlockAcqRel");
    }
}

// The single-pass kernels give bit-identical float sums run after run.
TEST(ReductionDeterminism, LastBlockKernelsAreBitIdentical) {
    SKIP_WITHOUT_GPU();
    const size_t n = 10000019;
    std::vector<float> x(n);
    common::fill_uniform(x.data(), n, 3, 0.0f, 1.0f);
    common::DeviceBuffer<float> d(n);
    d.upload(x);
    Workspace<float> ws(n);
    for (const auto& k : kernels<float>()) {
        if (std::string(k.name) == "reduceGridStrideAtomic") continue;  // atomics: order varies
        if (!testing_gpu::runs_here(k.name, waiver(k))) continue;
        std::vector<float> got(5);
        for (float& g : got) {
            if (k.in_place) restore_work(d.get(), n, ws);
            ws.poison_result();  // each run's own result, not the last one's
            ASSERT_FALSE(k.launch(d.get(), n, ws).empty()) << k.name;
            CHECK(cudaMemcpy(&g, ws.out, sizeof(float), cudaMemcpyDeviceToHost));
            ASSERT_FALSE(std::isnan(g)) << k.name << ": no result written";
        }
        for (float g : got) EXPECT_EQ(std::memcmp(&g, &got[0], 4), 0) << k.name;
    }
}

// ---- reduceBulkCopy (sm_90): misaligned starts, chunk edges, its pitfall ----
// Sizes around the chunk (32 KiB of T) and the ring (4 stages x one block per SM).
template <class T>
std::vector<size_t> bulk_sizes() {
    const size_t c = kBulkStageBytes / sizeof(T);
    return {1, 2, 3, 5, 17, c - 1, c, c + 1, c + 3, 3 * c + 5, 1000 * c - 1, 2000 * c + 7};
}

// Exact sums (grid data, tolerance 0) from starts offset by 0..3 elements.
template <class T>
void bulk_misaligned(const char* type) {
    const Kernel<T>& k = kernel<T>("reduceBulkCopy");
    SKIP_IF_WAIVED(waiver(k));
    const size_t most = bulk_sizes<T>().back() + 3;
    const GridRanges<T> data(most, 77);
    Workspace<T> ws(most);
    for (size_t offset : {0, 1, 2, 3})
        for (size_t n : bulk_sizes<T>()) {
            const T want = data.sum(offset, n);
            const T got = run_at(k, data.d, offset, n, ws);
            EXPECT_TRUE(got == want) << type << " offset " << offset << " n " << n << ": got " << double(got)
                                     << ", exact " << double(want);
        }
    unsigned ticket = 1;
    CHECK(cudaMemcpy(&ticket, ws.ticket, sizeof(unsigned), cudaMemcpyDeviceToHost));
    EXPECT_EQ(ticket, 0u) << "the last-block counter must be back at 0";
}

TEST(ReductionBulkCopy, MisalignedStartsAndChunkEdgesInt) {
    SKIP_WITHOUT_GPU();
    bulk_misaligned<int>("int");
}
TEST(ReductionBulkCopy, MisalignedStartsAndChunkEdgesFloat) {
    SKIP_WITHOUT_GPU();
    bulk_misaligned<float>("float");
}
TEST(ReductionBulkCopy, MisalignedStartsAndChunkEdgesDouble) {
    SKIP_WITHOUT_GPU();
    bulk_misaligned<double>("double");
}

// reduceBulkCopy with a planted bug: kEdges = false, bulk copies of whole
// chunks only, the head and the tail left out (what a pipeline that forgets
// that a bulk copy needs 16-byte aligned addresses and sizes does). Right
// when the input is nothing but whole chunks from a 16-byte boundary, caught
// as soon as there is a tail or a head, for every type.
template <class T>
Kernel<T> bulk_no_edges() {
    return {"reduceBulkCopyNoEdges", false, launch_reduceBulkCopy<T, false>, "drops the head and the tail",
            waived_reduceBulkCopy<T, false>};
}

template <class T>
void bulk_no_edges_is_caught(const char* type) {
    const Kernel<T> k = bulk_no_edges<T>();
    SKIP_IF_WAIVED(waiver(k));
    const size_t c = kBulkStageBytes / sizeof(T);
    EXPECT_TRUE(run(k, 4 * c, 5, Data::Grid).ok) << type << ": on whole chunks it is right";
    for (size_t n : {size_t(1), size_t(31), size_t(1000003), (size_t(1) << 24) + 7}) {
        const Outcome o = run(k, n, 31 * n + 7, Data::Grid);
        ASSERT_TRUE(o.launched) << type << " n=" << n << ": a wrong answer only counts if the kernel ran";
        EXPECT_FALSE(o.ok) << type << " n=" << n << ": the lost tail went unnoticed (got " << o.got << ", exact "
                           << o.want << ")";
    }
    // Whole chunks, but from a misaligned start: the head is lost (and the tail it shifts).
    std::vector<T> x(4 * c + 1);
    const GridScale g = grid_scale<T>(x.size());
    fill_grid(x.data(), x.size(), 9, g);
    common::DeviceBuffer<T> d(x.size());
    d.upload(x);
    Workspace<T> ws(x.size());
    int64_t k_sum = 0;
    for (size_t i = 1; i < x.size(); ++i) k_sum += int64_t(std::ldexp(double(x[i]), g.b));
    EXPECT_FALSE(run_at(k, d, 1, 4 * c, ws) == grid_sum<T>(k_sum, g)) << type << ": the lost head went unnoticed";
}

// One test a type, as above: a waiver's skip ends only the helper that makes it.
TEST(ReductionBulkCopy, NoEdgesIsCaughtInt) {
    SKIP_WITHOUT_GPU();
    bulk_no_edges_is_caught<int>("int");
}
TEST(ReductionBulkCopy, NoEdgesIsCaughtFloat) {
    SKIP_WITHOUT_GPU();
    bulk_no_edges_is_caught<float>("float");
}
TEST(ReductionBulkCopy, NoEdgesIsCaughtDouble) {
    SKIP_WITHOUT_GPU();
    bulk_no_edges_is_caught<double>("double");
}

// ---- The seeds' pitfalls: the deterministic ones must be caught ----------

// `if (idx >= n) return;` before __syncthreads: right on whole blocks, wrong
// on a partial last block (its tree adds shared memory nobody wrote).
TEST(ReductionPitfall, EarlyReturnIsWrongOnAPartialBlock) {
    SKIP_WITHOUT_GPU();
    EXPECT_TRUE(run(pitfall<int>("reduceSmemEarlyReturn"), 1024, 1, Data::Grid).ok)
        << "on whole blocks the seed's kernel is right";
    // Shared memory is not cleared between blocks or kernels: scribble on it
    // right before (same stream, no host wait), so the partial block finds
    // stale non-zero values (on a fresh context, or after another process's
    // kernels, it may find zeros and come out right by luck). Up to 10 tries.
    const Kernel<int>& k = pitfall<int>("reduceSmemEarlyReturn");
    for (size_t n : {size_t(129), size_t(1000003), (size_t(1) << 20) + 1}) {
        std::vector<int> x(n);
        const GridScale g = grid_scale<int>(n);
        const int want = grid_sum<int>(fill_grid(x.data(), n, 3, g), g);
        common::DeviceBuffer<int> d(n);
        d.upload(x);
        Workspace<int> ws(n);
        int got = want, tries = 0;
        while (got == want && tries++ < 10) {
            ws.poison_result();
            scribble_shared<int>();
            k.launch(d.get(), n, ws);
            CHECK(cudaDeviceSynchronize());
            CHECK(cudaMemcpy(&got, ws.out, sizeof(int), cudaMemcpyDeviceToHost));
        }
        EXPECT_NE(got, want) << "n = " << n << ": right in " << tries - 1 << " tries";
    }
}

// The global thread id in block-local conditions: right with one block only.
TEST(ReductionPitfall, GlobalThreadIdIsWrongWithTwoBlocks) {
    SKIP_WITHOUT_GPU();
    const auto& k = pitfall<int>("reduceGlobalTid");
    EXPECT_TRUE(run(k, 100, 1, Data::Grid).ok) << "one block: the seed's kernel is right";
    // n = 129 would pass: block 1 holds one element, at thread 0, so skipping
    // its tree loses nothing. From two elements in a second block on it fails.
    for (size_t n : {size_t(130), size_t(1000), size_t(1000003)}) {
        const Outcome o = run(k, n, 2, Data::Grid);
        ASSERT_TRUE(o.launched) << n << ": a wrong answer only counts if the kernel ran";
        EXPECT_FALSE(o.ok) << n;
    }
    const Outcome f = run(pitfall<float>("reduceGlobalTid"), 1000, 2, Data::Grid);
    ASSERT_TRUE(f.launched) << "float: a wrong answer only counts if the kernel ran";
    EXPECT_FALSE(f.ok);
}

// A deliberately broken kernel is caught: reduceSmem launched on one block too
// few misses the last partial block's elements (an off-by-one grid).
TEST(ReductionPitfall, OffByOneGridIsCaught) {
    SKIP_WITHOUT_GPU();
    const Kernel<float> broken{"reduceSmemShortGrid", false,
                               [](const float* in, size_t n, Workspace<float>& ws) {
                                   const size_t grid = n / kBlock;  // should round up (common::ceil_div)
                                   if (grid) reduceSmem<float><<<grid, kBlock>>>(in, n, ws.partial);
                                   CHECK_LAUNCH();
                                   return common::launch_string(grid, kBlock) + launch_final(grid, ws);
                               },
                               ""};
    EXPECT_TRUE(run(broken, 1024, 1, Data::Grid).ok) << "right on whole blocks";
    for (size_t n : {size_t(129), size_t(1000003), (size_t(1) << 24) + 7}) {
        const Outcome o = run(broken, n, 2, Data::Grid);
        ASSERT_TRUE(o.launched) << n << ": a wrong answer only counts if the kernel ran";
        EXPECT_FALSE(o.ok) << n << ": the dropped tail went unnoticed";
    }
}

// ---- Deliberately broken kernels: the checks must catch them -------------
// reduceSinglePass with one planted bug each: the grid-stride loop stops one
// element short (drops in[n-1]: the last element, the one an off-by-one loop
// bound loses), or one thread adds in[n/2] a second time. Caught on grid data for int, float and
// double at small and large n; for float and double the test also prints
// what the random-data check (reduction::tolerance) makes of the same bug.
enum class Bug { DropLast, AddOneTwice };

template <class T, Bug B>
__global__ void __launch_bounds__(kStrideThreads)
reduceSinglePassBroken(const T* __restrict__ in, size_t n, T* partial, unsigned* ticket, T* out) {
    const size_t end = B == Bug::DropLast ? n - 1 : n;  // BUG (DropLast): one short
    T v = 0;
    for (size_t i = size_t(blockIdx.x) * kStrideThreads + threadIdx.x; i < end; i += size_t(gridDim.x) * kStrideThreads)
        v += in[i];
    if (B == Bug::AddOneTwice && blockIdx.x == gridDim.x - 1 && threadIdx.x == 0) v += in[n / 2];  // BUG: twice
    v = block_sum<kStrideThreads>(v);
    last_block_finishes<kStrideThreads>(v, partial, ticket, out);
}

template <class T, Bug B>
std::string launch_broken(const T* in, size_t n, Workspace<T>& ws) {
    static const size_t most = resident_grid(reduceSinglePassBroken<T, B>, kStrideThreads, SIZE_MAX / 2, 1);
    const size_t grid = std::min(most, common::ceil_div(n, size_t(kStrideThreads) * 4));
    reduceSinglePassBroken<T, B><<<grid, kStrideThreads>>>(in, n, ws.partial, ws.ticket, ws.out);
    CHECK_LAUNCH();
    return common::launch_string(grid, kStrideThreads);
}

template <class T>
std::vector<Kernel<T>> broken_kernels() {
    return {{"reduceSinglePassDropLast", false, launch_broken<T, Bug::DropLast>, "drops in[n-1]"},
            {"reduceSinglePassAddOneTwice", false, launch_broken<T, Bug::AddOneTwice>, "adds in[n/2] twice"}};
}

const std::vector<size_t> kBrokenSizes = {1, 2, 129, 1000003, 10000019, (size_t(1) << 26) + 3};

template <class T>
void broken_is_caught(const char* type) {
    for (const Kernel<T>& k : broken_kernels<T>())
        for (size_t n : kBrokenSizes) {
            const uint64_t seed = 31 * n + 7;
            const Outcome g = run(k, n, seed, Data::Grid);
            ASSERT_TRUE(g.launched) << k.name << " " << type << " n=" << n << ": a wrong answer only counts if it ran";
            EXPECT_FALSE(g.ok) << k.name << " " << type << " n=" << n << ": grid data did not catch it (got " << g.got
                               << ", exact " << g.want << ")";
            if constexpr (!std::is_integral_v<T>) {
                const Outcome r = run(k, n, seed + 1, Data::Random);
                if (n >= 1000003)
                    std::printf("[ broken ] %s %s n=%zu: grid data error %.3g > tolerance 0 (caught: %s); "
                                "random data error %.3g vs tolerance %.3g (caught: %s)\n",
                                k.name, type, n, std::fabs(g.got - g.want), g.ok ? "NO" : "yes",
                                std::fabs(r.got - r.want), r.tol, r.ok ? "no" : "yes");
            }
        }
}

TEST(ReductionBroken, IntCaught) {
    SKIP_WITHOUT_GPU();
    broken_is_caught<int>("int");
}
TEST(ReductionBroken, FloatCaught) {
    SKIP_WITHOUT_GPU();
    broken_is_caught<float>("float");
}
TEST(ReductionBroken, DoubleCaught) {
    SKIP_WITHOUT_GPU();
    broken_is_caught<double>("double");
}

// The unbroken original under the same launch and data passes (so the
// failures above are the bugs, not the harness).
TEST(ReductionBroken, TheOriginalPasses) {
    SKIP_WITHOUT_GPU();
    const Kernel<float>* k = common::find_kernel(kernels<float>(), "reduceSinglePass");
    ASSERT_NE(k, nullptr);
    for (size_t n : kBrokenSizes) EXPECT_TRUE(run(*k, n, 31 * n + 7, Data::Grid).ok) << n;
}

// ---- The largest n the program admits (kMaxN = 2^31 - 1) ------------------
// Every index is 64-bit (size_t); at 2^31 - 1 elements a 32-bit grid-stride
// index or count would pass INT_MAX and wrap. Every kernel, float and double
// (int runs the same index code as float: both are 4 bytes), on grid data
// (exact), plus both broken kernels (must fail). Needs the input
// and the scratch copy on the device (2 x 16 GiB in double) and the input on
// the host; skipped, saying so, where either is short.
template <class T>
void largest_n(const char* type) {
    const size_t n = size_t(kMaxN);
    const size_t dev_need = n * sizeof(T) + Workspace<T>::bytes(n) + (size_t(256) << 20);
    SKIP_UNLESS_MEMORY(std::string(type) + " at n = 2^31 - 1", double(dev_need), double(n) * sizeof(T) * 1.5);
    std::vector<T> x(n);
    const GridScale g = grid_scale<T>(n);
    const int64_t k_sum = fill_grid(x.data(), n, 2026, g);
    const T want = grid_sum<T>(k_sum, g);
    ASSERT_FALSE(std::isnan(double(want))) << "exact sum not representable";
    common::DeviceBuffer<T> d_in(n);
    d_in.upload(x);
    std::vector<T>().swap(x);
    Workspace<T> ws(n);
    auto once = [&](const Kernel<T>& k) {
        ws.poison();
        if (k.in_place) restore_work(d_in.get(), n, ws);
        k.launch(d_in.get(), n, ws);
        CHECK(cudaDeviceSynchronize());
        T got;
        CHECK(cudaMemcpy(&got, ws.out, sizeof(T), cudaMemcpyDeviceToHost));
        return got;
    };
    for (const Kernel<T>& k : kernels<T>()) {
        if (!testing_gpu::runs_here(k.name, waiver(k))) continue;
        const T got = once(k);
        EXPECT_TRUE(got == want) << k.name << " " << type << " n=2^31-1: got " << double(got) << ", exact "
                                 << double(want);
    }
    std::vector<Kernel<T>> broken = broken_kernels<T>();
    if (waiver(bulk_no_edges<T>()).empty()) broken.push_back(bulk_no_edges<T>());
    for (const Kernel<T>& k : broken) {
        const T got = once(k);
        EXPECT_FALSE(got == want) << k.name << " " << type << " n=2^31-1 went unnoticed";
        std::printf("[ broken ] %s %s n=%zu (largest admitted): error %.3g, exact comparison: %s\n", k.name, type, n,
                    std::fabs(double(got) - double(want)), got == want ? "MISSED" : "caught");
    }
}

TEST(ReductionLargestN, Float) {
    SKIP_WITHOUT_GPU();
    largest_n<float>("float");
}
TEST(ReductionLargestN, Double) {
    SKIP_WITHOUT_GPU();
    largest_n<double>("double");
}

// ---- The toy (step 0): every step's whole array, stale values included --------
// (--toy prints the same comparison; this runs it in `make test`.) The seed's 8
// numbers, then random integers (exact in every type) up to 2048 values, 1024 threads.
template <class T>
void toy_matches_cpu(const char* type) {
    for (int n : {2, 4, 8, 16, 64, 2048}) {
        std::vector<int> v(n);
        common::fill_uniform(v.data(), v.size(), uint64_t(n) * 7 + 1, -1000, 1000);
        std::vector<T> x(n);
        for (int i = 0; i < n; ++i) x[i] = n == 8 ? T(i + 1) : T(v[i]);
        const auto want = toy_steps_cpu(x);
        const std::vector<T> got = toy_steps_gpu(x);
        ASSERT_EQ(got.size(), want.size() * n) << type << " n=" << n;
        for (size_t s = 0; s < want.size(); ++s)
            for (int i = 0; i < n; ++i)
                ASSERT_EQ(got[s * n + i], want[s][i]) << type << " n=" << n << " step " << s << " x[" << i << "]";
    }
}

TEST(ReductionToy, EveryStepMatchesTheCpu) {
    SKIP_WITHOUT_GPU();
    toy_matches_cpu<int>("int");
    toy_matches_cpu<float>("float");
    toy_matches_cpu<double>("double");
}

// ---- CPU only ------------------------------------------------------------
TEST(ReductionCpu, ToyStepsAreTheSeeds) {
    const auto steps = toy_steps_cpu(std::vector<int>{1, 2, 3, 4, 5, 6, 7, 8});
    ASSERT_EQ(steps.size(), 3u);
    EXPECT_EQ(std::vector<int>(steps[0].begin(), steps[0].begin() + 4), (std::vector<int>{6, 8, 10, 12}));
    EXPECT_EQ(std::vector<int>(steps[1].begin(), steps[1].begin() + 2), (std::vector<int>{16, 20}));
    EXPECT_EQ(steps[2][0], 36);
}

TEST(ReductionCpu, IntReferenceWrapsLikeTheGpu) {
    const int x[3] = {INT32_MAX, 1, 5};
    EXPECT_EQ(reference_int(x, 3), int(uint32_t(uint64_t(int64_t(INT32_MAX) + 6))));
    const int y[4] = {-100, 100, 7, -3};
    EXPECT_EQ(reference_int(y, 4), 4);
}

TEST(ReductionCpu, FloatReferenceIsCompensated) {
    // 1 + 1e-20 + ... - 1: a plain double loop loses the small terms entirely.
    std::vector<double> x = {1.0, 1e-20, 1e-20, 1e-20, -1.0};
    const Reference r = reference_float(x.data(), x.size());
    EXPECT_NEAR(double(r.sum), 3e-20, 1e-30);
    EXPECT_DOUBLE_EQ(double(r.sum_abs), 2.0 + 3e-20);
}

TEST(ReductionCpu, FloatSummationMethods) {
    // 2^25 ones: a sequential float loop sticks at 2^24 (1 is below half an
    // ulp there); Kahan and pairwise are exact.
    const size_t n = size_t(1) << 25;
    std::vector<float> ones(n, 1.0f);
    EXPECT_EQ(sum_sequential(ones.data(), n), 16777216.0f);
    EXPECT_EQ(sum_kahan(ones.data(), n), float(n));
    EXPECT_EQ(sum_pairwise(ones.data(), n), float(n));
}

TEST(ReductionCpu, ToleranceScalesWithSizeAndType) {
    EXPECT_GT(tolerance<float>(1 << 20, 1000.0L), tolerance<float>(1 << 10, 1000.0L));
    EXPECT_GT(tolerance<float>(1 << 20, 1000.0L), 1e6 * tolerance<double>(1 << 20, 1000.0L));
    // A float sum of 2^28 values in [-1, 1): well under one element's size per 10^5 elements.
    EXPECT_LT(tolerance<float>(size_t(1) << 28, 134217728.0L), 1000.0);
}

// The binary-grid data: nonzero elements of both signs, the stated K and b,
// an exact int64 sum, and (where grid_scale claims a proof) sum|k| within
// the significand, so any summation order is exact.
TEST(ReductionCpu, GridDataIsExactAndNonzero) {
    EXPECT_EQ(grid_scale<double>(size_t(kMaxN)).K, int64_t(1) << 20);
    EXPECT_TRUE(grid_scale<double>(size_t(kMaxN)).proof);
    EXPECT_LE(double(kMaxN) * double(grid_scale<double>(size_t(kMaxN)).K), 0x1p53);
    EXPECT_EQ(grid_scale<float>(1).K, 4096);
    EXPECT_EQ(grid_scale<float>(size_t(1) << 20).K, 16);
    EXPECT_TRUE(grid_scale<float>(size_t(1) << 20).proof);
    EXPECT_EQ(grid_scale<float>((size_t(1) << 20) + 1).K, 512);
    EXPECT_FALSE(grid_scale<float>((size_t(1) << 20) + 1).proof);
    EXPECT_EQ(grid_scale<float>(10000019).K, 256);
    EXPECT_EQ(grid_scale<float>(size_t(kMaxN)).K, 16);
    for (size_t n : {size_t(1), size_t(1000), size_t(1) << 20, size_t(10000019)}) {
        const GridScale g = grid_scale<float>(n);
        if (g.proof) EXPECT_LE(double(n) * double(g.K), 0x1p24) << n;
        else EXPECT_LE(double(n) * double(g.K) * double(g.K), 0x1p40) << n;
    }
    const size_t n = 1000003;
    std::vector<float> x(n);
    const GridScale g = grid_scale<float>(n);
    const int64_t k_sum = fill_grid(x.data(), n, 5, g);
    int64_t again = 0, pos = 0;
    float seq = 0;  // a sequential float loop: every partial is exact here
    for (float v : x) {
        ASSERT_NE(v, 0.0f);
        const double k = std::ldexp(double(v), g.b);
        ASSERT_EQ(k, std::round(k));
        ASSERT_LE(std::fabs(k), double(g.K));
        again += int64_t(k);
        pos += v > 0;
        seq += v;
    }
    EXPECT_EQ(again, k_sum);
    EXPECT_GT(pos, int64_t(n / 3));
    EXPECT_LT(pos, int64_t(2 * n / 3));
    EXPECT_EQ(seq, grid_sum<float>(k_sum, g));
    EXPECT_NE(seq - x.back(), grid_sum<float>(k_sum, g)) << "one dropped element changes the exact sum";
    // Not representable -> NaN, which never passes.
    EXPECT_TRUE(std::isnan(grid_sum<float>(int64_t(1) << 24, g)));
    // int: the poison -1 is never the answer.
    std::vector<int> xi(3);
    for (uint64_t seed = 0; seed < 2000; ++seed) EXPECT_NE(fill_grid(xi.data(), 3, seed, grid_scale<int>(3)), -1);
}

TEST(ReductionCpu, SizeLimits) {
    EXPECT_EQ(check_n(1), "");
    EXPECT_EQ(check_n(int64_t(1) << 28), "");
    EXPECT_EQ(check_n(kMaxN), "");
    EXPECT_NE(check_n(0), "");
    EXPECT_NE(check_n(-5), "");
    EXPECT_NE(check_n(kMaxN + 1), "");
}

TEST(ReductionCpu, KernelNamesAreUniqueAndPitfallsSeparate) {
    const auto all = common::kernel_names(kernels<int>(), pitfalls<int>()), main = common::kernel_names(kernels<int>());
    EXPECT_EQ(all.size(), main.size() + pitfalls<int>().size());
    for (size_t i = 0; i < all.size(); ++i)
        for (size_t j = i + 1; j < all.size(); ++j) EXPECT_NE(all[i], all[j]);
    for (size_t i = 0; i < kernels<int>().size(); ++i)
        EXPECT_STREQ(kernels<int>()[i].name, kernels<double>()[i].name);
}

}  // namespace
