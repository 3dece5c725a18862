// shuffle.cuh - warp shuffles: what each primitive does (checked against a CPU
// emulator), the warp and block building blocks made from them, and a
// double-precision matrix-vector multiply that runs at memory bandwidth.
//
// Three parts, in teaching order:
//   1. The four primitives (__shfl_sync, _up, _down, _xor), a CPU emulator of
//      their exact semantics (mask, width, out-of-range lanes), the seed
//      demos (bcast, scan4, warpReduce) and a probe kernel that runs a
//      primitive for many (width, parameter, mask) triples at once.
//   2. Building blocks: warp reduce (down vs xor), warp inclusive/exclusive
//      scan, block reduce and block scan, for int, long long, float, double.
//   3. y = A x in double (seed 004): the seed's three versions (a global
//      scratch array, shared memory, shuffles) and a tuned one with 16-byte
//      loads and rows-per-warp chosen from the shape.
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cmath>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>
#include <cuda_runtime.h>
#include "common/buffer.cuh"
#include "common/check.cuh"
#include "common/data.hpp"

namespace shuffle {

constexpr unsigned kFullMask = 0xffffffffu;
constexpr int kWarp = 32;

// ===========================================================================
// Part 1. The primitives and their CPU emulator.
// ===========================================================================

enum class Op { Idx, Up, Down, Xor };

inline const char* op_name(Op op) {
    switch (op) {
        case Op::Idx: return "__shfl_sync";
        case Op::Up: return "__shfl_up_sync";
        case Op::Down: return "__shfl_down_sync";
        default: return "__shfl_xor_sync";
    }
}
inline const char* param_name(Op op) {
    return op == Op::Idx ? "srcLane" : op == Op::Xor ? "laneMask" : "delta";
}

// width must be a power of two in [1, 32]; anything else is undefined.
__host__ __device__ constexpr bool valid_width(int w) { return w >= 1 && w <= 32 && (w & (w - 1)) == 0; }

// The lane whose `var` lane `lane` receives. This is the PTX ISA's definition
// of shfl.sync, which the CUDA intrinsics compile to with the clamp operand
// c = ((32 - width) << 8) | (Up ? 0 : 31), and which the Programming Guide
// describes in words:
//   - only the low 5 bits of srcLane / delta / laneMask are used;
//   - the warp is cut into segments of `width` lanes; segmask = 32 - width
//     keeps the bits that pick the segment;
//   - Idx:  the lane srcLane % width of the caller's segment (for a negative
//           srcLane the non-negative residue: -1 is the segment's last lane);
//   - Up:   lane - delta, unless that leaves the segment downwards: own value;
//   - Down: lane + delta, unless that passes the segment's last lane: own value;
//   - Xor:  lane ^ laneMask, unless that is above the segment's last lane: own
//           value. A lane in an EARLIER segment is read: with width 16,
//           lane 20 ^ 16 = lane 4 is returned (the guide: "able to access
//           elements from earlier groups ... later groups return their own").
__host__ __device__ constexpr int source_lane(Op op, int lane, int param, int width) {
    const int b = param & 31;
    const int segmask = 32 - width;
    const int first = lane & segmask;                           // segment's first lane
    const int last = first | (31 & ~segmask);                   // segment's last lane
    switch (op) {
        case Op::Idx: return first | (b & ~segmask);
        case Op::Up: return lane - b >= first ? lane - b : lane;
        case Op::Down: return lane + b <= last ? lane + b : lane;
        default: return (lane ^ b) <= last ? lane ^ b : lane;
    }
}

// One warp's registers, lane by lane.
template <class T>
using Warp = std::array<T, kWarp>;

// What each lane gets from one shuffle. Lanes not in `mask` do not call it
// (they keep their value, executed[] false). A lane whose source is not in
// `mask` gets an undefined value (defined[] false): the emulator refuses to
// guess it, and the checks below never compare it.
template <class T>
struct Shuffled {
    Warp<T> value{};
    std::array<bool, kWarp> executed{}, defined{};
};

template <class T>
Shuffled<T> emulate(Op op, unsigned mask, const Warp<T>& v, int param, int width) {
    Shuffled<T> r;
    for (int lane = 0; lane < kWarp; ++lane) {
        r.executed[lane] = (mask >> lane) & 1u;
        if (!r.executed[lane]) { r.value[lane] = v[lane]; continue; }
        const int src = source_lane(op, lane, param, width);
        r.defined[lane] = (mask >> src) & 1u;
        r.value[lane] = v[src];
    }
    return r;
}

// "" if the call is well defined, else what is wrong with it. `executing`:
// the lanes that reach the call. The rules (Programming Guide, warp shuffle
// functions): width a power of two <= 32; every lane that calls must be in
// mask and every lane in mask must call; a lane may only read from a lane
// in mask. Seed-style code such as __shfl_down_sync(0xffff, v, 16) run by
// lanes 0..15 breaks the last rule: the sources 16..31 are not in the mask.
inline std::string misuse(Op op, unsigned mask, unsigned executing, int param, int width) {
    char buf[160];
    if (!valid_width(width)) {
        std::snprintf(buf, sizeof buf, "width %d is not a power of two in [1, 32]", width);
        return buf;
    }
    if (executing & ~mask) {
        std::snprintf(buf, sizeof buf, "lanes 0x%08x call %s but are not in mask 0x%08x", executing & ~mask,
                      op_name(op), mask);
        return buf;
    }
    if (mask & ~executing) {
        std::snprintf(buf, sizeof buf, "lanes 0x%08x are named in mask but do not call %s", mask & ~executing,
                      op_name(op));
        return buf;
    }
    unsigned bad = 0;
    for (int lane = 0; lane < kWarp; ++lane)
        if ((mask >> lane) & 1u)
            if (!((mask >> source_lane(op, lane, param, width)) & 1u)) bad |= 1u << lane;
    if (bad) {
        std::snprintf(buf, sizeof buf, "lanes 0x%08x read from lanes outside mask 0x%08x (%s=%d, width %d)", bad,
                      mask, param_name(op), param, width);
        return buf;
    }
    return "";
}

// The primitive as a template on Op, so one probe kernel serves all four.
template <Op OP, class T>
__device__ __forceinline__ T shfl(unsigned mask, T v, int param, int width) {
    if constexpr (OP == Op::Idx) return __shfl_sync(mask, v, param, width);
    else if constexpr (OP == Op::Up) return __shfl_up_sync(mask, v, unsigned(param), width);
    else if constexpr (OP == Op::Down) return __shfl_down_sync(mask, v, unsigned(param), width);
    else return __shfl_xor_sync(mask, v, param, width);
}

// ---------------------------------------------------------------------------
// Seed 001's demos, writing every lane's result instead of printf.
// ---------------------------------------------------------------------------

// bcast: lane 0's value to the whole warp. `value` is set only in lane 0;
// the other lanes' copies are never read (their source is lane 0), so it does
// not matter that they are uninitialized. What to look for: 32 x arg.
__global__ void bcast(int arg, int* out) {
    const int laneId = threadIdx.x % kWarp;
    int value = 0;
    if (laneId == 0) value = arg;
    value = __shfl_sync(kFullMask, value, 0);
    out[threadIdx.x] = value;
}

// scan4: an inclusive scan in each group of 8 lanes (width 8), Hillis-Steele:
// log2(8) = 3 steps. The shuffle runs unconditionally (every lane in the mask
// must call it); only the add is conditional. Lanes 0..7 start with 31..24,
// so lane 7 ends with 31 + 30 + ... + 24 = 220.
__global__ void scan4(int* out) {
    const int laneId = threadIdx.x % kWarp;
    int value = 31 - laneId;
    for (int i = 1; i <= 4; i *= 2) {
        const int n = __shfl_up_sync(kFullMask, value, i, 8);
        if ((laneId & 7) >= i) value += n;
    }
    out[threadIdx.x] = value;
}

// warpReduce: the xor butterfly. After step i every lane holds the sum of its
// 2i-lane group, so after 5 steps EVERY lane holds the total, 496 (seed 001
// says "to lane 0"; it is in all of them: compare with warpReduceDown).
__global__ void warpReduce(int* out) {
    const int laneId = threadIdx.x % kWarp;
    int value = 31 - laneId;
    for (int i = 16; i >= 1; i /= 2) value += __shfl_xor_sync(kFullMask, value, i, 32);
    out[threadIdx.x] = value;
}

// groupBcast: each group of 8 lanes takes its first lane's value,
// __shfl_sync(mask, v, 0, 8). Called with `width` 32 by mistake it hands
// lane 0's value to the whole warp; the tests check that comparing with the
// 8-lane emulator catches that. (scan4 is no such test: its guard
// (laneId & 7) >= i keeps every add inside the 8-lane group, so it gives the
// same answer with width 32 - the width only changes what unused lanes get.)
__global__ void groupBcast(int* out, int width) {
    const int laneId = threadIdx.x % kWarp;
    out[threadIdx.x] = __shfl_sync(kFullMask, 100 + laneId, 0, width);
}

// scan4Width: scan4 with the width as a parameter (see groupBcast).
__global__ void scan4Width(int* out, int width) {
    const int laneId = threadIdx.x % kWarp;
    int value = 31 - laneId;
    for (int i = 1; i <= 4; i *= 2) {
        const int n = __shfl_up_sync(kFullMask, value, i, width);
        if ((laneId & 7) >= i) value += n;
    }
    out[threadIdx.x] = value;
}

// ---------------------------------------------------------------------------
// The probe: one warp (block) per (width, parameter) pair, one primitive and
// one mask per launch. Lanes outside `mask` do not call the shuffle (all lanes
// named in mask must, and no other may) and leave their output untouched.
// ---------------------------------------------------------------------------
struct Probe { int width, param; };

template <Op OP, class T>
__global__ void shuffleProbe(const T* __restrict__ in, T* __restrict__ out, const Probe* __restrict__ probes,
                             unsigned mask) {
    const int lane = threadIdx.x;
    const Probe p = probes[blockIdx.x];
    const T v = in[lane];
    if ((mask >> lane) & 1u) out[blockIdx.x * kWarp + lane] = shfl<OP>(mask, v, p.param, p.width);
}

template <class T>
void launch_probe(Op op, const T* in, T* out, const Probe* probes, int n, unsigned mask) {
    switch (op) {
        case Op::Idx: shuffleProbe<Op::Idx><<<n, kWarp>>>(in, out, probes, mask); break;
        case Op::Up: shuffleProbe<Op::Up><<<n, kWarp>>>(in, out, probes, mask); break;
        case Op::Down: shuffleProbe<Op::Down><<<n, kWarp>>>(in, out, probes, mask); break;
        case Op::Xor: shuffleProbe<Op::Xor><<<n, kWarp>>>(in, out, probes, mask); break;
    }
    CHECK_LAUNCH();
}

// The lane ids through __shfl_xor_sync for laneMask 1, 2, 4, 8, 16 (seed
// 004's xor table): out[m * 32 + lane] = the lane that lane `lane` read.
__global__ void xorTable(int* out) {
    const int lane = threadIdx.x;
    for (int m = 0; m < 5; ++m) out[m * kWarp + lane] = __shfl_xor_sync(kFullMask, lane, 1 << m);
}

// ===========================================================================
// Part 2. Building blocks.
// ===========================================================================

// warpReduceDown: tree reduction with shuffle-down. Only LANE 0 ends with the
// total: lane l adds lane l + delta, and lanes whose source is past the
// warp's end add their own value (the shuffle returns it), so lanes 1..31
// hold partial, partly doubled sums. Use it when one lane writes the result.
template <class T>
__device__ __forceinline__ T warpReduceDown(T v) {
    for (int delta = 16; delta > 0; delta /= 2) v += __shfl_down_sync(kFullMask, v, delta);
    return v;
}

// warpReduceXor: the butterfly. EVERY lane ends with the total (the same
// number of shuffles): use it when every lane needs the result.
template <class T>
__device__ __forceinline__ T warpReduceXor(T v) {
    for (int mask = 16; mask > 0; mask /= 2) v += __shfl_xor_sync(kFullMask, v, mask);
    return v;
}

// warpInclusiveScan: lane l gets v[0] + ... + v[l] (Hillis-Steele, 5 steps).
template <class T>
__device__ __forceinline__ T warpInclusiveScan(T v) {
    const int lane = threadIdx.x % kWarp;
    for (int delta = 1; delta < kWarp; delta *= 2) {
        const T n = __shfl_up_sync(kFullMask, v, delta);
        if (lane >= delta) v += n;
    }
    return v;
}

// warpExclusiveScan: lane l gets v[0] + ... + v[l-1], lane 0 gets 0. Shifting
// the inclusive scan up one lane, rather than subtracting v, keeps float
// results exactly the partial sums the inclusive scan formed.
template <class T>
__device__ __forceinline__ T warpExclusiveScan(T v) {
    const T inc = warpInclusiveScan(v);
    const T e = __shfl_up_sync(kFullMask, inc, 1);
    return threadIdx.x % kWarp == 0 ? T(0) : e;
}

// blockReduce: every warp reduces with shuffles, lane 0 of each parks its sum
// in shared memory, and warp 0 reduces those. Thread 0 returns the block's
// total. BLOCK must be a multiple of 32 (every shuffle names the full warp);
// a caller reusing it must __syncthreads() between calls.
template <class T, int BLOCK>
__device__ T blockReduce(T v) {
    static_assert(BLOCK % kWarp == 0 && BLOCK <= 1024, "BLOCK: a multiple of 32, at most 1024");
    constexpr int W = BLOCK / kWarp;
    __shared__ T warp_sums[W];
    const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
    v = warpReduceDown(v);
    if (lane == 0) warp_sums[warp] = v;
    __syncthreads();
    if (warp == 0) v = warpReduceDown(lane < W ? warp_sums[lane] : T(0));
    return v;
}

// blockScan: warp scans, then warp 0 scans the warp totals (exclusive), then
// every thread adds its warp's offset. Both scans in one pass.
template <class T, int BLOCK>
__device__ void blockScan(T v, T& inclusive, T& exclusive) {
    static_assert(BLOCK % kWarp == 0 && BLOCK <= 1024, "BLOCK: a multiple of 32, at most 1024");
    constexpr int W = BLOCK / kWarp;
    __shared__ T warp_offset[W];
    const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
    const T inc = warpInclusiveScan(v);
    T exc = __shfl_up_sync(kFullMask, inc, 1);
    if (lane == 0) exc = T(0);
    if (lane == kWarp - 1) warp_offset[warp] = inc;  // the warp's total
    __syncthreads();
    if (warp == 0) {
        const T total = lane < W ? warp_offset[lane] : T(0);
        const T off = warpExclusiveScan(total);
        if (lane < W) warp_offset[lane] = off;  // each thread rewrites only the slot it read
    }
    __syncthreads();
    inclusive = inc + warp_offset[warp];
    exclusive = exc + warp_offset[warp];
}

constexpr int kBlock = 256;

// reduceDownVsXor: the seed's 31 - laneId through both warp reductions; every
// lane's result is written, to show who holds the total.
__global__ void reduceDownVsXor(int* down, int* xr) {
    const int lane = threadIdx.x % kWarp;
    down[lane] = warpReduceDown(31 - lane);
    xr[lane] = warpReduceXor(31 - lane);
}

// warpScans: inclusive and exclusive scan of each warp's 32 elements.
template <class T>
__global__ void warpScans(const T* in, T* inc, T* exc, size_t n) {
    const size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    const T v = i < n ? in[i] : T(0);  // no early return: all 32 lanes must shuffle
    const T a = warpInclusiveScan(v), b = warpExclusiveScan(v);
    if (i < n) { inc[i] = a; exc[i] = b; }
}

// reduceShuffle: a grid-stride sum per thread, then blockReduce; block b
// writes partial[b]. Run twice (the second time with one block over the
// partials) it gives the sum of any n with a fixed order: deterministic.
template <class T>
__global__ void __launch_bounds__(kBlock) reduceShuffle(const T* __restrict__ in, T* __restrict__ partial, size_t n) {
    T s = T(0);
    for (size_t i = size_t(blockIdx.x) * kBlock + threadIdx.x; i < n; i += size_t(gridDim.x) * kBlock) s += in[i];
    s = blockReduce<T, kBlock>(s);
    if (threadIdx.x == 0) partial[blockIdx.x] = s;
}

// scanTiles: each block scans its own tile of kBlock elements (a block scan;
// chaining tiles into a whole-array scan is cub::DeviceScan's job).
template <class T>
__global__ void __launch_bounds__(kBlock) scanTiles(const T* __restrict__ in, T* __restrict__ inc, T* __restrict__ exc,
                                                    size_t n) {
    const size_t i = size_t(blockIdx.x) * kBlock + threadIdx.x;
    T a, b;
    blockScan<T, kBlock>(i < n ? in[i] : T(0), a, b);
    if (i < n) { inc[i] = a; exc[i] = b; }
}

// Sum of in[0..n) into *out (device), through `partial` (>= kReduceBlocks).
constexpr int kReduceBlocks = 1024;
template <class T>
void reduce_sum(const T* in, size_t n, T* partial, T* out) {
    const int blocks = int(std::min<size_t>(kReduceBlocks, (n + kBlock - 1) / kBlock));
    reduceShuffle<T><<<blocks > 0 ? blocks : 1, kBlock>>>(in, partial, n);
    CHECK_LAUNCH();
    reduceShuffle<T><<<1, kBlock>>>(partial, out, size_t(blocks > 0 ? blocks : 1));
    CHECK_LAUNCH();
}

template <class T>
void scan_tiles(const T* in, T* inc, T* exc, size_t n) {
    scanTiles<T><<<unsigned((n + kBlock - 1) / kBlock), kBlock>>>(in, inc, exc, n);
    CHECK_LAUNCH();
}

template <class T>
void warp_scans(const T* in, T* inc, T* exc, size_t n) {
    warpScans<T><<<unsigned((n + kBlock - 1) / kBlock), kBlock>>>(in, inc, exc, n);
    CHECK_LAUNCH();
}

// ===========================================================================
// Part 3. y = A x, A rows x cols row-major double (seed 004).
//
// Each element of A is used once: the least traffic is reading A and x once
// and writing y once, (rows * cols + cols + rows) * 8 bytes - the byte model.
// (x matters for few long rows: at 1 x N it is half the bytes; y for many
// short ones: at 2^24 x 8 it is 1/9.) The peer is cub::DeviceReduce::Sum, a
// reduction that reads as much and computes as little, compared by GB/s.
// ===========================================================================

constexpr int kMatvecBlock = 256;  // 8 warps
constexpr int kBlocksPerSm = 8;    // 2048 threads: a full H200 SM

__device__ __forceinline__ size_t global_thread() { return size_t(blockIdx.x) * blockDim.x + threadIdx.x; }
__device__ __forceinline__ size_t total_warps() { return size_t(gridDim.x) * blockDim.x / kWarp; }

// One lane's share of row r's dot product: columns lane, lane + 32, ...
// Consecutive lanes read consecutive doubles: 256 coalesced bytes per warp.
// 64-bit indices: the seed's int row * N overflows past 2^31 elements, and an
// int column index wraps negative on a row of nearly 2^31 columns (c + 32
// passes INT_MAX when cols > 2^31 - 33, which check_shape admits).
__device__ __forceinline__ double row_partial(const double* __restrict__ A, const double* __restrict__ x, size_t r,
                                              int cols, int lane) {
    const double* a = A + r * size_t(cols);
    double t = 0.0;
    for (int64_t c = lane; c < cols; c += kWarp) t = fma(a[c], x[c], t);
    return t;
}

// matvecGmemCache (seed 004, first version): one warp per row; the 32 partial
// sums are reduced through a scratch array in GLOBAL memory, one slot per
// thread. The seed relied on `volatile` and lockstep warps; since Volta the
// lanes of a warp are scheduled independently, so every step reads, waits at
// __syncwarp(), writes, waits again. What to look for: 5 round trips through
// L1/L2 per row - only visible when rows are short (skinny shapes).
// `cache` is deliberately NOT __restrict__: a thread never writes
// cache[t + off] itself, so with __restrict__ the compiler may read it through
// the non-coherent read-only path (LDG.CONSTANT), which can return the stale
// value from before the other lane's store. The first H200 run of this
// chapter did exactly that: every row wrong. Data that other threads write
// during the kernel must not be read through a __restrict__ (or __ldg) pointer.
__global__ void __launch_bounds__(kMatvecBlock)
matvecGmemCache(const double* __restrict__ A, const double* __restrict__ x, double* __restrict__ y, int rows, int cols,
                double* cache) {
    const int lane = threadIdx.x % kWarp;
    const size_t t = global_thread();
    for (size_t r = t / kWarp; r < size_t(rows); r += total_warps()) {  // warp-uniform loop
        cache[t] = row_partial(A, x, r, cols, lane);
        __syncwarp();
        for (int off = 16; off > 0; off /= 2) {
            const double other = lane < off ? cache[t + off] : 0.0;
            __syncwarp();  // all reads of this step before any write
            if (lane < off) cache[t] += other;
            __syncwarp();  // all writes before the next step's reads
        }
        if (lane == 0) y[r] = cache[t];
    }
}

// matvecSmem (seed 004, second version): the same reduction in shared memory,
// with the __syncwarp()s the seed leaves out (see matvecSmemNoSyncwarp).
__global__ void __launch_bounds__(kMatvecBlock)
matvecSmem(const double* __restrict__ A, const double* __restrict__ x, double* __restrict__ y, int rows, int cols) {
    __shared__ double cache[kMatvecBlock];
    const int lane = threadIdx.x % kWarp;
    const int t = threadIdx.x;
    for (size_t r = global_thread() / kWarp; r < size_t(rows); r += total_warps()) {
        cache[t] = row_partial(A, x, r, cols, lane);
        __syncwarp();
        for (int off = 16; off > 0; off /= 2) {
            const double other = lane < off ? cache[t + off] : 0.0;
            __syncwarp();
            if (lane < off) cache[t] += other;
            __syncwarp();
        }
        if (lane == 0) y[r] = cache[t];
        __syncwarp();  // lane 0's read before the next row's writes
    }
}

// PITFALL (never in the default run; --pitfalls): seed 004's shared-memory
// version as written - warp-synchronous `volatile` steps with no __syncwarp().
// It assumes the 32 lanes run in lockstep, which no GPU since Volta promises:
// lane 0 may read cache[8] before or after lane 8 has added into it. On the
// H200 it usually prints the right answer, so values do not catch it;
// `compute-sanitizer --tool racecheck` does (README: the command and its report).
__global__ void __launch_bounds__(kMatvecBlock)
matvecSmemNoSyncwarp(const double* __restrict__ A, const double* __restrict__ x, double* __restrict__ y, int rows,
                     int cols) {
    volatile __shared__ double cache[kMatvecBlock];
    const int lane = threadIdx.x % kWarp;
    const int t = threadIdx.x;
    for (size_t r = global_thread() / kWarp; r < size_t(rows); r += total_warps()) {
        cache[t] = row_partial(A, x, r, cols, lane);
        if (lane < 16) {
            cache[t] += cache[t + 16];
            cache[t] += cache[t + 8];
            cache[t] += cache[t + 4];
            cache[t] += cache[t + 2];
            cache[t] += cache[t + 1];
        }
        if (lane == 0) y[r] = cache[t];
    }
}

// matvecShuffle (seed 004, third version): the partial sums meet in
// registers, five __shfl_xor_sync steps, no shared memory, no barrier. The
// mask is the full warp: every lane reaches the shuffles because the row loop
// is warp-uniform. What to look for: the reduction is no longer the cost;
// 8-byte loads with one request in flight per lane are.
__global__ void __launch_bounds__(kMatvecBlock)
matvecShuffle(const double* __restrict__ A, const double* __restrict__ x, double* __restrict__ y, int rows, int cols) {
    const int lane = threadIdx.x % kWarp;
    for (size_t r = global_thread() / kWarp; r < size_t(rows); r += total_warps()) {
        double t = row_partial(A, x, r, cols, lane);
        for (int m = 16; m > 0; m /= 2) t += __shfl_xor_sync(kFullMask, t, m);
        if (lane == 0) y[r] = t;
    }
}

// matvecVec2<LANES, ROWS, EVEN>: bandwidth.
//   - 16-byte loads: A as double2 (LDG.128), 8 of them in flight per lane
//     before the first is used (U per row x ROWS rows), streamed past L1
//     (__ldcs: evict-first) so that x stays cached.
//   - LANES lanes per row (a power of two): a short row does not leave most
//     of the warp idle; the reduction is a shuffle with width LANES.
//   - ROWS rows per segment: a warp of S = 32 / LANES segments owns
//     ROWS * S rows, and segment s takes rows s, s + S, s + 2S, ... of them.
//     So the i-th load of the S segments reads S consecutive rows: when a row
//     is at most LANES pairs long, one warp load is 512 contiguous bytes.
//     (Consecutive rows per segment instead: 1510 vs 3047 GB/s on the H200
//     at cols = 8, 1 lane x 2 rows; each load touched 32 lines, 16 bytes of each.)
// Row alignment: cudaMalloc'd A is 256-byte aligned, so with an even cols
// every row starts on 16 bytes (EVEN). With an odd cols every other row starts
// 8 bytes off: its pairs start at column 1 (o = 1) and column 0 is the one
// element left over; an aligned row leaves its last column. Either way a row
// has cols / 2 pairs and, if cols is odd, one single; x is then read as two
// scalars, since its pairs are not aligned for both kinds of row.
// No lane returns early: the width-LANES shuffles name the full warp.
template <int LANES, int ROWS, bool EVEN>
__global__ void __launch_bounds__(kMatvecBlock)
matvecVec2(const double* __restrict__ A, const double* __restrict__ x, double* __restrict__ y, int rows, int cols) {
    static_assert(valid_width(LANES), "LANES: a power of two <= 32");
    constexpr int U = ROWS >= 8 ? 1 : 8 / ROWS;  // loads of A in flight per lane: U * ROWS = 8
    constexpr int S = kWarp / LANES;              // segments per warp
    const int sl = threadIdx.x % LANES;           // lane within the segment
    const size_t warp_row0 = global_thread() / kWarp * (size_t(ROWS) * S);
    const size_t row0 = warp_row0 + (threadIdx.x % kWarp) / LANES;  // this segment's rows: row0 + i * S
    const size_t first = row0 < size_t(rows) ? row0 : size_t(rows) - 1;
    const int pairs = cols / 2;

    const double2* a[ROWS];
    size_t start[ROWS];
    int o[ROWS];
    bool valid[ROWS];
#pragma unroll
    for (int i = 0; i < ROWS; ++i) {
        // A row past the end re-reads the segment's first row, so the loads
        // need no per-row branch; its sum is dropped.
        valid[i] = row0 + size_t(i) * S < size_t(rows);
        start[i] = (valid[i] ? row0 + size_t(i) * S : first) * size_t(cols);
        o[i] = EVEN ? 0 : int(start[i] & 1);
        a[i] = reinterpret_cast<const double2*>(A + start[i] + o[i]);
    }
    const double2* x2 = reinterpret_cast<const double2*>(x);
    auto xpair = [&](int i, int p) {
        if constexpr (EVEN) return __ldg(x2 + p);
        else return make_double2(__ldg(x + o[i] + 2 * p), __ldg(x + o[i] + 2 * p + 1));
    };

    double s[ROWS];
#pragma unroll
    for (int i = 0; i < ROWS; ++i) s[i] = 0.0;
    const int np = valid[0] ? pairs : 0;  // a segment past the last row skips the loads
    // (row0 is the segment's lowest row: if it is past the end, all its rows are)
    int p = sl;
    for (; p + (U - 1) * LANES < np; p += U * LANES) {
        double2 av[U][ROWS];
#pragma unroll
        for (int u = 0; u < U; ++u)
#pragma unroll
            for (int i = 0; i < ROWS; ++i)
                av[u][i] = __ldcs(a[i] + p + u * LANES);
#pragma unroll
        for (int u = 0; u < U; ++u)
#pragma unroll
            for (int i = 0; i < ROWS; ++i) {
                const double2 xv = xpair(i, p + u * LANES);
                s[i] = fma(av[u][i].x, xv.x, s[i]);
                s[i] = fma(av[u][i].y, xv.y, s[i]);
            }
    }
    for (; p < np; p += LANES)
#pragma unroll
        for (int i = 0; i < ROWS; ++i) {
            const double2 av = __ldcs(a[i] + p), xv = xpair(i, p);
            s[i] = fma(av.x, xv.x, s[i]);
            s[i] = fma(av.y, xv.y, s[i]);
        }
    if (!EVEN && sl == 0)
#pragma unroll
        for (int i = 0; i < ROWS; ++i)
            if (valid[i]) {
                const int c = o[i] ? 0 : cols - 1;
                s[i] = fma(A[start[i] + c], x[c], s[i]);
            }
#pragma unroll
    for (int i = 0; i < ROWS; ++i)
#pragma unroll
        for (int m = LANES / 2; m > 0; m /= 2) s[i] += __shfl_xor_sync(kFullMask, s[i], m, LANES);
    if (sl == 0)
#pragma unroll
        for (int i = 0; i < ROWS; ++i)
            if (valid[i]) y[row0 + size_t(i) * S] = s[i];
}

// matvecBlockRow<EVEN>: few long rows. With fewer rows than the warps an
// H200 holds (132 SMs x 64), one warp per row leaves SMs short of loads in
// flight (2048 x 65536 ran at 86% of CUB that way). Here a whole block of 256
// threads shares a row: 16-byte loads, 8 in flight per thread, then the
// block reduction of part 2 (warp shuffles, one shared-memory hop).
// Alignment as in matvecVec2: one offset o and at most one single per row.
template <bool EVEN>
__global__ void __launch_bounds__(kMatvecBlock)
matvecBlockRow(const double* __restrict__ A, const double* __restrict__ x, double* __restrict__ y, int cols) {
    constexpr int U = 8;
    const size_t start = size_t(blockIdx.x) * size_t(cols);
    const int o = EVEN ? 0 : int(start & 1);
    const double2* a = reinterpret_cast<const double2*>(A + start + o);
    const double2* x2 = reinterpret_cast<const double2*>(x);
    auto xpair = [&](int p) {
        if constexpr (EVEN) return __ldg(x2 + p);
        else return make_double2(__ldg(x + o + 2 * p), __ldg(x + o + 2 * p + 1));
    };
    const int pairs = cols / 2;
    double s = 0.0;
    int p = threadIdx.x;
    for (; p + (U - 1) * kMatvecBlock < pairs; p += U * kMatvecBlock) {
        double2 av[U];
#pragma unroll
        for (int u = 0; u < U; ++u) av[u] = __ldcs(a + p + u * kMatvecBlock);
#pragma unroll
        for (int u = 0; u < U; ++u) {
            const double2 xv = xpair(p + u * kMatvecBlock);
            s = fma(av[u].x, xv.x, s);
            s = fma(av[u].y, xv.y, s);
        }
    }
    for (; p < pairs; p += kMatvecBlock) {
        const double2 av = __ldcs(a + p), xv = xpair(p);
        s = fma(av.x, xv.x, s);
        s = fma(av.y, xv.y, s);
    }
    if (!EVEN && threadIdx.x == 0) {
        const int c = o ? 0 : cols - 1;
        s = fma(A[start + c], x[c], s);
    }
    s = blockReduce<double, kMatvecBlock>(s);
    if (threadIdx.x == 0) y[blockIdx.x] = s;
}

// matvecSplitRow<EVEN>: rows too few and too long for a block each. With
// 8 rows of 4 million columns, 8 blocks run on 8 of the 132 SMs (4% of CUB).
// Here each row is cut into chunks of `chunk_pairs` pairs, one block per
// chunk, 16-byte loads with 8 in flight per thread as in matvecBlockRow; each
// block writes its partial sum to partial[row * chunks + chunk]. A second
// kernel (matvecSplitRowSum) adds each row's partials in chunk order.
// No atomics: the result is bit-reproducible from run to run for a given
// shape and GPU (the chunking depends on the shape and the SM count only).
// Block b takes chunk b / rows of row b % rows: blocks that run together read
// the same slice of x, so x comes from DRAM once even when it exceeds L2
// (3 x 10000019: x is 80 MB, a third of A).
template <bool EVEN>
__global__ void __launch_bounds__(kMatvecBlock)
matvecSplitRow(const double* __restrict__ A, const double* __restrict__ x, double* __restrict__ partial, int rows,
               int cols, int64_t chunk_pairs) {
    constexpr int U = 8;
    const int64_t row = blockIdx.x % unsigned(rows), chunk = blockIdx.x / unsigned(rows);
    const int64_t chunks = gridDim.x / unsigned(rows);
    const size_t start = size_t(row) * size_t(cols);
    const int o = EVEN ? 0 : int(start & 1);
    const double2* a = reinterpret_cast<const double2*>(A + start + o);
    const double2* x2 = reinterpret_cast<const double2*>(x);
    auto xpair = [&](int64_t p) {
        if constexpr (EVEN) return __ldg(x2 + p);
        else return make_double2(__ldg(x + o + 2 * p), __ldg(x + o + 2 * p + 1));
    };
    const int64_t pairs = cols / 2;
    const int64_t end = min(pairs, (chunk + 1) * chunk_pairs);
    double s = 0.0;
    int64_t p = chunk * chunk_pairs + threadIdx.x;
    for (; p + (U - 1) * kMatvecBlock < end; p += U * kMatvecBlock) {
        double2 av[U];
#pragma unroll
        for (int u = 0; u < U; ++u) av[u] = __ldcs(a + p + u * kMatvecBlock);
#pragma unroll
        for (int u = 0; u < U; ++u) {
            const double2 xv = xpair(p + u * kMatvecBlock);
            s = fma(av[u].x, xv.x, s);
            s = fma(av[u].y, xv.y, s);
        }
    }
    for (; p < end; p += kMatvecBlock) {
        const double2 av = __ldcs(a + p), xv = xpair(p);
        s = fma(av.x, xv.x, s);
        s = fma(av.y, xv.y, s);
    }
    if (!EVEN && chunk == 0 && threadIdx.x == 0) {  // the one element outside the pairs
        const int64_t c = o ? 0 : cols - 1;
        s = fma(A[start + c], x[c], s);
    }
    s = blockReduce<double, kMatvecBlock>(s);
    if (threadIdx.x == 0) partial[row * chunks + chunk] = s;
}

// matvecThinRows<C>: rows of C <= 3 doubles (2^24 x 1 ran at 51% of CUB as
// 1-lane segments: 8-byte loads and stores, and a shuffle step per row for
// nothing). A row is too short to share: each thread takes two consecutive
// rows, 2C contiguous doubles starting on 16 bytes, loads them as C double2s
// and writes its two results as one double2 - a copy's access pattern.
// No shuffles at all; the last row of an odd count is done alone.
template <int C>
__global__ void __launch_bounds__(kMatvecBlock)
matvecThinRows(const double* __restrict__ A, const double* __restrict__ x, double* __restrict__ y, int rows) {
    const size_t pair = global_thread();
    const size_t r = 2 * pair;
    if (r >= size_t(rows)) return;  // no shuffles or barriers below
    double xv[C];
#pragma unroll
    for (int c = 0; c < C; ++c) xv[c] = __ldg(x + c);
    if (r + 1 < size_t(rows)) {
        const double2* a = reinterpret_cast<const double2*>(A + r * C);  // 16 C bytes per pair: aligned
        double v[2 * C];
#pragma unroll
        for (int k = 0; k < C; ++k) {
            const double2 t = __ldcs(a + k);
            v[2 * k] = t.x;
            v[2 * k + 1] = t.y;
        }
        double s0 = 0.0, s1 = 0.0;
#pragma unroll
        for (int c = 0; c < C; ++c) {
            s0 = fma(v[c], xv[c], s0);
            s1 = fma(v[C + c], xv[c], s1);
        }
        *reinterpret_cast<double2*>(y + r) = make_double2(s0, s1);
    } else {
        double s0 = 0.0;
#pragma unroll
        for (int c = 0; c < C; ++c) s0 = fma(A[r * C + c], xv[c], s0);
        y[r] = s0;
    }
}

// The second pass: one warp per row adds the row's partials (lane-strided,
// then the xor butterfly): a fixed order, so a fixed result.
__global__ void __launch_bounds__(kMatvecBlock)
matvecSplitRowSum(const double* __restrict__ partial, double* __restrict__ y, int rows, int chunks) {
    const int lane = threadIdx.x % kWarp;
    const size_t r = global_thread() / kWarp;
    if (r >= size_t(rows)) return;  // warp-uniform: the whole warp leaves together
    double t = 0.0;
    for (int c = lane; c < chunks; c += kWarp) t += partial[r * chunks + c];
    for (int m = 16; m > 0; m /= 2) t += __shfl_xor_sync(kFullMask, t, m);
    if (lane == 0) y[r] = t;
}

// ---------------------------------------------------------------------------
// Host side.
// ---------------------------------------------------------------------------

inline std::string launch_string(unsigned grid, unsigned block, const std::string& more = "") {
    return "grid(" + std::to_string(grid) + ") block(" + std::to_string(block) + ")" + more;
}

inline int sm_count() {
    int dev = 0, n = 0;
    CHECK(cudaGetDevice(&dev));
    CHECK(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev));
    return n;
}

