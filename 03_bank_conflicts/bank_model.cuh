// bank_model.cuh - how many shared-memory wavefronts one warp instruction needs.
//
// Plain C++ (no CUDA code; .cuh only so that the Makefile tracks it): the
// model is unit-tested on any machine, and the same code predicts the
// counters `make profile` reads from the GPU.
//
// Today's GPUs (since Maxwell; checked on the H200): shared memory is 32 banks of
// 4 bytes; byte address a lives in bank (a / 4) % 32. Each cycle the banks
// deliver one 4-byte word each: 128 bytes, one *wavefront*. A warp's request
// needs as many wavefronts as the busiest bank has *different* words to
// deliver; lanes that want the same word share it (a broadcast on loads; on
// stores one lane's value wins). That count is the conflict degree: 1 is
// conflict-free, 32 is fully serialized.
//
// Wider accesses move more than 128 bytes per warp, so the hardware splits
// them into phases of consecutive lanes that fit one wavefront each:
// 8-byte accesses in two halves of 16 lanes, 16-byte accesses in four
// quarters of 8 lanes. Conflicts only count inside a phase, and a phase
// with no active lane costs nothing.
//
// One exception, found with the random probes of `make profile` on the H200
// (and described for Volta/Turing on NVIDIA's developer forum,
// https://forums.developer.nvidia.com/t/unexpected-shared-memory-bank-conflict/77228/2): a wide LOAD in which
// every pair of active lanes n and n^1 (or every pair n and n^2) reads the
// same address carries half the data, and the hardware serves twice as many
// lanes per phase: an 8-byte load in one phase of 32 lanes, a 16-byte load
// in two of 16. A broadcast is such a load. Stores never merge.
//
// Kepler's optional 8-byte bank mode (seed 004's cache[0] / cache[65]
// example; the API that selected it is deprecated and ignored since Maxwell)
// is modelled by wavefronts_8byte_banks(), for comparison only.
#pragma once
#include <array>
#include <cstdint>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace bank_conflicts {

constexpr int kWarpSize = 32;
constexpr int kBanks = 32;
constexpr int kBankBytes = 4;
constexpr uint32_t kFullMask = 0xffffffffu;

using Addresses = std::array<uint32_t, kWarpSize>;  // byte offset of each lane's access

inline void check_access(const uint32_t* addr, int width, uint32_t mask) {
    if (width != 4 && width != 8 && width != 16)
        throw std::invalid_argument("access width must be 4, 8 or 16 bytes, got " + std::to_string(width));
    for (int l = 0; l < kWarpSize; ++l)
        if ((mask >> l & 1u) && addr[l] % width != 0)
            throw std::invalid_argument("lane " + std::to_string(l) + ": address " + std::to_string(addr[l]) +
                                        " is not aligned to its width " + std::to_string(width));
}

enum class Op { Load, Store };

// Every active lane n has the same address as lane n ^ x, where that lane is active too.
inline bool lanes_paired(const uint32_t* addr, uint32_t mask, int x) {
    for (int l = 0; l < kWarpSize; ++l)
        if ((mask >> l & 1u) && (mask >> (l ^ x) & 1u) && addr[l] != addr[l ^ x]) return false;
    return true;
}

// Lanes served together, one phase at a time: 32 for 4-byte accesses, 16 for
// 8-byte, 8 for 16-byte; doubled for wide loads whose lanes pair up.
inline int lanes_per_phase(const uint32_t* addr, int width, uint32_t mask, Op op) {
    const int n = kBanks * kBankBytes / width;
    const bool merged = op == Op::Load && width > 4 && (lanes_paired(addr, mask, 1) || lanes_paired(addr, mask, 2));
    return merged ? 2 * n : n;
}

// The conflict degree of one phase: the most different 4-byte words any one
// bank must deliver to the phase's active lanes.
inline int phase_wavefronts(const uint32_t* addr, int width, uint32_t mask, int first, int count) {
    std::set<uint32_t> words[kBanks];
    for (int l = first; l < first + count; ++l) {
        if (!(mask >> l & 1u)) continue;
        for (int k = 0; k < width / kBankBytes; ++k) {
            const uint32_t w = addr[l] / kBankBytes + k;
            words[w % kBanks].insert(w);
        }
    }
    int most = 0;
    for (const auto& s : words) most = std::max(most, int(s.size()));
    return most;
}

