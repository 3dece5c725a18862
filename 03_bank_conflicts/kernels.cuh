// kernels.cuh - the chapter's kernels: the seeds' square and rectangular
// tiles, padding, an XOR swizzle, 8- and 16-byte accesses, a broadcast, the
// 96 KB opt-in, the stride sweep, and the probe `make profile` uses.
//
// The kernels are written so that the trace in traces.cuh is exactly what
// runs: the shared accesses are plain, the compiler cannot merge or drop them
// (checked in the SASS), and nothing else touches shared memory.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cuda_runtime.h>

namespace bank_conflicts {

// ===========================================================================
// Part 1: tiles. One block of BX x BY threads moves one tile of BX*BY
// elements through shared memory: it stores its slice of `in` into the tile in
// one order, waits, and reads the tile back in another order into `out`. With
// `tiles` blocks, block b moves elements [b*BX*BY, (b+1)*BX*BY): the seeds
// launch one block; many blocks make the cost visible in the time.
//
// Thread (tx, ty) has idx = ty*BX + tx, and BX = 32, so warp w is row ty = w.
//   row access    tile[ty][tx]        a warp walks one tile row: 32 consecutive
//                                     words, 32 different banks.
//   column access tile[icol][irow]    with irow = idx / BY, icol = idx % BY:
//                                     the block seen as the transposed BX x BY
//                                     tile. For the square tile it is simply
//                                     tile[tx][ty]: consecutive lanes are a
//                                     whole row (32 words = 128 bytes) apart,
//                                     so all 32 lanes hit one bank.
// A tile row of 32 4-byte words is exactly one pass over the 32 banks; that
// is why a column of a 32-wide tile is the worst case, and why one word of
// padding per row (33 words) rotates each row to the next bank.
// ===========================================================================

constexpr int BDIMX = 32;   // the seeds' tile width: one warp per tile row
constexpr int BDIMY = 32;   // square tile
constexpr int BDIMY_RECT = 16;  // the seeds' rectangular tile: 32 x 16

template <int BX, int BY>
__device__ __forceinline__ void tile_coords(int& idx, int& irow, int& icol) {
    static_assert(BX == 32 && 32 % BY == 0, "tiles are 32 wide, with 1..32 rows dividing 32");
    idx = threadIdx.y * BX + threadIdx.x;
    irow = idx / BY;
    icol = idx % BY;
}

__device__ __forceinline__ size_t tile_base(int elems) { return size_t(blockIdx.x) * elems; }

// writeRowReadRow: both sides walk rows. Conflict-free: one wavefront per
// request, 32 load + 32 store wavefronts for the square tile (16 + 16 for
// the 32 x 16 one). Every other kernel's "% of peer" is relative to this.
template <int BX, int BY>
__global__ void __launch_bounds__(BX * BY) writeRowReadRow(const int* __restrict__ in, int* __restrict__ out) {
    __shared__ __align__(128) int tile[BY][BX];
    int idx, irow, icol;
    tile_coords<BX, BY>(idx, irow, icol);
    const size_t base = tile_base(BX * BY);
    tile[threadIdx.y][threadIdx.x] = in[base + idx];
    __syncthreads();
    out[base + idx] = tile[threadIdx.y][threadIdx.x];
}

// writeColReadCol: both sides walk columns: a 32-way conflict on each side of
// the square tile (1024 + 1024 wavefronts). In the 32 x 16 tile a warp's
// column access covers two columns of 16 rows: 16 lanes on each of two
// banks, a 16-way conflict (256 + 256). The output is a copy: what a thread
// writes is what it reads back.
template <int BX, int BY>
__global__ void __launch_bounds__(BX * BY) writeColReadCol(const int* __restrict__ in, int* __restrict__ out) {
    __shared__ __align__(128) int tile[BY][BX];
    int idx, irow, icol;
    tile_coords<BX, BY>(idx, irow, icol);
    const size_t base = tile_base(BX * BY);
    tile[icol][irow] = in[base + idx];
    __syncthreads();
    out[base + idx] = tile[icol][irow];
}

// writeColReadRow: conflicts on the store side only (seed: 32 loads, 1024
// stores). The tile now holds the transpose, so `out` is `in` transposed.
template <int BX, int BY>
__global__ void __launch_bounds__(BX * BY) writeColReadRow(const int* __restrict__ in, int* __restrict__ out) {
    __shared__ __align__(128) int tile[BY][BX];
    int idx, irow, icol;
    tile_coords<BX, BY>(idx, irow, icol);
    const size_t base = tile_base(BX * BY);
    tile[icol][irow] = in[base + idx];
    __syncthreads();
    out[base + idx] = tile[threadIdx.y][threadIdx.x];
}

// writeRowReadCol: conflicts on the load side only (seed: 1024 loads, 32
// stores). The shape of every shared-memory transpose; the kernels below fix
// its load side three ways.
template <int BX, int BY>
__global__ void __launch_bounds__(BX * BY) writeRowReadCol(const int* __restrict__ in, int* __restrict__ out) {
    __shared__ __align__(128) int tile[BY][BX];
    int idx, irow, icol;
    tile_coords<BX, BY>(idx, irow, icol);
    const size_t base = tile_base(BX * BY);
    tile[threadIdx.y][threadIdx.x] = in[base + idx];
    __syncthreads();
    out[base + idx] = tile[icol][irow];
}

// writeRowReadColDynamic: the same with dynamic shared memory (size given at
// launch, a 1-D array indexed by hand). Same addresses, same counters: where
// the array is declared makes no difference to the banks.
template <int BX, int BY>
__global__ void __launch_bounds__(BX * BY) writeRowReadColDynamic(const int* __restrict__ in, int* __restrict__ out) {
    extern __shared__ __align__(128) int dtile[];
    int idx, irow, icol;
    tile_coords<BX, BY>(idx, irow, icol);
    const size_t base = tile_base(BX * BY);
    dtile[threadIdx.y * BX + threadIdx.x] = in[base + idx];
    __syncthreads();
    out[base + idx] = dtile[icol * BX + irow];
}

// writeRowReadColPadding<PAD>: each tile row padded by PAD words, so row r
// starts PAD*r banks further on. Square tile: PAD = 1 makes the column read
// conflict-free. 32 x 16 tile: a warp's column read covers two tile columns
// (irow and irow + 1) of 16 rows; with PAD = 1 row r of the first starts at
// bank r and row r of the second at bank r + 1, so the halves overlap on 15
// banks: still 2-way. PAD = 2 spreads the first half over the even banks and
// the second over the odd ones: conflict-free (seed 003: "the padding should
// be 2"). The cost: PAD*BY wasted words.
template <int BX, int BY, int PAD>
__global__ void __launch_bounds__(BX * BY) writeRowReadColPadding(const int* __restrict__ in, int* __restrict__ out) {
    __shared__ __align__(128) int tile[BY][BX + PAD];
    int idx, irow, icol;
    tile_coords<BX, BY>(idx, irow, icol);
    const size_t base = tile_base(BX * BY);
    tile[threadIdx.y][threadIdx.x] = in[base + idx];
    __syncthreads();
    out[base + idx] = tile[icol][irow];
}

// writeRowReadColDynPad<PAD>: padding with dynamic shared memory; the launch
// must ask for the padded size, BY * (BX + PAD) words.
template <int BX, int BY, int PAD>
__global__ void __launch_bounds__(BX * BY) writeRowReadColDynPad(const int* __restrict__ in, int* __restrict__ out) {
    extern __shared__ __align__(128) int dtile[];
    int idx, irow, icol;
    tile_coords<BX, BY>(idx, irow, icol);
    const size_t base = tile_base(BX * BY);
    dtile[threadIdx.y * (BX + PAD) + threadIdx.x] = in[base + idx];
    __syncthreads();
    out[base + idx] = dtile[icol * (BX + PAD) + irow];
}

// writeRowReadColSwizzle (beyond the seeds): no padding; instead element
// (r, c) is stored in column c ^ key(r) of row r. XOR with a per-row constant
// permutes a row's 32 columns, so row accesses stay conflict-free; the key
// moves each row's column c to a different bank, so column reads are too.
// Square: key(r) = r. 32 x 16: key(r) = 2r, so the two tile columns a warp
// reads (irow even and odd) land on the even and the odd banks. Conflict-free
// both ways with no wasted word; the price is one XOR per index.
template <int BX, int BY>
__host__ __device__ __forceinline__ int swizzle_key(int row) { return (row * (BX / BY)) % BX; }

template <int BX, int BY>
__global__ void __launch_bounds__(BX * BY) writeRowReadColSwizzle(const int* __restrict__ in, int* __restrict__ out) {
    __shared__ __align__(128) int tile[BY][BX];
    int idx, irow, icol;
    tile_coords<BX, BY>(idx, irow, icol);
    const size_t base = tile_base(BX * BY);
    tile[threadIdx.y][threadIdx.x ^ swizzle_key<BX, BY>(threadIdx.y)] = in[base + idx];
    __syncthreads();
    out[base + idx] = tile[icol][irow ^ swizzle_key<BX, BY>(icol)];
}

// writeRowReadBroadcast (beyond the seeds): every lane of a warp reads the
// same word, tile[ty][0]. One bank, one word: a broadcast, one wavefront,
// no conflict. "Same bank" only hurts when the words differ.
template <int BX, int BY>
__global__ void __launch_bounds__(BX * BY) writeRowReadBroadcast(const int* __restrict__ in, int* __restrict__ out) {
    __shared__ __align__(128) int tile[BY][BX];
    int idx, irow, icol;
    tile_coords<BX, BY>(idx, irow, icol);
    const size_t base = tile_base(BX * BY);
    tile[threadIdx.y][threadIdx.x] = in[base + idx];
    __syncthreads();
    out[base + idx] = tile[threadIdx.y][0];
}

// writeRowReadColWide<T, PAD> (beyond the seeds): the square writeRowReadCol
// with 8-byte (double) or 16-byte (int4) elements. A warp's request is then
// 256 or 512 bytes: 2 or 4 wavefronts even without conflicts, one per half-
// or quarter-warp. Unpadded, a column's 16 (or 8) lanes per phase hit the same
// 2 (or 4) banks: 16 x 2 = 32 and 8 x 4 = 32 wavefronts, like the 4-byte case.
// Padding by one *element* (8 or 16 bytes, not 4) fixes both.
template <class T, int PAD>
__global__ void __launch_bounds__(BDIMX * BDIMY) writeRowReadColWide(const T* __restrict__ in, T* __restrict__ out) {
    __shared__ __align__(128) T tile[BDIMY][BDIMX + PAD];
    const int idx = threadIdx.y * BDIMX + threadIdx.x;
    const size_t base = tile_base(BDIMX * BDIMY);
    tile[threadIdx.y][threadIdx.x] = in[base + idx];
    __syncthreads();
    out[base + idx] = tile[threadIdx.x][threadIdx.y];
}

// reverseBlockOptIn: more than 48 KB of shared memory per block. 1024
// threads stage 24576 ints (96 KB of dynamic shared memory) and write them
// back reversed. A launch asking for more than 48 KB of dynamic shared memory
// fails (cudaErrorInvalidValue) until the kernel opts in with
// cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
// bytes); the launcher does so. Consecutive lanes, consecutive words (the
// reverse read descends): conflict-free both ways.
constexpr int kOptInThreads = 1024;
constexpr int kOptInPerThread = 24;
constexpr int kOptInElems = kOptInThreads * kOptInPerThread;
constexpr size_t kOptInBytes = size_t(kOptInElems) * sizeof(int);  // 96 KB

__global__ void __launch_bounds__(kOptInThreads) reverseBlockOptIn(const int* __restrict__ in, int* __restrict__ out) {
    extern __shared__ __align__(128) int big[];
    const size_t base = tile_base(kOptInElems);
#pragma unroll
    for (int k = 0; k < kOptInPerThread; ++k) big[k * kOptInThreads + threadIdx.x] = in[base + k * kOptInThreads + threadIdx.x];
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kOptInPerThread; ++k) {
        const int i = k * kOptInThreads + threadIdx.x;
        out[base + i] = big[kOptInElems - 1 - i];
    }
}

