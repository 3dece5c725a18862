// Step 14 of 04_reduction (Hopper, sm_90): the input streams through a ring of
// shared-memory buffers, filled by the bulk copy engine (cp.async.bulk, the
// TMA unit's plain-copy form) and tracked by mbarriers; the threads only ever
// read shared memory. Step 13 asks for the bytes with loads in every thread;
// here one thread asks for 32 KiB at a time and the copy engine does the rest.
// The bug that breaks it is one switch away: kEdges = false leaves out the
// head and the tail (bulk copies of whole chunks only); the tests plant it
// and must catch it.
//
// The pipeline, per block (one block per SM, 4 stages of 32 KiB):
//
//   producer (1 thread)                          consumers (16 warps)
//   for chunk j of this block:                   for chunk j of this block:
//     s = j % 4                                    s = j % 4
//     wait empty[s] (round j/4 - 1 done)           wait full[s] (round j/4)
//     full[s].arrive.expect_tx(32 KiB)             read stage s: 4 x 16 B per thread
//     cp.async.bulk stage s <- chunk j             each thread: empty[s].arrive
//         (completes bytes on full[s])
//
// Up to 4 chunks (128 KiB) are in flight per SM, fewer while the consumers
// read the oldest one and the producer waits to refill it. Little's law with
// the idle latency asks for about a quarter of that (the README's "bytes in
// flight"), but the depth was measured, not derived: fewer stages were slower,
// more were not faster (README, "Worklog: tuning step 14", the ring's depth).
//
// mbarriers. An mbarrier is a 64-bit object in shared memory that counts two
// things for its current PHASE: arrivals still expected (set by
// mbarrier.init) and bytes of transactions still expected (tx-count). A phase
// completes when both reach zero; the barrier then starts the next phase with
// the same arrival count. `mbarrier.arrive.expect_tx` by the producer raises
// the tx-count by the bytes it is about to copy and arrives (count 1: full[s]
// completes when its one arrival is in AND the 32 KiB have landed); the
// copy's `mbarrier::complete_tx::bytes` lowers the tx-count as the bytes
// land. Waiting: phases alternate parity 0, 1, 0, 1...;
// `mbarrier.try_wait.parity p` returns true once the phase of parity p has
// completed. Round r of stage s (chunks j with j / 4 == r) is phase r, so the
// consumers wait on full[s] with parity r & 1 and the producer, before
// refilling stage s in round r, waits on empty[s] with parity (r - 1) & 1
// (empty[s] completes when all 512 consumer threads have arrived: they have
// read the previous chunk). Every thread arrives for itself, so each read is
// ordered before the next copy by its own release; one arrival per warp
// after __syncwarp() drew a racecheck report (README, step 14). Parity, not a
// phase number, is enough because a waiter can never be two phases behind:
// the other side waits for it.
//
// Fences. mbarrier.init is an ordinary (generic proxy) write; the bulk copy
// engine is the "async proxy", and it reaches its mbarrier through the
// generic proxy (PTX ISA, cp.async.bulk). `fence.mbarrier_init.release.cluster`
// (a release fence for the inits, CUTLASS's fence_barrier_init) then a
// __syncthreads() order the inits before any thread or copy uses the
// barriers. (The CUDA Programming Guide's TMA example puts
// `fence.proxy.async.shared::cta` there instead.) That proxy fence is for
// generic WRITES to shared memory that the async proxy then reads (a bulk
// copy shared -> global). Here the threads only read the buffers, and the
// empty barrier orders those reads before the next copy into the same
// buffer, so no proxy fence is in the loop: the PTX model does not spell out
// this write-after-read across the two proxies; it is the pattern of
// CUTLASS's TMA pipelines (their consumer release is a plain arrive), each
// value read has been added before its thread arrives, and racecheck finds
// no hazard. The barriers are not invalidated (mbarrier.inval) at the end:
// their memory is not used for anything else before the block exits.
//
// Alignment. A bulk copy needs 16-byte aligned addresses and a size that is a
// multiple of 16. The input may start anywhere (a sub-array): the head up to
// the first 16-byte boundary and the tail after the last whole 32 KiB chunk
// are added with ordinary loads, while the first copies are in flight.
//
// Correct for any n >= 1, int / float / double, any element-aligned start;
// deterministic (a fixed order for a given n, start and GPU: the grid is the
// SM count), exact for int, and finished like step 13 by the last block, with
// the ticket as one acq_rel fetch_add instead of two fences (step 12). The
// device code is guarded with __CUDA_ARCH__ >= 900: builds for older GPUs
// compile an empty kernel, and the host never launches it there (waiver).
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <cuda_runtime.h>
#include "common/check.cuh"
#include "common/launch.cuh"
#include "common/mbarrier.cuh"
#include "04_reduction/steps/13_reduceVec4.cuh"