// Wavefronts the whole warp instruction needs on today's GPUs.
inline int wavefronts(const uint32_t* addr, int width, uint32_t mask = kFullMask, Op op = Op::Load) {
    check_access(addr, width, mask);
    const int n = lanes_per_phase(addr, width, mask, op);
    int total = 0;
    for (int first = 0; first < kWarpSize; first += n) total += phase_wavefronts(addr, width, mask, first, n);
    return total;
}
inline int wavefronts(const Addresses& a, int width, uint32_t mask = kFullMask, Op op = Op::Load) {
    return wavefronts(a.data(), width, mask, op);
}

// The conflict-free cost of the same instruction: one wavefront per phase
// that has an active lane. wavefronts() - ideal_wavefronts() is what Nsight
// Compute reports as bank conflicts.
inline int ideal_wavefronts(const uint32_t* addr, int width, uint32_t mask = kFullMask, Op op = Op::Load) {
    check_access(addr, width, mask);
    const int n = lanes_per_phase(addr, width, mask, op);
    int phases = 0;
    for (int first = 0; first < kWarpSize; first += n)
        if ((n == 32 ? mask : (mask >> first) & ((1u << n) - 1u)) != 0) ++phases;
    return phases;
}
inline int ideal_wavefronts(const Addresses& a, int width, uint32_t mask = kFullMask, Op op = Op::Load) {
    return ideal_wavefronts(a.data(), width, mask, op);
}

// Kepler's 8-byte bank mode: 32 banks of 8 bytes, bank = (a / 8) % 32, and
// lanes touching the same 8-byte word never conflict. A warp's 4- and 8-byte
// accesses form one phase (256 bytes a cycle). Only for comparison: no GPU a
// current CUDA supports has this mode.
inline int wavefronts_8byte_banks(const uint32_t* addr, int width, uint32_t mask = kFullMask) {
    check_access(addr, width, mask);
    if (width == 16) throw std::invalid_argument("the 8-byte bank model covers 4- and 8-byte accesses");
    std::set<uint32_t> words[kBanks];
    for (int l = 0; l < kWarpSize; ++l)
        if (mask >> l & 1u) words[(addr[l] / 8) % kBanks].insert(addr[l] / 8);
    int most = 0;
    for (const auto& s : words) most = std::max(most, int(s.size()));
    return most;
}
inline int wavefronts_8byte_banks(const Addresses& a, int width, uint32_t mask = kFullMask) {
    return wavefronts_8byte_banks(a.data(), width, mask);
}

// ---------------------------------------------------------------------------
// Whole kernels: a trace is every shared-memory instruction one block's
// warps execute; a Tally adds up what the model predicts for it.
// ---------------------------------------------------------------------------

struct Request {
    bool store = false;
    int width = 4;
    uint32_t mask = kFullMask;
    Addresses addr{};
    uint64_t repeat = 1;  // the same instruction executed this many times (a loop)
};

struct Tally {
    uint64_t ld_requests = 0, st_requests = 0;    // warp instructions (ncu: smsp__inst_executed_op_shared_*)
    uint64_t ld_wavefronts = 0, st_wavefronts = 0;
    uint64_t ld_conflicts = 0, st_conflicts = 0;  // wavefronts beyond the conflict-free minimum
    uint64_t ld_8byte_mode = 0;                   // load wavefronts under Kepler's 8-byte banks (4/8-byte loads)

    void add(const Request& r) {
        const Op op = r.store ? Op::Store : Op::Load;
        const uint64_t wf = uint64_t(wavefronts(r.addr, r.width, r.mask, op)) * r.repeat;
        const uint64_t extra = wf - uint64_t(ideal_wavefronts(r.addr, r.width, r.mask, op)) * r.repeat;
        if (r.store) {
            st_requests += r.repeat;
            st_wavefronts += wf;
            st_conflicts += extra;
        } else {
            ld_requests += r.repeat;
            ld_wavefronts += wf;
            ld_conflicts += extra;
            if (r.width <= 8) ld_8byte_mode += uint64_t(wavefronts_8byte_banks(r.addr, r.width, r.mask)) * r.repeat;
        }
    }
    Tally& scale(uint64_t k) {  // the same work done by k blocks
        for (uint64_t* v : {&ld_requests, &st_requests, &ld_wavefronts, &st_wavefronts, &ld_conflicts,
                            &st_conflicts, &ld_8byte_mode})
            *v *= k;
        return *this;
    }
    double ld_per_request() const { return ld_requests ? double(ld_wavefronts) / ld_requests : 0; }
    double st_per_request() const { return st_requests ? double(st_wavefronts) / st_requests : 0; }
};

inline Tally tally(const std::vector<Request>& trace) {
    Tally t;
    for (const Request& r : trace) t.add(r);
    return t;
}

}  // namespace bank_conflicts
