// Step 17 of 01_matmul: two blocks share A's tile through TMA multicast.
//
// In step 15 every block asks L2 for its own A tile (BM rows x BK) and B
// tile (BK x 128) each k-tile, although the block of the next tile in the
// same row of tiles (the same bm, bn + 128) asks for the very same A tile.
// Here the two run as a thread-block cluster of 2 (Hopper; chapter 02) and
// walk pairs of tiles together: each block's producer copies HALF of the A
// tile (BM / 2 rows) with one multicast copy (cp.async.bulk.tensor ...
// .multicast::cluster, ctaMask 0b11), which lands at the same offset in both
// blocks' shared memory and counts down both blocks' `full` barrier. A block
// asks L2 for BM / 2 + 128 rows a k-tile instead of BM + 128: with 256-row
// tiles, 32 KB instead of 48.
//
// What the sharing costs: a stage may be refilled only when the consumers of
// BOTH blocks are done with it (the other block's producer writes into it
// too), so `empty` counts the consumer warps of both blocks, and each warp
// arrives on its own block's barrier and on the other's (mapa: a
// shared::cluster address). The pair runs in step: each `full` needs both halves.
// The pitfall (WORKLOG.md, step 17): that remote arrive written with
// `.release.cluster` (common::mbarrier_arrive_cluster, right where data flows
// between blocks, as in chapter 02 and step 16d) compiles to a MEMBAR.ALL.GPU
// before every arrive, and the kernel ran at 0.64x step 15's speed. Nothing
// flows here (the arrive says "done reading this stage"), so the default
// `.release.cta` arrive is enough, as in CUTLASS's cluster barriers.
//
// It runs where step 15's plan has 256-row tiles and one slice of K on a
// large grid (plans.cuh, multicast_pays); elsewhere the launcher runs step 15
// and says so. Where C has an odd
// number of tile columns, the last pair of a row has one tile: its second
// block still multicasts its half of A, and skips B and the product.
// Look for: the launch column's "multicast A in clusters of 2"; the time
// against step 15's in the same run (WORKLOG.md: what it bought, and at
// which clock).
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <cooperative_groups.h>
#include <cuda_runtime.h>
#include "common/check.cuh"
#include "common/gpu.cuh"
#include "common/launch.cuh"
#include "common/mbarrier.cuh"
#include "common/tensor_map.cuh"
#include "01_matmul/steps/operands.cuh"
#include "01_matmul/steps/hopper.cuh"
#include "01_matmul/steps/wgmma_n256.cuh"

namespace matmul {
namespace step17 {

// The block's tile: BM rows of C (wgmma's N) x BN = 128 columns (two
// consumer warpgroups x 64), k-tiles of BK = 32 (one 128-byte box row),
// STAGES buffers of (BM + BN) x BK floats; CLUSTER blocks share an A tile.
// PRODUCER_REGS, CONSUMER_REGS: registers per thread the warpgroups ask
// for with setmaxnreg (0: keep the launch's even share).
template <int BM_, int STAGES_, int PRODUCER_REGS_ = 0, int CONSUMER_REGS_ = 0>
struct Tile {
    static constexpr int BM = BM_, BN = 128, BK = 32, STAGES = STAGES_, CONSUMERS = 2, CLUSTER = 2;
    static constexpr int PRODUCER_REGS = PRODUCER_REGS_, CONSUMER_REGS = CONSUMER_REGS_;
    static constexpr int THREADS = 128 * (1 + CONSUMERS);  // producer warpgroup + consumers
    static constexpr int A_FLOATS = BM * BK, B_FLOATS = BK * BN, STAGE_FLOATS = A_FLOATS + B_FLOATS;
    static constexpr unsigned STAGE_BYTES = STAGE_FLOATS * sizeof(float), A_BYTES = A_FLOATS * sizeof(float);
    static constexpr int HALF_ROWS = BM / CLUSTER;  // the rows of A one block of a pair copies
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

// A pair of tiles side by side: tile_origin's grouped order walks pairs.
template <class T>
struct PairOf {
    static constexpr int BM = T::BM, BN = T::CLUSTER * T::BN;
};

// ---- The kernel ------------------------------------------------------------
template <class T>
__global__ void __launch_bounds__(T::THREADS, 1)
sgemmTmaWgmmaMulticast(const __grid_constant__ CUtensorMap tma_a, const __grid_constant__ CUtensorMap tma_b,
                       float* __restrict__ C, int M, int N, int K, int k_split, float* __restrict__ partial) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    extern __shared__ uint8_t smem_raw[];
    float* ring = ring_of<T>(smem_raw);
    uint64_t* full = reinterpret_cast<uint64_t*>(ring + T::STAGES * T::STAGE_FLOATS);
    uint64_t* empty = full + T::STAGES;

