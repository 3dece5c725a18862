// tensor_map.cuh - Hopper's (sm_90) tiled copies: a tensor map, made on the
// host, tells the Tensor Memory Accelerator (TMA) how a matrix lies in global
// memory; one instruction then copies a whole box of it into shared memory,
// filling what lies outside the matrix with zeros. 01_matmul's tensor-core
// steps read their operand tiles this way, 05_transpose its input tiles.
//   tensor_map_encoder()   host: the driver's cuTensorMapEncodeTiled, or nullptr
//   tma_load_2d()          device: one box into shared memory, completing on an mbarrier
//   tma_load_2d_multicast() device: the same box into several blocks of a cluster
// The mbarriers themselves are in common/mbarrier.cuh.
#pragma once
#include <cstdint>
#include <cuda.h>           // CUtensorMap and its enums (types only: nothing is linked from libcuda)
#include <cudaTypedefs.h>   // PFN_cuTensorMapEncodeTiled
#include <cuda_runtime.h>
#include "common/check.cuh"
#include "common/mbarrier.cuh"

namespace common {

// cuTensorMapEncodeTiled is a driver-API function; the runtime hands out its
// address (cudaGetDriverEntryPointByVersion), so a program needs no -lcuda.
// nullptr where the driver has none (older than CUDA 12.0).
inline PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {
    static PFN_cuTensorMapEncodeTiled_v12000 fn = [] {
        void* p = nullptr;
        cudaDriverEntryPointQueryResult found;
#if CUDART_VERSION >= 12050
        CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &found));
#else
        CHECK(cudaGetDriverEntryPoint("cuTensorMapEncodeTiled", &p, cudaEnableDefault, &found));
#endif
        return found == cudaDriverEntryPointSuccess ? reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(p) : nullptr;
    }();
    return fn;
}

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
// The box at column x, row y of `map` (any coordinates: the parts outside the
// matrix arrive as zeros) into shared memory at `dst` (128-byte aligned;
// 1024 for a 128-byte swizzle); its bytes count down `bar`'s tx-count.
__device__ __forceinline__ void tma_load_2d(void* dst, const CUtensorMap* map, int x, int y, uint64_t* bar) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
        ::"r"(smem_address(dst)), "l"(reinterpret_cast<uint64_t>(map)), "r"(x), "r"(y), "r"(smem_address(bar))
        : "memory");
}
// The same box into every block of the cluster that `mask` names (bit r:
// block r), at dst's offset in each, completing the barrier at bar's offset
// in each (TMA multicast; 01_matmul's step 17).
__device__ __forceinline__ void tma_load_2d_multicast(void* dst, const CUtensorMap* map, int x, int y, uint64_t* bar,
                                                      uint16_t mask) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster"
        " [%0], [%1, {%2, %3}], [%4], %5;"
        ::"r"(smem_address(dst)), "l"(reinterpret_cast<uint64_t>(map)), "r"(x), "r"(y), "r"(smem_address(bar)),
        "h"(mask)
        : "memory");
}
#endif

}  // namespace common