// The warp-per-row kernels loop over rows with at most one full GPU of
// blocks; matvecGmemCache needs one scratch double per thread of that grid.
inline unsigned rowloop_grid(int rows) {
    const size_t want = (size_t(rows) * kWarp + kMatvecBlock - 1) / kMatvecBlock;
    const size_t cap = size_t(sm_count()) * kBlocksPerSm;
    return unsigned(want < cap ? want : cap);
}
inline size_t scratch_doubles() { return size_t(sm_count()) * kBlocksPerSm * kMatvecBlock; }

using MatvecLaunch = std::string (*)(const double* A, const double* x, double* y, int rows, int cols, double* scratch);

template <void (*K)(const double*, const double*, double*, int, int)>
std::string launch_rowloop(const double* A, const double* x, double* y, int rows, int cols, double*) {
    const unsigned g = rowloop_grid(rows);
    K<<<g, kMatvecBlock>>>(A, x, y, rows, cols);
    CHECK_LAUNCH();
    return launch_string(g, kMatvecBlock);
}

inline std::string launch_gmem_cache(const double* A, const double* x, double* y, int rows, int cols, double* scratch) {
    const unsigned g = rowloop_grid(rows);
    matvecGmemCache<<<g, kMatvecBlock>>>(A, x, y, rows, cols, scratch);
    CHECK_LAUNCH();
    return launch_string(g, kMatvecBlock);
}

