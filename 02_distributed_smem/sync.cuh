// sync.cuh - part 2 of the chapter: synchronization beyond the basics (./distributed_smem --sync).
// (The seeds it follows: the top README's Sources section.)
//
// Six experiments, each a table (kernels in sync_kernels.cuh):
//   litmus MP / SB   weak ordering observed between two blocks on different SMs, per ordering variant
//   fence cost       cycles per __threadfence_block / __threadfence / __threadfence_system
//   sync domains     a fence-heavy kernel next to a store flood, default vs remote domain
//   barrier cost     __syncwarp, __syncthreads, cluster.sync, grid.sync, a kernel boundary
//   volatile         a bounded spin-wait on a flag: plain (with --pitfalls), volatile, atomic_ref
//   pitfalls         divergent __syncthreads, barrier after an early return (--pitfalls only)
// run_sync_quick() is the cheap subset the default run includes (the MP litmus test, smaller).
// The litmus tests are in sync_litmus.cuh, the table and its CSV in sync_report.cuh.
// Repetitions follow the common rule (common/timer.cuh): the median of --reps, fewer (and a
// "[reps N]" in the row's note) when they would take over 1.5 s; the first launch of each
// measurement is the untimed warm-up that decides.
#pragma once
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>
#include <cuda_runtime.h>
#include "02_distributed_smem/sync_kernels.cuh"
#include "02_distributed_smem/sync_litmus.cuh"
#include "02_distributed_smem/sync_report.cuh"
#include "common/buffer.cuh"
#include "common/check.cuh"
#include "common/cluster.cuh"
#include "common/cli.hpp"
#include "common/data.hpp"
#include "common/device.cuh"
#include "common/launch.cuh"
#include "common/report.hpp"
#include "common/stats.hpp"
#include "common/timer.cuh"

