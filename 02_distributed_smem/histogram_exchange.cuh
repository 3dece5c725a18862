// histogram_exchange.cuh - the last histogram kernel of 02_distributed_smem:
// clusterHistExchange, an all-to-all exchange inside the cluster. The kernels
// before it (histogram_kernels.cuh) either scatter one remote atomic per
// sample (clusterHist, clusterHistVec4: random remote adds, which the
// SM-to-SM network is bad at) or have every block re-read all of its
// cluster's samples (clusterHistSliced: C reads per sample). This one reads
// each sample once and moves it once, in batches (README, "Beyond one block"):
//
//   1. read   each block loads its tile of 16384 samples (8 int4 per thread)
//   2. rank   each sample takes the next place among its warp's samples for
//             its owner block (the block holding its bin's counter): a
//             shared-memory atomic on the warp's counter for that owner
//   3. stage  a block-wide scan turns the warps' counts into one contiguous
//             segment per owner in this block's shared memory; each sample
//             is stored there as a 16-bit slot (its counter's index in the
//             owner's slice), each segment padded to 16 bytes
//   4. count  after a cluster barrier, every block reads ITS segment from every
//             block of the cluster (C - 1 of them through DSMEM, 16-byte
//             loads) and adds each slot with a local shared-memory atomic
//
// So a sample costs one 4-byte read from HBM, one 2-byte store and one 2-byte
// read of shared memory (remote with probability (C - 1) / C), and two local
// atomics: the remote traffic is contiguous 16-byte loads, which the network
// is good at, instead of scattered 4-byte atomics, which it is not. This is
// the all-to-all that distributed sorts (each block sends each key to the
// block owning its range) and mixture-of-experts token routing (each token
// to its expert's block) are made of.
//
// Rounds overlap: the loads of tile r + 1 are in flight while tile r is
// exchanged; the staging area is double-buffered, so one cluster barrier per
// round, split into arrive (after this block's segments are written and the
// previous round is counted) and wait (before reading the others'), is all
// the synchronization between blocks:
//   load r+1; wait(r-1); stage r into stage[r % 2]; count everyone's
//   stage[(r-1) % 2]; arrive(r); rank r+1; ...
// A block rewrites stage[r % 2] (round r + 2) only after wait(r + 1), that
// is after every block has arrived (r + 1), which each does only after it
// finished counting round r.
//
// Where 32-bit counters leave no room for the staging (929792 bins on the
// H200), 16-bit ones, two to a word (kNarrow, exchange_add below). Beyond
// that the bins are split into G groups and the clusters with them (cluster
// k counts group k % G): every sample is read G times, once per group, and
// counted by the one that owns its bin.
//
// Correct for any n >= 1 (samples before the first 16-byte boundary and after
// the last whole int4 are added directly with remote atomics), any bin count
// the plan admits, clamped like every other kernel. Counts are exact.
#pragma once
#include <cstdint>
#include <cooperative_groups.h>
#include <cuda_runtime.h>
#include "02_distributed_smem/histogram_kernels.cuh"