// A (LANES, ROWS) variant of matvecVec2: one segment of LANES lanes per ROWS
// rows; or, with block_per_row, matvecBlockRow.
struct Vec2Shape {
    int lanes, rows_per_segment;
    bool block_per_row = false, split_rows = false, thin_rows = false;
};

constexpr int kMaxThinCols = 3;
inline std::string launch_thin_rows(const double* A, const double* x, double* y, int rows, int cols) {
    const unsigned g = unsigned(((size_t(rows) + 1) / 2 + kMatvecBlock - 1) / kMatvecBlock);
    switch (cols) {
        case 1: matvecThinRows<1><<<g, kMatvecBlock>>>(A, x, y, rows); break;
        case 2: matvecThinRows<2><<<g, kMatvecBlock>>>(A, x, y, rows); break;
        case 3: matvecThinRows<3><<<g, kMatvecBlock>>>(A, x, y, rows); break;
        default: std::fprintf(stderr, "launch_thin_rows: cols %d > %d\n", cols, kMaxThinCols); std::exit(1);
    }
    CHECK_LAUNCH();
    return launch_string(g, kMatvecBlock, " thin rows: 2 rows a thread");
}

// Chunks of whole 2048-pair block steps (256 threads x 8 loads), sized so that
// the grid is about 4 full GPUs of blocks.
inline int64_t split_chunk_pairs(int rows, int cols) {
    constexpr int64_t step = int64_t(8) * kMatvecBlock;
    const int64_t target_blocks = int64_t(4) * sm_count() * kBlocksPerSm;
    const int64_t total = int64_t(rows) * (cols / 2);
    const int64_t per_block = std::max<int64_t>(step, (total + target_blocks - 1) / target_blocks);
    return (per_block + step - 1) / step * step;
}

