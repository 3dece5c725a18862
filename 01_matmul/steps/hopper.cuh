// The Hopper pieces of 01_matmul's tensor-core steps (12-17): the tensor
// map that tells the Tensor Memory Accelerator (TMA) how to cut a matrix into
// tiles, the TMA copy itself, and the wgmma instructions that read a tile
// straight from shared memory (the 256-wide one: wgmma_n256.cuh). The
// mbarriers the copies complete are in common/mbarrier.cuh.
//   tensor_map_2d()         host: a row-major float matrix, read in 128-byte-wide boxes, 128B-swizzled
//   tma_load_2d()           one box from global to shared memory (common/tensor_map.cuh)
//   st_cluster_f4()         a 16-byte store into another block's shared memory (a cluster's)
//   wgmma_desc_k_sw128()    the descriptor of a K-major, 128B-swizzled operand in shared memory
//   wgmma_m64n128k8_rs()    D += A (registers) * B (shared memory), TF32 in, fp32 accumulate
//   wgmma_fence/commit/wait, setmaxnreg
//
// wgmma and setmaxnreg exist only in the arch-specific target sm_90a: the
// Makefile builds this chapter with -gencode arch=compute_90a,code=sm_90a
// where it targets sm_90. Every other build compiles empty bodies
// (__CUDA_ARCH_FEAT_SM90_ALL undefined) and the launchers are never called
// (01_matmul/plans.cuh's hopper_waiver says why).
#pragma once
#include <cstdint>
#include <string>
#include <cuda_runtime.h>
#include "common/check.cuh"
#include "common/mbarrier.cuh"
#include "common/tensor_map.cuh"

namespace matmul {

// ---- Host: the tensor map -----------------------------------------------------
using common::tensor_map_encoder;  // the driver's cuTensorMapEncodeTiled (common/tensor_map.cuh)

// A rows x cols row-major float matrix at `base` with a pitch of `ld` floats
// (base 16-byte aligned, ld a multiple of 4: the TMA's rules), read in boxes
// of box_rows x 32 floats. 32 floats are 128 bytes, the widest box the
// 128-byte swizzle allows: box row r lands in shared memory with its eight
// 16-byte chunks permuted, chunk c at position c ^ (r % 8) (chapter 03's
// XOR swizzle, done by the copy engine). Reads outside the matrix are
// zero-filled, which is how edge tiles are padded. The element type is
// TFLOAT32: the copy engine rounds each fp32 value to TF32 on the way
// (with FLOAT32 the tensor cores would truncate the low 13 bits instead: the
// chapter's WORKLOG.md, step 12b, measures the difference). `type` =
// FLOAT32 copies the bits as they are (step 16 needs them). Returns "" or,
// where the driver refuses the map, why (the launcher launches nothing).
inline std::string tensor_map_2d(CUtensorMap* map, const float* base, int rows, int cols, int ld, int box_rows,
                                 CUtensorMapDataType type = CU_TENSOR_MAP_DATA_TYPE_TFLOAT32) {
    if (!tensor_map_encoder()) return "cuTensorMapEncodeTiled not found in the driver (it needs CUDA 12.0+)";
    const cuuint64_t dims[2] = {cuuint64_t(cols), cuuint64_t(rows)};  // innermost first
    const cuuint64_t strides[1] = {cuuint64_t(ld) * sizeof(float)};   // bytes between rows
    const cuuint32_t box[2] = {32, cuuint32_t(box_rows)};
    const cuuint32_t element_strides[2] = {1, 1};
    const CUresult r = tensor_map_encoder()(map, type, 2, const_cast<float*>(base), dims,
                                            strides, box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                            CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                            CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r == CUDA_SUCCESS) return "";
    return "cuTensorMapEncodeTiled failed (" + std::to_string(int(r)) + ") for a " + std::to_string(rows) + "x" +
           std::to_string(cols) + " matrix, pitch " + std::to_string(ld) + " floats";
}

// ---- Device: TMA, descriptors, wgmma (sm_90a) --------------------------------
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
using common::tma_load_2d;  // one box into shared memory (common/tensor_map.cuh)
// Four floats into another block's shared memory (a shared::cluster address from
// common::cluster_address: distributed shared memory).
__device__ __forceinline__ void st_cluster_f4(unsigned addr, float x, float y, float z, float w) {
    asm volatile("st.shared::cluster.v4.f32 [%0], {%1, %2, %3, %4};" ::"r"(addr), "f"(x), "f"(y), "f"(z), "f"(w)
                 : "memory");
}
#endif

// The shared-memory matrix descriptor of an operand stored K-major (each of
// its rows is 32 consecutive k, 128 bytes) with the 128-byte swizzle, as the
// TMA wrote it: 8-row groups of 1024 bytes (the stride byte offset, SBO), the
// leading byte offset unused for swizzled K-major layouts (1), layout type 1
// (128B swizzle) in bits 62-63. The address is in 16-byte units; stepping k
// by 8 floats inside the 128-byte row adds 32 bytes (2 units) to it, the
// swizzle being applied by the hardware on the final address.
__device__ __forceinline__ uint64_t wgmma_desc_k_sw128(const float* tile) {
    const uint64_t addr = static_cast<uint64_t>(__cvta_generic_to_shared(tile));
    return ((addr & 0x3FFFF) >> 4) | (uint64_t(1) << 16) | (uint64_t(1024 >> 4) << 32) | (uint64_t(1) << 62);
}

// wgmma is asynchronous: fence before the first one that reads registers
// written by ordinary instructions, commit a group, wait until at most N
// groups are still in flight.
__device__ __forceinline__ void wgmma_fence() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#endif
}
__device__ __forceinline__ void wgmma_commit() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
#endif
}
template <int N>
__device__ __forceinline__ void wgmma_wait() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
#endif
}
// Tells the compiler that `d` may be read and written here, so that it keeps
// the accumulators where they are across the asynchronous wgmmas (no moves
// or re-materialization between a wgmma and its wait; ptxas serializes the
// wgmmas, warning C7515, where it finds ordinary instructions writing them).
template <int N>
__device__ __forceinline__ void fence_operands(float (&d)[N]) {
#pragma unroll
    for (int i = 0; i < N; ++i) asm volatile("" : "+f"(d[i])::"memory");
}
template <int K8>
__device__ __forceinline__ void fence_operands(uint32_t (&a)[K8][4]) {
#pragma unroll
    for (int k = 0; k < K8; ++k)
#pragma unroll
        for (int i = 0; i < 4; ++i) asm volatile("" : "+r"(a[k][i])::"memory");
}

