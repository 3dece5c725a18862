// histogram_exchange.cuh - the last histogram kernel of 02_distributed_smem:
// clusterHistExchange, an all-to-all exchange inside the cluster. The kernels
// before it (histogram_kernels.cuh) either scatter one remote atomic per
// sample (clusterHist, clusterHistVec4: random remote adds, which the
// SM-to-SM network is bad at) or have every block re-read all of its
// cluster's samples (clusterHistSliced: C reads per sample). This one reads
// each sample once and moves it once, in batches (README, "Beyond one block"):
//
//   1. read   each block loads its tile of 16384 samples (8 int4 per thread)
//   2. rank   each sample takes the next place among its warp's (or
//             half-warp's) samples for its owner block (the block holding its
//             bin's counter): a shared-memory atomic on a counter per owner
//   3. stage  a block-wide scan turns the warps' counts into one contiguous
//             segment per owner in this block's shared memory; each sample
//             is stored there as a 16-bit slot (its counter's index in the
//             owner's slice), each segment padded to 16 bytes with slot 0
//             (the owner takes those adds back at the end)
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
// Where 32-bit counters leave no room for the staging (from 655745 bins on
// the H200 up to 2^20), 16-bit ones, two to a word (kNarrow). A 16-bit count
// must never pass 65535 unseen; the block knows exactly how many slots it
// counts each round (the segment tables), so it counts with plain atomics that
// return nothing, and before the total since the last scan could let any count
// pass 65535 it scans its counters and moves every large count (>= kScanFloor)
// to global memory (narrow counters below). Beyond 2^20 bins the bins are
// split into G groups and the clusters with them (cluster k counts group k % G):
// every sample is read G times, once per group, and counted by the one that
// owns its bin.
//
// With one group, which samples a round reads is claimed, not fixed: the
// clusters and histShareAtomics, a global-atomics kernel on the SMs that no
// cluster fits on, take slices of 4096 samples from one counter (WORKLOG.md,
// step 11). On uniform data the idle SMs add ~8%; on skewed data they take little.
//
// Correct for any n >= 1 (samples before the first 16-byte boundary and after
// the last whole int4 are added straight to global memory), any bin count the
// plan admits, clamped like every other kernel. Counts are exact.
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
constexpr int kExRows = 2 * kExWarps;                // rows of counts: one per warp, or per half-warp
constexpr int kExMaxSlice = 65536;                   // counters per block: the slots are 16-bit
constexpr int kExBatch = 4;                          // 16-byte loads in flight per thread when counting
constexpr int kExSliceVecs = 1024;                   // int4 in a slice, the unit of the claims (4096 samples)
constexpr int kExTileSlices = kExVecs * kExThreads / kExSliceVecs;  // slices in a block's round
// Shared memory beside the counters: 2 staging buffers of 16-bit slots, 2
// segment tables (C + 1 starts), the warps' counts per owner, the segment
// lengths, 32 words where samples of another group take their (unused) place,
// 4 claimed rounds (one group: below).
constexpr size_t kExExtraSmem = 2 * kExStage * sizeof(uint16_t) + 2 * kExCols * sizeof(unsigned) +
                                kExRows * kExCols * sizeof(unsigned) + kExMaxCluster * sizeof(unsigned) +
                                32 * sizeof(unsigned) + 4 * sizeof(unsigned);
static_assert(kExVecs * kExThreads % kExSliceVecs == 0, "a block's round is whole slices");

// One group: which samples each round reads is not fixed in advance. The
// clusters, and histShareAtomics on the SMs the clusters leave idle, claim
// slices of 4096 samples from one counter (a cluster 4 C at a time, one
// round's worth, 16384 C samples; the share kernel one at a time), so the faster side takes more:
// where the idle SMs' global atomics are slow (skewed data, hot bins) they take
// little. launch() zeroes the counter before every launch; one histogram at a
// time per device.
__device__ unsigned g_exchange_claims;
static_assert(kExStage % 8 == 0, "each staging buffer starts on a 16-byte boundary");
static_assert(kExPer * 32 <= 1024, "a sample's place among its warp's samples for one owner fits 10 bits");
static_assert(kExRows <= 32, "one lane per row when scanning an owner's counts");
static_assert(kExWarps >= kExMaxCluster, "warps 0 .. C - 1 read one sender each");

