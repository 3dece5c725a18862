// The TF32 instructions of 01_matmul's tensor-core steps (11-16).
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

// d += a * b, one m16n8k8 TF32 tile (fragments as above).
__device__ __forceinline__ void mma_m16n8k8_tf32(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
                 "{%0, %1, %2, %3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#else
    (void)d, (void)a, (void)b;
#endif
}

}  // namespace matmul
