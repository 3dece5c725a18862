// gpu.cuh - what the current GPU allows: the one place plans, launchers and
// tests ask.
//   gpu()                     the current device's limits (cached per device)
//   gpu().has(cc)             a feature of compute capability cc may be used (90: clusters, TMA)
//   gpu().sm90a()             wgmma / setmaxnreg code may run (9.0 exactly)
//   smem_refusal(bytes)       "" if one block may have `bytes` of shared memory, else why not
//   cc_refusal(cc, feature)   "" if gpu().has(cc), else why not
//   cluster_refusal(blocks)   "" if thread-block clusters of `blocks` blocks may be launched, else why not
//   code_refusal(kernel, cc)  "" if this binary holds the kernel's code for cc, else why not
//   resident_blocks(k, t, s)  blocks of a kernel one SM holds under these limits
//   cap_by_sm_slots(n, t)     n blocks of t threads, capped by the threads and blocks an SM holds
//   reserved_smem_per_block() the shared memory the runtime keeps for each block
// Under GPU_PROFILE the limits are another, smaller GPU's: every program and
// test includes common/gpu_profile.cuh, which applies it.
#pragma once
#include <algorithm>
#include <map>
#include <string>
#include <cuda_runtime.h>
#include "common/check.cuh"

namespace common {

constexpr size_t kKiB = 1024, kMiB = 1024 * 1024;
// Shared memory one block may have without opting in (request_dynamic_smem,
// common/launch.cuh): 48 KiB on every GPU from 7.0 on.
constexpr size_t kSmemWithoutOptIn = 48 * kKiB;

struct Gpu {
    int device = 0;
    int cc = 0;                 // compute capability the program plans for, 90 for 9.0 (the profile's)
    int real_cc = 0;            // the GPU's own
    int sms = 0;                // multiprocessors
    size_t smem_per_block = 0;  // shared memory one block may opt into, bytes
    size_t smem_per_sm = 0;     // shared memory of one SM, bytes
    size_t l2_bytes = 0;
    int max_cluster = 0;        // largest thread-block cluster (0: none; 8 portable; 16 on 9.0)
    int threads_per_sm = 0;     // resident threads an SM holds (2048 on 8.0 and 9.0, 1536 on 8.6-8.9 and 12.0)
    int blocks_per_sm = 0;      // resident blocks an SM holds (32 on 8.0 and 9.0, 16 on 7.5 and 8.6)
    // Features, not limits: the GPU's own under any GPU_PROFILE (a preset in gpu_of: its own).
    bool cooperative = false;   // cooperative launches (grid.sync()) run
    int sync_domains = 0;       // memory-synchronization domains (0 in gpu_of: no preset states it)
    std::string profile;        // GPU_PROFILE as given; "" on the real GPU's limits
    std::string capped;         // the preset's limits that were capped at this GPU's ("" none)
    std::string error;          // GPU_PROFILE cannot be used here: why (the programs exit 2)
    bool has(int need_cc) const { return cc >= need_cc && real_cc >= need_cc; }
    bool sm90a() const { return cc == 90 && real_cc == 90; }  // arch-specific sm_90a code runs on 9.0 only
};

// The largest cluster a GPU of capability cc launches: none before 9.0, 16
// blocks on 9.0 (non-portable sizes, allowed per kernel), 8 (portable) after.
inline int max_cluster_of(int cc) { return cc < 90 ? 0 : cc == 90 ? 16 : 8; }

// Shared memory the runtime reserves for each block beside what the block
// asks for (cudaDevAttrReservedSharedMemoryPerBlock): 1 KiB from 8.0 on.
inline size_t reserved_smem_per_block(const Gpu& g) { return g.cc >= 80 ? kKiB : 0; }

// Blocks of `smem_per_block` bytes of shared memory that one SM holds, each
// with its reserved shared memory. cudaOccupancy* answers for the real GPU;
// under GPU_PROFILE this is lower.
inline int blocks_per_sm_by_smem(const Gpu& g, size_t smem_per_block) {
    const size_t block = smem_per_block + reserved_smem_per_block(g);
    return block ? int(g.smem_per_sm / block) : 1 << 30;
}

// Device `dev`'s own limits, no GPU_PROFILE (a test applies each preset to them).
inline Gpu real_gpu(int dev) {
    auto attribute = [dev](cudaDeviceAttr a) {
        int v = 0;
        CHECK(cudaDeviceGetAttribute(&v, a, dev));
        return v;
    };
    Gpu g;
    g.device = dev;
    g.cc = g.real_cc = attribute(cudaDevAttrComputeCapabilityMajor) * 10 + attribute(cudaDevAttrComputeCapabilityMinor);
    g.sms = attribute(cudaDevAttrMultiProcessorCount);
    g.smem_per_block = size_t(attribute(cudaDevAttrMaxSharedMemoryPerBlockOptin));
    g.smem_per_sm = size_t(attribute(cudaDevAttrMaxSharedMemoryPerMultiprocessor));
    g.l2_bytes = size_t(attribute(cudaDevAttrL2CacheSize));
    g.max_cluster = max_cluster_of(g.cc);
    g.threads_per_sm = attribute(cudaDevAttrMaxThreadsPerMultiProcessor);
    g.blocks_per_sm = attribute(cudaDevAttrMaxBlocksPerMultiprocessor);
    g.cooperative = attribute(cudaDevAttrCooperativeLaunch) != 0;
    int domains = 0;  // CUDA 12's attribute: a device that does not answer counts none
    if (cudaDeviceGetAttribute(&domains, cudaDevAttrMemSyncDomainCount, dev) != cudaSuccess) {
        (void)cudaGetLastError();
        domains = 0;
    }
    g.sync_domains = domains;
    return g;
}

// Lowers `g` to GPU_PROFILE's limits: "" or why it cannot (gpu().error).
// Set by common/gpu_profile.cuh when a program or test includes it.
inline std::string (*apply_profile_from_env)(Gpu& g) = nullptr;

// The current device's limits, GPU_PROFILE applied; read once per device.
inline const Gpu& gpu() {
    static std::map<int, Gpu> known;  // a map's elements stay where they are as it grows
    int dev = 0;
    CHECK(cudaGetDevice(&dev));
    const auto it = known.find(dev);
    if (it != known.end()) return it->second;
    Gpu g = real_gpu(dev);
    if (apply_profile_from_env) g.error = apply_profile_from_env(g);
    return known[dev] = g;
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

// "" if thread-block clusters of `blocks` blocks may be launched (9.0 and newer:
// up to 8, 16 on 9.0 for a kernel that allows it), else why not.
inline std::string cluster_refusal(int blocks, const Gpu& g = gpu()) {
    if (blocks <= g.max_cluster) return "";
    const std::string profile = g.profile.empty() ? "" : " (GPU_PROFILE)";
    if (g.max_cluster < 2) return "no thread-block clusters on this GPU" + profile;
    return "needs clusters of " + std::to_string(blocks) + " blocks; this GPU allows " + std::to_string(g.max_cluster) +
           profile;
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

// `per_sm` blocks of `threads` threads each, no more than the threads and
// blocks an SM of g holds, where g knows them (GPU_PROFILE's may be fewer).
inline int cap_by_sm_slots(int per_sm, int threads, const Gpu& g) {
    if (g.threads_per_sm > 0) per_sm = std::min(per_sm, g.threads_per_sm / threads);
    if (g.blocks_per_sm > 0) per_sm = std::min(per_sm, g.blocks_per_sm);
    return per_sm;
}

// Blocks of `kernel` (`threads` each, `smem` bytes of dynamic shared memory)
// one SM holds at once: the occupancy calculator's answer, which is the real
// GPU's, capped by what g's shared memory, threads and blocks per SM allow
// (GPU_PROFILE's may be smaller; registers are 64K an SM on every preset).
inline int resident_blocks(const void* kernel, int threads, size_t smem, const Gpu& g = gpu()) {
    int per_sm = 0;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem));
    cudaFuncAttributes a;
    CHECK(cudaFuncGetAttributes(&a, kernel));
    return cap_by_sm_slots(std::min(per_sm, blocks_per_sm_by_smem(g, a.sharedSizeBytes + smem)), threads, g);
}

}  // namespace common
