// TF32 rounding for 01_matmul's tensor-core steps that round in registers (11, 16).
#pragma once
#include <cstdint>
#include <cuda_runtime.h>

namespace matmul {

// fp32 -> TF32, rounded to nearest (ties away from zero); the low 13 bits of
// the result are 0. Without it the tensor cores would ignore those bits
// (truncation: twice the error, and biased).
__device__ __forceinline__ uint32_t to_tf32(float x) {
    uint32_t r;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
#else
    r = __float_as_uint(x);
#endif
    return r;
}

// fp32 -> TF32, rounded to nearest, ties to even: what a TFLOAT32 tensor map
// does to fp32 data on its way into shared memory (measured on the H200: at
// exact ties it agrees with cvt.rn, not with cvt.rna; step 16m and its test).
__device__ __forceinline__ uint32_t to_tf32_as_tma(float x) {
    uint32_t r;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm("cvt.rn.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
#else
    r = __float_as_uint(x);  // (no TMA before sm_90: step 16 is waived there)
#endif
    return r;
}

}  // namespace matmul