// Needs rows * chunks <= scratch_doubles() (true where tuned_shape picks it;
// the launcher refuses otherwise rather than write past the scratch array).
inline std::string launch_split_rows(const double* A, const double* x, double* y, int rows, int cols,
                                     double* scratch) {
    const int64_t cp = split_chunk_pairs(rows, cols);
    const int64_t chunks = std::max<int64_t>(1, (cols / 2 + cp - 1) / cp);
    if (size_t(rows) * size_t(chunks) > scratch_doubles()) {
        std::fprintf(stderr, "launch_split_rows: %d x %lld partials do not fit the scratch array\n", rows,
                     (long long)chunks);
        std::exit(1);
    }
    const unsigned g = unsigned(rows * chunks);
    if (cols % 2 == 0) matvecSplitRow<true><<<g, kMatvecBlock>>>(A, x, scratch, rows, cols, cp);
    else matvecSplitRow<false><<<g, kMatvecBlock>>>(A, x, scratch, rows, cols, cp);
    CHECK_LAUNCH();
    const unsigned g2 = unsigned((size_t(rows) * kWarp + kMatvecBlock - 1) / kMatvecBlock);
    matvecSplitRowSum<<<g2, kMatvecBlock>>>(scratch, y, rows, int(chunks));
    CHECK_LAUNCH();
    return launch_string(g, kMatvecBlock, " split rows: " + std::to_string(chunks) + " blocks/row + sum");
}