    // Cluster c (blocks 2c and 2c + 1 along x) computes pairs c, c + clusters, ...; block `rank`
    // of it the pair's tile column bn + 128 rank. The ring's k-tile counter `it` runs on across
    // pairs, so the producer fills the next pair's stages while the consumers store the last one.
    const unsigned rank = cooperative_groups::this_cluster().block_rank();
    const int cluster = blockIdx.x / T::CLUSTER, clusters = gridDim.x / T::CLUSTER;
    const int tiles_m = (M + T::BM - 1) / T::BM, tiles_n = (N + T::BN - 1) / T::BN;
    const int pairs_n = (tiles_n + T::CLUSTER - 1) / T::CLUSTER, pairs = tiles_m * pairs_n;
    auto origin = [&](int pair, int* bm, int* bn) {
        tile_origin<PairOf<T>>(pair, tiles_m, pairs_n, bm, bn);
        *bn += int(rank) * T::BN;
    };
    // Split-K (gridDim.y > 1): block y sums k in [y k_split, (y + 1) k_split) into its own slice of `partial`.
    const int k_begin = blockIdx.y * k_split, k_tiles = (min(K - k_begin, k_split) + T::BK - 1) / T::BK;
    const int warpgroup = threadIdx.x / 128;

    if (threadIdx.x == 0) {
        for (int s = 0; s < T::STAGES; ++s) {
            common::mbarrier_init(&full[s], 1);                                // the producer's arrive.expect_tx
            common::mbarrier_init(&empty[s], T::CLUSTER * 4 * T::CONSUMERS);  // every consumer warp of both blocks
        }
        common::fence_mbarrier_init();
    }
    common::cluster_sync_all();  // both blocks' barriers exist before either copies or arrives into the other

