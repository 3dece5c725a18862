// bank_conflicts.cu - every tile kernel and the stride sweep: output checked
// against the CPU, time measured, wavefronts predicted by the bank model.
//
//   ./bank_conflicts                     16384 tiles per tile kernel, strides 1..32 and 65
//   ./bank_conflicts --tiles 1           the seeds' setup: one block
//   ./bank_conflicts --sweep --csv 03_bank_conflicts/results/h200.csv
//   ./bank_conflicts --ncu --tiles 1     one launch per kernel + the model's counts (make profile)
//
// GB/s: tile kernels, 2 * elements * element size / time (each element read
// from and written to global memory once); sweep kernels, 128 bytes per warp
// request / time (what the 32 lanes asked shared memory for).
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>
#include "03_bank_conflicts/bank_conflicts.cuh"
#include "common/buffer.cuh"
#include "common/cli.hpp"
#include "common/data.hpp"
#include "common/device.cuh"
#include "common/report.hpp"
#include "common/stats.hpp"
#include "common/timer.cuh"
#include "common/verify.hpp"

namespace {

using namespace bank_conflicts;

struct Options {
    int64_t tiles = 16384;  // 64 MiB each way for the 4-byte square tiles: past the 60 MB L2
    int64_t iters = 4096;   // sweep: reads per thread
    int64_t probes = 0;     // --ncu: random probe patterns as well
    bool ncu = false;
    common::CommonOptions common;
};

const std::vector<int> kStrides = [] {
    std::vector<int> s;
    for (int i = 1; i <= 32; ++i) s.push_back(i);
    s.push_back(65);  // seed 004's cache[0] / cache[65]: distinct banks today, one bank in 8-byte mode
    return s;
}();

std::string fmt2(double v) { return common::fmt("%.2f", v); }

// --- shared-memory configuration: static vs dynamic, opt-in, carveout --------

void print_smem_config() {
    const common::Gpu& g = common::gpu();
    std::printf("\nshared memory: %zu KB per block without opt-in, %zu KB with it, %zu KB per SM, %zu B reserved per block\n",
                common::kSmemWithoutOptIn / 1024, g.smem_per_block / 1024, g.smem_per_sm / 1024,
                common::reserved_smem_per_block(g));

    cudaFuncAttributes st{}, dy{};
    CHECK(cudaFuncGetAttributes(&st, writeRowReadColPadding<BDIMX, BDIMY, 1>));
    CHECK(cudaFuncGetAttributes(&dy, writeRowReadColDynPad<BDIMX, BDIMY, 1>));
    std::printf("static vs dynamic: writeRowReadColPadding declares %zu B (fixed at compile time); "
                "writeRowReadColDynPad declares %zu B and gets %zu B at each launch\n",
                st.sharedSizeBytes, dy.sharedSizeBytes, dyn_bytes(BDIMY, 1));

    // Over 48 KB: a launch asking for more than the kernel's limit fails with
    // cudaErrorInvalidValue (the test OptIn.MoreThan48KBNeedsTheAttribute does
    // it; here, where compute-sanitizer would count the refusal as an error,
    // the limit is read instead), until the kernel opts in.
    if (const std::string why = common::smem_refusal(kOptInBytes); !why.empty()) {
        std::printf("opt-in: reverseBlockOptIn: WAIVED: %s\n", why.c_str());
        return;
    }
    cudaFuncAttributes before{}, after{};
    CHECK(cudaFuncGetAttributes(&before, reverseBlockOptIn));
    (void)common::request_dynamic_smem(reverseBlockOptIn, kOptInBytes);  // refused above where it does not fit
    CHECK(cudaFuncGetAttributes(&after, reverseBlockOptIn));
    std::printf("opt-in: reverseBlockOptIn may ask for %d B of dynamic shared memory by default, %d B after "
                "cudaFuncSetAttribute(reverseBlockOptIn, cudaFuncAttributeMaxDynamicSharedMemorySize, %zu)\n",
                before.maxDynamicSharedSizeBytes, after.maxDynamicSharedSizeBytes, kOptInBytes);

    // Occupancy (reverseBlockOptIn, 1024 threads: at most 2 blocks per SM by threads).
    const int dyn_kb[] = {8, 32, 64, 96};
    auto blocks_per_sm = [&](int kb) {
        return common::resident_blocks(reinterpret_cast<const void*>(reverseBlockOptIn), kOptInThreads,
                                       size_t(kb) * 1024);  // capped by GPU_PROFILE's shared memory per SM
    };
    std::printf("occupancy, reverseBlockOptIn, 1024 threads (cudaOccupancyMaxActiveBlocksPerMultiprocessor), blocks/SM at dynamic");
    for (int kb : dyn_kb) std::printf(" %3d KB", kb);
    std::printf("\n");
    const struct { int pct; const char* name; } carveouts[] = {
        {cudaSharedmemCarveoutDefault, "carveout default (-1)"}, {cudaSharedmemCarveoutMaxL1, "carveout 0 (max L1)"},
        {25, "carveout 25%"}, {50, "carveout 50%"}, {75, "carveout 75%"},
        {cudaSharedmemCarveoutMaxShared, "carveout 100 (max shared)"}};
    for (const auto& c : carveouts) {
        CHECK(cudaFuncSetAttribute(reverseBlockOptIn, cudaFuncAttributePreferredSharedMemoryCarveout, c.pct));
        std::printf("  %-44s", c.name);
        for (int kb : dyn_kb) std::printf(" %6d", blocks_per_sm(kb));
        std::printf("\n");
    }
    CHECK(cudaFuncSetAttribute(reverseBlockOptIn, cudaFuncAttributePreferredSharedMemoryCarveout,
                               cudaSharedmemCarveoutDefault));
    const struct { cudaFuncCache cfg; const char* name; } configs[] = {
        {cudaFuncCachePreferNone, "cudaFuncSetCacheConfig PreferNone"},
        {cudaFuncCachePreferShared, "cudaFuncSetCacheConfig PreferShared"},
        {cudaFuncCachePreferL1, "cudaFuncSetCacheConfig PreferL1"},
        {cudaFuncCachePreferEqual, "cudaFuncSetCacheConfig PreferEqual"}};
    for (const auto& c : configs) {
        CHECK(cudaFuncSetCacheConfig(reverseBlockOptIn, c.cfg));
        std::printf("  %-44s", c.name);
        for (int kb : dyn_kb) std::printf(" %6d", blocks_per_sm(kb));
        std::printf("\n");
    }
    CHECK(cudaFuncSetCacheConfig(reverseBlockOptIn, cudaFuncCachePreferNone));
}

// --- tile kernels -------------------------------------------------------------

struct TileData {
    std::vector<uint32_t> in, ref, got;
    common::DeviceBuffer<uint32_t> d_in, d_out;
    explicit TileData(size_t words) : in(words), d_in(words), d_out(words) {}
};

size_t max_tile_words(int tiles) {
    size_t w = 0;
    for (const TileKernel& k : tile_kernels()) w = std::max(w, k.bytes(tiles) / 4);
    return w;
}

// Runs kernel k once on fresh output and checks it; returns the comparison. A launcher that
// refuses (*launch = "") ran nothing: nothing is compared, and the caller reports it.
// once_ms: where given, the checked launch's time (common::time_kernel's first launch).
common::Comparison run_and_check(const TileKernel& k, int tiles, TileData& d, std::string* launch,
                                 double* once_ms = nullptr) {
    const size_t words = k.bytes(tiles) / 4;
    d.ref.resize(words);
    expected_output(k, d.in.data(), d.ref.data(), k.blocks(tiles));
    d.d_out.poison();
    auto run = [&] { *launch = k.launch(d.d_in.get(), d.d_out.get(), k.blocks(tiles)); };
    if (once_ms) *once_ms = common::time_once_ms(run);
    else run();
    if (launch->empty()) return {};
    CHECK(cudaDeviceSynchronize());
    d.got.resize(d.d_out.size());
    d.d_out.download(d.got);
    return common::compare(d.got.data(), d.ref.data(), words);
}

bool selected(const Options& o, const char* name) { return o.common.kernel.empty() || o.common.kernel == name; }

bool run_tiles(int tiles, const Options& o, common::Report& report) {
    TileData d(max_tile_words(tiles));
    // Words below 2^31: the 0xFFFFFFFF poison can never be a valid output.
    common::fill_uniform<uint32_t>(d.in.data(), d.in.size(), uint64_t(o.common.seed), 0u, 0x7fffffffu);
    d.d_in.upload(d.in);
    const std::string problem = std::to_string(tiles) + " tiles";
    report.section(problem + " (a tile = one block: 32x32 or 32x16 elements; the opt-in kernel takes 24 per block), median of " +
                   std::to_string(o.common.reps));
    bool ok = true;
    // Measure first, report after: a kernel's peer may come later in the list.
    std::vector<common::Row> rows;
    for (const TileKernel& k : tile_kernels()) {
        bool is_peer_of_selected = false;
        for (const TileKernel& s : tile_kernels())
            if (selected(o, s.name) && std::string(s.peer) == k.name) is_peer_of_selected = true;
        if (!selected(o, k.name) && !is_peer_of_selected) continue;
        if (const std::string why = waiver(k); !why.empty()) {
            std::printf("  %s: WAIVED: %s\n", k.name, why.c_str());
            common::note_waived(k.name);
            continue;
        }
        std::string launch;
        double once_ms = 0;
        const common::Comparison c = run_and_check(k, tiles, d, &launch, &once_ms);
        if (launch.empty()) {  // waiver() said yes, the launcher no: nothing ran, nothing to time
            std::printf("  %s: FAIL: the launcher refused (nothing launched)\n", k.name);
            ok = false;
            continue;
        }
        if (!c.pass()) std::printf("  %s: %s\n", k.name, common::describe(c, d.got.data(), d.ref.data()).c_str());
        const common::Timing tm = common::time_kernel([&] { k.launch(d.d_in.get(), d.d_out.get(), k.blocks(tiles)); },
                                                      once_ms, int(o.common.warmup), int(o.common.reps));
        const double ms = tm.ms;
        const Tally t = tally(k.trace());  // per block; the ratios do not depend on the block count
        rows.push_back({problem, double(tiles), k.name, launch + common::reps_note(tm.plan), ms,
                        2.0 * double(k.bytes(tiles)) / (ms * 1e6), -1,
                        double(c.max_abs_err), c.pass() ? "PASS" : "FAIL",
                        {fmt2(t.ld_per_request()), fmt2(t.st_per_request()),
                         k.elem_bytes <= 8 ? fmt2(double(t.ld_8byte_mode) / t.ld_requests) : "-", "-"}});
        ok &= c.pass();
    }
    for (common::Row& r : rows) {
        const std::string peer = common::kernel_named(tile_kernels(), r.kernel).peer;
        for (const common::Row& p : rows)
            if (p.kernel == peer) r.pct_of_peer = 100.0 * r.rate / p.rate;
        report.add(r);
    }
    return ok;
}

// --- the stride sweep -------------------------------------------------------

struct SweepResult { bool pass; double ms, cycles_per_request; std::string launch; };

SweepResult run_sweep_kernel(bool throughput, int stride, int iters, int sms, const Options& o) {
    const int blocks = throughput ? sms : 1, threads = throughput ? kSweepThreads : 32;
    common::DeviceBuffer<uint32_t> sink(size_t(blocks) * threads);
    common::DeviceBuffer<long long> cycles(blocks);
    auto launch = [&] {
        if (throughput) readStrideThroughput<<<blocks, threads>>>(stride, iters, sink.get(), cycles.get());
        else readStrideLatency<<<blocks, threads>>>(stride, iters, sink.get(), cycles.get());
    };
    sink.poison();
    const double once_ms = common::time_once_ms(launch);
    CHECK_LAUNCH();
    std::vector<uint32_t> got;
    sink.download(got);
    bool pass = true;
    for (size_t i = 0; i < got.size(); ++i) {
        const int lane = int(i % 32);
        const uint32_t want = throughput ? expected_throughput_sum(lane, stride, iters) : expected_latency_end(lane, stride, iters);
        if (got[i] != want) {
            if (pass) std::printf("  stride %d: thread %zu got %u, expected %u\n", stride, i, got[i], want);
            pass = false;
        }
    }
    SweepResult r{pass, 0, 0, launch_brackets(dim3(blocks), dim3(threads)) + " s=" + std::to_string(stride)};
    if (!o.ncu) {
        const common::Timing t = common::time_kernel(launch, once_ms, int(o.common.warmup), int(o.common.reps));
        r.ms = t.ms;
        r.launch += common::reps_note(t.plan);
    }
    std::vector<long long> c;
    cycles.download(c);
    std::vector<double> per_request;
    for (long long v : c) per_request.push_back(double(v) / (double(iters) * (throughput ? kSweepThreads / 32 : 1)));
    r.cycles_per_request = common::median(per_request);
    return r;
}

bool run_sweep(const Options& o, int sms, common::Report& report) {
    bool ok = true;
    const int iters = int(o.iters);
    report.section("stride sweep: lane l reads word l*stride, " + std::to_string(iters) +
                   " reads per thread; cyc/req = SM cycles per warp request (throughput) or per dependent read (latency)");
    double first[2] = {0, 0}, first_cyc[2] = {0, 0}, last_cyc[2] = {0, 0};
    for (int stride : kStrides)
        for (int kind = 0; kind < 2; ++kind) {
            const bool throughput = kind == 0;
            const char* name = throughput ? "readStrideThroughput" : "readStrideLatency";
            if (!selected(o, name)) continue;
            const SweepResult r = run_sweep_kernel(throughput, stride, iters, sms, o);
            const double requests = throughput ? double(sms) * (kSweepThreads / 32) * iters : double(iters);
            const double gbps = requests * 128.0 / (r.ms * 1e6);
            if (stride == 1) { first[kind] = gbps; first_cyc[kind] = r.cycles_per_request; }
            if (stride == 32) last_cyc[kind] = r.cycles_per_request;
            const Addresses a = stride_addresses(stride);
            report.add({"stride " + std::to_string(stride), double(stride), name, r.launch, r.ms, gbps,
                        first[kind] > 0 ? 100.0 * gbps / first[kind] : -1, r.pass ? 0.0 : 1.0, r.pass ? "PASS" : "FAIL",
                        {std::to_string(wavefronts(a, 4)), "1.00", std::to_string(wavefronts_8byte_banks(a, 4)),
                         fmt2(r.cycles_per_request)}});
            ok &= r.pass;
        }
    for (int kind = 0; kind < 2; ++kind)
        if (first_cyc[kind] > 0 && last_cyc[kind] > 0)
            std::printf("%s: stride 32 (32-way) / stride 1 (conflict-free) cycles per request = %.2f / %.2f = %.1fx\n",
                        kind == 0 ? "readStrideThroughput" : "readStrideLatency", last_cyc[kind], first_cyc[kind],
                        last_cyc[kind] / first_cyc[kind]);
    return ok;
}

// --- --ncu: one launch per kernel, and the model's count for each launch ----
//
// Each launch prints one line
//   MODEL <name> ld_req st_req ld_wf st_wf ld_conflicts st_conflicts
// in launch order; profile.sh pairs them with Nsight Compute's rows.

void print_model(const std::string& name, const Tally& t) {
    std::printf("MODEL %s %llu %llu %llu %llu %llu %llu\n", name.c_str(), (unsigned long long)t.ld_requests,
                (unsigned long long)t.st_requests, (unsigned long long)t.ld_wavefronts,
                (unsigned long long)t.st_wavefronts, (unsigned long long)t.ld_conflicts,
                (unsigned long long)t.st_conflicts);
}

// Random probe patterns: each family stresses one part of the model.
constexpr int kProbeFamilies = 16;

Addresses probe_pattern(int family, int width, common::SplitMix64& g, uint32_t* mask) {
    family %= kProbeFamilies;
    Addresses a{};
    const uint32_t slots = kProbeWords * 4 / width;  // aligned positions in the buffer
    auto pick = [&](uint32_t range) { return uint32_t(g.next() % range); };
    *mask = kFullMask;
    switch (family % kProbeFamilies) {
        case 0: {  // linear stride
            const uint32_t strides[] = {1, 2, 3, 4, 5, 8, 16, 32, 33};
            const uint32_t s = strides[pick(9)], b = pick(slots);
            for (int l = 0; l < 32; ++l) a[l] = ((b + l * s) % slots) * width;
        } break;
        case 1: {  // broadcast
            const uint32_t b = pick(slots);
            for (int l = 0; l < 32; ++l) a[l] = b * width;
        } break;
        case 2: case 3: case 4: {  // random in 128 B, 512 B, the whole buffer
            const uint32_t range = family == 2 ? 128 / width : family == 3 ? 512 / width : slots;
            const uint32_t b = pick(slots / range) * range;
            for (int l = 0; l < 32; ++l) a[l] = (b + pick(range)) * width;
        } break;
        case 5: {  // lanes paired: l and l ^ (1, 2 or 4) share an address
            const int x = 1 << pick(3);
            for (int l = 0; l < 32; ++l) a[l] = pick(1024 / width) * width;
            for (int l = 0; l < 32; ++l) if (l & x) a[l] = a[l ^ x];
        } break;
        case 6: {  // a random permutation of 32 consecutive elements
            uint32_t p[32];
            for (int l = 0; l < 32; ++l) p[l] = l;
            for (int l = 31; l > 0; --l) std::swap(p[l], p[pick(l + 1)]);
            for (int l = 0; l < 32; ++l) a[l] = p[l] * width;
        } break;
        case 7: {  // both half-warps the same
            for (int l = 0; l < 16; ++l) a[l] = a[l + 16] = pick(256 / width) * width;
        } break;
        case 8: case 9: {  // a stride or random pattern with random inactive lanes
            const uint32_t s = 1 + pick(33);
            for (int l = 0; l < 32; ++l) a[l] = family == 8 ? (l * s % slots) * width : pick(2048 / width) * width;
            *mask = uint32_t(g.next()) | 1u;
        } break;
        case 10: {  // consecutive elements, lanes transposed across phases
            const int n = 128 / width;
            for (int l = 0; l < 32; ++l) a[l] = uint32_t((l % n) * (32 / n) + l / n) * width;
        } break;
        case 11: {  // random within 4 KB, a quarter of the lanes on one element
            for (int l = 0; l < 32; ++l) a[l] = pick(4096 / width) * width;
            for (int l = 0; l < 32; l += 4) a[l] = a[0];
        } break;
        case 12: {  // lanes paired (l ^ 1 or l ^ 2) and random inactive lanes
            const int x = 1 << pick(2);
            for (int l = 0; l < 32; ++l) a[l] = pick(1024 / width) * width;
            for (int l = 0; l < 32; ++l) if (l & x) a[l] = a[l ^ x];
            *mask = uint32_t(g.next()) | 1u;
        } break;
        case 13: {  // only the first half-warp paired
            for (int l = 0; l < 32; ++l) a[l] = pick(1024 / width) * width;
            for (int l = 1; l < 16; l += 2) a[l] = a[l - 1];
        } break;
        case 14: {  // groups of four lanes on one address (paired both ways)
            for (int l = 0; l < 32; ++l) a[l] = (l % 4 == 0 ? pick(2048 / width) : a[l - 1] / width) * width;
        } break;
        default: {  // a few lanes active, no two of them partners (n ^ 1, n ^ 2)
            for (int l = 0; l < 32; ++l) a[l] = pick(2048 / width) * width;
            const uint32_t sparse[] = {0x01010101u, 0x11111111u, 0x00010001u, 0x10204080u};
            *mask = sparse[pick(4)];
        } break;
    }
    return a;
}

// A load probe's out holds what each active lane loaded (the buffer's fill
// at its offset; an inactive lane's registers). A store probe's out holds the
// registers each lane stored, not shared memory read back: its check says
// that the probe ran, not where the stores landed.
template <int W, bool S>
bool run_probe(const Addresses& a, uint32_t mask, common::DeviceBuffer<uint32_t>& offs, common::DeviceBuffer<uint32_t>& out) {
    offs.upload(std::vector<uint32_t>(a.begin(), a.end()));
    out.poison();
    probeAccess<W, S><<<1, 32>>>(offs.get(), mask, out.get());
    CHECK_LAUNCH();
    CHECK(cudaDeviceSynchronize());
    std::vector<uint32_t> got;
    out.download(got);
    bool ok = true;
    for (int l = 0; l < 32; ++l)
        for (int k = 0; k < W / 4; ++k) {
            const bool active = mask >> l & 1u;
            const uint32_t want = (!S && active) ? sweep_value(a[l] / 4 + k) : sweep_value(uint32_t(l + 32 * k));
            ok &= got[l * 4 + k] == want;
        }
    return ok;
}

bool run_ncu(const Options& o, int sms) {
    bool ok = true;
    const int tiles = int(o.tiles);
    TileData d(max_tile_words(tiles));
    common::fill_uniform<uint32_t>(d.in.data(), d.in.size(), uint64_t(o.common.seed), 0u, 0x7fffffffu);
    d.d_in.upload(d.in);
    for (const TileKernel& k : tile_kernels()) {
        if (!selected(o, k.name)) continue;
        if (const std::string why = waiver(k); !why.empty()) {
            std::printf("  %s: WAIVED: %s\n", k.name, why.c_str());
            common::note_waived(k.name);
            continue;
        }
        std::string launch;
        const bool pass = run_and_check(k, tiles, d, &launch).pass() && !launch.empty();
        print_model(k.name, tally(k.trace()).scale(uint64_t(k.blocks(tiles))));
        std::printf("  %s %s: %s\n", k.name, launch.empty() ? "(the launcher refused: nothing launched)" : launch.c_str(),
                    pass ? "PASS" : "FAIL");
        ok &= pass;
    }
    for (int stride : kStrides)
        for (int kind = 0; kind < 2; ++kind) {
            const bool throughput = kind == 0;
            const char* name = throughput ? "readStrideThroughput" : "readStrideLatency";
            if (!selected(o, name)) continue;
            const bool pass = run_sweep_kernel(throughput, stride, int(o.iters), sms, o).pass;
            print_model(std::string(name) + "/stride=" + std::to_string(stride),
                        throughput ? tally_throughput(stride, int(o.iters), sms) : tally_latency(stride, int(o.iters)));
            ok &= pass;
        }
    common::DeviceBuffer<uint32_t> offs(32), out(128);
    common::SplitMix64 g(uint64_t(o.common.seed) * 7919u + 17u);
    for (int p = 0; p < o.probes; ++p) {
        const int combo = p % 6, family = p / 6, width = 4 << (combo % 3);
        const bool store = combo >= 3;
        uint32_t mask;
        const Addresses a = probe_pattern(family, width, g, &mask);
        bool pass = false;
        switch (combo) {
            case 0: pass = run_probe<4, false>(a, mask, offs, out); break;
            case 1: pass = run_probe<8, false>(a, mask, offs, out); break;
            case 2: pass = run_probe<16, false>(a, mask, offs, out); break;
            case 3: pass = run_probe<4, true>(a, mask, offs, out); break;
            case 4: pass = run_probe<8, true>(a, mask, offs, out); break;
            default: pass = run_probe<16, true>(a, mask, offs, out); break;
        }
        std::vector<Request> t;
        if (!store) trace_fill(t, 32, kProbeWords);
        Request r;
        r.store = store;
        r.width = width;
        r.mask = mask;
        r.addr = a;
        t.push_back(r);
        const std::string name = std::string("probe/") + (store ? "st" : "ld") + std::to_string(width) + "/family=" +
                                 std::to_string(family % kProbeFamilies);
        print_model(name, tally(t));
        std::printf("PATTERN %s mask=%08x", name.c_str(), mask);
        for (uint32_t x : a) std::printf(" %u", x);
        std::printf("\n");
        if (!pass)
            std::printf("  %s: %s\n", name.c_str(),
                        store ? "out does not hold the stored registers (the probe did not run)" : "wrong values loaded");
        ok &= pass;
    }
    return ok;
}

}  // namespace

