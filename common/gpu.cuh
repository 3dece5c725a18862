// gpu.cuh - what the current GPU allows: the one place plans, launchers and
// tests ask. Under GPU_PROFILE it describes another, smaller GPU.
//
//   gpu()                     the current device's limits (cached per device)
//   gpu().has(cc)             a feature of compute capability cc may be used (90: clusters, TMA)
//   gpu().sm90a()             wgmma / setmaxnreg code may run (9.0 exactly)
//   smem_refusal(bytes)       "" if one block may have `bytes` of shared memory, else why not
//   cc_refusal(cc, feature)   "" if gpu().has(cc), else why not
//   code_refusal(kernel, cc)  "" if this binary holds the kernel's code for cc, else why not
//   resident_blocks(k, t, s)  blocks of a kernel one SM holds under these limits
//
// GPU_PROFILE makes a program behave, as far as limits and capabilities go,
// as on another GPU: a preset (t4, a100, rtx3090, rtx4090, rtx5090, h100) or
// an explicit list, e.g. GPU_PROFILE=cc=8.6,sms=84,smem_block=101376,smem_sm=102400,l2=6291456
// (optional: cluster=N, the largest cluster). The capability may be any: it
// decides which kernels a program is willing to run, and one that needs what
// the real GPU lacks stays waived. The numbers can only go down: a preset's
// are capped at the real GPU's (a persistent grid sized for 170 SMs on a
// 132-SM GPU would wait for blocks that never become resident), and an
// explicit profile asking for more than the GPU has is refused (gpu().error;
// the programs exit 2 with it). Timings stay the real GPU's.
#pragma once
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <cuda_runtime.h>
#include "common/check.cuh"