// ===========================================================================
// Part 2: the stride sweep. Lane l reads word l * stride, so the 32 lanes hit
// 32 / gcd(stride, 32) banks: a gcd(stride, 32)-way conflict (stride 1: none;
// 2: 2-way; 32: all lanes on bank 0). Each kernel loops over the same
// read `iters` times so that the cost of one request can be measured.
// The loads are `ld.volatile.shared`: the compiler must issue every one of
// them (a plain load of an unchanged address would be hoisted out of the loop).
// ===========================================================================

constexpr int kSweepWords = 2048;  // 8 KB: room for lane 31 at stride 65
constexpr int kSweepThreads = 1024;

__host__ __device__ inline uint32_t sweep_value(uint32_t word) { return word * 2654435761u + 12345u; }

__device__ __forceinline__ uint32_t smem_addr(const void* p) { return uint32_t(__cvta_generic_to_shared(p)); }

__device__ __forceinline__ uint32_t ld_volatile_shared(uint32_t addr) {
    uint32_t v;
    asm volatile("ld.volatile.shared.u32 %0, [%1];" : "=r"(v) : "r"(addr) : "memory");
    return v;
}

// readStrideThroughput: one block of 32 warps per SM, every warp issuing
// `iters` independent strided reads. The shared-memory pipe delivers one
// wavefront per cycle per SM, so the SM needs about `degree` cycles per
// request: cycles per request vs conflict degree is a line of slope 1.
// cycles[b] = clock64 cycles block b spent in the loop (between two barriers);
// sink[thread] = the sum of what it read, checked by the CPU.
__global__ void __launch_bounds__(kSweepThreads)
readStrideThroughput(int stride, int iters, uint32_t* __restrict__ sink, long long* __restrict__ cycles) {
    __shared__ __align__(128) uint32_t buf[kSweepWords];
    for (int i = threadIdx.x; i < kSweepWords; i += kSweepThreads) buf[i] = sweep_value(i);
    const uint32_t addr = smem_addr(buf) + 4u * uint32_t((threadIdx.x % 32) * stride % kSweepWords);
    __syncthreads();
    const long long start = clock64();
    uint32_t sum = 0;
#pragma unroll 16
    for (int i = 0; i < iters; ++i) sum += ld_volatile_shared(addr);
    __syncthreads();
    if (threadIdx.x == 0) cycles[blockIdx.x] = clock64() - start;
    sink[size_t(blockIdx.x) * kSweepThreads + threadIdx.x] = sum;
}