inline std::string launch_block_row(const double* A, const double* x, double* y, int rows, int cols) {
    if (cols % 2 == 0) matvecBlockRow<true><<<rows, kMatvecBlock>>>(A, x, y, cols);
    else matvecBlockRow<false><<<rows, kMatvecBlock>>>(A, x, y, cols);
    CHECK_LAUNCH();
    return launch_string(unsigned(rows), kMatvecBlock, " block per row");
}

template <int L, int R>
std::string launch_vec2_lr(const double* A, const double* x, double* y, int rows, int cols) {
    const size_t rows_per_warp = size_t(R) * (kWarp / L);
    const size_t warps = (size_t(rows) + rows_per_warp - 1) / rows_per_warp;
    const unsigned g = unsigned((warps * kWarp + kMatvecBlock - 1) / kMatvecBlock);
    if (cols % 2 == 0) matvecVec2<L, R, true><<<g, kMatvecBlock>>>(A, x, y, rows, cols);
    else matvecVec2<L, R, false><<<g, kMatvecBlock>>>(A, x, y, rows, cols);
    CHECK_LAUNCH();
    return launch_string(g, kMatvecBlock, " lanes/row " + std::to_string(L) + " rows/seg " + std::to_string(R));
}

constexpr int kLaneChoices[] = {1, 2, 4, 8, 16, 32};
constexpr int kRowChoices[] = {1, 2, 4, 8};