// This warpgroup's registers per thread: fewer for the producer, more for
// the consumers (the pool is the block's, set by __launch_bounds__).
template <int REGS>
__device__ __forceinline__ void setmaxnreg_inc() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(REGS));
#endif
}
template <int REGS>
__device__ __forceinline__ void setmaxnreg_dec() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(REGS));
#endif
}

// The wgmma instruction of a 128-wide tile (the 64 x N fp32 accumulator is
// N / 2 registers of each of the warpgroup's 128 threads; wgmma_n256.cuh has N = 256).
// A: the thread's 4 registers of the 64 x 8 TF32 operand, the layout of
// mma.sync's m16n8k8 A fragment for each warp's 16 rows (step 11): warp w,
// lane (g = lane / 4, t = lane % 4) holds rows 16 w + g and 16 w + g + 8,
// columns t and t + 4. D: warp w, lane (g, t) holds rows 16 w + g (+ 8) and
// columns 8 j + 2 t (+ 1) in registers 4 j + 0..3 (row-major pairs).
// D (64 x 128) += A (64 x 8, this thread's 4 registers) * B (8 x 128, shared memory, descriptor);
// accumulate = false: D = A B (wgmma's scale-d predicate: D's old value is not read, so no
// moves are needed to zero it first).
__device__ __forceinline__ void wgmma_m64n128k8_rs(float (&d)[64], const uint32_t (&a)[4], uint64_t b_desc,
                                                   bool accumulate = true) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31,"
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47,"
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
        "}, {%64, %65, %66, %67}, %68, p, 1, 1;\n}"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
          "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
          "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b_desc), "r"(int(accumulate)));
#else
    (void)d, (void)a, (void)b_desc, (void)accumulate;
#endif
}

}  // namespace matmul