// Narrow (16-bit) counters: a scan moves every count of kExScanFloor or more to
// global memory; from a scan on, a block may count 65536 - kExScanFloor more
// slots with atomics that return nothing, and no count can pass 65535 (4095 +
// 61440). Uniform data at 2^20 bins: a scan every 3 or 4 rounds that moves
// nothing (the counts stay near 36); skewed data: the hot counts move.
constexpr unsigned kExScanFloor = 4096;

// Counters per block: `num_bins` over C blocks and `groups` groups, at least 2
// (the division in locate(), in the kernel, needs it).
__host__ __device__ constexpr int exchange_slice(int num_bins, int c, int groups) {
    const int64_t per = (int64_t(num_bins) + int64_t(c) * groups - 1) / (int64_t(c) * groups);
    return int(per < 2 ? 2 : per);
}
// Bytes of the counters for `slice` bins: 32-bit counters, or 16-bit ones two
// to a word (narrow).
__host__ __device__ constexpr size_t exchange_counter_bytes(int slice, bool narrow) {
    return ((narrow ? size_t(slice + 1) / 2 : size_t(slice)) * 4 + 15) / 16 * 16;
}
// Bytes of shared memory a block needs for `slice` counters.
__host__ __device__ constexpr size_t exchange_smem(int slice, bool narrow = false) {
    return exchange_counter_bytes(slice, narrow) + kExExtraSmem;
}

// Narrow counters, the careful add (a round in which this block counts more
// than the budget: it cannot rely on a scan). Slots 2k and 2k + 1 share word k
// as its low and high 16 bits; slot 2k adds 1 to the word, slot 2k + 1 adds
// 65536. A count wraps at 65536 and the thread whose add it was sees it in the
// value the atomic returns; it adds 65536 to the bin in global memory. A wrap
// of the low half also carried 1 into the high half: that thread takes it back
// (subtracts 65536). Between the carry and the take-back another thread may see
// the high half one too big, so the high half is not judged by itself but by
// the whole word: the bins' true counts make the word's unbounded value low +
// 65536 * high, so the number of times it wraps past 2^32 (up: an add
// overflowed, down: a take-back borrowed) is exactly the number of times the
// high count wrapped, whatever the order of the atomics. Each such event is
// seen by the one atomic that caused it: +-65536 to the high bin.
__device__ __forceinline__ void exchange_add_checked(unsigned* words, unsigned slot, unsigned* __restrict__ bins,
                                                     unsigned real) {
    const bool high = slot & 1;
    unsigned* w = words + (slot >> 1);
    const unsigned old = atomicAdd(w, high ? 0x10000u : 1u);
    if (high ? old < 0xFFFF0000u : (old & 0xFFFFu) != 0xFFFFu) return;  // no wrap: almost always
    auto credit = [&](unsigned s, unsigned amount) {  // slots from `real` on have no bin
        if (s < real) atomicAdd(bins + s, amount);
    };
    credit(slot, 0x10000u);                      // this count wrapped
    if (high) return;                            // (and the word overflowed: that was this wrap)
    if (old == 0xFFFFFFFFu) credit(slot + 1, 0x10000u);           // the carry overflowed the word
    if (atomicSub(w, 0x10000u) < 0x10000u) credit(slot + 1, 0u - 0x10000u);  // the take-back borrowed
}

// The add of every other round: an atomic whose value nobody waits for (the
// block has made sure that no count can wrap). (Wide counters add the
// constant 1, which compiles to ATOMS.POPC.INC: all of a warp's lanes on one
// address in one step. A narrow word's high half adds 65536, so the narrow add
// is ATOMS.ADD of a selected value, one step per lane on a hot address: skewed
// data pays for it. README, "16-bit counters".)
template <bool kNarrow>
__device__ __forceinline__ void exchange_add(unsigned* words, unsigned slot) {
    if constexpr (kNarrow) atomicAdd(words + (slot >> 1), slot & 1 ? 0x10000u : 1u);
    else atomicAdd(words + slot, 1u);
}

