// launch.cuh - the small launch helpers every chapter used to write for itself.
//
//   ceil_div(a, b)            blocks needed to cover a items, b per block
//   sm_count()                multiprocessors of the current device (common/gpu.cuh)
//   request_dynamic_smem()    more than 48 KB of dynamic shared memory, or why not
//   launch_string(g, b, smem) the launch column of the results table
//   launch_cluster(...)       a launch with a thread-block-cluster size (Hopper)
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

// "grid(128) block(256)", "grid(64,64) block(32,8)", "grid(4,4,3) block(256)",
// plus " smem 64K" when dynamic shared memory is asked for.
inline std::string launch_string(dim3 g, dim3 b, size_t smem = 0) {
    char s[96];
    if (g.z > 1)
        std::snprintf(s, sizeof s, "grid(%u,%u,%u) block(%u)", g.x, g.y, g.z, b.x * b.y * b.z);
    else if (g.y == 1 && b.y == 1)
        std::snprintf(s, sizeof s, "grid(%u) block(%u)", g.x, b.x);
    else
        std::snprintf(s, sizeof s, "grid(%u,%u) block(%u,%u)", g.x, g.y, b.x, b.y);
    std::string r = s;
    if (smem) r += " smem " + std::to_string(smem / 1024) + "K";
    return r;
}

// The launch configuration of a one-dimensional cluster launch: `grid` blocks
// of `block` threads in clusters of `cluster` blocks, `smem` bytes of dynamic
// shared memory each. `attr` must outlive the config (cudaLaunchConfig_t
// points at it). Clusters above 8 blocks are "non-portable": the kernel must
// allow them first (allow_large_clusters).
struct ClusterLaunch {
    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute attr[1] = {};
    ClusterLaunch(unsigned grid, unsigned block, size_t smem, unsigned cluster, cudaStream_t stream = 0) {
        cfg.gridDim = dim3(grid);
        cfg.blockDim = dim3(block);
        cfg.dynamicSmemBytes = smem;
        cfg.stream = stream;
        attr[0].id = cudaLaunchAttributeClusterDimension;
        attr[0].val.clusterDim.x = cluster;
        attr[0].val.clusterDim.y = 1;
        attr[0].val.clusterDim.z = 1;
        cfg.attrs = attr;
        cfg.numAttrs = 1;
    }
    ClusterLaunch(const ClusterLaunch&) = delete;  // cfg.attrs points into this object
    ClusterLaunch& operator=(const ClusterLaunch&) = delete;
};

// Lets `kernel` run in clusters of more than 8 blocks (up to 16 on an H100/H200).
template <class... Params>
void allow_large_clusters(void (*kernel)(Params...)) {
    CHECK(cudaFuncSetAttribute(reinterpret_cast<const void*>(kernel),
                               cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
}

// Launches `kernel` in clusters; returns the launch's error (the caller
// CHECKs it, or reports it where a refusal is an expected answer).
template <class... Params, class... Args>
cudaError_t launch_cluster(void (*kernel)(Params...), unsigned grid, unsigned block, size_t smem,
                           unsigned cluster, Args&&... args) {
    ClusterLaunch l(grid, block, smem, cluster);
    return cudaLaunchKernelEx(&l.cfg, kernel, std::forward<Args>(args)...);
}

}  // namespace common