int main(int argc, char** argv) {
    Options o;
    std::string summary =
        "Shared-memory bank conflicts: the seeds' tiles, padding, swizzling, wide accesses, a broadcast,\n"
        "and a stride sweep. Each kernel's output is checked against the CPU (exact), timed, and shown with\n"
        "the bank model's load/store wavefronts per request (today's 4-byte banks, and Kepler's 8-byte mode).\n"
        "GB/s: tile kernels 2 * elements * element size / time; sweep kernels 128 B per warp request / time.\n"
        "Kernels, in teaching order:";
    summary += common::kernel_list_text(tile_kernels(), {}, 30) + common::kernel_list_text(sweep_kernels(), {}, 30);
    common::Cli cli("bank_conflicts", summary);
    cli.option("tiles", &o.tiles, "tiles (blocks) per tile kernel", 1, kMaxTiles)
        .option("iters", &o.iters, "sweep: strided reads per thread", 1, kMaxIters)
        .flag("ncu", &o.ncu, "launch each kernel once and print the model's counts per launch (make profile)")
        .option("probe", &o.probes, "with --ncu: also this many random probe patterns", 0, 100000);
    common::add_common_options(cli, o.common, all_kernel_names());
    cli.mode("", common::timed_options({"tiles", "iters"}))
        .mode("sweep", common::timed_options({"tiles", "iters"}))
        .mode("ncu", {"tiles", "iters", "probe", "seed", "device", "kernel"});
    cli.parse_or_exit(argc, argv);

    const common::DeviceInfo dev = common::require_device(int(o.common.device));
    common::print_device_header(dev);
    std::vector<int> tile_counts = {int(o.tiles)};
    if (o.common.sweep) tile_counts = {1, dev.sms, int(o.tiles)};
    std::sort(tile_counts.begin(), tile_counts.end());
    tile_counts.erase(std::unique(tile_counts.begin(), tile_counts.end()), tile_counts.end());
    const size_t need = 2 * max_tile_words(tile_counts.back()) * 4;  // --ncu too: the same tiles
    common::require_host_memory("bank_conflicts", 1.5 * double(need));  // input, reference, result
    common::require_device_memory("bank_conflicts", double(need));
    if (o.ncu) {
        const bool ok = run_ncu(o, dev.sms);
        return common::finish(ok, o.common.kernel);
    }

    if (o.common.kernel.empty()) print_smem_config();
    common::Report report("GB/s", "peer", {"ld wf/req", "st wf/req", "8B-mode ld", "cyc/req"});
    bool ok = true;
    for (int t : tile_counts) ok &= run_tiles(t, o, report);
    ok &= run_sweep(o, dev.sms, report);

    if (!o.common.csv.empty()) {
        common::Metadata meta = common::run_metadata(dev, cli.command_line());
        meta.push_back({"default_problem", std::to_string(o.tiles) + " tiles"});
        meta.push_back({"bytes_model", "tile kernels: 2 * elements * element size (global read + write); sweep: 128 B per warp request"});
        meta.push_back({"peer", "the conflict-free version in the same run (pct_of_peer = rate / peer rate)"});
        meta.push_back({"model", "ld/st wf/req = wavefronts per shared load/store request predicted by bank_model.cuh; "
                                 "8B-mode ld = the same loads under Kepler's 8-byte banks"});
        report.write_csv(o.common.csv, meta);
    }
    return common::finish(ok, o.common.kernel);
}