// The round's arrive on the cluster barrier. Its one job in memory is to
// publish this block's shared-memory writes (the staged segments and their
// table) to the blocks that read them after their wait. The default arrive
// (`cluster.barrier_arrive()`, release semantics) compiles to MEMBAR.ALL.GPU
// before the arrive: a fence for global memory too, which waits for the L2
// (WORKLOG.md, step 10: 3-4% of the kernel at C = 16). A release fence
// restricted to shared::cta (PTX ISA 8.6) and a relaxed arrive order just
// what the readers need. The other direction, that every block has read a
// staging buffer before its owner rewrites it (two rounds later, after the
// next wait), holds because each value a block read from another's buffer has
// been added to a counter before the block arrives: an arrive issued after the
// atomics cannot pass loads whose data they used. (That argument is the
// hardware's in-order issue, not the PTX memory model; racecheck finds no
// hazard, and the tests count every sample exactly.)
__device__ __forceinline__ void exchange_arrive() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 && __CUDACC_VER_MAJOR__ * 100 + __CUDACC_VER_MINOR__ >= 1208
    asm volatile("fence.release.sync_restrict::shared::cta.cluster;\n\t"
                 "barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    cg::this_cluster().barrier_arrive();
#endif
}

// Planted bugs, for the tests (never in kernels()): the pipeline's drain (the
// count of the last round) left out; narrow counters never scanned.
enum class ExchangeBug { None, NoLastRound, NoScan };

// clusterHistExchange<kLog2C, kNarrow, kOneGroup>: a cluster of C = 2^kLog2C
// blocks; `groups` = G above, which kOneGroup fixes at 1 (no sample belongs to
// another group: fewer instructions per sample). kScanFloor: the narrow
// counters' scan (the tests make it tiny or huge); kBug: the planted bugs.
template <int kLog2C, bool kNarrow, bool kOneGroup, unsigned kScanFloor = kExScanFloor,
          ExchangeBug kBug = ExchangeBug::None>