namespace distributed_smem {

constexpr int kExThreads = 512;                      // per block (one block per SM)
constexpr int kExWarps = kExThreads / 32;
constexpr int kExVecs = 8;                           // int4 per thread per round
constexpr int kExPer = 4 * kExVecs;                  // samples per thread per round
constexpr int kExTile = kExThreads * kExPer;         // samples per block per round
constexpr int kExMaxCluster = 16;
constexpr int kExStage = kExTile + kExMaxCluster * 7;  // slots per staging buffer: samples + padding
constexpr int kExCols = kExMaxCluster + 1;           // a row of per-owner counts (odd: no bank conflicts)
// Shared memory beside the counters: 2 staging buffers of 16-bit slots, 2
// segment tables (C + 1 starts), the warps' counts per owner, the segment
// lengths, 32 words where samples of another group take their (unused) place.
constexpr size_t kExExtraSmem = 2 * kExStage * sizeof(uint16_t) + 2 * kExCols * sizeof(unsigned) +
                                kExWarps * kExCols * sizeof(unsigned) + kExMaxCluster * sizeof(unsigned) +
                                32 * sizeof(unsigned);
static_assert(kExStage % 8 == 0, "each staging buffer starts on a 16-byte boundary");
static_assert(kExPer * 32 <= 1024, "a sample's place among its warp's samples for one owner fits 10 bits");

// Bytes of the counters for `slice` bins: one more counter (slot `slice`)
// takes the padding; 32-bit counters, or 16-bit ones two to a word (narrow).
__host__ __device__ constexpr size_t exchange_counter_bytes(int slice, bool narrow) {
    return ((narrow ? size_t(slice + 2) / 2 : size_t(slice + 1)) * 4 + 15) / 16 * 16;
}
// Bytes of shared memory a block needs for `slice` counters.
__host__ __device__ constexpr size_t exchange_smem(int slice, bool narrow = false) {
    return exchange_counter_bytes(slice, narrow) + kExExtraSmem;
}

// Narrow counters (kNarrow: where 32-bit ones leave no room for the staging,
// the largest bin counts). Slots 2k and 2k + 1 share word k as its low and
// high 16 bits; slot 2k adds 1 to the word, slot 2k + 1 adds 65536. A count
// wraps at 65536 and the thread whose add it was sees it in the value the
// atomic returns; it adds 65536 to the bin in global memory. A wrap of the
// low half also carried 1 into the high half: that thread takes it back
// (subtracts 65536). Between the carry and the take-back another thread may
// see the high half one too big, so the high half is not judged by itself
// but by the whole word: the bins' true counts make the word's unbounded
// value low + 65536 * high, so the number of times it wraps past 2^32 (up:
// an add overflowed, down: a take-back borrowed) is exactly the number of
// times the high count wrapped, whatever the order of the atomics. Each such
// event is seen by the one atomic that caused it: +-65536 to the high bin.
template <bool kNarrow>
__device__ __forceinline__ void exchange_add(unsigned* words, unsigned slot, unsigned* __restrict__ bins,
                                             unsigned real) {
    if constexpr (!kNarrow) {
        atomicAdd(words + slot, 1u);
    } else {
        const bool high = slot & 1;
        unsigned* w = words + (slot >> 1);
        const unsigned old = atomicAdd(w, high ? 0x10000u : 1u);
        if (high ? old < 0xFFFF0000u : (old & 0xFFFFu) != 0xFFFFu) return;  // no wrap: almost always
        auto credit = [&](unsigned s, unsigned amount) {  // slots from `real` on (the padding) have no bin
            if (s < real) atomicAdd(bins + s, amount);
        };
        credit(slot, 0x10000u);                      // this count wrapped
        if (high) return;                            // (and the word overflowed: that was this wrap)
        if (old == 0xFFFFFFFFu) credit(slot + 1, 0x10000u);           // the carry overflowed the word
        if (atomicSub(w, 0x10000u) < 0x10000u) credit(slot + 1, 0u - 0x10000u);  // the take-back borrowed
    }
}

// clusterHistExchange<kLog2C, kNarrow, kLastRound>: a cluster of C = 2^kLog2C
// blocks; `groups` = G above. kLastRound = false is the planted bug: the
// pipeline's drain (counting the last round after the loop) left out.
template <int kLog2C, bool kNarrow = false, bool kLastRound = true>
__global__ void __launch_bounds__(kExThreads, 1)
clusterHistExchange(const int* __restrict__ in, size_t n, unsigned* __restrict__ hist, int num_bins, int groups) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    constexpr int C = 1 << kLog2C;
    constexpr unsigned kAll = 0xffffffffu;
    cg::cluster_group cluster = cg::this_cluster();
    const unsigned me = cluster.block_rank();
    const unsigned tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;

    // Which bins this cluster counts (its group), and which share of the samples it reads.
    const int slice = int((int64_t(num_bins) + int64_t(C) * groups - 1) / (int64_t(C) * groups));
    const int clusters = int(gridDim.x) >> kLog2C, cluster_id = int(blockIdx.x) >> kLog2C;
    const int group = cluster_id % groups, part = cluster_id / groups;
    const int parts = (clusters - group + groups - 1) / groups;
    const int lo = group * C * slice;                          // the group's first bin
    const unsigned span = unsigned(max(0, min(C * slice, num_bins - lo)));  // its bins
    // b / slice for b < 2^30: q = umulhi(2b, ceil(2^31 / slice)) is b / slice or one more.
    const unsigned magic = unsigned(((uint64_t(1) << 31) + slice - 1) / slice);

    // Shared memory: the counters (+ 1 for the padding), stage[2][kExStage]
    // (the segments this block sends), seg[2][kExCols] (where each owner's
    // segment starts; [C] = the end), warp_count[kExWarps][kExCols] (samples
    // per warp and owner, then their offsets; the odd row length puts a warp's
    // owners and an owner's warps in different banks), seg_len[kExMaxCluster],
    // elsewhere[32] (one word per lane for the samples another group counts).
    extern __shared__ __align__(16) unsigned char ex_smem[];
    unsigned* counters = reinterpret_cast<unsigned*>(ex_smem);
    uint16_t* stage = reinterpret_cast<uint16_t*>(ex_smem + exchange_counter_bytes(slice, kNarrow));
    unsigned* seg = reinterpret_cast<unsigned*>(stage + 2 * kExStage);
    unsigned* warp_count = seg + 2 * kExCols;
    unsigned* seg_len = warp_count + kExWarps * kExCols;
    unsigned* elsewhere = seg_len + kExMaxCluster;
    auto wc = [&](unsigned owner, unsigned w) -> unsigned& { return warp_count[w * kExCols + owner]; };

