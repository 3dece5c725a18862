// gpu_test.hpp - gate GPU tests on the presence of a device, and on what it
// (or GPU_PROFILE, common/gpu.cuh) allows.
//
// On a machine without a GPU (CI) the GPU tests are skipped with a reason;
// with REQUIRE_GPU=1 in the environment a skip becomes a failure, so a run
// on the GPU machine cannot pass by silently testing nothing. A kernel waived
// for a missing feature is a skip under GPU_PROFILE or on a GPU older than
// 9.0; on a 9.0 GPU without a profile everything must run, so there, with
// REQUIRE_GPU=1, a waiver is a failure (a build without sm_90 code, say).
#pragma once
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>
#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include "common/gpu_profile.cuh"
#include "common/device.cuh"  // image_refusal, no_cuda_device
#include "tests/require_gpu.hpp"

namespace testing_gpu {

inline bool gpu_present() {
    int n = 0;
    return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

// Why there is no device, as the runtime says it (a driver too old for
// this runtime is not the same as no GPU).
inline std::string no_gpu_reason() {
    int n = 0;
    const cudaError_t e = cudaGetDeviceCount(&n);
    return e == cudaSuccess ? "no device" : std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
}

// No device because there is none to test (common::no_cuda_device), not
// because CUDA cannot start on the one there is (a broken driver setup).
inline bool no_gpu_to_test() {
    int n = 0;
    const cudaError_t e = cudaGetDeviceCount(&n);
    return common::no_cuda_device(e, n);
}

// "" if this binary can run on the device, else why not (built for another
// GPU): every GPU test then fails with it, instead of the first one ending
// the binary in a CHECK. (Host-only test files launch nothing.)
inline std::string image_problem() {
#if defined(__CUDACC__)
    static const std::string why = common::image_refusal();
    return why;
#else
    return "";
#endif
}

inline bool profile_set() {
    const char* p = std::getenv("GPU_PROFILE");
    return p && *p;
}

inline int compute_capability() {  // GPU_PROFILE's, 90 for 9.0; 0 without a device
    return gpu_present() ? common::gpu().cc : 0;
}

// Where a waiver must not happen: REQUIRE_GPU=1 on a 9.0 GPU, no GPU_PROFILE.
inline bool everything_must_run() {
    return gpu_required() && !profile_set() && gpu_present() && common::gpu().real_cc == 90;
}

// For a test that loops over kernels (or configurations): false where `why`
// (a waiver's reason) is not "", and the loop leaves `what` out; where
// nothing may be waived (everything_must_run) that is also a failure, as
// SKIP_IF_WAIVED's skip is. (Each kernel's own tests say why it is waived.)
inline bool runs_here(const std::string& what, const std::string& why) {
    if (why.empty()) return true;
    if (everything_must_run()) ADD_FAILURE() << what << " is waived on this 9.0 GPU: " << why;
    return false;
}

// The GPU the results come from, for planning tests that run without one.
constexpr common::GpuPreset kH200{"h200", 90, 132, 227 * common::kKiB, 228 * common::kKiB, 60 * common::kMiB, 16,
                                  2048, 32};

inline const common::GpuPreset& preset_named(const std::string& name) {
    for (const common::GpuPreset& p : common::kGpuPresets)
        if (name == p.name) return p;
    throw std::invalid_argument("no GPU preset " + name);
}

// Every preset's limits as a program here would plan for them: GPU_PROFILE
// applied to this GPU (capped at it), or, without a GPU, to an H200 (kH200).
inline std::vector<common::Gpu> preset_gpus() {
    std::vector<common::Gpu> v;
    for (const common::GpuPreset& p : common::kGpuPresets) {
        int dev = 0;
        common::Gpu g = gpu_present() && cudaGetDevice(&dev) == cudaSuccess ? common::real_gpu(dev)
                                                                           : common::gpu_of(kH200);
        const std::string err = common::apply_gpu_profile(p.name, g);
        if (err.empty()) v.push_back(g);
    }
    return v;
}

// Shared memory one block of `kernel` takes: its static __shared__ variables
// (known only to the compiled code: cudaFuncGetAttributes) plus the `dynamic`
// bytes its launcher passes. Needs a GPU.
inline size_t block_smem(const void* kernel, size_t dynamic = 0) {
    cudaFuncAttributes a;
    CHECK(cudaFuncGetAttributes(&a, kernel));
    return a.sharedSizeBytes + dynamic;
}
template <class... Params>
size_t block_smem(void (*kernel)(Params...), size_t dynamic = 0) {
    return block_smem(reinterpret_cast<const void*>(kernel), dynamic);
}

// One kernel a launcher runs: the dynamic shared memory it passes and the
// compute capability its code needs (0: any). The chapters' limits tests list
// these for every entry of a kernel list and check them under every preset.
struct KernelLaunch {
    const void* kernel;
    size_t dynamic = 0;
    int needs_cc = 0;
};
template <class... Params>
KernelLaunch kernel_launch(void (*kernel)(Params...), size_t dynamic = 0, int needs_cc = 0) {
    return {reinterpret_cast<const void*>(kernel), dynamic, needs_cc};
}

// "" where `l` may run under g's limits: g has the capability its code needs
// and one block may have its shared memory (static + dynamic); else why not.
// Needs a GPU (the static size is the compiled code's).
inline std::string launch_refusal(const KernelLaunch& l, const common::Gpu& g) {
    const std::string why = l.needs_cc ? common::cc_refusal(l.needs_cc, "its code", g) : "";
    return why.empty() ? common::smem_refusal(block_smem(l.kernel, l.dynamic), g) : why;
}

// Every launch of entry `name` may run under every preset, or the entry is
// waived there (waiver(g) not ""): the limits tests' one check.
template <class Waiver>
void expect_fits_or_waived(const std::string& name, const std::vector<KernelLaunch>& launches, Waiver&& waiver) {
    for (const common::Gpu& g : preset_gpus())
        for (const KernelLaunch& l : launches) {
            const std::string over = launch_refusal(l, g);
            EXPECT_TRUE(over.empty() || !waiver(g).empty()) << g.profile << " " << name << ": " << over
                                                            << ", and no waiver";
        }
}

#if defined(__CUDACC__)
// "" where `device_bytes` of device memory are free and `host_bytes` of host
// memory available (common::free_device_memory, common::available_host_memory:
// no host check where that is not known), else both needs and what there is.
inline std::string memory_short(double device_bytes, double host_bytes) {
    const double dev = double(common::free_device_memory()), host = double(common::available_host_memory());
    if (device_bytes <= dev && (host == 0 || host_bytes <= host)) return "";
    std::string s = common::human_bytes(device_bytes) + " of device memory (" + common::human_bytes(dev) + " free)";
    if (host_bytes > 0)
        s += " and " + common::human_bytes(host_bytes) + " of host memory (" + common::human_bytes(host) + " available)";
    return s;
}
#endif

}  // namespace testing_gpu

// For the tests at the largest sizes a program admits (gigabytes each): skips
// the current test, saying what is short, where the device or the host has
// less memory than it needs; fails instead where everything must run
// (REQUIRE_GPU=1 on a 9.0 GPU without GPU_PROFILE: our H200 holds every one of
// them, and a "0 skipped" there must mean they ran). Allocate right after it:
// another process on the GPU may take memory at any time.
#define SKIP_UNLESS_MEMORY(what, device_bytes, host_bytes)                               \
    do {                                                                                 \
        const std::string short_ = testing_gpu::memory_short((device_bytes), (host_bytes)); \
        if (!short_.empty()) {                                                           \
            if (testing_gpu::everything_must_run()) FAIL() << (what) << " needs " << short_; \
            GTEST_SKIP() << (what) << " needs " << short_;                               \
        }                                                                                \
    } while (0)

// Use as the first statement of a GPU test. A GPU_PROFILE the GPU cannot
// play (common::gpu().error) fails every GPU test, as it stops every program;
// so does CUDA that cannot start on a GPU that is there (a driver problem).
#define SKIP_WITHOUT_GPU()                                                               \
    do {                                                                                 \
        if (!testing_gpu::gpu_present()) {                                               \
            if (!testing_gpu::no_gpu_to_test())                                          \
                FAIL() << "CUDA cannot start (" << testing_gpu::no_gpu_reason() << "): a driver or GPU problem, not a missing GPU"; \
            if (testing_gpu::gpu_required())                                             \
                FAIL() << "REQUIRE_GPU is set but no CUDA device is available (" << testing_gpu::no_gpu_reason() << ")"; \
            GTEST_SKIP() << "no CUDA device available (" << testing_gpu::no_gpu_reason() << ")"; \
        }                                                                                \
        ASSERT_EQ(testing_gpu::image_problem(), "");                                     \
        ASSERT_EQ(common::gpu().error, "");                                              \
    } while (0)

// Skips the current test where `why` (a waiver's reason: common::cc_refusal,
// smem_refusal, code_refusal, a plan's why-not) is not empty.
#define SKIP_IF_WAIVED(why)                                                              \
    do {                                                                                 \
        const std::string why_ = (why);                                                  \
        if (!why_.empty()) {                                                             \
            if (testing_gpu::everything_must_run()) FAIL() << "waived on this 9.0 GPU: " << why_; \
            GTEST_SKIP() << "waived: " << why_;                                          \
        }                                                                                \
    } while (0)

// For features such as thread-block clusters: SKIP_WITHOUT_CC(90, "clusters").
#define SKIP_WITHOUT_CC(cc, what)                                                        \
    do {                                                                                 \
        SKIP_WITHOUT_GPU();                                                              \
        SKIP_IF_WAIVED(common::cc_refusal((cc), (what)));                                \
    } while (0)
