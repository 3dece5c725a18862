// Step 14 of 01_matmul: fp32 accuracy from TF32 tensor cores ("3xTF32").
//
// TF32 keeps 11 significant bits of each input; fp32 has 24. Split each
// input into two TF32 numbers, x = x_big + x_small with x_big = tf32(x) and
// x_small = tf32(x - x_big): together they hold ~22 of x's 24 bits. Then
//     a b = a_big b_big + a_big b_small + a_small b_big + a_small b_small,
// and the last term is ~2^-22 of the first: leaving it out, three TF32
// products give what one fp32 product gives, at a third of the tensor cores'
// rate (still several times the fp32 FMA rate). The products are formed
// smallest first, so the small terms are not lost against a large partial sum.
//
// What changes against step 13 (one kernel, 128-row tiles):
//  - A is split once, before the product, by a small kernel (splitTf32)
//    into two matrices A_big and A_small with a 16-byte pitch; the producer
//    loads both tiles with the TMA (FLOAT32: the values are TF32 already).
//    A stage is A_big + A_small + B = 48 KB: 4 stages.
//  - B is loaded as it is (FLOAT32: the low bits are needed) and split in
//    registers as each thread loads its fragments: b_big = cvt.rna(b),
//    b_small = cvt.rna(b - b_big).
//  - Three wgmmas per k8 step: b_small^T a_big, b_big^T a_small, b_big^T a_big,
//    into a per-k-tile accumulator that the FMA units add to the running sum
//    (the tensor cores' own accumulation is less accurate than fp32 FADD:
//    measured, README). That needs wait_group 0 every k-tile: the two
//    consumer warpgroups keep the tensor cores busy in turn.
// The accuracy is measured, not assumed: the program's err/S columns give
// this kernel's error against the double reference next to the fp32 SIMT
// kernels' (README, accuracy). Its peer is cuBLAS SGEMM in fp32.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <cuda_runtime.h>
#include "common/check.cuh"
#include "common/launch.cuh"
#include "common/mbarrier.cuh"
#include "01_matmul/steps/13_sgemmTmaWgmmaWide.cuh"

namespace matmul {

template <int BM_, int STAGES_>
struct Split3Tile {
    static constexpr int BM = BM_, BN = 128, BK = 32, STAGES = STAGES_, CONSUMERS = 2;
    static constexpr int PRODUCER_REGS = 40, CONSUMER_REGS = 232;
    static constexpr int THREADS = 128 * (1 + CONSUMERS);
    static constexpr int A_FLOATS = BM * BK, B_FLOATS = BK * BN, STAGE_FLOATS = 2 * A_FLOATS + B_FLOATS;
    static constexpr unsigned STAGE_BYTES = STAGE_FLOATS * sizeof(float);
    static constexpr int ACC = BM / 2;
    static constexpr size_t SMEM = 1024 + size_t(STAGES) * STAGE_BYTES + 2 * STAGES * sizeof(uint64_t);
};
using Split3Tile128 = Split3Tile<128, 4>;

// A (rows x cols, pitch cols) -> big, small (pitch ld >= cols, zero-padded).
__global__ void splitTf32(const float* __restrict__ A, float* __restrict__ big, float* __restrict__ small, int rows,
                          int cols, int ld) {
    const size_t total = size_t(rows) * ld;
    for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += size_t(gridDim.x) * blockDim.x) {
        const int r = int(i / ld), c = int(i % ld);
        const float x = c < cols ? A[size_t(r) * cols + c] : 0.0f;
        const float b = __uint_as_float(to_tf32(x));
        big[i] = b;
        small[i] = __uint_as_float(to_tf32(x - b));
    }
}

// This thread's fragments of one k-tile, split: f[0] = big, f[1] = small.
template <class T>
__device__ __forceinline__ void load_split_fragments(const float* b_box, const BtRows& r, int t,
                                                     uint32_t (&f)[2][T::BK / 8][4]) {
#pragma unroll
    for (int kk = 0; kk < T::BK / 8; ++kk) {
        const float2 lo = *reinterpret_cast<const float2*>(b_box + r.offset(8 * kk + t));
        const float2 hi = *reinterpret_cast<const float2*>(b_box + r.offset(8 * kk + t + 4));
        const float x[4] = {lo.x, lo.y, hi.x, hi.y};
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            f[0][kk][i] = to_tf32(x[i]);
            f[1][kk][i] = to_tf32(x[i] - __uint_as_float(f[0][kk][i]));
        }
    }
}