    // How many of block r's slots are bins (the last blocks of the last group may have fewer, or none).
    auto real_bins = [&](unsigned r) { return unsigned(max(0, min(slice, int(span) - int(r) * slice))); };
    // A sample's owner block (kExMaxCluster: not this group's) and slot, without branches.
    auto locate = [&](int v, bool valid, unsigned& slot) {
        const unsigned b = unsigned(bin_of(v, num_bins) - lo);  // wraps below the group: > span
        unsigned owner = __umulhi(b * 2, magic);
        owner -= owner * unsigned(slice) > b;
        slot = b - owner * unsigned(slice);
        return valid && b < span ? owner : unsigned(kExMaxCluster);
    };

    for (int i = tid; i < int(exchange_counter_bytes(slice, kNarrow) / 4); i += kExThreads) counters[i] = 0;
    cluster.sync();  // every block's counters are zero before anyone adds to them

    // The samples before the first 16-byte boundary and after the last whole
    // int4 (at most 3 + 3): straight into their owner's counter through DSMEM.
    const size_t head = min(size_t((16 - (reinterpret_cast<uintptr_t>(in) & 15)) & 15) / 4, n);
    const size_t n4 = (n - head) / 4;
    const size_t tail = head + n4 * 4;
    if (part == 0 && me == 0 && tid < 6) {
        const size_t i = tid < 3 ? tid : tail + (tid - 3);
        const bool valid = tid < 3 ? i < head : i < n;
        unsigned slot;
        const unsigned owner = locate(valid ? __ldg(in + i) : 0, valid, slot);
        if (owner < C)
            exchange_add<kNarrow>(cluster.map_shared_rank(counters, owner), slot, hist + lo + owner * slice,
                                  real_bins(owner));
    }

    const int4* body = reinterpret_cast<const int4*>(in + head);
    const size_t tiles = (n4 + kExVecs * kExThreads - 1) / (kExVecs * kExThreads);
    const size_t per_round = size_t(parts) * C;
    const size_t rounds = (tiles + per_round - 1) / per_round;  // the same for every block of the cluster

    int4 x[kExVecs];
    bool ok[kExVecs];
    unsigned packed[kExPer];  // slot (bits 0-15), place among the warp's samples for its owner (16-25), owner (26-30)
    unsigned base = 0;        // lane d < C: where this warp's samples for owner d go in stage[]
    unsigned start = 0, len = 0;  // lane d < C: owner d's segment: its first slot and its samples

