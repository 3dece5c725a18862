// launch.cuh - the small launch helpers every chapter used to write for itself.
//
//   ceil_div(a, b)            blocks needed to cover a items, b per block
//   sm_count()                multiprocessors of the current device (common/gpu.cuh)
//   request_dynamic_smem()    more than 48 KB of dynamic shared memory, or why not
//   launch_string()           the launch column of every results table (grid, block, smem, cluster)
//
// Cluster launches (Hopper): common/cluster.cuh.
#pragma once
#include <cstdio>
#include <string>
#include <type_traits>
#include <cuda_runtime.h>
#include "common/check.cuh"
#include "common/gpu.cuh"

namespace common {

// ceil(a / b) for positive integers; the type of a (int for 2D grids, size_t for element counts).
template <class A, class B>
constexpr A ceil_div(A a, B b) {
    static_assert(std::is_integral_v<A> && std::is_integral_v<B>, "ceil_div takes integers");
    return A((a + A(b) - 1) / A(b));
}

// Multiprocessors of the current device (GPU_PROFILE's where one is set: common/gpu.cuh).
inline int sm_count() { return gpu().sms; }

// Lets `kernel` launch with `bytes` of dynamic shared memory (above 48 KB a
// kernel must ask). Returns "" or, where this GPU (or GPU_PROFILE) allows
// less, why not: the caller waives that kernel or picks a smaller plan; no
// abort. The attribute only grows, so a plan made earlier for more still
// launches. prefer_shared: also ask for the largest shared-memory carveout
// (several such blocks per SM rather than more L1).
template <class... Params>
std::string request_dynamic_smem(void (*kernel)(Params...), size_t bytes, bool prefer_shared = false) {
    const std::string why = smem_refusal(bytes);
    if (!why.empty()) return why;
    const void* k = reinterpret_cast<const void*>(kernel);
    cudaFuncAttributes a;
    CHECK(cudaFuncGetAttributes(&a, k));
    if (bytes > size_t(a.maxDynamicSharedSizeBytes))
        CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
    if (prefer_shared)
        CHECK(cudaFuncSetAttribute(k, cudaFuncAttributePreferredSharedMemoryCarveout,
                                   int(cudaSharedmemCarveoutMaxShared)));
    return "";
}

// The launch column of every results table: "grid(128) block(256)",
// "grid(64,64) block(32,8)", "grid(4,4,3) block(256)"; then " smem 64K" when
// dynamic shared memory is asked for (rounded up to whole KiB, as common::kib
// does), and " cluster 4" for a launch in thread-block clusters of 4 blocks
// (common/cluster.cuh; 0: not a cluster launch).
inline std::string launch_string(dim3 g, dim3 b, size_t smem = 0, unsigned cluster = 0) {
    char s[96];
    if (g.z > 1)
        std::snprintf(s, sizeof s, "grid(%u,%u,%u) block(%u)", g.x, g.y, g.z, b.x * b.y * b.z);
    else if (g.y == 1 && b.y == 1)
        std::snprintf(s, sizeof s, "grid(%u) block(%u)", g.x, b.x);
    else
        std::snprintf(s, sizeof s, "grid(%u,%u) block(%u,%u)", g.x, g.y, b.x, b.y);
    std::string r = s;
    if (smem) r += " smem " + std::to_string((smem + 1023) / 1024) + "K";
    if (cluster) r += " cluster " + std::to_string(cluster);
    return r;
}

}  // namespace common