// readStrideLatency: one warp, a dependent chain. Each word holds the shared
// address of the word 32 further on (mod 2048), so lane l keeps reading at
// l * stride + 32k words: same banks, same conflict degree, and every load
// must wait for the previous one. cycles / iters = the latency of one
// request; its growth with the degree is the time each extra wavefront adds
// to a single request.
constexpr int kChainStep = 32;  // words; a multiple of 32 keeps every lane on its bank

__global__ void __launch_bounds__(32)
readStrideLatency(int stride, int iters, uint32_t* __restrict__ sink, long long* __restrict__ cycles) {
    __shared__ __align__(128) uint32_t buf[kSweepWords];
    const uint32_t base = smem_addr(buf);
    for (int i = threadIdx.x; i < kSweepWords; i += 32) buf[i] = base + 4u * uint32_t((i + kChainStep) % kSweepWords);
    uint32_t a = base + 4u * uint32_t(threadIdx.x * stride % kSweepWords);
    __syncwarp();
    const long long start = clock64();
#pragma unroll 16
    for (int i = 0; i < iters; ++i) a = ld_volatile_shared(a);
    __syncwarp();
    const long long stop = clock64();
    if (threadIdx.x == 0) cycles[0] = stop - start;
    sink[threadIdx.x] = (a - base) / 4u;  // the word index the chain ended on
}

