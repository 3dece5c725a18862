// Step 13 of 01_matmul: a wider tile, the registers to hold it, and a plan
// for the shapes it does not fill.
//
// Step 12 reads (BM + BN) x BK floats from L2 per BM x BN x BK multiply-adds:
// 1/16 byte per multiply-add with 128 x 128 tiles, ~9 TB/s of L2 traffic at
// 300 TFLOP/s, and its wgmmas are m64n128k8. Here the tile is 256 rows of C
// (wgmma m64n256k8, one instruction per warpgroup per k8 step) by the same
// 128 columns: 3/64 byte per multiply-add (-25%), and half as many wgmma
// instructions and fragment loads per multiply-add.
//
// The cost is registers: each consumer thread holds a 64 x 256 / 128 = 128
// accumulators, plus two sets of 16 fragment registers (step 12 explains why
// two). The block's 384 threads get at most 168 each at launch
// (__launch_bounds__(384, 1); 65536 / 384 = 170.7, allocated in units of 8),
// which does not fit: ptxas warns that it must serialize the wgmmas (C7512,
// "insufficient register resources") and spills. `setmaxnreg` moves
// registers between warpgroups at run time: the producer, which needs few,
// gives them back (setmaxnreg.dec to 40) and each consumer warpgroup takes
// more (setmaxnreg.inc to 232): 128 x 40 + 256 x 232 = 64512 = 384 x 168,
// every register the block has (an .inc beyond that would wait forever; a
// static_assert in Tile checks it). The stages grow to 48 KB, so 4 of them
// fit (192 KB).
//
// Which tile runs for a shape (256 or 128 rows) is plans.cuh's choice:
// 256-row tiles leave more SMs idle where C has few tiles.
// Look for: HGMMA.64x256x8.F32.TF32 in the SASS, no C7512 warning and no
// spills in `make EXTRA_NVFLAGS=-Xptxas=-v matmul`; the % of cuBLAS TF32 at
// 4096^3 and 8192^3 (README).
#pragma once
#include <cstdint>
#include <string>
#include <cuda_runtime.h>
#include "common/check.cuh"
#include "common/launch.cuh"
#include "common/mbarrier.cuh"
#include "01_matmul/steps/operands.cuh"
#include "01_matmul/steps/hopper.cuh"
#include "01_matmul/steps/wgmma_n256.cuh"