namespace reduction {

constexpr int kBulkStages = 4;
constexpr int kBulkStageBytes = 32 * 1024;
constexpr int kBulkConsumerWarps = 16;
constexpr int kBulkConsumers = kBulkConsumerWarps * 32;  // threads that read the buffers
constexpr int kBulkThreads = kBulkConsumers + 32;        // + one producer warp (the last)
constexpr int kBulkVecsPerThread = kBulkStageBytes / 16 / kBulkConsumers;
constexpr size_t kBulkSmem = size_t(kBulkStages) * kBulkStageBytes + 2 * kBulkStages * sizeof(uint64_t);
// Room for the kernel's static shared variables beside the ring (block_sum's
// warp sums, the last block's flag: under 200 bytes; a test reads the real size).
constexpr size_t kBulkStaticSmem = 1024;
static_assert(kBulkStageBytes % (16 * kBulkConsumers) == 0, "every consumer reads whole 16-byte vectors");

// ---- The PTX (sm_90): mbarriers and the bulk copy (common/mbarrier.cuh) ------
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
using common::smem_address;
using common::mbarrier_init;
using common::fence_mbarrier_init;
using common::mbarrier_arrive_expect_tx;
using common::mbarrier_arrive;
using common::mbarrier_wait;
// bulk_copy_to_shared(dst, src, bytes, bar): `bytes` (a multiple of 16) from
// global `src` to shared `dst` (both 16-byte aligned) by the copy engine; the
// bytes count down `bar`'s tx-count as they land.
using common::bulk_copy_to_shared;
#endif

// ---- The kernel ------------------------------------------------------------
// reduceBulkCopy<T, kEdges>: the pipeline above. kEdges = false drops the
// head and tail loads: the planted bug of the tests, never in a kernel list.
// The split of in[0..n):
//   [0, head)            ordinary loads (up to the first 16-byte boundary)
//   [head, tail)         whole chunks of kBulkStageBytes, chunk c to block c % gridDim.x
//   [tail, n)            ordinary loads (fewer than one chunk)
// Chunks are dealt out round-robin, so at any moment the whole GPU reads one
// compact window of memory (giving each block one contiguous range instead
// measured clearly slower: README, "Worklog: tuning step 14", the data order).
// Look for: as many bytes in flight per SM as step 13 (128 KiB), all from
// ONE thread's requests; whether that beats the loads of 2048 threads.
template <class T, bool kEdges = true>
__global__ void __launch_bounds__(kBulkThreads, 1)
reduceBulkCopy(const T* __restrict__ in, size_t n, T* partial, unsigned* ticket, T* out) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    using V = typename Vec16<T>::type;
    constexpr int W = 16 / sizeof(T);                       // elements per 16 bytes
    constexpr size_t kChunk = kBulkStageBytes / sizeof(T);  // elements per chunk
    extern __shared__ __align__(128) unsigned char ring[];  // kBulkStages buffers, then the barriers
    uint64_t* full = reinterpret_cast<uint64_t*>(ring + size_t(kBulkStages) * kBulkStageBytes);
    uint64_t* empty = full + kBulkStages;

    const size_t misalign = reinterpret_cast<uintptr_t>(in) % 16 / sizeof(T);
    const size_t head = misalign ? (W - misalign < n ? W - misalign : n) : 0;
    const size_t chunks = (n - head) / kChunk;
    const size_t tail = head + chunks * kChunk;
    const T* body = in + head;  // 16-byte aligned
    const size_t mine = chunks > blockIdx.x ? (chunks - blockIdx.x + gridDim.x - 1) / gridDim.x : 0;

    const unsigned tid = threadIdx.x;
    if (tid == 0) {
        for (int s = 0; s < kBulkStages; ++s) {
            mbarrier_init(&full[s], 1);                    // the producer's arrive.expect_tx
            mbarrier_init(&empty[s], kBulkConsumers);      // one arrival per consumer thread
        }
        fence_mbarrier_init();
    }
    __syncthreads();