__global__ void __launch_bounds__(kExThreads, 1)
clusterHistExchange(const int* __restrict__ in, size_t n, unsigned* __restrict__ hist, int num_bins, int groups) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    constexpr int C = 1 << kLog2C;
    constexpr unsigned kAll = 0xffffffffu;
    static_assert(kScanFloor >= 1 && kScanFloor <= 0x8000 && (kScanFloor & (kScanFloor - 1)) == 0,
                  "the scan tests a count's high bits");
    constexpr unsigned kBudget = 65536 - kScanFloor;  // slots a block may count from one scan to the next
    constexpr unsigned kHot = (0x10000u - kScanFloor) * 0x10001u;  // the bits of a half >= kScanFloor
    cg::cluster_group cluster = cg::this_cluster();
    const unsigned me = cluster.block_rank();
    const unsigned tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;

    // Which bins this cluster counts (its group), and which share of the samples it reads.
    if constexpr (kOneGroup) groups = 1;
    const int slice = exchange_slice(num_bins, C, groups);
    const int clusters = int(gridDim.x) >> kLog2C, cluster_id = int(blockIdx.x) >> kLog2C;
    const int group = cluster_id % groups, part = cluster_id / groups;
    const int parts = (clusters - group + groups - 1) / groups;
    const int lo = group * C * slice;                          // the group's first bin
    const unsigned span = unsigned(max(0, min(C * slice, num_bins - lo)));  // its bins
    // b / slice for every b < 2^30, exactly, in two instructions: umulhi(b, m) >> sh
    // with m = ceil(2^(32 + sh) / slice), sh = max(0, ceil(log2 slice) - 2). (The
    // error b * (m * slice - 2^(32 + sh)) / (slice * 2^(32 + sh)) is below 1 / slice,
    // and m < 2^32.)
    const int sh = max(0, 32 - __clz(slice - 1) - 2);
    const unsigned magic = unsigned(((uint64_t(1) << (32 + sh)) + slice - 1) / slice);

    // Shared memory: the counters, stage[2][kExStage] (the segments this block
    // sends), seg[2][kExCols] (where each owner's segment starts, + its padding
    // slots in bits 0-2; [C] = the end), warp_count[kExRows][kExCols] (samples
    // per row (a warp or a half-warp) and owner, then their offsets; the odd
    // row length puts a row's owners and an owner's rows in different banks;
    // column kExMaxCluster counts the tail's missing samples),
    // seg_len[kExMaxCluster], elsewhere[32]
    // (one word per lane for the samples another group counts).
    extern __shared__ __align__(16) unsigned char ex_smem[];
    unsigned* counters = reinterpret_cast<unsigned*>(ex_smem);
    uint16_t* stage = reinterpret_cast<uint16_t*>(ex_smem + exchange_counter_bytes(slice, kNarrow));
    unsigned* seg = reinterpret_cast<unsigned*>(stage + 2 * kExStage);
    unsigned* warp_count = seg + 2 * kExCols;
    unsigned* seg_len = warp_count + kExRows * kExCols;
    unsigned* elsewhere = seg_len + kExMaxCluster;
    unsigned* claims = elsewhere + 32;  // one group: rank 0's claims for rounds r .. r + 3, at [r % 4]
    auto wc = [&](unsigned owner, unsigned row) -> unsigned& { return warp_count[row * kExCols + owner]; };

    // How many of block r's slots are bins (the last blocks of the last group may have fewer, or none).
    auto real_bins = [&](unsigned r) { return unsigned(max(0, min(slice, int(span) - int(r) * slice))); };
    // A sample's owner block (kExMaxCluster: none, the sample is missing or
    // another group's) and slot, without branches. (The clamp is bin_of(), as
    // min and max: two instructions, not compares and selects.)
    auto locate = [&](int v, bool valid, unsigned& slot) {
        const unsigned b = unsigned(min(max(v, 0), num_bins - 1) - lo);  // wraps below the group: > span
        const unsigned owner = __umulhi(b, magic) >> sh;
        slot = b - owner * unsigned(slice);
        if constexpr (kOneGroup) return valid ? owner : unsigned(kExMaxCluster);  // b < span = num_bins
        slot &= 0xFFFF;  // (garbage for a sample outside the group: kept out of the place and owner bits)
        return valid && b < span ? owner : unsigned(kExMaxCluster);
    };

    for (int i = tid; i < int(exchange_counter_bytes(slice, kNarrow) / 4); i += kExThreads) counters[i] = 0;
    constexpr unsigned kRoundSlices = kExTileSlices * C;  // a cluster's round
    if (kOneGroup && me == 0 && tid == 0) {  // rounds 0, 1 and 2
        const unsigned first = atomicAdd(&g_exchange_claims, 3 * kRoundSlices);
        for (int k = 0; k < 3; ++k) claims[k] = first + k * kRoundSlices;
    }
    cluster.sync();  // every block's counters are zero before anyone reads a segment (and the claims are out)

    // The samples before the first 16-byte boundary and after the last whole
    // int4 (at most 3 + 3): straight into global memory, by the grid's first block.
    const Int4Split split = split_int4(in, n);  // (not structured bindings: lambdas below capture n4 and body)
    const size_t head = split.head, n4 = split.n4, tail = split.tail;
    const int4* body = split.body;
    if (blockIdx.x == 0 && tid < 6) {
        const size_t i = tid < 3 ? tid : tail + (tid - 3);
        if (tid < 3 ? i < head : i < n) atomicAdd(hist + bin_of(__ldg(in + i), num_bins), 1u);
    }

    // Round r reads the kRoundSlices slices from `start` on; block me slices
    // kExTileSlices me .. + kExTileSlices - 1 of them. One group: the starts
    // are claimed (rank 0 claims round r + 3 during round r; every block reads
    // the claim of round r + 2 after round r's cluster barrier). Several
    // groups: cluster part p of its group reads tile group r parts + p.
    const size_t total = (n4 + kExSliceVecs - 1) / kExSliceVecs;  // slices
    const unsigned* rank0_claims = kOneGroup ? cluster.map_shared_rank(claims, 0) : claims;
    auto static_start = [&](size_t r) { return (r * parts + part) * kRoundSlices; };
    size_t cur = kOneGroup ? rank0_claims[0] : static_start(0);
    size_t nxt = kOneGroup ? rank0_claims[1] : static_start(1);
    size_t after = kOneGroup ? rank0_claims[2] : static_start(2);  // round r + 2's

    int4 x[kExVecs];
    bool ok[kExVecs];
    unsigned packed[kExPer];  // slot (bits 0-15), place in its row for its owner (16-25), owner + half (26-31)
    unsigned base = 0;        // lane d + half (d < C): where this row's samples for owner d go, - 1024 (d + half)
    unsigned start = 0, len = 0;  // lane d < C: owner d's segment: its first slot and its samples

    // Step 1: issue the loads of the round that starts at slice `start`.
    auto load = [&](size_t start) {
        const size_t i = (start + me * kExTileSlices) * kExSliceVecs + tid;
#pragma unroll
        for (int k = 0; k < kExVecs; ++k) {
            ok[k] = i + k * kExThreads < n4;
            x[k] = ok[k] ? __ldg(body + i + k * kExThreads) : make_int4(0, 0, 0, 0);
        }
    };
    // Step 2: rank. Each sample takes the next place among its row's samples
    // for its owner: a shared-memory atomic on the row's own counter for that
    // owner returns it (the lanes with the same owner all hit one address:
    // the hardware serializes them, and that is still cheaper than finding
    // them with ballots; WORKLOG.md, step 2). A sample that is missing (past the
    // end of the input) takes a place in the row's last column; one that
    // another group counts adds to its lane's own word instead: no branch, and
    // no lanes serialized on it.
    // Step 3a: warp d scans owner d's counts over the rows; 3b: each owner's
    // segment starts after the earlier owners', rounded up to 8 slots (16
    // bytes: the readers load int4).
    // With fewer than 16 owners each half-warp ranks into a row of its own:
    // 16 lanes over C owners pile up on fewer addresses than 32 (WORKLOG.md,
    // step 9). `half` is 16 in the upper half-warp, 0 otherwise.
    constexpr bool kHalves = C < kExMaxCluster;
    constexpr int kRows = kHalves ? kExRows : kExWarps;
    const unsigned half = kHalves ? lane & 16 : 0;
    const unsigned my_row = kHalves ? 2 * warp + (lane >> 4) : warp;
    unsigned* const my_counts = warp_count + my_row * kExCols;  // this (half-)warp's row
    auto rank = [&]() {
        if ((lane & 15) < C) wc(lane & 15, my_row) = 0;  // (without halves, lanes l and l + 16 write the same 0)
        if ((lane & 15) == 0) wc(kExMaxCluster, my_row) = 0;
        __syncwarp();
#pragma unroll
        for (int e = 0; e < kExPer; ++e) {
            const int4 q = x[e / 4];
            const int v = e % 4 == 0 ? q.x : e % 4 == 1 ? q.y : e % 4 == 2 ? q.z : q.w;
            unsigned slot;
            const unsigned owner = locate(v, ok[e / 4], slot);
            unsigned before;
            if constexpr (kOneGroup) before = atomicAdd(my_counts + owner, 1u);
            else before = atomicAdd(owner < C ? my_counts + owner : elsewhere + lane, 1u) & 0x3FF;
            packed[e] = slot + before * 0x10000u + (owner + half) * 0x4000000u;  // (two multiply-adds)
        }
        __syncthreads();
        if (warp < C) {
            const unsigned c = lane < kRows ? wc(warp, lane) : 0;
            unsigned incl = c;
#pragma unroll
            for (int k = 1; k < kRows; k *= 2) {
                const unsigned up = __shfl_up_sync(kAll, incl, k);
                if (lane >= unsigned(k)) incl += up;
            }
            if (lane < kRows) wc(warp, lane) = incl - c;
            if (lane == kRows - 1) seg_len[warp] = incl;
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
        // Minus 1024 * lane: stage_round() adds place + 1024 * (owner + half) in one go.
        const unsigned o = lane & 15, start_o = __shfl_sync(kAll, start, o);
        base = (o < C ? start_o + wc(o, my_row) : 0) - 1024 * lane;
    };
    // Step 3c: store the slots into stage[buf] (bits 16-31 of a packed sample
    // are place + 1024 * (owner + half), so its position is lane owner +
    // half's base + those bits); warp 0 also writes the segment table and
    // fills each segment up to 16 bytes with slot 0 (the readers need no
    // test; the table tells the owner how many of its slot 0 adds were
    // padding, and it takes them back at the end).
    auto stage_round = [&](int buf) {
        uint16_t* out = stage + buf * kExStage;
#pragma unroll
        for (int e = 0; e < kExPer; ++e) {
            const unsigned p = packed[e];
            const unsigned at = __shfl_sync(kAll, base, p >> 26) + (p >> 16);
            if (p < (unsigned(C) + half) << 26) out[at] = uint16_t(p);  // owner < C
        }
        if (warp == 0 && lane < C) {
            const unsigned padded = (len + 7) & ~7u;
            for (unsigned k = len; k < padded; ++k) out[start + k] = 0;
            seg[buf * kExCols + lane] = start | (padded - len);
            if (lane == C - 1) seg[buf * kExCols + C] = start + padded;
        }
    };
    // Step 4: count this block's segment of stage[buf] from every block of the
    // cluster. Warps are spread over the senders (kExThreads / C threads
    // each); a thread loads 16 bytes (8 slots) at a time. Lane s < C of every
    // warp reads where sender s's segment for this block starts and ends,
    // through DSMEM, before this block stages its next round (which hides the
    // latency): the warp's own sender's, and the total this block will count
    // (the narrow counters' budget).
    const unsigned from = warp & (C - 1);
    const unsigned my_real = real_bins(me);
    // This block's bins in global memory (a block past the last bin has none: hist itself, never used).
    unsigned* my_bins = hist + (my_real > 0 ? lo + int(me) * slice : 0);
    unsigned seg_from = 0, seg_to = 0;  // lane s < C: sender s's segment for me (slots; padding in bits 0-2)
    auto read_table = [&](int buf) {
        const unsigned* table = cluster.map_shared_rank(seg + buf * kExCols, lane & (C - 1));
        seg_from = table[me];
        seg_to = table[me + 1];
    };
    unsigned pads = 0;     // slot 0 adds that were padding (every thread: the same)
    unsigned counted = 0;  // narrow: slots counted since the last scan (every thread: the same)
    // Narrow counters: move every count >= kScanFloor to global memory. Run by
    // the whole block after the cluster barrier (which every thread of this
    // block passed only after counting the previous round) and before a
    // __syncthreads() (nobody counts this round before the scan is done): no
    // other thread touches the counters meanwhile, so plain loads and stores.
    auto scan = [&]() {
        uint4* words = reinterpret_cast<uint4*>(counters);
        const unsigned quads = unsigned(exchange_counter_bytes(slice, true) / 16);
        for (unsigned i = tid; i < quads; i += kExThreads) {
            uint4 q = words[i];
            if (((q.x | q.y | q.z | q.w) & kHot) == 0) continue;  // almost always
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                unsigned& w = j == 0 ? q.x : j == 1 ? q.y : j == 2 ? q.z : q.w;
#pragma unroll
                for (int h = 0; h < 2; ++h) {
                    const unsigned c = (w >> (16 * h)) & 0xFFFF, s = 8 * i + 2 * j + h;
                    if (c < kScanFloor) continue;
                    if (s < my_real) atomicAdd(my_bins + s, c);
                    w -= c << (16 * h);
                }
            }
            words[i] = q;
        }
    };
    auto count_round = [&](int buf) {
        const unsigned first = __shfl_sync(kAll, seg_from, from) / 8, last = __shfl_sync(kAll, seg_to, from) / 8;
        const unsigned total = __reduce_add_sync(kAll, lane < C ? (seg_to / 8 - seg_from / 8) * 8 : 0);
        pads += __reduce_add_sync(kAll, lane < C ? seg_from & 7 : 0);
        // Narrow counters: a round that brings more than the budget by itself
        // (a few bins, all samples to one block) is counted carefully, whatever
        // the counts are; before any other round that would exceed the budget
        // since the last scan, a scan. `total` and `counted` are the same in
        // every thread, so is the decision (the __syncthreads() is legal).
        bool careful = false;
        if constexpr (kNarrow && kBug != ExchangeBug::NoScan) {
            careful = total > kBudget;
            if (!careful && counted + total > kBudget) {
                scan();
                __syncthreads();
                counted = 0;
            }
            counted = careful ? kBudget + 1 : counted + total;  // after a careful round: scan first
        }
        // Thread t of the kExThreads / C reading one sender takes its 16-byte
        // words t, t + kExThreads / C, ...: kExBatch loads first, then their adds.
        const uint4* src = reinterpret_cast<const uint4*>(cluster.map_shared_rank(stage + buf * kExStage, from));
        constexpr unsigned kStep = kExThreads / C;
        auto each_slot = [&](auto add) {
            for (unsigned k = first + (warp >> kLog2C) * 32 + lane; k < last; k += kExBatch * kStep) {
                uint4 q[kExBatch];
#pragma unroll
                for (int j = 0; j < kExBatch; ++j)
                    if (k + j * kStep < last) q[j] = src[k + j * kStep];
#pragma unroll
                for (int j = 0; j < kExBatch; ++j)
                    if (k + j * kStep < last)
#pragma unroll
                        for (int w = 0; w < 4; ++w) {
                            const unsigned two = w == 0 ? q[j].x : w == 1 ? q[j].y : w == 2 ? q[j].z : q[j].w;
                            add(two & 0xFFFF);
                            add(two >> 16);
                        }
            }
        };
        if (careful) each_slot([&](unsigned slot) { exchange_add_checked(counters, slot, my_bins, my_real); });
        else each_slot([&](unsigned slot) { exchange_add<kNarrow>(counters, slot); });
    };

    // The pipeline (the comment at the top of this file). Every block of a
    // cluster sees the same starts, so runs the same rounds.
    if (cur < total) {
        load(cur);
        rank();
    }
    size_t rounds = 0;
    for (size_t r = 0; cur < total; ++r, ++rounds) {
        const int buf = int(r & 1);
        if (nxt < total) load(nxt);        // in flight during the exchange below
        unsigned claim = 0;                // one group, rank 0: round r + 3's (used only at the arrive)
        if (kOneGroup && me == 0 && tid == 0) claim = atomicAdd(&g_exchange_claims, kRoundSlices);
        if (r > 0) {
            cluster.barrier_wait();        // round r - 1 staged everywhere, stage[buf] free everywhere
            read_table(buf ^ 1);
            if constexpr (kOneGroup) after = rank0_claims[(r + 2) & 3];  // rank 0 wrote it in round r - 1
        }
        stage_round(buf);
        if (r > 0) count_round(buf ^ 1);
        if (kOneGroup && me == 0 && tid == 0) claims[(r + 3) & 3] = claim;  // (everyone read [(r - 1) % 4])
        exchange_arrive();                 // release: my stage[buf] is complete, I have read round r - 1
        if (nxt < total) rank();
        cur = nxt;
        nxt = after;
        if constexpr (!kOneGroup) after = static_start(r + 3);
    }
    if (rounds > 0) {
        cluster.barrier_wait();
        read_table(int((rounds - 1) & 1));
        if (kBug != ExchangeBug::NoLastRound) count_round(int((rounds - 1) & 1));
    }
    cluster.sync();  // every block has counted (and no block exits while another reads its staging)

    for (unsigned i = tid; i < my_real; i += kExThreads) {
        unsigned c = kNarrow ? (counters[i / 2] >> (16 * (i & 1))) & 0xFFFF : counters[i];
        if (i == 0) c -= pads;  // slot 0 also counted the padding
        if (c) atomicAdd(my_bins + i, c);
    }