template <class T>
__global__ void __launch_bounds__(T::THREADS, 1)
sgemm3xTf32(const __grid_constant__ CUtensorMap tma_a_big, const __grid_constant__ CUtensorMap tma_a_small,
            const __grid_constant__ CUtensorMap tma_b, float* __restrict__ C, int M, int N, int K) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    extern __shared__ uint8_t smem_raw[];
    float* ring = ring_of<T>(smem_raw);
    uint64_t* full = reinterpret_cast<uint64_t*>(ring + T::STAGES * T::STAGE_FLOATS);
    uint64_t* empty = full + T::STAGES;

    int bm, bn;
    tile_origin<T>(blockIdx.x, (M + T::BM - 1) / T::BM, (N + T::BN - 1) / T::BN, &bm, &bn);
    const int k_tiles = (K + T::BK - 1) / T::BK;
    const int warpgroup = threadIdx.x / 128;

    if (threadIdx.x == 0) {
        for (int s = 0; s < T::STAGES; ++s) {
            common::mbarrier_init(&full[s], 1);
            common::mbarrier_init(&empty[s], 128 * T::CONSUMERS);
        }
        common::fence_mbarrier_init();
    }
    __syncthreads();

    if (warpgroup == 0) {  // the producer: A_big, A_small and B tiles of each k-tile
        setmaxnreg_dec<T::PRODUCER_REGS>();
        if (threadIdx.x == 0)
            for (int kt = 0; kt < k_tiles; ++kt) {
                const int s = kt % T::STAGES, k = kt * T::BK;
                if (kt >= T::STAGES) common::mbarrier_wait(&empty[s], (kt / T::STAGES - 1) & 1);
                float* a_big = ring + s * T::STAGE_FLOATS;
                float* a_small = a_big + T::A_FLOATS;
                float* bs = a_small + T::A_FLOATS;
                common::mbarrier_arrive_expect_tx(&full[s], T::STAGE_BYTES);
                tma_load_2d(a_big, &tma_a_big, k, bm, &full[s]);
                tma_load_2d(a_small, &tma_a_small, k, bm, &full[s]);
#pragma unroll
                for (int j = 0; j < T::BN / 32; ++j) tma_load_2d(bs + j * 32 * T::BK, &tma_b, bn + 32 * j, k, &full[s]);
            }
    } else {
        setmaxnreg_inc<T::CONSUMER_REGS>();
        const int tid = threadIdx.x % 128, warp = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
        const BtRows rows(warpgroup - 1, warp, g);
        // The tensor cores accumulate each k-tile's 12 products into `part`
        // (from zero); the FMA units add it to `sum` in fp32, rounded to
        // nearest. Accumulating the whole of K in the tensor cores' adder
        // measured ~30x the error of the fp32 SIMT kernels at 4096^3 (README);
        // with this promotion every k-tile it is within a few times of it.
        float sum[T::ACC] = {}, part[T::ACC];
        uint32_t frag[2][T::BK / 8][4];  // big, small
        for (int kt = 0; kt < k_tiles; ++kt) {
            const int s = kt % T::STAGES;
            common::mbarrier_wait(&full[s], (kt / T::STAGES) & 1);
            const float* a_big = ring + s * T::STAGE_FLOATS;
            load_split_fragments<T>(a_big + 2 * T::A_FLOATS + rows.box * 32 * T::BK, rows, t, frag);
#pragma unroll
            for (int i = 0; i < T::ACC; ++i) part[i] = 0.0f;
            wgmma_fence();
            fence_operands(part);
            const uint64_t big = wgmma_desc_k_sw128(a_big), small = wgmma_desc_k_sw128(a_big + T::A_FLOATS);
#pragma unroll
            for (int kk = 0; kk < T::BK / 8; ++kk) {  // smallest products first
                wgmma_tf32<T::BM>(part, frag[1][kk], big + 2 * kk);
                wgmma_tf32<T::BM>(part, frag[0][kk], small + 2 * kk);
                wgmma_tf32<T::BM>(part, frag[0][kk], big + 2 * kk);
            }
            wgmma_commit();
            fence_operands(part);
            wgmma_wait<0>();  // this k-tile's wgmmas are done: its buffer is free, `part` is final
            fence_operands(part);
            common::mbarrier_arrive(&empty[s]);
#pragma unroll
            for (int i = 0; i < T::ACC; ++i) sum[i] += part[i];
        }
        store_ct<T>(C, sum, bm + 2 * t, bn + rows.n(), M, N);
    }
#else
    (void)tma_a_big, (void)tma_a_small, (void)tma_b, (void)C, (void)M, (void)N, (void)K;  // waived
#endif
}

template <class T>
std::string launch_sgemm3xTf32_with(const float* A, const float* B, float* C, int M, int N, int K) {
    const int lda = common::ceil_div(K, 4) * 4;
    float* a_big = scratch(kSplitA, size_t(2) * M * lda);
    float* a_small = a_big + size_t(M) * lda;
    splitTf32<<<grid_stride_blocks(size_t(M) * lda, 256), 256>>>(A, a_big, a_small, M, K, lda);
    CHECK_LAUNCH();
    const PreparedB pb = prepare_b(B, N, K, true);
    const CUtensorMap m_big = tensor_map_2d(a_big, M, K, lda, T::BM, CU_TENSOR_MAP_DATA_TYPE_FLOAT32);
    const CUtensorMap m_small = tensor_map_2d(a_small, M, K, lda, T::BM, CU_TENSOR_MAP_DATA_TYPE_FLOAT32);
    const CUtensorMap mb = tensor_map_2d(pb.b, K, N, pb.ldb, T::BK, CU_TENSOR_MAP_DATA_TYPE_FLOAT32);
    static bool configured = false;
    if (!configured) {
        allow_dynamic_smem(sgemm3xTf32<T>, T::SMEM);
        configured = true;
    }
    const int grid = common::ceil_div(M, T::BM) * common::ceil_div(N, T::BN);
    sgemm3xTf32<T><<<grid, T::THREADS, T::SMEM>>>(m_big, m_small, mb, C, M, N, K);
    CHECK_LAUNCH();
    return std::to_string(T::BM) + "x" + std::to_string(T::BN) + "x" + std::to_string(T::BK) + " s" +
           std::to_string(T::STAGES) + " A split" + c_pairs_what(C, N) + pb.what;
}

inline std::string launch_sgemm3xTf32(const float* A, const float* B, float* C, int M, int N, int K) {
    return launch_sgemm3xTf32_with<Split3Tile128>(A, B, C, M, N, K);
}

}  // namespace matmul