    T acc[kBulkVecsPerThread];
#pragma unroll
    for (int k = 0; k < kBulkVecsPerThread; ++k) acc[k] = T(0);
    if (tid >= kBulkConsumers) {  // the producer warp: one lane issues every copy
        if (tid == kBulkConsumers) {
            for (size_t j = 0; j < mine; ++j) {
                const int s = int(j % kBulkStages);
                const unsigned round = unsigned(j / kBulkStages);
                if (round > 0) mbarrier_wait(&empty[s], (round - 1) & 1);  // stage s read by every warp
                mbarrier_arrive_expect_tx(&full[s], kBulkStageBytes);
                bulk_copy_to_shared(ring + size_t(s) * kBulkStageBytes, body + (blockIdx.x + j * gridDim.x) * kChunk,
                                    kBulkStageBytes, &full[s]);
            }
        }
    } else {
        if constexpr (kEdges) {  // head and tail by ordinary loads while the first copies fly
            const size_t g = size_t(blockIdx.x) * kBulkConsumers + tid;
            if (g < head) acc[1 % kBulkVecsPerThread] += in[g];
            for (size_t i = g; i < n - tail; i += size_t(gridDim.x) * kBulkConsumers)
                acc[2 % kBulkVecsPerThread] += in[tail + i];
        }
        for (size_t j = 0; j < mine; ++j) {
            const int s = int(j % kBulkStages);
            mbarrier_wait(&full[s], unsigned(j / kBulkStages) & 1);  // the chunk has landed
            const V* buf = reinterpret_cast<const V*>(ring + size_t(s) * kBulkStageBytes);
            V v[kBulkVecsPerThread];
#pragma unroll
            for (int k = 0; k < kBulkVecsPerThread; ++k) v[k] = buf[tid + k * kBulkConsumers];  // LDS.128, no conflicts
#pragma unroll
            for (int k = 0; k < kBulkVecsPerThread; ++k) acc[k] += hsum(v[k]);
            mbarrier_arrive(&empty[s]);  // this thread has read stage s (release)
        }
    }
    T v = acc[0];
#pragma unroll
    for (int k = 1; k < kBulkVecsPerThread; ++k) v += acc[k];
    v = block_sum<kBulkThreads>(v);
    last_block_finishes<kBulkThreads, true>(v, partial, ticket, out);
#else
    (void)in, (void)n, (void)partial, (void)ticket, (void)out;  // never launched below sm_90 (waiver)
#endif
}

// ---- Where it runs -----------------------------------------------------------
// "" where g's limits allow the kernel: compute capability 9.0+ (GPU_PROFILE's)
// and a block with the ring and the static variables; else why not. No CUDA
// call: a test asks it for every preset without a GPU.
inline std::string bulk_copy_refusal(const common::Gpu& g) {
    std::string why = common::cc_refusal(90, "Hopper's bulk copy engine and mbarrier tx-counts", g);
    if (why.empty()) why = common::smem_refusal(kBulkSmem + kBulkStaticSmem, g);
    return why;
}

// The waiver: bulk_copy_refusal, then this build's code: it must be compiled
// for sm_90+ (a build for sm_80 JIT-compiled on a Hopper GPU has the empty
// kernel: its ptxVersion says so).
template <class T, bool kEdges = true>
std::string waived_reduceBulkCopy(const common::Gpu& g) {
    std::string why = bulk_copy_refusal(g);
    if (why.empty()) why = common::code_refusal(reinterpret_cast<const void*>(reduceBulkCopy<T, kEdges>), 90);
    return why;
}

// ---- The launcher ----------------------------------------------------------
// One block per SM (the ring takes most of its shared memory), no more blocks
// than whole chunks (at least one: small n is all head and tail). Where the
// ring's shared memory is refused it launches nothing and returns "" (a launch
// description is never empty); waived_reduceBulkCopy says why, and the callers
// ask it first.
template <class T, bool kEdges = true>
std::string launch_reduceBulkCopy(const T* in, size_t n, Workspace<T>& ws) {
    static const std::string refused = common::request_dynamic_smem(reduceBulkCopy<T, kEdges>, kBulkSmem);
    if (!refused.empty()) return "";
    static const size_t most = resident_grid(reduceBulkCopy<T, kEdges>, kBulkThreads, SIZE_MAX / 2, 1, kBulkSmem);
    const size_t chunks = n / (kBulkStageBytes / sizeof(T));
    const size_t grid = std::max<size_t>(1, std::min(most, chunks));
    reduceBulkCopy<T, kEdges><<<grid, kBulkThreads, kBulkSmem>>>(in, n, ws.partial, ws.ticket, ws.out);
    CHECK_LAUNCH();
    return common::launch_string(grid, kBulkThreads, kBulkSmem) + " ring " + std::to_string(kBulkStages) + "x" +
           std::to_string(kBulkStageBytes / 1024) + "K";
}

}  // namespace reduction