#else
    (void)in, (void)n, (void)hist, (void)num_bins, (void)groups;
#endif
}

// histShareAtomics: the SMs that no cluster of the exchange fits on (7
// clusters of 16 leave 20 of the H200's 132 idle) count slices with global
// atomics, claimed from the same counter as the clusters', one slice ahead
// (thread 0 claims the next while the block counts this one). The same
// body as the exchange's: the samples after its head, in whole int4 (the
// exchange's first block adds the head and the tail).
__global__ void __launch_bounds__(kExThreads)
histShareAtomics(const int* __restrict__ in, size_t n, unsigned* __restrict__ hist, int num_bins) {
    __shared__ unsigned claimed[2];
    const Int4Split split = split_int4(in, n);
    const size_t n4 = split.n4, total = (n4 + kExSliceVecs - 1) / kExSliceVecs;
    const int4* body = split.body;
    if (threadIdx.x == 0) claimed[0] = atomicAdd(&g_exchange_claims, 1u);
    __syncthreads();
    for (int k = 0;; ++k) {
        const size_t slice = claimed[k & 1];
        if (slice >= total) break;  // (the same for every thread)
        if (threadIdx.x == 0) claimed[(k + 1) & 1] = atomicAdd(&g_exchange_claims, 1u);
        for (size_t i = slice * kExSliceVecs + threadIdx.x; i < min(n4, (slice + 1) * kExSliceVecs); i += kExThreads) {
            const int4 q = __ldg(body + i);
            atomicAdd(hist + bin_of(q.x, num_bins), 1u);
            atomicAdd(hist + bin_of(q.y, num_bins), 1u);
            atomicAdd(hist + bin_of(q.z, num_bins), 1u);
            atomicAdd(hist + bin_of(q.w, num_bins), 1u);
        }
        __syncthreads();  // claimed[(k + 1) % 2] is out, and everyone has read claimed[k % 2]
    }
}

}  // namespace distributed_smem