namespace common {

struct Gpu {
    int device = 0;
    int cc = 0;                 // compute capability the program plans for, 90 for 9.0 (the profile's)
    int real_cc = 0;            // the GPU's own
    int sms = 0;                // multiprocessors
    size_t smem_per_block = 0;  // shared memory one block may opt into, bytes
    size_t smem_per_sm = 0;     // shared memory of one SM, bytes
    size_t l2_bytes = 0;
    int max_cluster = 0;        // largest thread-block cluster (0: none; 8 portable; 16 on 9.0)
    std::string profile;        // GPU_PROFILE as given; "" on the real GPU's limits
    std::string capped;         // the preset's limits that were capped at this GPU's ("" none)
    std::string error;          // GPU_PROFILE cannot be used here: why (the programs exit 2)
    bool has(int need_cc) const { return cc >= need_cc && real_cc >= need_cc; }
    bool sm90a() const { return cc == 90 && real_cc == 90; }  // arch-specific sm_90a code runs on 9.0 only
};

// A GPU's limits as a profile states them (presets: NVIDIA's published figures).
struct GpuPreset {
    const char* name;
    int cc, sms;
    size_t smem_per_block, smem_per_sm, l2_bytes;
    int max_cluster;
};
constexpr size_t kKiB = 1024, kMiB = 1024 * 1024;
constexpr GpuPreset kGpuPresets[] = {
    {"t4", 75, 40, 64 * kKiB, 64 * kKiB, 4 * kMiB, 0},
    {"a100", 80, 108, 163 * kKiB, 164 * kKiB, 40 * kMiB, 0},
    {"rtx3090", 86, 82, 99 * kKiB, 100 * kKiB, 6 * kMiB, 0},
    {"rtx4090", 89, 128, 99 * kKiB, 100 * kKiB, 72 * kMiB, 0},
    {"rtx5090", 120, 170, 99 * kKiB, 100 * kKiB, 96 * kMiB, 8},
    {"h100", 90, 132, 227 * kKiB, 228 * kKiB, 50 * kMiB, 16},
};

// The largest cluster a GPU of capability cc launches: none before 9.0, 16
// blocks on 9.0 (non-portable sizes, allowed per kernel), 8 (portable) after.
inline int max_cluster_of(int cc) { return cc < 90 ? 0 : cc == 90 ? 16 : 8; }

// The limits a preset states, as gpu() would give them on a GPU at least
// that large (the planners' tests plan for every preset without a GPU).
inline Gpu gpu_of(const GpuPreset& q) {
    Gpu g;
    g.cc = g.real_cc = q.cc;
    g.sms = q.sms;
    g.smem_per_block = q.smem_per_block;
    g.smem_per_sm = q.smem_per_sm;
    g.l2_bytes = q.l2_bytes;
    g.max_cluster = q.max_cluster;
    g.profile = q.name;
    return g;
}

// Blocks of `smem_per_block` bytes of shared memory that one SM holds: each
// block also takes the 1 KB the runtime reserves per block from 8.0 on.
// cudaOccupancy* answers for the real GPU; under GPU_PROFILE this is lower.
inline int blocks_per_sm_by_smem(const Gpu& g, size_t smem_per_block) {
    const size_t block = smem_per_block + (g.cc >= 80 ? kKiB : 0);
    return block ? int(g.smem_per_sm / block) : 1 << 30;
}

// Applies profile text `p` to the real GPU `g`. Returns "" or why it cannot.
inline std::string apply_gpu_profile(const char* p, Gpu& g) {
    const Gpu real = g;
    g.profile = p;
    GpuPreset want{nullptr, real.cc, real.sms, real.smem_per_block, real.smem_per_sm, real.l2_bytes, -1};
    bool preset = false;
    for (const GpuPreset& q : kGpuPresets)
        if (std::strcmp(p, q.name) == 0) want = q, preset = true;
    if (!preset) {  // key=value,key=value
        std::string s = p;
        size_t at = 0;
        while (at <= s.size()) {
            const size_t end = std::min(s.find(',', at), s.size());
            const std::string item = s.substr(at, end - at);
            const size_t eq = item.find('=');
            const std::string key = item.substr(0, eq), val = eq == std::string::npos ? "" : item.substr(eq + 1);
            char* rest = nullptr;
            const double v = std::strtod(val.c_str(), &rest);
            if (eq == std::string::npos || val.empty() || *rest || !(v >= 0) || v > 1e12)
                return "GPU_PROFILE: '" + item + "' is not key=number (presets: t4, a100, rtx3090, rtx4090, "
                       "rtx5090, h100; or cc=8.6,sms=84,smem_block=101376,smem_sm=102400,l2=6291456)";
            if (key == "cc") want.cc = int(v * 10 + 0.5);
            else if (key == "sms") want.sms = int(v);
            else if (key == "smem_block") want.smem_per_block = size_t(v);
            else if (key == "smem_sm") want.smem_per_sm = size_t(v);
            else if (key == "l2") want.l2_bytes = size_t(v);
            else if (key == "cluster") want.max_cluster = int(v);
            else return "GPU_PROFILE: unknown key '" + key + "' (cc, sms, smem_block, smem_sm, l2, cluster)";
            at = end + 1;
        }
        if (want.cc < 50 || want.sms < 1 || want.smem_per_block < 16 * kKiB || want.smem_per_sm < want.smem_per_block)
            return "GPU_PROFILE: needs cc >= 5.0, sms >= 1, smem_block >= 16384 and smem_sm >= smem_block";
    }
    if (want.max_cluster < 0) want.max_cluster = max_cluster_of(want.cc);
    std::string over;  // limits above the real GPU's
    auto cap = [&](auto& wanted, auto have, const char* what) {
        if (wanted > have) over += std::string(over.empty() ? "" : ", ") + what, wanted = have;
    };
    cap(want.sms, real.sms, "SMs");
    cap(want.smem_per_block, real.smem_per_block, "shared memory per block");
    cap(want.smem_per_sm, real.smem_per_sm, "shared memory per SM");
    cap(want.l2_bytes, real.l2_bytes, "L2");
    cap(want.max_cluster, real.max_cluster, "cluster size");
    if (!preset && !over.empty())
        return "GPU_PROFILE asks for more than this GPU has (" + over + "): a profile can only lower limits";
    g.cc = want.cc;
    g.sms = want.sms;
    g.smem_per_block = want.smem_per_block;
    g.smem_per_sm = want.smem_per_sm;
    g.l2_bytes = want.l2_bytes;
    g.max_cluster = want.max_cluster;
    g.capped = over;
    return "";
}

// Device `dev`'s own limits, no GPU_PROFILE (a test applies each preset to them).
inline Gpu real_gpu(int dev) {
    int major = 0, minor = 0, sms = 0, per_block = 0, per_sm = 0, l2 = 0;
    CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
    CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    CHECK(cudaDeviceGetAttribute(&per_block, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    CHECK(cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev));
    CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
    Gpu g;
    g.device = dev;
    g.cc = g.real_cc = major * 10 + minor;
    g.sms = sms;
    g.smem_per_block = size_t(per_block);
    g.smem_per_sm = size_t(per_sm);
    g.l2_bytes = size_t(l2);
    g.max_cluster = max_cluster_of(g.cc);
    return g;
}

// The current device's limits, GPU_PROFILE applied; cached per device.
inline const Gpu& gpu() {
    constexpr int kMaxDevices = 64;
    static Gpu cached[kMaxDevices];
    static bool known[kMaxDevices] = {};
    static Gpu beyond;  // devices past kMaxDevices: read every time
    int dev = 0;
    CHECK(cudaGetDevice(&dev));
    Gpu& g = dev < kMaxDevices ? cached[dev] : beyond;
    if (dev < kMaxDevices && known[dev]) return g;
    g = real_gpu(dev);
    const char* p = std::getenv("GPU_PROFILE");
    if (p && *p) g.error = apply_gpu_profile(p, g);
    if (dev < kMaxDevices) known[dev] = true;
    return g;
}

inline std::string kib(size_t bytes) { return std::to_string((bytes + 1023) / 1024) + " KiB"; }

// "" if one block may have `bytes` of shared memory on this GPU, else why not.
// A planner given another GPU's limits (a test planning for every preset) passes them as g.
inline std::string smem_refusal(size_t bytes, const Gpu& g = gpu()) {
    if (bytes <= g.smem_per_block) return "";
    return "needs " + kib(bytes) + " of shared memory per block; this GPU allows " + kib(g.smem_per_block) +
           (g.profile.empty() ? "" : " (GPU_PROFILE)");
}

// "" if features of compute capability `need_cc` may be used, else why not.
inline std::string cc_refusal(int need_cc, const char* feature, const Gpu& g = gpu()) {
    if (g.has(need_cc)) return "";
    const int cc = std::min(g.cc, g.real_cc);
    return std::string("needs sm_") + std::to_string(need_cc) + " (" + feature + "); this GPU is sm_" +
           std::to_string(cc) + (g.cc < g.real_cc ? " (GPU_PROFILE)" : "");
}

// "" if `kernel` was compiled for compute capability `need_cc` or newer in
// this binary (a build for sm_80 JIT-compiled on a Hopper GPU has the sm_80
// code: its guarded Hopper bodies are empty), else why not.
inline std::string code_refusal(const void* kernel, int need_cc) {
    cudaFuncAttributes a;
    CHECK(cudaFuncGetAttributes(&a, kernel));
    if (a.ptxVersion >= need_cc && a.binaryVersion >= need_cc) return "";
    return "needs sm_" + std::to_string(need_cc) + " code; this program was built for compute_" +
           std::to_string(a.ptxVersion) + " (make ARCH=sm_" + std::to_string(need_cc) + ")";
}

// Blocks of `kernel` (`threads` each, `smem` bytes of dynamic shared memory)
// one SM holds at once: the occupancy calculator's answer, which is the real
// GPU's, capped by what g's shared memory per SM holds (GPU_PROFILE's may be smaller).
inline int resident_blocks(const void* kernel, int threads, size_t smem, const Gpu& g = gpu()) {
    int per_sm = 0;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem));
    cudaFuncAttributes a;
    CHECK(cudaFuncGetAttributes(&a, kernel));
    return std::min(per_sm, blocks_per_sm_by_smem(g, a.sharedSizeBytes + smem));
}

}  // namespace common
