// cluster.cuh - launches in thread-block clusters (Hopper: compute capability 9.0 and newer).
//
//   ClusterLaunch             a cluster launch's configuration (cudaLaunchKernelEx, occupancy queries;
//                             common::Launch with cluster())
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
#include "common/launch.cuh"

namespace common {

// The launch configuration of a cluster launch: `grid` blocks of `block`
// threads in clusters of `cluster` blocks (a number: along x), `smem` bytes of
// dynamic shared memory each. Clusters above 8 blocks are "non-portable": the
// kernel must allow them first (allow_large_clusters).
struct ClusterLaunch : Launch {
    ClusterLaunch(dim3 grid, dim3 block, size_t smem, dim3 cluster, cudaStream_t stream = 0)
        : Launch(grid, block, smem, stream) {
        this->cluster(cluster);
    }
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
