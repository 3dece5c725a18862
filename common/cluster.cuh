// cluster.cuh - launches in thread-block clusters (Hopper: compute capability 9.0 and newer).
//
//   ClusterLaunch             a cluster launch's configuration (cudaLaunchKernelEx, occupancy queries)
//   allow_large_clusters(k)   clusters of more than 8 blocks (non-portable)
//   launch_cluster(...)       a launch with a thread-block-cluster size; returns its error
//
// Whether this GPU (or GPU_PROFILE) runs clusters, and how large, is common/gpu.cuh's:
// cc_refusal(90, ...), gpu().max_cluster.
#pragma once
#include <cstddef>
#include <utility>
#include <cuda_runtime.h>
#include "common/check.cuh"

namespace common {

// The launch configuration of a cluster launch: `grid` blocks of `block`
// threads in clusters of `cluster` blocks (a number: along x), `smem` bytes of
// dynamic shared memory each. `attr` must outlive the config (cudaLaunchConfig_t
// points at it). Clusters above 8 blocks are "non-portable": the kernel must
// allow them first (allow_large_clusters).
struct ClusterLaunch {
    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute attr[1] = {};
    ClusterLaunch(dim3 grid, dim3 block, size_t smem, dim3 cluster, cudaStream_t stream = 0) {
        cfg.gridDim = grid;
        cfg.blockDim = block;
        cfg.dynamicSmemBytes = smem;
        cfg.stream = stream;
        attr[0].id = cudaLaunchAttributeClusterDimension;
        attr[0].val.clusterDim.x = cluster.x;
        attr[0].val.clusterDim.y = cluster.y;
        attr[0].val.clusterDim.z = cluster.z;
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