namespace distributed_smem::sync {

// "" where cluster.sync() runs: 9.0 or newer (GPU_PROFILE's) and a build with sm_90 code.
inline std::string cluster_sync_refusal() {
    std::string why = common::cc_refusal(90, "thread-block clusters");
    if (why.empty()) why = common::code_refusal(reinterpret_cast<const void*>(barrierClusterSync), 90);
    return why;
}

// Clusters of cs blocks of barrierClusterSync (128 threads each, a grid of `grid`) that the GPU
// places at once: 0 where it places none (a GPU or MIG slice with fewer SMs to a GPC holds
// smaller clusters). Lets the kernel launch clusters of more than 8 blocks.
inline int cluster_sync_active(int cs, int grid) {
    if (cs > 8) common::allow_large_clusters(barrierClusterSync);
    const common::ClusterLaunch l(grid, 128, 0, cs);
    int active = 0;
    if (cudaOccupancyMaxActiveClusters(&active, barrierClusterSync, &l.cfg) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return active;
}

// ---------------------------------------------------------------------------------------------
// Per-block cycles and nanoseconds written by the timing kernels -> mean per operation.
struct OpCost {
    double cycles = 0, ns = 0;
    common::RepsPlan plan{0, 0, false};  // how many launches the medians are of
};
inline OpCost mean_cost(const common::DeviceBuffer<long long>& cyc, const common::DeviceBuffer<long long>& ns,
                        int blocks, double ops) {
    std::vector<long long> c, t;
    cyc.download(c);
    ns.download(t);
    OpCost r;
    for (int b = 0; b < blocks; ++b) { r.cycles += double(c[b]); r.ns += double(t[b]); }
    r.cycles /= blocks * ops;
    r.ns /= blocks * ops;
    return r;
}

// Median (over `reps` launches, or fewer under the common rule) of the mean cost per operation.
template <class Launch>
inline OpCost time_ops(Launch&& launch, const common::DeviceBuffer<long long>& cyc,
                       const common::DeviceBuffer<long long>& ns, int blocks, double ops, int reps) {
    const double once = common::time_once_ms(launch);  // the warm-up (module load, clocks), timed
    const common::RepsPlan plan = common::plan_reps(once, 1, reps);
    std::vector<double> c, t;
    for (int i = 0; i < plan.reps; ++i) {
        launch();
        CHECK_LAUNCH();
        CHECK(cudaDeviceSynchronize());
        const OpCost o = mean_cost(cyc, ns, blocks, ops);
        c.push_back(o.cycles);
        t.push_back(o.ns);
    }
    return {common::median(c), common::median(t), plan};
}

template <FenceKind F, bool Stores>
inline OpCost fence_cost(int blocks, int threads, int iters, int* buf, const common::DeviceBuffer<long long>& cyc,
                         const common::DeviceBuffer<long long>& ns, int reps) {
    return time_ops([&] { fenceCost<F, Stores><<<blocks, threads>>>(buf, iters, cyc.get(), ns.get()); }, cyc, ns,
                    blocks, iters, reps);
}
template <bool Stores>
inline OpCost fence_cost(FenceKind f, int blocks, int threads, int iters, int* buf,
                         const common::DeviceBuffer<long long>& cyc, const common::DeviceBuffer<long long>& ns, int reps) {
    switch (f) {
        case FenceKind::None: return fence_cost<FenceKind::None, Stores>(blocks, threads, iters, buf, cyc, ns, reps);
        case FenceKind::Block: return fence_cost<FenceKind::Block, Stores>(blocks, threads, iters, buf, cyc, ns, reps);
        case FenceKind::Device: return fence_cost<FenceKind::Device, Stores>(blocks, threads, iters, buf, cyc, ns, reps);
        case FenceKind::System: return fence_cost<FenceKind::System, Stores>(blocks, threads, iters, buf, cyc, ns, reps);
        default: return fence_cost<FenceKind::AcqRelDevice, Stores>(blocks, threads, iters, buf, cyc, ns, reps);
    }
}

inline bool run_fence_costs(SyncReport& rep, const common::DeviceInfo& dev, int reps) {
    rep.section("fence cost: cycles per loop iteration (one store + one fence, or the fence alone), mean over blocks");
    const int iters = 4096;
    struct Config { int blocks, threads; };
    const Config configs[] = {{1, 32}, {dev.sms, 256}};
    for (const Config& c : configs) {
        common::DeviceBuffer<int> buf(size_t(64) * c.blocks * c.threads);
        common::DeviceBuffer<long long> cyc(c.blocks), ns(c.blocks);
        const std::string config = common::launch_string(c.blocks, c.threads);
        for (int stores = 0; stores < 2; ++stores)
            for (int f = 0; f < kFenceKinds; ++f) {
                const OpCost o = stores ? fence_cost<true>(FenceKind(f), c.blocks, c.threads, iters, buf.get(), cyc, ns, reps)
                                        : fence_cost<false>(FenceKind(f), c.blocks, c.threads, iters, buf.get(), cyc, ns, reps);
                rep.add({stores ? "fence+store" : "fence", fence_name(FenceKind(f)), config, o.cycles, "cycles/iter",
                         common::fmt("%.1f ns/iter", o.ns) + common::reps_note(o.plan), "-"});
            }
    }
    return true;
}

// ---------------------------------------------------------------------------------------------
// Memory-synchronization domains.
template <class... Args>
inline void launch_in_domain(void (*kernel)(Args...), int grid, int block, cudaStream_t stream, bool remote,
                             Args... args) {
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(grid);
    cfg.blockDim = dim3(block);
    cfg.stream = stream;
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeMemSyncDomain;
    attr[0].val.memSyncDomain = remote ? cudaLaunchMemSyncDomainRemote : cudaLaunchMemSyncDomainDefault;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    CHECK(cudaLaunchKernelEx(&cfg, kernel, args...));
}

inline bool run_sync_domains(SyncReport& rep, const common::DeviceInfo& dev, int reps) {
    const int domains = common::gpu().sync_domains;  // cudaDevAttrMemSyncDomainCount
    cudaStream_t s_store, s_fence;
    CHECK(cudaStreamCreateWithFlags(&s_store, cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&s_fence, cudaStreamNonBlocking));
    cudaStreamAttrValue map = {};
    CHECK(cudaStreamGetAttribute(s_fence, cudaStreamAttributeMemSyncDomainMap, &map));
    char title[256];
    std::snprintf(title, sizeof title,
                  "memory-synchronization domains: cudaDevAttrMemSyncDomainCount = %d, a stream's default map: "
                  "default -> %d, remote -> %d",
                  domains, map.memSyncDomainMap.default_, map.memSyncDomainMap.remote);
    rep.section(title);
    rep.add({"sync domains", "cudaDevAttrMemSyncDomainCount", "-", double(domains), "domains",
             "stream map default->" + std::to_string(map.memSyncDomainMap.default_) + " remote->" +
                 std::to_string(map.memSyncDomainMap.remote),
             "-"});
    if (domains < 2) {  // before Hopper: one domain, so nothing for the attribute to separate
        rep.add({"sync domains", "fenceHeavy + storeStream", "-", 0, "ms",
                 "WAIVED: " + std::to_string(domains) + " memory-synchronization domain(s) on this GPU (9.0 has 4)",
                 "-"});
        CHECK(cudaStreamDestroy(s_store));
        CHECK(cudaStreamDestroy(s_fence));
        return true;
    }

    // The fence kernel: 16 blocks x 32 threads, each thread a store + __threadfence() per iteration.
    // The flood: one block per SM of half the threads an SM holds (1024 on 9.0), writing 1 GiB (or a
    // quarter of free memory) `passes` times, so that the fence kernel's blocks still find room beside
    // it (a block of all of an SM's threads, on a GPU of 1024 an SM, would leave them none: no overlap).
    const int f_blocks = 16, f_threads = 32, f_iters = 4000;
    const int s_threads = std::min(1024, common::gpu().threads_per_sm / 2);
    const size_t bytes = std::min<size_t>(size_t(1) << 30, common::free_device_memory() / 4);
    const size_t n4 = bytes / sizeof(int4);
    common::DeviceBuffer<int> fbuf(size_t(f_blocks) * f_threads);
    common::DeviceBuffer<int4> sbuf(n4);
    cudaEvent_t s0, s1, f0, f1;
    for (cudaEvent_t* e : {&s0, &s1, &f0, &f1}) CHECK(cudaEventCreate(e));

    auto fence_alone = [&](bool remote, bool fence) {
        auto once = [&] {
            CHECK(cudaEventRecord(f0, s_fence));
            launch_in_domain(fence ? fenceHeavy<true> : fenceHeavy<false>, f_blocks, f_threads, s_fence, remote,
                             fbuf.get(), f_iters);
            CHECK(cudaEventRecord(f1, s_fence));
            CHECK(cudaEventSynchronize(f1));
            float ms = 0;
            CHECK(cudaEventElapsedTime(&ms, f0, f1));
            return double(ms);
        };
        const common::RepsPlan plan = common::plan_reps(once(), 1, reps);  // the first is the warm-up
        std::vector<double> v;
        for (int i = 0; i < plan.reps; ++i) v.push_back(once());
        return common::median(v);
    };
    const double alone_ms = fence_alone(false, true);
    const double alone_remote_ms = fence_alone(true, true);
    const double control_alone_ms = fence_alone(false, false);

    // Flood length: long enough to cover the fence kernel many times over.
    launch_in_domain(storeStream, dev.sms, s_threads, s_store, false, sbuf.get(), n4, 1);
    CHECK(cudaEventRecord(s0, s_store));
    launch_in_domain(storeStream, dev.sms, s_threads, s_store, false, sbuf.get(), n4, 1);
    CHECK(cudaEventRecord(s1, s_store));
    CHECK(cudaEventSynchronize(s1));
    float pass_ms = 0;
    CHECK(cudaEventElapsedTime(&pass_ms, s0, s1));
    const int passes = std::max(2, int(std::max(20.0, 20 * alone_ms) / std::max(0.01f, pass_ms)) + 1);

    rep.add({"sync domains", "fenceHeavy alone", "fence: default", alone_ms, "ms",
             common::launch_string(f_blocks, f_threads) + ", " + std::to_string(f_iters) +
                 " x (store + __threadfence)",
             "-"});
    rep.add({"sync domains", "fenceHeavy alone", "fence: remote", alone_remote_ms, "ms", "", "-"});
    rep.add({"sync domains", "control (stores, no fence) alone", "default", control_alone_ms, "ms", "", "-"});

    struct DomainCase { const char* name; bool fence_remote, store_remote, fence = true; };
    const DomainCase cases[] = {{"fenceHeavy + storeStream", false, false},
                                {"fenceHeavy + storeStream", false, true},
                                {"fenceHeavy + storeStream", true, false},
                                {"fenceHeavy + storeStream", true, true},
                                {"control (no fence) + storeStream", false, false, false}};
    for (const DomainCase& v : cases) {
        std::vector<double> fence_ms, store_ms, cover;
        common::RepsPlan plan{0, reps, false};
        for (int i = 0; i <= plan.reps; ++i) {
            CHECK(cudaDeviceSynchronize());
            CHECK(cudaEventRecord(s0, s_store));
            launch_in_domain(storeStream, dev.sms, s_threads, s_store, v.store_remote, sbuf.get(), n4, passes);
            CHECK(cudaEventRecord(s1, s_store));
            CHECK(cudaEventRecord(f0, s_fence));
            launch_in_domain(v.fence ? fenceHeavy<true> : fenceHeavy<false>, f_blocks, f_threads, s_fence,
                             v.fence_remote, fbuf.get(), f_iters);
            CHECK(cudaEventRecord(f1, s_fence));
            CHECK(cudaDeviceSynchronize());
            float fs = 0, fe = 0, se = 0;
            CHECK(cudaEventElapsedTime(&fs, s0, f0));
            CHECK(cudaEventElapsedTime(&fe, s0, f1));
            CHECK(cudaEventElapsedTime(&se, s0, s1));
            if (!i) {  // the warm-up: decides the repetitions (the common rule)
                plan = common::plan_reps(std::max(fe, se), 1, reps);
                continue;
            }
            fence_ms.push_back(fe - fs);
            store_ms.push_back(se);
            const double overlap = std::max(0.0, double(std::min(fe, se)) - std::max(fs, 0.0f));
            cover.push_back(fe > fs ? overlap / (fe - fs) : 0);
        }
        const std::string config = std::string("fence: ") + (v.fence_remote ? "remote" : "default") +
                                   ", flood: " + (v.store_remote ? "remote" : "default");
        const double c = common::median(cover);
        rep.add({"sync domains", v.name, config, common::median(fence_ms), "ms",
                 common::fmt("flood %.1f ms (", common::median(store_ms)) + common::human_bytes(double(bytes) * passes) +
                     common::fmt("), %.0f%% of the fence kernel overlapped; ", 100 * c) +
                     common::fmt("%.2fx its time alone", common::median(fence_ms) / (v.fence ? alone_ms : control_alone_ms)) +
                     common::reps_note(plan),
                 c > 0.9 ? "-" : "FAIL"});
    }
    for (cudaEvent_t e : {s0, s1, f0, f1}) CHECK(cudaEventDestroy(e));
    CHECK(cudaStreamDestroy(s_store));
    CHECK(cudaStreamDestroy(s_fence));
    return true;
}

// ---------------------------------------------------------------------------------------------
// Barriers.
inline bool run_barrier_costs(SyncReport& rep, const common::DeviceInfo& dev, int reps) {
    rep.section("barrier cost: cycles (and ns) per barrier, mean over blocks");
    bool ok = true;
    const int iters = 20000;
    auto add = [&](const char* what, const std::string& config, OpCost o, const std::string& note, const char* result) {
        rep.add({"barrier", what, config, o.cycles, "cycles",
                 common::fmt("%.1f ns", o.ns) + (note.empty() ? "" : "; " + note) + common::reps_note(o.plan), result});
    };
    for (int threads : {32, 1024}) {
        common::DeviceBuffer<long long> cyc(1), ns(1);
        add("__syncwarp", common::launch_string(1, threads),
            time_ops([&] { barrierSyncwarp<<<1, threads>>>(iters, cyc.get(), ns.get()); }, cyc, ns, 1, iters, reps), "", "-");
    }
    for (int threads : {32, 256, 1024}) {
        common::DeviceBuffer<long long> cyc(1), ns(1);
        add("__syncthreads", common::launch_string(1, threads),
            time_ops([&] { barrierSyncthreads<<<1, threads>>>(iters, cyc.get(), ns.get()); }, cyc, ns, 1, iters, reps), "",
            "-");
    }
    double clock_ghz = 0;  // cycles per ns, for the kernel-boundary row
    {
        common::DeviceBuffer<long long> cyc(dev.sms), ns(dev.sms);
        const OpCost o = time_ops([&] { barrierSyncthreads<<<dev.sms, 1024>>>(iters, cyc.get(), ns.get()); }, cyc, ns,
                                  dev.sms, iters, reps);
        clock_ghz = o.ns > 0 ? o.cycles / o.ns : 0;
        add("__syncthreads", common::launch_string(dev.sms, 1024), o, common::fmt("SM clock %.2f GHz", clock_ghz), "-");
    }
    // Cluster barrier (sm_90): cluster sizes 2..16, 128 threads per block.
    if (const std::string no_clusters = cluster_sync_refusal(); no_clusters.empty()) {
        for (int cs : {2, 4, 8, 16}) {
            if (cs > common::gpu().max_cluster) {
                rep.add({"barrier", "cluster.sync", "cluster " + std::to_string(cs), 0, "cycles",
                         "WAIVED: this GPU allows clusters of " + std::to_string(common::gpu().max_cluster), "-"});
                continue;
            }
            const int grid = cs * std::max(1, dev.sms / cs / 2);
            if (cluster_sync_active(cs, grid) == 0) {
                rep.add({"barrier", "cluster.sync", "cluster " + std::to_string(cs), 0, "cycles",
                         "cluster size not supported here", "-"});
                continue;
            }
            const common::ClusterLaunch l(grid, 128, 0, cs);
            common::DeviceBuffer<long long> cyc(grid), ns(grid);
            common::DeviceBuffer<unsigned> wrong(1);
            CHECK(cudaMemset(wrong.get(), 0, sizeof(unsigned)));
            const int checks = 100;
            const OpCost o = time_ops(
                [&] { CHECK(cudaLaunchKernelEx(&l.cfg, barrierClusterSync, iters, checks, wrong.get(), cyc.get(), ns.get())); },
                cyc, ns, grid, iters, reps);
            std::vector<unsigned> w;
            wrong.download(w);
            add("cluster.sync", common::launch_string(grid, 128, 0, cs), o,
                std::to_string(w[0]) + " wrong reads in " + std::to_string((o.plan.reps + 1) * checks) + " checked rounds",
                w[0] == 0 ? "PASS" : "FAIL");
            ok &= w[0] == 0;
        }
    } else {
        rep.add({"barrier", "cluster.sync", "-", 0, "cycles", "WAIVED: " + no_clusters, "-"});
    }
    // grid.sync(): cooperative launch, grid sized by occupancy (GPU_PROFILE's limits cap it).
    if (common::gpu().cooperative) {
        const int per_sm = common::resident_blocks(reinterpret_cast<const void*>(barrierGridSync), 256, 0);
        const int grid_iters = 2000, checks = 100;
        for (int blocks : {dev.sms, dev.sms * per_sm}) {
            common::DeviceBuffer<long long> cyc(blocks), ns(blocks);
            common::DeviceBuffer<unsigned> counters(2);
            unsigned* arrived = counters.get();
            unsigned* wrong = counters.get() + 1;
            int it = grid_iters, ch = checks;
            long long* c = cyc.get();
            long long* t = ns.get();
            void* args[] = {&it, &ch, &arrived, &wrong, &c, &t};
            std::vector<unsigned> w;
            unsigned bad = 0;
            const OpCost o = time_ops(
                [&] {
                    CHECK(cudaMemset(counters.get(), 0, 2 * sizeof(unsigned)));
                    CHECK(cudaLaunchCooperativeKernel((void*)barrierGridSync, dim3(blocks), dim3(256), args, 0, 0));
                    CHECK(cudaDeviceSynchronize());
                    counters.download(w);
                    bad += w[1];
                },
                cyc, ns, blocks, grid_iters, reps);
            add("grid.sync", common::launch_string(blocks, 256), o,
                std::to_string(bad) + " wrong rounds in " + std::to_string((o.plan.reps + 1) * checks) + " checked",
                bad == 0 ? "PASS" : "FAIL");
            ok &= bad == 0;
        }
    } else {
        rep.add({"barrier", "grid.sync", "-", 0, "cycles", "no cooperative launch on this device", "-"});
    }
    // A kernel boundary: the barrier the seeds recommend between blocks (split the kernel).
    {
        const int launches = 2000;
        auto batch = [&] { for (int i = 0; i < launches; ++i) emptyKernel<<<dev.sms, 256>>>(); };
        const double once = common::time_once_ms(batch);  // the warm-up, timed: decides the repetitions
        const common::Timing t = common::time_kernel(batch, once, 0, reps);
        OpCost o;
        o.plan = t.plan;
        o.ns = t.ms * 1e6 / launches;
        o.cycles = o.ns * clock_ghz;
        add("kernel boundary", common::launch_string(dev.sms, 256), o,
            std::to_string(launches) + " empty kernels back to back, in stream order; cycles = ns x the SM clock above",
            "-");
    }
    return ok;
}

// ---------------------------------------------------------------------------------------------
// volatile and the hoisted load.
struct WaitResult {
    bool seen;
    long long spins, cycles;
    std::string launch;   // the launch column
    std::string refused;  // why nothing was launched (the shared memory refused); "" when it ran
};
inline WaitResult run_wait(const common::DeviceInfo& dev, int which, long long delay_cycles, long long max_spins) {
    auto kernel = which == 0 ? waitFlagPlain : which == 1 ? waitFlagVolatile : waitFlagAtomic;
    const size_t smem = one_block_per_sm_smem(dev);
    const std::string why = common::request_dynamic_smem(kernel, smem);
    if (!why.empty()) return {false, 0, 0, "", why};
    common::DeviceBuffer<int> flag(1);
    common::DeviceBuffer<long long> out(3);
    CHECK(cudaMemset(flag.get(), 0, sizeof(int)));
    out.poison();
    kernel<<<2, 32, smem>>>(flag.get(), delay_cycles, max_spins, out.get());
    CHECK_LAUNCH();
    CHECK(cudaDeviceSynchronize());
    std::vector<long long> o;
    out.download(o);
    return {o[0] == 1, o[1], o[2], common::launch_string(2, 32, smem), ""};
}

inline bool run_volatile(SyncReport& rep, const common::DeviceInfo& dev, bool pitfalls) {
    rep.section("volatile: block 1 spins (at most 2^20 times) on a flag that block 0 sets after 20000 cycles");
    const long long delay = 20000, max_spins = 1ll << 20;
    bool ok = true;
    const char* names[] = {"waitFlagPlain (PITFALL)", "waitFlagVolatile", "waitFlagAtomic"};
    for (int which = pitfalls ? 0 : 1; which < 3; ++which) {
        const WaitResult w = run_wait(dev, which, delay, max_spins);
        if (!w.refused.empty()) {
            rep.add({"volatile", names[which], common::launch_string(2, 32, one_block_per_sm_smem(dev)), 0, "cycles",
                     "nothing launched: " + w.refused,
                     "FAIL"});
            if (which != 0) ok = false;  // the pitfall's row never sets the result
            continue;
        }
        std::string note = std::to_string(w.spins) + " spins (bound " + std::to_string(max_spins) + "), " +
                           std::to_string(w.cycles) + " cycles waited";
        const char* result;
        if (which == 0) {  // the plain load: expected to be hoisted, so the bounded wait times out
            note = (w.seen ? "flag seen: the load was not hoisted; " : "TIMEOUT: the load was hoisted out of the loop; ") + note;
            result = w.seen ? "-" : "PASS";
        } else {
            note = (w.seen ? "flag seen; " : "TIMEOUT; ") + note;
            result = w.seen ? "PASS" : "FAIL";
            ok &= w.seen;
        }
        rep.add({"volatile", names[which], w.launch, double(w.cycles), "cycles", note, result});
    }
    return ok;
}

// ---------------------------------------------------------------------------------------------
// Barrier pitfalls: block sums of n ints by the correct kernel and the two pitfalls.
using ReduceKernel = void (*)(const int*, int, int*);
inline std::vector<int> block_sums_cpu(const std::vector<int>& in) {
    std::vector<int> s((in.size() + kReduceBlock - 1) / kReduceBlock, 0);
    for (size_t i = 0; i < in.size(); ++i) s[i / kReduceBlock] += in[i];
    return s;
}
// Number of wrong block sums (unwritten sums count: the output is poisoned).
inline int count_wrong_block_sums(ReduceKernel k, const std::vector<int>& in) {
    const int n = int(in.size());
    const std::vector<int> ref = block_sums_cpu(in);
    common::DeviceBuffer<int> d_in(in.size()), d_out(ref.size());
    d_in.upload(in);
    d_out.poison();
    k<<<int(ref.size()), kReduceBlock>>>(d_in.get(), n, d_out.get());
    CHECK_LAUNCH();
    CHECK(cudaDeviceSynchronize());
    std::vector<int> got;
    d_out.download(got);
    int wrong = 0;
    for (size_t b = 0; b < ref.size(); ++b) wrong += got[b] != ref[b];
    return wrong;
}

// Number of wrong outputs of a pair swap (out[i] = in[i ^ 1], 0 past the end).
inline int count_wrong_swaps(ReduceKernel k, const std::vector<int>& in) {
    const int n = int(in.size());
    common::DeviceBuffer<int> d_in(in.size()), d_out(in.size());
    d_in.upload(in);
    d_out.poison();
    k<<<(n + kReduceBlock - 1) / kReduceBlock, kReduceBlock>>>(d_in.get(), n, d_out.get());
    CHECK_LAUNCH();
    CHECK(cudaDeviceSynchronize());
    std::vector<int> got;
    d_out.download(got);
    int wrong = 0;
    for (int i = 0; i < n; ++i) wrong += got[i] != ((i ^ 1) < n ? in[i ^ 1] : 0);
    return wrong;
}

inline bool run_barrier_pitfalls(SyncReport& rep, uint64_t seed) {
    rep.section("barrier pitfalls (--pitfalls): 1000 ints, 4 blocks of 256 (the last one partial); "
                "synccheck: see the README; syncIfElse (seed 000) is never run: it hangs on the H200");
    std::vector<int> in(1000);
    common::fill_uniform(in.data(), in.size(), seed, -1000, 1000);
    struct K { const char* name; ReduceKernel k; bool correct, swap; const char* note; };
    const K ks[] = {
        {"reduceBlockSmem", reduceBlockSmem, true, false, "block sums; every thread reaches every barrier"},
        {"reduceDivergentBarrier (PITFALL)", reduceDivergentBarrier, false, false,
         "seed 004: barrier inside if (tid < stride); undefined behaviour"},
        {"reduceEarlyReturn (PITFALL)", reduceEarlyReturn, false, false,
         "if (i >= n) return; before the barriers: the tree adds words nobody wrote"},
        {"syncPairSwap", syncPairSwap, true, true, "out[i] = in[i^1]; one barrier for all"},
        // syncIfElse (seed 000) is not run: on the H200 it hangs (README, Part 2, section 6).
    };
    const std::string launch = common::launch_string(common::ceil_div(int(in.size()), kReduceBlock), kReduceBlock);
    bool ok = true;
    for (const K& k : ks) {
        const int wrong = k.swap ? count_wrong_swaps(k.k, in) : count_wrong_block_sums(k.k, in);
        rep.add({"pitfall", k.name, launch, double(wrong), k.swap ? "wrong of 1000" : "wrong of 4 sums",
                 k.note, k.correct ? (wrong == 0 ? "PASS" : "FAIL") : "-"});
        if (k.correct) ok &= wrong == 0;
    }
    return ok;
}


// ./distributed_smem --sync [--pitfalls] [--csv PATH]: every experiment of part 2, its tables
// printed, its rows written to opt.csv when given (with `command_line` in its header). True when
// every check passed.
inline bool run_sync_part(const common::DeviceInfo& dev, const common::CommonOptions& opt, bool pitfalls,
                          const std::string& command_line) {
    SyncReport rep;
    const int reps = int(opt.reps);
    bool ok = true;
    ok &= run_litmus(rep, dev, 1000000, false);
    ok &= run_litmus(rep, dev, 1000000, true);
    ok &= run_fence_costs(rep, dev, reps);
    ok &= run_sync_domains(rep, dev, reps);
    ok &= run_barrier_costs(rep, dev, reps);
    ok &= run_volatile(rep, dev, pitfalls);
    if (pitfalls) ok &= run_barrier_pitfalls(rep, uint64_t(opt.seed));
    ok &= rep.all_pass();
    if (!opt.csv.empty()) write_sync_csv(rep, dev, opt.csv, command_line);
    std::printf("\nsynchronization part: %s\n", ok ? "PASS" : "FAIL");
    return ok;
}

// The cheap subset that the default run includes (a second or less): the MP litmus test with
// 2^17 instances per variant and the volatile / atomic spin-waits. True when every check passed.
inline bool run_sync_quick(const common::DeviceInfo& dev, const common::CommonOptions& opt) {
    (void)opt;
    SyncReport rep;
    bool ok = run_litmus(rep, dev, 1u << 17, false);
    ok &= run_volatile(rep, dev, false);
    ok &= rep.all_pass();
    std::printf("synchronization (quick; ./distributed_smem --sync for all of part 2): %s\n", ok ? "PASS" : "FAIL");
    return ok;
}

}  // namespace distributed_smem::sync