    if (warpgroup == 0) {  // the producer: one thread asks for its half of A and for B
        if constexpr (T::PRODUCER_REGS > 0) setmaxnreg_dec<T::PRODUCER_REGS>();
        if (threadIdx.x == 0) {
            int it = 0;  // k-tiles through the ring so far
            for (int pair = cluster; pair < pairs; pair += clusters) {
                int bm, bn;
                origin(pair, &bm, &bn);
                const bool has_tile = bn < N;  // the last pair of a row may have one tile
                for (int kt = 0; kt < k_tiles; ++kt, ++it) {
                    const int s = it % T::STAGES;
                    if (it >= T::STAGES) common::mbarrier_wait(&empty[s], (it / T::STAGES - 1) & 1);
                    float* as = ring + s * T::STAGE_FLOATS;
                    float* bs = as + T::A_FLOATS;
                    // Both halves of A land here (one from each block), and B where there is a tile.
                    common::mbarrier_arrive_expect_tx(&full[s], has_tile ? T::STAGE_BYTES : T::A_BYTES);
                    const int k = k_begin + kt * T::BK;
                    common::tma_load_2d_multicast(as + rank * T::HALF_ROWS * T::BK, &tma_a, k, bm + int(rank) * T::HALF_ROWS,
                                          &full[s], uint16_t((1u << T::CLUSTER) - 1));  // HALF_ROWS rows of A, into both
                    if (has_tile) {
#pragma unroll
                        for (int j = 0; j < T::BN / 32; ++j)  // BK rows of B, 32 columns a box
                            tma_load_2d(bs + j * 32 * T::BK, &tma_b, bn + 32 * j, k, &full[s]);
                    }
                }
            }
        }
    } else {  // the consumers: warpgroup c = 1, 2 computes C^T rows bn + 64 (c - 1) .. + 63
        if constexpr (T::CONSUMER_REGS > 0) setmaxnreg_inc<T::CONSUMER_REGS>();
        const int tid = threadIdx.x % 128, warp = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
        const BtRows rows(warpgroup - 1, warp, g);
        // A warp is done with stage s (its wgmmas have completed): it tells both blocks' producers.
        const unsigned other_empty = common::cluster_address(empty, rank ^ 1u);  // the other block's empty[0]
        auto release = [&](int s) {
            __syncwarp();
            if (lane == 0) {
                common::mbarrier_arrive(&empty[s]);
                common::mbarrier_arrive_remote(other_empty + s * unsigned(sizeof(uint64_t)));
            }
        };
        float acc[T::ACC];
        // The B^T fragments are wgmma's register operand, read asynchronously:
        // they must not change until a wait_group covers the wgmmas that read
        // them. Two sets alternate: k-tile kt loads `cur` while k-tile kt-1's
        // wgmmas may still read `prev`; after wait_group 1 (kt-1 done),
        // fence_operands(prev) marks the last use of prev, so the compiler
        // cannot put cur in prev's registers before that point.
        uint32_t frag[2][T::BK / 8][4] = {};
        int it = 0;  // as the producer's
        auto k_tile = [&](int kt, uint32_t (&cur)[T::BK / 8][4], uint32_t (&prev)[T::BK / 8][4]) {
            const int s = it % T::STAGES;
            common::mbarrier_wait(&full[s], (it / T::STAGES) & 1);  // the tiles of k-tile kt have landed
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
            if (kt > 0) release((it - 1) % T::STAGES);
            ++it;
        };
        for (int pair = cluster; pair < pairs; pair += clusters) {
            int bm, bn;
            origin(pair, &bm, &bn);
            if (bn >= N) {  // no tile here: only pass each stage on
                for (int kt = 0; kt < k_tiles; ++kt, ++it) {
                    common::mbarrier_wait(&full[it % T::STAGES], (it / T::STAGES) & 1);
                    release(it % T::STAGES);
                }
                continue;
            }
#pragma unroll
            for (int i = 0; i < T::ACC; ++i) acc[i] = 0.0f;
            fence_operands(acc);
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
            release((it - 1) % T::STAGES);  // the tile's last k-tile
            store_ct<T>(partial ? partial + size_t(blockIdx.y) * M * N : C, acc, bm + 2 * t, bn + rows.n(), M, N);
        }
    }
    // No block exits while the other may still arrive on its barriers.
    __syncwarp();
    common::cluster_sync_all();
#else
    (void)tma_a, (void)tma_b, (void)C, (void)M, (void)N, (void)K, (void)k_split, (void)partial;  // waived
#endif
}

}  // namespace step17

// ---- The launcher ----------------------------------------------------------
// "" where clusters of 2 run here, else why not.
inline std::string multicast_refusal(const common::Gpu& g = common::gpu()) {
    return common::cluster_refusal(2, g);
}

// The pairs of tiles of an M x N product: what the clusters walk (and what the plan counts).
template <class T>
long long tile_pairs(int M, int N) {
    return (long long)common::ceil_div(M, T::BM) * common::ceil_div(common::ceil_div(N, T::BN), T::CLUSTER);
}

// Clusters of `kernel` the GPU holds at once (the occupancy calculator, asked
// once: a GPC with an odd number of SMs leaves one out), and no more than the
// SMs of this GPU (or GPU_PROFILE) allow; 0 where no cluster of two fits.
template <class T>
int resident_clusters() {
    static const int held = [] {
        common::Launch l(dim3(common::sm_count() / T::CLUSTER * T::CLUSTER), T::THREADS, T::SMEM);  // whole clusters
        l.cluster(dim3(T::CLUSTER));
        int c = 0;
        CHECK(cudaOccupancyMaxActiveClusters(&c, step17::sgemmTmaWgmmaMulticast<T>, &l.cfg));
        return c;
    }();
    return std::min(held, common::sm_count() / T::CLUSTER);
}

// `splits` slices of K (fewer where K has fewer k-tiles, or where the
// partials would not fit kSplitKScratchMaxBytes), then splitKReduce adds
// them; at most max_clusters clusters of 2 along x, each walking pairs of tiles.
template <class T>
std::string launch_sgemmTmaWgmmaMulticast_with(const float* A, const float* B, float* C, int M, int N, int K, int splits,
                                               int max_clusters) {
    const std::string no_clusters = multicast_refusal();
    if (!no_clusters.empty()) return "not launched: " + no_clusters;
    const std::string refused = common::request_dynamic_smem(step17::sgemmTmaWgmmaMulticast<T>, T::SMEM);
    if (!refused.empty()) return "not launched: " + refused;
    const int held = resident_clusters<T>();
    if (held < 1) return "not launched: no cluster of " + std::to_string(T::CLUSTER) + " blocks fits the GPU";
    const PreparedB pa = prepare_b(A, K, M, true, kPaddedA, "A");  // A is M rows of K
    const PreparedB pb = prepare_b(B, N, K, true);
    CUtensorMap ma, mb;
    const std::string unmapped = tensor_map_2d(&ma, pa.b, M, K, pa.ldb, T::HALF_ROWS) +  // boxes of half a tile x 32 k
                                 tensor_map_2d(&mb, pb.b, K, N, pb.ldb, T::BK);          // boxes of 32 k x 32 n
    if (!unmapped.empty()) return "not launched: " + unmapped;
    const KSlices slices = k_slices(K, T::BK, splits, M, N);
    const int k_split = slices.k_split;
    splits = slices.splits;
    const size_t mn = size_t(M) * N;
    float* partial = splits > 1 ? scratch(kSplitKPartials, mn * splits) : nullptr;
    const int clusters = int(std::max<long long>(1, std::min<long long>({tile_pairs<T>(M, N), max_clusters, held})));
    common::Launch l(dim3(T::CLUSTER * clusters, splits), T::THREADS, T::SMEM);
    l.cluster(dim3(T::CLUSTER));
    CHECK(cudaLaunchKernelEx(&l.cfg, step17::sgemmTmaWgmmaMulticast<T>, ma, mb, C, M, N, K, k_split, partial));
    CHECK_LAUNCH();
    if (splits > 1) {
        splitKReduce<<<grid_stride_blocks(mn, 256), 256>>>(partial, C, mn, splits);
        CHECK_LAUNCH();
    }
    return wgmma_tile_name<T>() + (splits > 1 ? " splitK" + std::to_string(splits) : "") +
           " multicast A in clusters of 2, persistent P" + std::to_string(T::CLUSTER * clusters) + c_pairs_what(C, N) +
           pa.what + pb.what;
}

}  // namespace matmul
