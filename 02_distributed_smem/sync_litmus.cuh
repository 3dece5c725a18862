// sync_litmus.cuh - part 2 of 02_distributed_smem, section 1: the message-passing (MP) and
// store-buffering (SB) litmus tests between two blocks on different SMs (kernels in
// sync_kernels.cuh), run, counted and reported.
#pragma once
#include <algorithm>
#include <string>
#include <vector>
#include <cuda_runtime.h>
#include "02_distributed_smem/sync_kernels.cuh"
#include "02_distributed_smem/sync_report.cuh"
#include "common/buffer.cuh"
#include "common/check.cuh"
#include "common/device.cuh"
#include "common/launch.cuh"
#include "common/report.hpp"
#include "common/timer.cuh"

namespace distributed_smem::sync {

// Dynamic shared memory that lets only one block fit on an SM: the two blocks of a litmus pair
// then run on different SMs, and a grid of at most #SMs blocks is all resident at once. Under a
// GPU_PROFILE with less shared memory per block than half this GPU's SM, blocks may share an SM
// (the results count such pairs); the launch never asks for more than the profile allows.
// Sized to fit, so common::request_dynamic_smem should never refuse it; where it does, the
// launchers (launch_mp, launch_sb, run_wait) launch nothing and say why, and the row says FAIL.
inline size_t one_block_per_sm_smem(const common::DeviceInfo&) {
    const common::Gpu& g = common::gpu();
    return std::min(g.smem_per_sm / 2 + 1024, g.smem_per_block - 1024);  // room for the static variables
}

// clock64() budget of every bounded wait: about 1 s at the H200's ~2 GHz. A wait that works ends in
// microseconds; the budget is this generous for runs under compute-sanitizer (`make sanitize` runs
// the quick subset), where every instruction is much slower.
constexpr long long kWaitBudgetCycles = 2'000'000'000;

// ---------------------------------------------------------------------------------------------
// Litmus tests.
struct LitmusResult {
    std::string refused;  // why nothing was launched; "" when the test ran
    unsigned long long instances = 0, weak = 0, timeouts = 0;
    unsigned long long outcome[4] = {0, 0, 0, 0};  // SB: (r1,r2) = (0,0) (0,1) (1,0) (1,1)
    int pairs = 0, same_sm_pairs = 0, distinct_sms = 0;
    double ms = 0;
    std::string launch;  // the launch column: two blocks per pair, one block per SM
};

struct LitmusShape {
    int pairs, lanes, rounds;
    unsigned long long instances() const { return (unsigned long long)pairs * lanes * rounds; }
};
// At least `min_instances` instances on pairs of blocks, one block per SM.
inline LitmusShape litmus_shape(const common::DeviceInfo& dev, unsigned long long min_instances) {
    LitmusShape s;
    s.pairs = std::max(1, std::min(dev.sms / 2, 64));
    s.lanes = 32;
    s.rounds = int((min_instances + s.pairs * s.lanes - 1) / (s.pairs * s.lanes));
    return s;
}

// Each launches one litmus run: "" once launched, else why not (nothing launched).
template <Order O>
inline std::string launch_mp(const LitmusShape& s, size_t smem, int* data, int* flag, unsigned* meet,
                             unsigned long long* counts, unsigned* sm) {
    const std::string why = common::request_dynamic_smem(litmusMessagePassing<O>, smem);
    if (!why.empty()) return why;
    litmusMessagePassing<O><<<2 * s.pairs, s.lanes, smem>>>(data, flag, meet, s.rounds, kWaitBudgetCycles, counts, sm);
    CHECK_LAUNCH();
    return "";
}
template <Order O>
inline std::string launch_sb(const LitmusShape& s, size_t smem, int* x, int* y, unsigned* meet, int* ra, int* rb,
                             unsigned long long* counts, unsigned* sm) {
    const std::string why = common::request_dynamic_smem(litmusStoreBuffering<O>, smem);
    if (!why.empty()) return why;
    litmusStoreBuffering<O><<<2 * s.pairs, s.lanes, smem>>>(x, y, meet, s.rounds, kWaitBudgetCycles, ra, rb, counts, sm);
    CHECK_LAUNCH();
    return "";
}

inline void count_sms(const std::vector<unsigned>& sm, LitmusResult& r) {
    std::vector<unsigned> sorted = sm;
    std::sort(sorted.begin(), sorted.end());
    r.distinct_sms = int(std::unique(sorted.begin(), sorted.end()) - sorted.begin());
    for (size_t p = 0; 2 * p + 1 < sm.size(); ++p) r.same_sm_pairs += sm[2 * p] == sm[2 * p + 1];
}

// Message passing: counts[0] = flag seen but data stale, counts[1] = waits that timed out.
inline LitmusResult run_message_passing(const common::DeviceInfo& dev, Order o, const LitmusShape& s) {
    const size_t n = size_t(s.instances());
    common::DeviceBuffer<int> data(n), flag(n);
    common::DeviceBuffer<unsigned> meet(s.pairs), sm(2 * s.pairs);
    common::DeviceBuffer<unsigned long long> counts(2);
    CHECK(cudaMemset(data.get(), 0, n * sizeof(int)));
    CHECK(cudaMemset(flag.get(), 0, n * sizeof(int)));
    CHECK(cudaMemset(meet.get(), 0, s.pairs * sizeof(unsigned)));
    CHECK(cudaMemset(counts.get(), 0, 2 * sizeof(unsigned long long)));
    const size_t smem = one_block_per_sm_smem(dev);
    std::string refused;
    const float ms = common::time_once_ms([&] {
        switch (o) {
            case Order::Plain: refused = launch_mp<Order::Plain>(s, smem, data.get(), flag.get(), meet.get(), counts.get(), sm.get()); break;
            case Order::Volatile: refused = launch_mp<Order::Volatile>(s, smem, data.get(), flag.get(), meet.get(), counts.get(), sm.get()); break;
            case Order::Fence: refused = launch_mp<Order::Fence>(s, smem, data.get(), flag.get(), meet.get(), counts.get(), sm.get()); break;
            case Order::Atomic: refused = launch_mp<Order::Atomic>(s, smem, data.get(), flag.get(), meet.get(), counts.get(), sm.get()); break;
        }
    });
    LitmusResult r;
    r.refused = refused;
    if (!refused.empty()) return r;  // nothing ran: no counts to read, no time to report
    std::vector<unsigned long long> c;
    std::vector<unsigned> smv;
    counts.download(c);
    sm.download(smv);
    r.instances = s.instances();
    r.weak = c[0];
    r.timeouts = c[1];
    r.pairs = s.pairs;
    r.ms = ms;
    r.launch = common::launch_string(2 * s.pairs, s.lanes, smem);
    count_sms(smv, r);
    return r;
}

// Store buffering: the host counts the four outcomes; weak = (0,0); an instance whose results
// are missing (a pair that timed out) counts as a timeout.
inline LitmusResult run_store_buffering(const common::DeviceInfo& dev, Order o, const LitmusShape& s) {
    const size_t n = size_t(s.instances());
    common::DeviceBuffer<int> x(n), y(n), ra(n), rb(n);
    common::DeviceBuffer<unsigned> meet(s.pairs), sm(2 * s.pairs);
    common::DeviceBuffer<unsigned long long> counts(2);
    CHECK(cudaMemset(x.get(), 0, n * sizeof(int)));
    CHECK(cudaMemset(y.get(), 0, n * sizeof(int)));
    ra.poison();
    rb.poison();
    CHECK(cudaMemset(meet.get(), 0, s.pairs * sizeof(unsigned)));
    CHECK(cudaMemset(counts.get(), 0, 2 * sizeof(unsigned long long)));
    const size_t smem = one_block_per_sm_smem(dev);
    std::string refused;
    const float ms = common::time_once_ms([&] {
        switch (o) {
            case Order::Plain: refused = launch_sb<Order::Plain>(s, smem, x.get(), y.get(), meet.get(), ra.get(), rb.get(), counts.get(), sm.get()); break;
            case Order::Volatile: refused = launch_sb<Order::Volatile>(s, smem, x.get(), y.get(), meet.get(), ra.get(), rb.get(), counts.get(), sm.get()); break;
            case Order::Fence: refused = launch_sb<Order::Fence>(s, smem, x.get(), y.get(), meet.get(), ra.get(), rb.get(), counts.get(), sm.get()); break;
            case Order::Atomic: refused = launch_sb<Order::Atomic>(s, smem, x.get(), y.get(), meet.get(), ra.get(), rb.get(), counts.get(), sm.get()); break;
        }
    });
    LitmusResult r;
    r.refused = refused;
    if (!refused.empty()) return r;  // nothing ran: no outcomes to count, no time to report
    std::vector<int> a, b;
    std::vector<unsigned> smv;
    ra.download(a);
    rb.download(b);
    sm.download(smv);
    r.instances = s.instances();
    r.pairs = s.pairs;
    r.ms = ms;
    r.launch = common::launch_string(2 * s.pairs, s.lanes, smem);
    for (size_t i = 0; i < n; ++i) {
        if ((a[i] != 0 && a[i] != 1) || (b[i] != 0 && b[i] != 1)) { ++r.timeouts; continue; }
        ++r.outcome[a[i] * 2 + b[i]];
    }
    r.weak = r.outcome[0];
    count_sms(smv, r);
    return r;
}

// The fenced and atomic variants must never show the weak outcome; plain and volatile may.
inline bool litmus_must_be_strong(Order o) { return o == Order::Fence || o == Order::Atomic; }

inline void report_litmus(SyncReport& rep, const char* experiment, Order o, const LitmusResult& r, bool sb) {
    if (!r.refused.empty()) {
        rep.add({experiment, order_name(o), "2 blocks x 32 lanes per pair", 0, "weak outcomes",
                 "nothing launched: " + r.refused, "FAIL"});
        return;
    }
    std::string note = std::to_string(r.instances) + " instances on " + std::to_string(r.pairs) + " block pairs (" +
                       std::to_string(r.distinct_sms) + " distinct SMs, " + std::to_string(r.same_sm_pairs) +
                       " pairs sharing one), " + common::fmt("%.1f", r.ms) + " ms";
    if (sb)
        note += "; outcomes (0,0)/(0,1)/(1,0)/(1,1) = " + std::to_string(r.outcome[0]) + "/" +
                std::to_string(r.outcome[1]) + "/" + std::to_string(r.outcome[2]) + "/" + std::to_string(r.outcome[3]);
    if (r.timeouts) note += "; " + std::to_string(r.timeouts) + " timed out";
    const bool ok = r.timeouts == 0 && r.same_sm_pairs == 0 && (!litmus_must_be_strong(o) || r.weak == 0);
    rep.add({experiment, order_name(o), r.launch, double(r.weak), "weak outcomes", note,
             litmus_must_be_strong(o) || !ok ? (ok ? "PASS" : "FAIL") : "-"});
}

inline bool run_litmus(SyncReport& rep, const common::DeviceInfo& dev, unsigned long long min_instances, bool sb) {
    const LitmusShape s = litmus_shape(dev, min_instances);
    rep.section(std::string(sb ? "store buffering (SB): A: x=1; r1=y   B: y=1; r2=x   weak: r1=r2=0"
                               : "message passing (MP): producer: data; flag   consumer: flag; data   weak: flag seen, data stale"));
    bool ok = true;
    for (int v = 0; v < kOrders; ++v) {
        const Order o = Order(v);
        const LitmusResult r = sb ? run_store_buffering(dev, o, s) : run_message_passing(dev, o, s);
        report_litmus(rep, sb ? "litmus SB" : "litmus MP", o, r, sb);
        ok &= r.refused.empty() && r.timeouts == 0 && r.same_sm_pairs == 0 &&
              (!litmus_must_be_strong(o) || r.weak == 0);
    }
    return ok;
}

}  // namespace distributed_smem::sync