inline std::string launch_vec2(Vec2Shape v, const double* A, const double* x, double* y, int rows, int cols,
                               double* scratch = nullptr) {
    using F = std::string (*)(const double*, const double*, double*, int, int);
#define SHUFFLE_VEC2_ROW(L) {launch_vec2_lr<L, 1>, launch_vec2_lr<L, 2>, launch_vec2_lr<L, 4>, launch_vec2_lr<L, 8>}
    static const F table[6][4] = {SHUFFLE_VEC2_ROW(1),  SHUFFLE_VEC2_ROW(2),  SHUFFLE_VEC2_ROW(4),
                                  SHUFFLE_VEC2_ROW(8), SHUFFLE_VEC2_ROW(16), SHUFFLE_VEC2_ROW(32)};
#undef SHUFFLE_VEC2_ROW
    if (v.thin_rows && cols <= kMaxThinCols) return launch_thin_rows(A, x, y, rows, cols);
    if (v.split_rows && scratch) return launch_split_rows(A, x, y, rows, cols, scratch);
    if (v.block_per_row || v.split_rows) return launch_block_row(A, x, y, rows, cols);
    int li = 0, ri = 0;
    while (li < 5 && kLaneChoices[li] < v.lanes) ++li;
    while (ri < 3 && kRowChoices[ri] < v.rows_per_segment) ++ri;
    return table[li][ri](A, x, y, rows, cols);
}

// The tuned choice; the rules come from the --tune tables on the H200
// (README). Long rows (cols >= 4096): a block per row - at 2048 x 65536 it
// beat the best warp-per-row variant by 19%, and it won at every shape with
// cols >= 8191. Shorter rows: about 2 pairs per lane (but at least 4 lanes
// unless the row is shorter), and rows per segment so that each lane has about
// 8 loads in flight (at least 2 for full-warp rows), unless that leaves fewer
// warps than the GPU holds.
inline Vec2Shape tuned_shape(int rows, int cols) {
    const int pairs = cols / 2;
    const int64_t resident_blocks = int64_t(sm_count()) * kBlocksPerSm;
    // Few long rows: fewer rows than half a GPU of blocks -> split each row.
    // (From 1000 rows on a block per row measured as fast or faster: --tune at
    // 1000 x 33333, 3918 vs 3785 GB/s split; 2048 x 65536, 1.006 vs 0.985 of CUB.)
    if (pairs >= 8 * kMatvecBlock && rows < resident_blocks / 2) return {32, 1, false, true};
    if (pairs >= 8 * kMatvecBlock) return {32, 1, true};
    if (cols <= kMaxThinCols) return {1, 1, false, false, true};  // two rows a thread, no shuffles
    int lanes = 1;
    while (lanes < 32 && 2 * lanes < pairs) lanes *= 2;
    if (lanes < 4) {  // very short rows: one pair per lane
        lanes = 1;
        while (lanes < 4 && lanes < pairs) lanes *= 2;
    }
    const int per_lane = std::max(1, (pairs + lanes - 1) / lanes);  // loads per lane per row
    int r = 1;
    while (r < 8 && 2 * r * per_lane <= 8) r *= 2;
    // Odd rows (every other one 8 bytes off, x read as scalars): one row per
    // segment. --tune at 1048576 x 17: 4 x 1 measured 3119 GB/s against 3036
    // for 4 x 4 (2026-11-23), and 6% faster in an earlier run.
    if (cols % 2 == 1 && lanes < 32) r = 1;
    if (lanes == 32 && r < 2) r = 2;
    const size_t full_gpu_warps = size_t(sm_count()) * kBlocksPerSm * kMatvecBlock / kWarp;
    while (r > 1 && size_t(rows) / (size_t(r) * (kWarp / lanes)) < full_gpu_warps) r /= 2;
    return {lanes, r};
}