namespace matmul {
namespace step13 {

// The block's tile: BM rows of C (wgmma's N) x BN = 128 columns (two
// consumer warpgroups x 64), k-tiles of BK = 32 (one 128-byte box row),
// STAGES buffers of (BM + BN) x BK floats.
// PRODUCER_REGS, CONSUMER_REGS: registers per thread the warpgroups ask
// for with setmaxnreg (0: keep the launch's even share).
template <int BM_, int STAGES_, int PRODUCER_REGS_ = 0, int CONSUMER_REGS_ = 0>
struct Tile {
    static constexpr int BM = BM_, BN = 128, BK = 32, STAGES = STAGES_, CONSUMERS = 2;
    static constexpr int PRODUCER_REGS = PRODUCER_REGS_, CONSUMER_REGS = CONSUMER_REGS_;
    static constexpr int THREADS = 128 * (1 + CONSUMERS);  // producer warpgroup + consumers
    static constexpr int A_FLOATS = BM * BK, B_FLOATS = BK * BN, STAGE_FLOATS = A_FLOATS + B_FLOATS;
    static constexpr unsigned STAGE_BYTES = STAGE_FLOATS * sizeof(float);
    static constexpr int ACC = BM / 2;  // accumulator registers per consumer thread
    static constexpr size_t SMEM = 1024 + size_t(STAGES) * STAGE_BYTES + 2 * STAGES * sizeof(uint64_t);
    static_assert(BM == 128 || BM == 256, "wgmma widths provided: 128, 256");
    // setmaxnreg moves only the registers the block was launched with (65536 / THREADS a thread, in
    // whole units of 8: 168 at 384 threads) between its warpgroups; .inc waits until they are free.
    static constexpr int LAUNCH_REGS = 65536 / THREADS / 8 * 8;
    static_assert(128 * ((PRODUCER_REGS ? PRODUCER_REGS : LAUNCH_REGS) +
                         CONSUMERS * (CONSUMER_REGS ? CONSUMER_REGS : LAUNCH_REGS)) <= THREADS * LAUNCH_REGS,
                  "setmaxnreg.inc would wait forever for registers the block does not have");
};

// D += A * B for one k8 step of a BM-wide tile.
template <int BM>
__device__ __forceinline__ void wgmma_tf32(float (&d)[BM / 2], const uint32_t (&a)[4], uint64_t desc) {
    if constexpr (BM == 128) wgmma_m64n128k8_rs(d, a, desc);
    else wgmma_m64n256k8_rs(d, a, desc);
}

// The B^T rows a consumer thread holds: columns n and n + 1 of the block's
// tile, n = 32 * box + 4 * chunk + 2 * (g % 2). Warps w and w ^ 1 of a
// warpgroup share a 32-column box (4 KB: BK rows of 128 bytes); in it, warp
// w takes the 16-byte chunks 2 (w % 2) + {0, 1, 4, 5}. A half-warp (g < 4
// or g >= 4, t = 0..3) then reads chunks {c, c + 4} ^ (k % 8) with k % 8 =
// t (or t + 4): 8 different chunks x 2 halves = 16 different bank pairs.
struct BtRows {
    int box, chunk, half;
    __device__ BtRows(int consumer, int warp, int g)
        : box(2 * consumer + warp / 2), chunk(2 * (warp % 2) + g / 4 + 4 * ((g / 2) % 2)), half(g % 2) {}
    __device__ int n() const { return 32 * box + 4 * chunk + 2 * half; }
    // Offset in floats of (k, n) inside the box: 128B swizzle, chunk ^ (k % 8).
    __device__ int offset(int k) const { return k * 32 + ((chunk ^ (k & 7)) << 2) + 2 * half; }
};

// This thread's B^T fragments of one k-tile (4 k8 steps) from the B tile:
// a[kk] = {B[k][n], B[k][n+1], B[k+4][n], B[k+4][n+1]}, k = 8 kk + t.
template <class T>
__device__ __forceinline__ void load_bt_fragments(const float* b_box, const BtRows& r, int t,
                                                  uint32_t (&a)[T::BK / 8][4]) {
#pragma unroll
    for (int kk = 0; kk < T::BK / 8; ++kk) {
        const float2 lo = *reinterpret_cast<const float2*>(b_box + r.offset(8 * kk + t));
        const float2 hi = *reinterpret_cast<const float2*>(b_box + r.offset(8 * kk + t + 4));
        a[kk][0] = __float_as_uint(lo.x);  // already TF32: the copy engine rounded it (hopper.cuh)
        a[kk][1] = __float_as_uint(lo.y);
        a[kk][2] = __float_as_uint(hi.x);
        a[kk][3] = __float_as_uint(hi.y);
    }
}

// The accumulator to C: register 4 j + {0, 1, 2, 3} is C^T at rows (n, n,
// n + 1, n + 1), columns (m, m + 1, m, m + 1) with m = 8 j + 2 t: two
// 8-byte pairs (n, n + 1), at rows m and m + 1 of C.
template <class T>
__device__ __forceinline__ void store_ct(float* C, const float (&acc)[T::ACC], int m0, int n, int M, int N) {
    const bool pairs = N % 2 == 0 && reinterpret_cast<uintptr_t>(C) % 8 == 0;
#pragma unroll
    for (int j = 0; j < T::BM / 8; ++j)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int m = m0 + 8 * j + h;
            if (m >= M || n >= N) continue;
            float* p = C + size_t(m) * N + n;
            if (pairs) {
                *reinterpret_cast<float2*>(p) = make_float2(acc[4 * j + h], acc[4 * j + 2 + h]);
            } else {
                p[0] = acc[4 * j + h];
                if (n + 1 < N) p[1] = acc[4 * j + 2 + h];
            }
        }
}

// The ring in dynamic shared memory, 1024-byte aligned (the 128-byte
// swizzle repeats every 8 rows of 128 bytes), then the barriers.
template <class T>
__device__ __forceinline__ float* ring_of(uint8_t* smem_raw) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    const unsigned pad = (1024 - (common::smem_address(smem_raw) & 1023)) & 1023;
    return reinterpret_cast<float*>(smem_raw + pad);
#else
    return reinterpret_cast<float*>(smem_raw);
#endif
}

