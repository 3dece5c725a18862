// gpu_profile.cuh - GPU_PROFILE: every program and test behaves, as far as
// limits and capabilities go, as on another GPU (common/gpu.cuh's gpu()).
//
// A preset (t4, a100, rtx3090, rtx4090, rtx5090, h100) or an explicit list,
// e.g. GPU_PROFILE=cc=8.6,sms=84,smem_block=101376,smem_sm=102400,l2=6291456
// (optional: cluster=N, the largest cluster; threads_sm=N and blocks_sm=N, the
// threads and blocks an SM holds). The capability decides which kernels a
// program is willing to run; one that needs what the real GPU lacks stays
// waived. An explicit cc also sets the largest cluster where cluster= is not
// given: 16 from 9.0, 8 from 10.0, and never more than the GPU's own (so cc=9.0
// on a GPU without clusters gives none; an explicit cluster= above the GPU's is
// refused, as below). The numbers can only go down: a preset's are capped at
// the real GPU's (a persistent grid sized for 170 SMs on a 132-SM GPU would
// wait for blocks that never become resident), and an explicit profile
// asking for more than the GPU has is refused (gpu().error; the programs exit
// 2 with it). Timings stay the real GPU's.
#pragma once
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include "common/gpu.cuh"

namespace common {

// A GPU's limits as a profile states them (presets: NVIDIA's published figures).
// (Threads and blocks an SM holds: the CUDA C++ Programming Guide's table of
// features and technical specifications per compute capability, and the
// CUDA Toolkit's cuda_occupancy.h: 24 blocks for 8.9 and 12.0.)
struct GpuPreset {
    const char* name;
    int cc, sms;
    size_t smem_per_block, smem_per_sm, l2_bytes;
    int max_cluster;
    int threads_per_sm, blocks_per_sm;
};
constexpr GpuPreset kGpuPresets[] = {
    {"t4", 75, 40, 64 * kKiB, 64 * kKiB, 4 * kMiB, 0, 1024, 16},
    {"a100", 80, 108, 163 * kKiB, 164 * kKiB, 40 * kMiB, 0, 2048, 32},
    {"rtx3090", 86, 82, 99 * kKiB, 100 * kKiB, 6 * kMiB, 0, 1536, 16},
    {"rtx4090", 89, 128, 99 * kKiB, 100 * kKiB, 72 * kMiB, 0, 1536, 24},
    {"rtx5090", 120, 170, 99 * kKiB, 100 * kKiB, 96 * kMiB, 8, 1536, 24},
    {"h100", 90, 132, 227 * kKiB, 228 * kKiB, 50 * kMiB, 16, 2048, 32},
};

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
    g.threads_per_sm = q.threads_per_sm;
    g.blocks_per_sm = q.blocks_per_sm;
    g.cooperative = true;  // every GPU from 6.0 on
    g.profile = q.name;
    return g;
}

// Applies profile text `p` to the real GPU `g`. Returns "" or why it cannot.
inline std::string apply_gpu_profile(const char* p, Gpu& g) {
    const Gpu real = g;
    g.profile = p;
    GpuPreset want{nullptr,          real.cc, real.sms, real.smem_per_block, real.smem_per_sm, real.l2_bytes, -1,
                   real.threads_per_sm, real.blocks_per_sm};
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
            // Whole numbers that fit an int (bytes up to 10^12), except cc (8.6, at most 100.0).
            const double most = key == "smem_block" || key == "smem_sm" || key == "l2" ? 1e12
                                : key == "cc"                                          ? 100.0
                                                                                       : 2147483647.0;
            if (eq == std::string::npos || val.empty() || *rest || !(v >= 0) || v > most ||
                (key != "cc" && v != double(int64_t(v))))
                return "GPU_PROFILE: '" + item + "' is not key=whole number (presets: t4, a100, rtx3090, rtx4090, "
                       "rtx5090, h100; or cc=8.6,sms=84,smem_block=101376,smem_sm=102400,l2=6291456)";
            if (key == "cc") want.cc = int(v * 10 + 0.5);
            else if (key == "sms") want.sms = int(v);
            else if (key == "smem_block") want.smem_per_block = size_t(v);
            else if (key == "smem_sm") want.smem_per_sm = size_t(v);
            else if (key == "l2") want.l2_bytes = size_t(v);
            else if (key == "cluster") want.max_cluster = int(v);
            else if (key == "threads_sm") want.threads_per_sm = int(v);
            else if (key == "blocks_sm") want.blocks_per_sm = int(v);
            else
                return "GPU_PROFILE: unknown key '" + key +
                       "' (cc, sms, smem_block, smem_sm, l2, cluster, threads_sm, blocks_sm)";
            at = end + 1;
        }
        if (want.cc < 50 || want.sms < 1 || want.smem_per_block < 16 * kKiB || want.smem_per_sm < want.smem_per_block ||
            want.threads_per_sm < 1024 || want.blocks_per_sm < 1)
            return "GPU_PROFILE: needs cc >= 5.0, sms >= 1, smem_block >= 16384, smem_sm >= smem_block, threads_sm >= "
                   "1024 and blocks_sm >= 1";
    }
    if (want.max_cluster < 0) want.max_cluster = std::min(max_cluster_of(want.cc), real.max_cluster);  // implied
    std::string over;  // limits above the real GPU's
    auto cap = [&](auto& wanted, auto have, const char* what) {
        if (wanted > have) over += std::string(over.empty() ? "" : ", ") + what, wanted = have;
    };
    cap(want.sms, real.sms, "SMs");
    cap(want.smem_per_block, real.smem_per_block, "shared memory per block");
    cap(want.smem_per_sm, real.smem_per_sm, "shared memory per SM");
    cap(want.l2_bytes, real.l2_bytes, "L2");
    cap(want.max_cluster, real.max_cluster, "cluster size");
    cap(want.threads_per_sm, real.threads_per_sm, "threads per SM");
    cap(want.blocks_per_sm, real.blocks_per_sm, "blocks per SM");
    if (!preset && !over.empty())
        return "GPU_PROFILE asks for more than this GPU has (" + over + "): a profile can only lower limits";
    g.cc = want.cc;
    g.sms = want.sms;
    g.smem_per_block = want.smem_per_block;
    g.smem_per_sm = want.smem_per_sm;
    g.l2_bytes = want.l2_bytes;
    g.max_cluster = want.max_cluster;
    g.threads_per_sm = want.threads_per_sm;
    g.blocks_per_sm = want.blocks_per_sm;
    g.capped = over;
    return "";
}

// GPU_PROFILE from the environment, applied to the real GPU's limits.
inline std::string apply_gpu_profile_from_env(Gpu& g) {
    const char* p = std::getenv("GPU_PROFILE");
    return p && *p ? apply_gpu_profile(p, g) : "";
}

// Including this header makes gpu() apply GPU_PROFILE (set before main()
// starts: an assignment, no CUDA call).
inline const bool kGpuProfileApplies = (apply_profile_from_env = apply_gpu_profile_from_env, true);

}  // namespace common