inline std::string launch_vec2_warp(const double* A, const double* x, double* y, int rows, int cols, double*) {
    return launch_vec2({32, 1}, A, x, y, rows, cols);
}
inline std::string launch_vec2_tuned(const double* A, const double* x, double* y, int rows, int cols,
                                     double* scratch) {
    return launch_vec2(tuned_shape(rows, cols), A, x, y, rows, cols, scratch);
}

struct MatvecKernel {
    const char* name;
    MatvecLaunch launch;
    const char* what;
};

// Every matvec kernel, in teaching order: what the program runs and the tests check.
inline const std::vector<MatvecKernel>& matvec_kernels() {
    static const std::vector<MatvecKernel> k = {
        {"matvecGmemCache", launch_gmem_cache, "warp per row, reduced through a global scratch array"},
        {"matvecSmem", launch_rowloop<matvecSmem>, "warp per row, reduced in shared memory (+__syncwarp)"},
        {"matvecShuffle", launch_rowloop<matvecShuffle>, "warp per row, reduced with __shfl_xor_sync"},
        {"matvecShuffleVec2", launch_vec2_warp, "warp per row, 16-byte loads, 8 in flight per lane"},
        {"matvecShuffleTuned", launch_vec2_tuned,
         "16-byte loads; lanes per row, rows per warp, a block per row or several blocks per row, from the shape"},
    };
    return k;
}

// The seeds' bugs, kept to show how they fail: a separate list, so that no
// loop over matvec_kernels() runs them (the program: only with --pitfalls).
inline const std::vector<MatvecKernel>& matvec_pitfalls() {
    static const std::vector<MatvecKernel> k = {
        {"matvecSmemNoSyncwarp", launch_rowloop<matvecSmemNoSyncwarp>,
         "PITFALL: the seed's volatile reduction, no __syncwarp (racecheck reports it)"},
    };
    return k;
}

// CPU reference in long double (64-bit mantissa on x86: its own error is
// 2^11 times below the tolerance). abs_dot[r] = sum |A[r][c] x[c]|, which
// bounds any summation order's error (see matvec_tolerance).
inline void matvec_cpu(const double* A, const double* x, int rows, int cols, double* y, double* abs_dot) {
    for (int r = 0; r < rows; ++r) {
        const double* a = A + size_t(r) * cols;
        long double s = 0, sa = 0;
        for (int c = 0; c < cols; ++c) {
            const long double p = (long double)a[c] * x[c];
            s += p;
            sa += p < 0 ? -p : p;
        }
        y[r] = double(s);
        if (abs_dot) abs_dot[r] = double(sa);
    }
}

// Any order of n double multiply-adds computes a dot product with error at
// most gamma_n * sum |a_i x_i|, gamma_n = n u / (1 - n u), u = 2^-53 (Higham,
// Accuracy and Stability of Numerical Algorithms, 3.1). The GPU's order (per
// lane strides, then a shuffle tree) is not the CPU's, so this worst-case
// bound is the tolerance: it can never fail a correct kernel, and it is far
// below the size of any one term, so a dropped or doubled element fails.
inline double gamma_n(double n) {
    const double u = 1.0 / 9007199254740992.0;
    return n * u / (1.0 - n * u);
}

// Command-line limits: rows * 32 threads and rows * cols elements in range.
constexpr int64_t kMaxRows = int64_t(1) << 26;
constexpr int64_t kMaxCols = (int64_t(1) << 31) - 1;
constexpr int64_t kMaxElements = int64_t(1) << 31;  // 16 GiB of doubles

inline std::string check_shape(int64_t rows, int64_t cols) {
    if (rows < 1 || rows > kMaxRows) return "rows must be in [1, " + std::to_string(kMaxRows) + "]";
    if (cols < 1 || cols > kMaxCols) return "cols must be in [1, " + std::to_string(kMaxCols) + "]";
    if (rows * cols > kMaxElements)
        return std::to_string(rows) + " x " + std::to_string(cols) + " is more than 2^31 elements (16 GiB)";
    return "";
}

// ===========================================================================
// Host-side checks shared by the program and the tests.
// ===========================================================================

// The parameters each primitive is probed with: srcLane well outside
// [0, width) on both sides; delta and laneMask over 0..31 and past it (only
// their low 5 bits count), laneMask -1 too.
inline std::vector<int> probe_params(Op op) {
    std::vector<int> v;
    const int lo = op == Op::Idx ? -33 : op == Op::Xor ? -1 : 0, hi = op == Op::Idx ? 65 : 40;
    for (int p = lo; p <= hi; ++p) v.push_back(p);
    return v;
}

// Every valid width times every parameter: one warp each in a probe launch.
inline std::vector<Probe> probe_set(Op op) {
    std::vector<Probe> v;
    for (int w = 1; w <= kWarp; w *= 2)
        for (int p : probe_params(op)) v.push_back({w, p});
    return v;
}

// Full and partial masks: halves (16 active lanes, 0x0000ffff), alternate
// lanes, nibbles, the two end lanes, one lane, and three random ones.
inline std::vector<unsigned> probe_masks(uint64_t seed) {
    std::vector<unsigned> m = {kFullMask, 0x0000ffffu, 0xffff0000u, 0x55555555u, 0xaaaaaaaau,
                               0x0f0f0f0fu, 0x80000001u, 0x00000001u};
    common::SplitMix64 g(seed);
    for (int i = 0; i < 3; ++i) m.push_back(unsigned(g.next()) | 1u << (g.next() % 32));
    return m;
}

// 32 inputs whose bit patterns differ in every lane (the lane is part of
// each value), so a value read from the wrong lane is always noticed.
template <class T>
Warp<T> probe_input(uint64_t seed) {
    common::SplitMix64 g(seed);
    Warp<T> v;
    for (int lane = 0; lane < kWarp; ++lane) {
        if constexpr (std::is_floating_point_v<T>) v[lane] = T(lane) + T(32 * int(g.next() % 4096)) + T(0.25);
        else v[lane] = T((g.next() << 8) | uint64_t(lane));
    }
    return v;
}

struct PrimitiveCheck {
    size_t checked = 0;     // lane results compared bit for bit with the emulator
    size_t undefined = 0;   // lanes reading from outside the mask: not compared
    size_t untouched = 0;   // lanes outside the mask, verified not to have written
    size_t mismatches = 0;
    std::string first;      // the first mismatch, in words
    bool pass() const { return mismatches == 0 && checked > 0; }
    void add(const PrimitiveCheck& o) {
        checked += o.checked; undefined += o.undefined; untouched += o.untouched;
        if (!mismatches && o.mismatches) first = o.first;
        mismatches += o.mismatches;
    }
};

