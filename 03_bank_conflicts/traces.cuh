// traces.cuh - what the bank model predicts each kernel of kernels.cuh executes.
//
// A trace is every shared-memory instruction one block's warps execute, with
// each lane's byte address: the model restates each kernel's index
// arithmetic here, bank_model.cuh turns it into requests, wavefronts and
// bank conflicts, and `make profile` (ncu) is the judge of whether the two
// agree, kernel by kernel. Plain host code.
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>
#include "03_bank_conflicts/bank_model.cuh"
#include "03_bank_conflicts/kernels.cuh"

namespace bank_conflicts {

// --- the tile kernels ---------------------------------------------------------

// Where a thread's element sits in the tile, in words.
enum class At { Row, Col, RowSwizzle, ColSwizzle, RowFirst };

// (The swizzle's key is the kernels' own swizzle_key: a key changed there changes the trace too.)
template <int BX, int BY>
uint32_t tile_word(At at, int idx, int pad) {
    const int tx = idx % BX, ty = idx / BX, irow = idx / BY, icol = idx % BY;
    const int ld = BX + pad;  // words per tile row
    switch (at) {
        case At::Row: return uint32_t(ty * ld + tx);
        case At::Col: return uint32_t(icol * ld + irow);
        case At::RowSwizzle: return uint32_t(ty * ld + (tx ^ swizzle_key<BX, BY>(ty)));
        case At::ColSwizzle: return uint32_t(icol * ld + (irow ^ swizzle_key<BX, BY>(icol)));
        case At::RowFirst: return uint32_t(ty * ld);
    }
    return 0;
}

// One tile's trace: per warp, its store then its load (element size eb bytes).
template <int BX, int BY, int PAD, int EB, At ST, At LD>
std::vector<Request> trace_tile() {
    std::vector<Request> t;
    for (int w = 0; w < BX * BY / kWarpSize; ++w)
        for (bool store : {true, false}) {
            Request r;
            r.store = store;
            r.width = EB;
            for (int l = 0; l < kWarpSize; ++l)
                r.addr[l] = uint32_t(EB) * tile_word<BX, BY>(store ? ST : LD, w * kWarpSize + l, PAD);
            t.push_back(r);
        }
    return t;
}

inline std::vector<Request> trace_reverse() {
    std::vector<Request> t;
    for (int w = 0; w < kOptInThreads / kWarpSize; ++w)
        for (bool store : {true, false})
            for (int k = 0; k < kOptInPerThread; ++k) {
                Request r;
                r.store = store;
                for (int l = 0; l < kWarpSize; ++l) {
                    const int i = k * kOptInThreads + w * kWarpSize + l;
                    r.addr[l] = 4u * uint32_t(store ? i : kOptInElems - 1 - i);
                }
                t.push_back(r);
            }
    return t;
}

// --- the sweep ----------------------------------------------------------------

inline int conflict_degree(int stride) {  // gcd(stride, 32)
    int a = stride, b = kBanks;
    while (b) { const int t = a % b; a = b; b = t; }
    return a;
}

inline Addresses stride_addresses(int stride, int first_word = 0) {
    Addresses a{};
    for (int l = 0; l < kWarpSize; ++l) a[l] = 4u * uint32_t((first_word + l * stride) % kSweepWords);
    return a;
}

// Fill: kSweepWords / (threads) stores per thread, consecutive lanes on consecutive words.
inline void trace_fill(std::vector<Request>& t, int threads, int words) {
    for (int w = 0; w < threads / kWarpSize; ++w)
        for (int i = 0; i < words / threads; ++i) {
            Request r;
            r.store = true;
            for (int l = 0; l < kWarpSize; ++l) r.addr[l] = 4u * uint32_t(i * threads + w * kWarpSize + l);
            t.push_back(r);
        }
}

inline Tally tally_throughput(int stride, int iters, int blocks) {
    std::vector<Request> t;
    trace_fill(t, kSweepThreads, kSweepWords);
    for (int w = 0; w < kSweepThreads / kWarpSize; ++w) {
        Request r;
        r.addr = stride_addresses(stride);
        r.repeat = uint64_t(iters);
        t.push_back(r);
    }
    return tally(t).scale(uint64_t(blocks));
}

inline Tally tally_latency(int stride, int iters) {
    std::vector<Request> t;
    trace_fill(t, kWarpSize, kSweepWords);
    // Hop i reads words l*stride + 32i (mod 2048): the hops repeat every kSweepWords / kChainStep,
    // so one request per distinct hop, repeated (the counts do not depend on the order, and a
    // request per hop would be 2^24 of them at the largest --iters).
    constexpr int kPeriod = kSweepWords / kChainStep;
    static_assert(kSweepWords % kChainStep == 0, "the hops repeat");
    for (int i = 0; i < std::min(iters, kPeriod); ++i) {
        Request r;
        r.addr = stride_addresses(stride, (i * kChainStep) % kSweepWords);
        r.repeat = uint64_t(iters / kPeriod + (i < iters % kPeriod ? 1 : 0));
        t.push_back(r);
    }
    return tally(t);
}

}  // namespace bank_conflicts