    // Step 1: issue the loads of round r (tile (r * parts + part) * C + me).
    auto load = [&](size_t r) {
        const size_t i = ((r * parts + part) * C + me) * (kExVecs * kExThreads) + tid;
#pragma unroll
        for (int k = 0; k < kExVecs; ++k) {
            ok[k] = i + k * kExThreads < n4;
            x[k] = ok[k] ? __ldg(body + i + k * kExThreads) : make_int4(0, 0, 0, 0);
        }
    };
    // Step 2: rank. Each sample takes the next place among its warp's samples
    // for its owner: a shared-memory atomic on the warp's own counter for that
    // owner returns it (the lanes with the same owner all hit one address:
    // the hardware serializes them, and that is still cheaper than finding
    // them with ballots; README worklog). A sample another group counts adds
    // to its lane's own word instead: no branch, and no lanes serialized on it.
    // Step 3a: warp d scans owner d's counts over the warps; 3b: each owner's
    // segment starts after the earlier owners', rounded up to 8 slots (16
    // bytes: the readers load int4).
    auto rank = [&]() {
        if (lane < C) wc(lane, warp) = 0;
        __syncwarp();
#pragma unroll
        for (int e = 0; e < kExPer; ++e) {
            const int4 q = x[e / 4];
            const int v = e % 4 == 0 ? q.x : e % 4 == 1 ? q.y : e % 4 == 2 ? q.z : q.w;
            unsigned slot;
            const unsigned owner = locate(v, ok[e / 4], slot);
            const unsigned before = atomicAdd(owner < C ? &wc(owner, warp) : elsewhere + lane, 1u);
            packed[e] = slot | (before & 0x3FF) << 16 | owner << 26;
        }
        __syncthreads();
        if (warp < C) {
            const unsigned c = lane < kExWarps ? wc(warp, lane) : 0;
            unsigned incl = c;
#pragma unroll
            for (int k = 1; k < kExWarps; k *= 2) {
                const unsigned up = __shfl_up_sync(kAll, incl, k);
                if (lane >= unsigned(k)) incl += up;
            }
            if (lane < kExWarps) wc(warp, lane) = incl - c;
            if (lane == kExWarps - 1) seg_len[warp] = incl;
        }
        __syncthreads();
        len = lane < C ? seg_len[lane] : 0;
        unsigned incl = (len + 7) & ~7u;
#pragma unroll
        for (int k = 1; k < C; k *= 2) {
            const unsigned up = __shfl_up_sync(kAll, incl, k);
            if (lane >= unsigned(k)) incl += up;
        }
        start = incl - ((len + 7) & ~7u);
        base = lane < C ? start + wc(lane, warp) : 0;
    };
    // Step 3c: store the slots into stage[buf]; warp 0 also writes the
    // segment table and fills each segment up to 16 bytes with slot `slice`
    // (a counter nobody flushes: the readers need no test).
    auto stage_round = [&](int buf) {
        uint16_t* out = stage + buf * kExStage;
#pragma unroll
        for (int e = 0; e < kExPer; ++e) {
            const unsigned p = packed[e], owner = p >> 26;
            const unsigned at = __shfl_sync(kAll, base, owner & (C - 1)) + ((p >> 16) & 0x3FF);
            if (owner < C) out[at] = uint16_t(p);
        }
        if (warp == 0 && lane < C) {
            for (unsigned k = len; k < ((len + 7) & ~7u); ++k) out[start + k] = uint16_t(slice);
            seg[buf * kExCols + lane] = start;
            if (lane == C - 1) seg[buf * kExCols + C] = start + ((len + 7) & ~7u);
        }
    };
    // Step 4: count this block's segment of stage[buf] from every block of the
    // cluster. Warps are spread over the senders (kExThreads / C threads
    // each); a thread loads 16 bytes (8 slots) at a time. `first` and `last`
    // are loaded (from the sender's table, through DSMEM) before this block
    // stages its next round, which hides their latency.
    const unsigned from = warp & (C - 1);
    unsigned* my_bins = hist + lo + int(me) * slice;  // this block's bins in global memory
    const unsigned my_real = real_bins(me);
    auto count_round = [&](int buf, unsigned first, unsigned last) {
        const uint4* src = reinterpret_cast<const uint4*>(cluster.map_shared_rank(stage + buf * kExStage, from));
        for (unsigned k = first + (warp >> kLog2C) * 32 + lane; k < last; k += kExThreads / C) {
            const uint4 q = src[k];
#pragma unroll
            for (int w = 0; w < 4; ++w) {
                const unsigned two = w == 0 ? q.x : w == 1 ? q.y : w == 2 ? q.z : q.w;
                exchange_add<kNarrow>(counters, two & 0xFFFF, my_bins, my_real);
                exchange_add<kNarrow>(counters, two >> 16, my_bins, my_real);
            }
        }
    };

    // The pipeline (the comment at the top of this file).
    if (rounds > 0) {
        load(0);
        rank();
    }
    for (size_t r = 0; r < rounds; ++r) {
        const int buf = int(r & 1);
        if (r + 1 < rounds) load(r + 1);  // in flight during the exchange below
        unsigned first = 0, last = 0;
        if (r > 0) {
            cluster.barrier_wait();        // round r - 1 staged everywhere, stage[buf] free everywhere
            const unsigned* table = cluster.map_shared_rank(seg + (buf ^ 1) * kExCols, from);
            first = table[me] / 8;
            last = table[me + 1] / 8;
        }
        stage_round(buf);
        if (r > 0) count_round(buf ^ 1, first, last);
        (void)cluster.barrier_arrive();    // release: my stage[buf] is complete, I have read round r - 1
        if (r + 1 < rounds) rank();
    }
    if (rounds > 0) {
        cluster.barrier_wait();
        const unsigned* table = cluster.map_shared_rank(seg + int((rounds - 1) & 1) * kExCols, from);
        if (kLastRound) count_round(int((rounds - 1) & 1), table[me] / 8, table[me + 1] / 8);
    }
    cluster.sync();  // every block has counted (and no block exits while another reads its staging)

    for (unsigned i = tid; i < my_real; i += kExThreads) {
        const unsigned c = kNarrow ? (counters[i / 2] >> (16 * (i & 1))) & 0xFFFF : counters[i];
        if (c) atomicAdd(my_bins + i, c);
    }
#else
    (void)in, (void)n, (void)hist, (void)num_bins, (void)groups;
#endif
}

}  // namespace distributed_smem