// Runs `op` on the GPU for every probe with `mask` and compares each lane
// with the emulator. emulate_width != 0 makes the emulator use that width
// instead of the probe's: the tests use it to show that a wrong width is caught.
template <class T>
PrimitiveCheck check_primitive(Op op, unsigned mask, const std::vector<Probe>& probes, uint64_t seed,
                               int emulate_width = 0) {
    const Warp<T> in = probe_input<T>(seed);
    const size_t n = probes.size();
    common::DeviceBuffer<T> d_in(kWarp), d_out(n * kWarp);
    common::DeviceBuffer<Probe> d_probes(n);
    d_in.upload(std::vector<T>(in.begin(), in.end()));
    d_probes.upload(probes);
    d_out.poison();
    launch_probe<T>(op, d_in.get(), d_out.get(), d_probes.get(), int(n), mask);
    CHECK(cudaDeviceSynchronize());
    std::vector<T> out;
    d_out.download(out);
    T poison;
    std::memset(&poison, 0xFF, sizeof poison);

    PrimitiveCheck c;
    for (size_t k = 0; k < n; ++k) {
        const Probe& p = probes[k];
        const Shuffled<T> e = emulate(op, mask, in, p.param, emulate_width ? emulate_width : p.width);
        for (int lane = 0; lane < kWarp; ++lane) {
            const T& got = out[k * kWarp + lane];
            const T& want = e.executed[lane] ? e.value[lane] : poison;
            if (e.executed[lane] && !e.defined[lane]) { ++c.undefined; continue; }
            if (std::memcmp(&got, &want, sizeof(T)) == 0) {
                ++(e.executed[lane] ? c.checked : c.untouched);
                continue;
            }
            if (c.mismatches++ == 0) {
                char buf[200];
                std::snprintf(buf, sizeof buf, "%s(mask 0x%08x, %s=%d, width %d): lane %d got %.17g, emulator %.17g",
                              op_name(op), mask, param_name(op), p.param, p.width, lane, double(got), double(want));
                c.first = buf;
            }
        }
    }
    return c;
}

// The emulator applied to a whole warp-level algorithm: warpReduceDown on
// the host, lane by lane, as the GPU runs it.
template <class T>
Warp<T> emulate_reduce_down(Warp<T> v) {
    for (int delta = 16; delta > 0; delta /= 2) {
        const Shuffled<T> s = emulate(Op::Down, kFullMask, v, delta, kWarp);
        for (int l = 0; l < kWarp; ++l) v[l] += s.value[l];
    }
    return v;
}
template <class T>
Warp<T> emulate_reduce_xor(Warp<T> v) {
    for (int m = 16; m > 0; m /= 2) {
        const Shuffled<T> s = emulate(Op::Xor, kFullMask, v, m, kWarp);
        for (int l = 0; l < kWarp; ++l) v[l] += s.value[l];
    }
    return v;
}
// Seed 001's scan4 on the host: Hillis-Steele in groups of `width` lanes.
inline Warp<int> emulate_scan4(int width) {
    Warp<int> v;
    for (int l = 0; l < kWarp; ++l) v[l] = 31 - l;
    for (int i = 1; i <= 4; i *= 2) {
        const Shuffled<int> s = emulate(Op::Up, kFullMask, v, i, width);
        for (int l = 0; l < kWarp; ++l)
            if ((l & 7) >= i) v[l] += s.value[l];
    }
    return v;
}

// Reference scans of consecutive segments of `seg` elements (a warp: 32, a
// block: kBlock), in long double, with the running sum of |a| for the bound.
template <class T>
void segmented_scan_cpu(const T* in, size_t n, size_t seg, long double* inc, long double* exc, long double* abs_inc) {
    long double s = 0, sa = 0;
    for (size_t i = 0; i < n; ++i) {
        if (i % seg == 0) s = sa = 0;
        exc[i] = s;
        s += (long double)in[i];
        sa += in[i] < 0 ? -(long double)in[i] : (long double)in[i];
        inc[i] = s;
        abs_inc[i] = sa;
    }
}

// Floating-point tolerances for the building blocks: gamma_k * sum |a| where
// k bounds the number of additions on any path of the summation tree (the
// tree's depth). A scan element: 5 warp steps, 1 shift, 5 + 1 over the warp
// totals, 1 final add. The two-pass reduce: each thread's serial count,
// 5 + 5 in the block (two warp reductions), the same again in the second pass.
template <class T>
double unit_roundoff() { return std::is_same_v<T, float> ? 1.0 / 16777216.0 : 1.0 / 9007199254740992.0; }
template <class T>
double gamma_k(double k) { return k * unit_roundoff<T>() / (1.0 - k * unit_roundoff<T>()); }
constexpr int kScanDepth = 13;
inline int reduce_depth(size_t n) {
    const size_t blocks = std::min<size_t>(kReduceBlocks, (n + kBlock - 1) / kBlock);
    const size_t per_thread = (n + blocks * kBlock - 1) / (blocks * kBlock);
    const size_t per_thread2 = (blocks + kBlock - 1) / kBlock;
    return int(per_thread + 10 + per_thread2 + 10);
}

// ---- The building blocks on arrays, against the CPU -------------------------
template <class T>
const char* type_name() {
    if constexpr (std::is_same_v<T, int>) return "int";
    else if constexpr (std::is_same_v<T, long long>) return "long long";
    else if constexpr (std::is_same_v<T, float>) return "float";
    else return "double";
}

template <class T>
void fill_random(std::vector<T>& v, uint64_t seed) {
    if constexpr (std::is_integral_v<T>) common::fill_uniform(v.data(), v.size(), seed, T(-1000), T(1000));
    else common::fill_uniform(v.data(), v.size(), seed, T(-1), T(1));
}

// Exact for integers; gamma_depth * sum|a| for floating point.
template <class T>
bool close_enough(T got, long double ref, long double abs_ref, int depth) {
    if constexpr (std::is_integral_v<T>) return (long double)got == ref;
    else return !std::isnan(double(got)) &&
                std::fabs(double(got) - double(ref)) <= gamma_k<T>(depth) * double(abs_ref);
}

template <class T>
bool check_reduce(size_t n, uint64_t seed) {
    std::vector<T> in(n);
    fill_random(in, seed);
    long double ref = 0, abs_ref = 0;
    for (T v : in) { ref += v; abs_ref += v < 0 ? -(long double)v : (long double)v; }
    common::DeviceBuffer<T> d_in(n), d_partial(kReduceBlocks), d_out(1);
    d_in.upload(in);
    d_out.poison();
    reduce_sum(d_in.get(), n, d_partial.get(), d_out.get());
    std::vector<T> got;
    d_out.download(got);
    return close_enough(got[0], ref, abs_ref, reduce_depth(n));
}

// Warp scans (segments of 32) or block scans (segments of kBlock).
template <class T>
bool check_scan(size_t n, bool block, uint64_t seed) {
    std::vector<T> in(n), inc, exc;
    fill_random(in, seed);
    std::vector<long double> ri(n), re(n), ra(n);
    segmented_scan_cpu(in.data(), n, block ? kBlock : kWarp, ri.data(), re.data(), ra.data());
    common::DeviceBuffer<T> d_in(n), d_inc(n), d_exc(n);
    d_in.upload(in);
    d_inc.poison();
    d_exc.poison();
    if (block) scan_tiles(d_in.get(), d_inc.get(), d_exc.get(), n);
    else warp_scans(d_in.get(), d_inc.get(), d_exc.get(), n);
    d_inc.download(inc);
    d_exc.download(exc);
    for (size_t i = 0; i < n; ++i)
        if (!close_enough(inc[i], ri[i], ra[i], kScanDepth) || !close_enough(exc[i], re[i], ra[i], kScanDepth)) return false;
    return true;
}

}  // namespace shuffle