// ---- The kernel ------------------------------------------------------------
template <class T>
__global__ void __launch_bounds__(T::THREADS, 1)
sgemmTmaWgmmaWide(const __grid_constant__ CUtensorMap tma_a, const __grid_constant__ CUtensorMap tma_b,
                  float* __restrict__ C, int M, int N, int K) {
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
            common::mbarrier_init(&full[s], 1);                     // the producer's arrive.expect_tx
            common::mbarrier_init(&empty[s], 128 * T::CONSUMERS);  // every consumer thread
        }
        common::fence_mbarrier_init();
    }
    __syncthreads();

    if (warpgroup == 0) {  // the producer: one thread asks for every tile
        if constexpr (T::PRODUCER_REGS > 0) setmaxnreg_dec<T::PRODUCER_REGS>();
        if (threadIdx.x == 0)
            for (int kt = 0; kt < k_tiles; ++kt) {
                const int s = kt % T::STAGES;
                if (kt >= T::STAGES) common::mbarrier_wait(&empty[s], (kt / T::STAGES - 1) & 1);
                float* as = ring + s * T::STAGE_FLOATS;
                float* bs = as + T::A_FLOATS;
                common::mbarrier_arrive_expect_tx(&full[s], T::STAGE_BYTES);
                const int k = kt * T::BK;
                tma_load_2d(as, &tma_a, k, bm, &full[s]);  // BM rows of A, k .. k + 31
#pragma unroll
                for (int j = 0; j < T::BN / 32; ++j)  // BK rows of B, 32 columns a box
                    tma_load_2d(bs + j * 32 * T::BK, &tma_b, bn + 32 * j, k, &full[s]);
            }
    } else {  // the consumers: warpgroup c = 1, 2 computes C^T rows bn + 64 (c - 1) .. + 63
        if constexpr (T::CONSUMER_REGS > 0) setmaxnreg_inc<T::CONSUMER_REGS>();
        const int tid = threadIdx.x % 128, warp = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
        const BtRows rows(warpgroup - 1, warp, g);
        float acc[T::ACC];
#pragma unroll
        for (int i = 0; i < T::ACC; ++i) acc[i] = 0.0f;
        fence_operands(acc);
        // The B^T fragments are wgmma's register operand, read asynchronously:
        // they must not change until a wait_group covers the wgmmas that read
        // them. Two sets alternate: k-tile kt loads `cur` while k-tile kt-1's
        // wgmmas may still read `prev`; after wait_group 1 (kt-1 done),
        // fence_operands(prev) marks the last use of prev, so the compiler
        // cannot put cur in prev's registers before that point.
        uint32_t frag[2][T::BK / 8][4] = {};
        auto k_tile = [&](int kt, uint32_t (&cur)[T::BK / 8][4], uint32_t (&prev)[T::BK / 8][4]) {
            const int s = kt % T::STAGES;
            common::mbarrier_wait(&full[s], (kt / T::STAGES) & 1);  // the tiles of k-tile kt have landed
            const float* as = ring + s * T::STAGE_FLOATS;
            load_bt_fragments<T>(as + T::A_FLOATS + rows.box * 32 * T::BK, rows, t, cur);
            wgmma_fence();  // the fragments were written by ordinary instructions
            fence_operands(acc);
            const uint64_t desc = wgmma_desc_k_sw128(as);
#pragma unroll
            for (int kk = 0; kk < T::BK / 8; ++kk) wgmma_tf32<T::BM>(acc, cur[kk], desc + 2 * kk);  // + 32 bytes of k
            wgmma_commit();
            fence_operands(acc);
            wgmma_wait<1>();  // k-tile kt-1's wgmmas are done: its fragments and its buffer are free
            fence_operands(prev);
            if (kt > 0) common::mbarrier_arrive(&empty[(kt - 1) % T::STAGES]);
        };
        int kt = 0;
        for (; kt + 1 < k_tiles; kt += 2) {
            k_tile(kt, frag[0], frag[1]);
            k_tile(kt + 1, frag[1], frag[0]);
        }
        if (kt < k_tiles) k_tile(kt, frag[0], frag[1]);
        wgmma_wait<0>();
        fence_operands(acc);
        fence_operands(frag[0]);  // the last k-tile's fragments: in use until the wait above
        fence_operands(frag[1]);
        store_ct<T>(C, acc, bm + 2 * t, bn + rows.n(), M, N);
    }
#else
    (void)tma_a, (void)tma_b, (void)C, (void)M, (void)N, (void)K;  // waived
#endif
}

}  // namespace step13

// ---- The launcher ----------------------------------------------------------
// One block per BM x 128 tile of C.
template <class T>
std::string launch_sgemmTmaWgmmaWide_with(const float* A, const float* B, float* C, int M, int N, int K) {
    const std::string refused = common::request_dynamic_smem(step13::sgemmTmaWgmmaWide<T>, T::SMEM);
    if (!refused.empty()) return "not launched: " + refused;
    const PreparedB pa = prepare_b(A, K, M, true, kPaddedA, "A");  // A is M rows of K
    const PreparedB pb = prepare_b(B, N, K, true);
    CUtensorMap ma, mb;
    const std::string unmapped = tensor_map_2d(&ma, pa.b, M, K, pa.ldb, T::BM) +  // boxes of BM rows x 32 k
                                 tensor_map_2d(&mb, pb.b, K, N, pb.ldb, T::BK);   // boxes of 32 k x 32 n
    if (!unmapped.empty()) return "not launched: " + unmapped;
    const int tiles = common::ceil_div(M, T::BM) * common::ceil_div(N, T::BN);
    step13::sgemmTmaWgmmaWide<T><<<tiles, T::THREADS, T::SMEM>>>(ma, mb, C, M, N, K);
    CHECK_LAUNCH();
    return wgmma_tile_name<T>() + c_pairs_what(C, N) + pa.what + pb.what;
}

}  // namespace matmul