// ===========================================================================
// Part 3: probe. One warp, one access of width W at per-lane byte offsets
// given by the host, with only the lanes in `mask` active. `make profile`
// launches it on random patterns and compares every launch's counters with
// the model; for loads the warp first fills the 16 KB buffer (128 requests).
// ===========================================================================

constexpr int kProbeWords = 4096;  // 16 KB

template <int W, bool kStore>
__global__ void __launch_bounds__(32) probeAccess(const uint32_t* __restrict__ offsets, uint32_t mask, uint32_t* __restrict__ out) {
    __shared__ __align__(128) uint32_t buf[kProbeWords];
    const int lane = threadIdx.x;
    const uint32_t a = smem_addr(buf) + offsets[lane];
    uint32_t v[4] = {sweep_value(lane), sweep_value(lane + 32), sweep_value(lane + 64), sweep_value(lane + 96)};
    if (!kStore) {  // a fixed trip count: exactly kProbeWords / 32 store instructions
        for (int k = 0; k < kProbeWords / 32; ++k) buf[k * 32 + lane] = sweep_value(k * 32 + lane);
        __syncwarp();
    }
    if (mask >> lane & 1u) {
        if constexpr (kStore) {
            if constexpr (W == 4) asm volatile("st.volatile.shared.u32 [%0], %1;" ::"r"(a), "r"(v[0]) : "memory");
            if constexpr (W == 8) asm volatile("st.volatile.shared.v2.u32 [%0], {%1, %2};" ::"r"(a), "r"(v[0]), "r"(v[1]) : "memory");
            if constexpr (W == 16)
                asm volatile("st.volatile.shared.v4.u32 [%0], {%1, %2, %3, %4};" ::"r"(a), "r"(v[0]), "r"(v[1]), "r"(v[2]), "r"(v[3]) : "memory");
        } else {
            if constexpr (W == 4) asm volatile("ld.volatile.shared.u32 %0, [%1];" : "=r"(v[0]) : "r"(a) : "memory");
            if constexpr (W == 8) asm volatile("ld.volatile.shared.v2.u32 {%0, %1}, [%2];" : "=r"(v[0]), "=r"(v[1]) : "r"(a) : "memory");
            if constexpr (W == 16)
                asm volatile("ld.volatile.shared.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v[0]), "=r"(v[1]), "=r"(v[2]), "=r"(v[3]) : "r"(a) : "memory");
        }
    }
    for (int k = 0; k < W / 4; ++k) out[lane * 4 + k] = v[k];
}

}  // namespace bank_conflicts
