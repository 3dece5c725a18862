// matmul.cu - runs every kernel of the chapter on C = A B (fp32, row-major),
// checks each against a double-precision CPU reference and times it against
// its peer in the same run: cuBLAS SGEMM in fp32 (no TF32) for the fp32
// kernels, cuBLAS in TF32 for the tensor-core ones (the `peer` column).
//
//   ./matmul                               4096 x 4096 x 4096
//   ./matmul --m 1000 --n 333 --k 77       any shape
//   ./matmul --sweep --csv 01_matmul/results/h200.csv
//   ./matmul --tune                        every configuration x split-K, and stream-K; 3xTF32 by where A is split
//   ./matmul --pitfalls --m 1000 --n 1000 --k 1000   also the seed's unguarded grid
//
// GFLOP/s = 2 M N K / time: one multiply and one add per term of every dot product.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>
#include <cublas_v2.h>
#include "01_matmul/matmul.cuh"
#include "common/buffer.cuh"
#include "common/cli.hpp"
#include "common/data.hpp"
#include "common/device.cuh"
#include "common/kernel_list.hpp"
#include "common/report.hpp"
#include "common/timer.cuh"
#include "common/verify.hpp"

namespace {

#define CUBLAS_CHECK(call)                                                                       \
    do {                                                                                         \
        const cublasStatus_t st_ = (call);                                                       \
        if (st_ != CUBLAS_STATUS_SUCCESS) {                                                      \
            std::fprintf(stderr, "cuBLAS error at %s:%d: status %d in %s\n", __FILE__, __LINE__, \
                         int(st_), #call);                                                       \
            std::exit(1);                                                                        \
        }                                                                                        \
    } while (0)

using matmul::Shape;
using matmul::name_of;

// `make bench`: squares from L2-resident to 8192^3, the odd and skinny shapes
// the chapter's goal names, and odd shapes a reader might try (one more than
// a tile, primes, not multiples of 4, a long K, a short K); then K from 64 to
// 16384 at 4096 x 4096, one side of 256-1023 with the others large, M and N
// large and odd with K a few hundred, a long prime K, a fat C with a short K,
// and small products (where filling 132 SMs is the problem).
const std::vector<Shape> kSweep = {
    {256, 256, 256},   {512, 512, 512},    {1024, 1024, 1024}, {2048, 2048, 2048}, {4096, 4096, 4096},
    {8192, 8192, 8192}, {4097, 4095, 257},  {8192, 128, 8192},  {128, 8192, 8192},  {1000, 333, 77},
    {2049, 2047, 2051}, {1025, 1025, 1025}, {3000, 3000, 3000}, {4095, 4095, 4095}, {1031, 2053, 4099},
    {1024, 1024, 8192}, {8191, 8193, 127},
    {4096, 4096, 64},   {4096, 4096, 256},  {4096, 4096, 1024}, {4096, 4096, 16384},
    {512, 4096, 4096},  {4096, 512, 4096},  {8191, 8193, 383},  {4999, 5003, 5009}, {1021, 1031, 16381},
    {16384, 16384, 256}, {384, 384, 384},   {129, 65, 33}};

// The seeds' three kernels are skipped in --sweep above this many flops (a
// single launch of MatMulKernelNaive at 8192^3 takes seconds).
constexpr double kSeedSweepMaxFlops = 2.0 * 4096.0 * 4096.0 * 4096.0;

// A full CPU reference up to this many multiply-adds (~512^3 .. 645^3);
// above it, the 4 corners and kRandomSamples random elements on the CPU plus
// every element vs cuBLAS.
constexpr double kFullReferenceMaxMacs = double(1 << 28);
constexpr size_t kRandomSamples = 1024;

// Room on the device beyond what main() counts (operands and the scratch it
// can size from the shapes): cuBLAS's workspace, stream-K's and the strips'
// partials.
constexpr double kDeviceSlackBytes = double(256 << 20);

// C = A B through cuBLAS: row-major C is column-major C^T = B^T A^T, so the
// operands are swapped and no transpose is needed. The fp32 peer runs with
// the handle's math mode CUBLAS_DEFAULT_MATH (no TF32).
void cublas_sgemm(cublasHandle_t h, const float* A, const float* B, float* C, const Shape& s) {
    const float one = 1.0f, zero = 0.0f;
    CUBLAS_CHECK(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, s.n, s.m, s.k, &one, B, s.n, A, s.k, &zero, C, s.n));
}

// The TF32 peer: the same product with compute type CUBLAS_COMPUTE_32F_FAST_TF32
// (fp32 in and out, TF32 tensor cores inside).
void cublas_tf32(cublasHandle_t h, const float* A, const float* B, float* C, const Shape& s) {
    const float one = 1.0f, zero = 0.0f;
    CUBLAS_CHECK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, s.n, s.m, s.k, &one, B, CUDA_R_32F, s.n, A, CUDA_R_32F,
                              s.k, &zero, C, CUDA_R_32F, s.n, CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT));
}

// TF32 needs 8.0 (GPU_PROFILE's compute capability, too): below it the TF32
// peer is neither probed nor run, as no TF32 kernel runs there (plans.cuh).
std::string tf32_peer_refusal() { return common::cc_refusal(80, "TF32 tensor cores"); }

// What a product does to inputs with low mantissa bits: A holds 1 + j 2^-20
// (not representable in TF32's 10-bit mantissa) and B = I, so fp32 returns
// A exactly and TF32 rounds it. The fp32 peer must return A; the TF32 peer
// must not (else it is not using TF32 and is no peer for the tensor-core rows).
bool returns_a_exactly(const std::function<void(const float*, const float*, float*, const Shape&)>& gemm) {
    const Shape s{128, 128, 128};
    std::vector<float> a(128 * 128), b(128 * 128, 0.0f), c;
    for (int i = 0; i < 128 * 128; ++i) a[i] = 1.0f + std::ldexp(float(i % 1000 + 1), -20);
    for (int i = 0; i < 128; ++i) b[i * 128 + i] = 1.0f;
    common::DeviceBuffer<float> dA(a.size()), dB(b.size()), dC(a.size());
    dA.upload(a);
    dB.upload(b);
    dC.poison();
    gemm(dA.get(), dB.get(), dC.get(), s);
    CHECK(cudaDeviceSynchronize());
    dC.download(c);
    return c == a;
}

// Where the reference comes from for one shape, and the check of a result.
struct Verifier {
    Shape s;
    const std::vector<float>& A;
    const std::vector<float>& B;
    bool full;                                 // full CPU reference (small shapes)
    std::vector<double> ref, scale, sq;        // exact, S and Q (matmul.cuh); full: all M N; else the samples
    std::vector<std::pair<int, int>> samples;  // sampled (i, j) when !full
    std::vector<double> row_norm, col_norm;    // ||A[i,:]||_2, ||B[:,j]||_2: S_ij <= their product (Cauchy-Schwarz)
    std::vector<double> row_norm4, col_norm4;  // ||A[i,:]||_4, ||B[:,j]||_4: Q_ij <= their product
    std::vector<float> peer;                   // cuBLAS fp32's C (when !full)

    Verifier(const Shape& s_, const std::vector<float>& A_, const std::vector<float>& B_, uint64_t seed)
        : s(s_), A(A_), B(B_), full(double(s_.m) * s_.n * s_.k <= kFullReferenceMaxMacs) {
        if (full) {
            ref.resize(size_t(s.m) * s.n);
            scale.resize(ref.size());
            sq.resize(ref.size());
            matmul::matmul_cpu(A.data(), B.data(), ref.data(), scale.data(), s.m, s.n, s.k, sq.data());
            return;
        }
        common::SplitMix64 g(seed ^ 0x5eed);
        samples = {{0, 0}, {0, s.n - 1}, {s.m - 1, 0}, {s.m - 1, s.n - 1}};  // the corners, then random
        while (samples.size() < 4 + kRandomSamples) samples.push_back({int(g.next() % s.m), int(g.next() % s.n)});
        ref.resize(samples.size());
        scale.resize(samples.size());
        sq.resize(samples.size());
        for (size_t t = 0; t < samples.size(); ++t)
            matmul::matmul_cpu_element(A.data(), B.data(), s.n, s.k, samples[t].first, samples[t].second, &ref[t],
                                       &scale[t], &sq[t]);
        row_norm.assign(s.m, 0.0);
        col_norm.assign(s.n, 0.0);
        row_norm4.assign(s.m, 0.0);
        col_norm4.assign(s.n, 0.0);
        for (int i = 0; i < s.m; ++i)
            for (int k = 0; k < s.k; ++k) {
                const double a2 = double(A[size_t(i) * s.k + k]) * A[size_t(i) * s.k + k];
                row_norm[i] += a2;
                row_norm4[i] += a2 * a2;
            }
        for (int k = 0; k < s.k; ++k)
            for (int j = 0; j < s.n; ++j) {
                const double b2 = double(B[size_t(k) * s.n + j]) * B[size_t(k) * s.n + j];
                col_norm[j] += b2;
                col_norm4[j] += b2 * b2;
            }
        for (double& v : row_norm) v = std::sqrt(v);
        for (double& v : col_norm) v = std::sqrt(v);
        for (double& v : row_norm4) v = std::sqrt(std::sqrt(v));
        for (double& v : col_norm4) v = std::sqrt(std::sqrt(v));
    }

    // The tolerance of one element with exact value `exact`, S and Q (matmul.cuh).
    double tolerance(matmul::Math math, double exact, double S, double Q) const {
        return matmul::tolerance_of(math, s.k, exact, S, Q);
    }

    // mismatches == 0 is a PASS; max_abs_err is against the CPU (all or
    // sampled elements), and so are the errors relative to S in *rel (its
    // max and median).
    common::Comparison check(const std::vector<float>& got, bool against_peer, matmul::Math math, std::string* why,
                             std::pair<double, double>* rel) const {
        common::Comparison c;
        const double f = matmul::tolerance_factor(s.k);
        std::vector<double> rels;
        auto note = [&](size_t i, double want, double tol, const char* vs) {
            if (c.mismatches++ == 0) {
                c.first_bad = i;
                char buf[200];
                std::snprintf(buf, sizeof buf, "C[%zu][%zu] = %.9g, %s %.9g (tolerance %.3g)", i / s.n, i % s.n,
                              double(got[i]), vs, want, tol);
                *why = buf;
            }
        };
        auto one = [&](size_t i, double want, double tol, const char* vs, bool vs_cpu, double S) {
            const double g = got[i], err = std::fabs(g - want);
            if (vs_cpu && !std::isnan(err)) {
                c.max_abs_err = std::max(c.max_abs_err, err);
                if (S > 0) rels.push_back(err / S);
            }
            if (std::isnan(g) || !(err <= tol)) note(i, want, tol, vs);
            ++c.n;
        };
        auto finish = [&] {
            rel->first = rel->second = 0;
            if (rels.empty()) return c;
            std::sort(rels.begin(), rels.end());
            *rel = {rels.back(), rels[rels.size() / 2]};
            return c;
        };
        // An element whose S is 0 (a zero row or column) must be exactly 0: tolerance 0, no relative error.
        if (full) {
            for (size_t i = 0; i < ref.size(); ++i)
                one(i, ref[i], tolerance(math, ref[i], scale[i], sq[i]), "CPU", true, scale[i]);
            return finish();
        }
        for (size_t t = 0; t < samples.size(); ++t)
            one(size_t(samples[t].first) * s.n + samples[t].second, ref[t], tolerance(math, ref[t], scale[t], sq[t]),
                "CPU", true, scale[t]);
        if (against_peer)  // against cuBLAS fp32: its own error (f S) added; S_ij and Q_ij bounded by the norms
            for (int i = 0; i < s.m; ++i)
                for (int j = 0; j < s.n; ++j) {
                    const size_t idx = size_t(i) * s.n + j;
                    const double S = row_norm[i] * col_norm[j], Q = row_norm4[i] * col_norm4[j];
                    one(idx, peer[idx], tolerance(math, peer[idx], S, Q) + f * S, "cuBLAS", false, 0);
                }
        return finish();
    }
};

struct Options {
    common::CommonOptions common;
    bool pitfalls = false, tune = false;
};

bool run_shape(const Shape& s, const Options& opt, cublasHandle_t handle, common::Report& report) {
    const size_t na = size_t(s.m) * s.k, nb = size_t(s.k) * s.n, nc = size_t(s.m) * s.n;
    const std::string problem = name_of(s);
    const double flops = 2.0 * s.m * s.n * double(s.k);
    std::vector<float> A(na), B(nb), got;
    common::fill_uniform(A.data(), na, opt.common.seed, -1.0f, 1.0f);
    common::fill_uniform(B.data(), nb, uint64_t(opt.common.seed) + 1, -1.0f, 1.0f);
    Verifier ver(s, A, B, uint64_t(opt.common.seed));
    common::DeviceBuffer<float> dA(na), dB(nb), dC(nc);
    dA.upload(A);
    dB.upload(B);

    report.section("C = A B, " + problem + " (M x N x K) fp32, " + common::fmt("%.3g", flops / 1e9) +
                   " GFLOP, " + (ver.full ? "every element vs the CPU" : "every element vs cuBLAS + 1028 vs the CPU") +
                   ", median of " + std::to_string(opt.common.reps) + "; % of the row's peer; rel: |error| / " +
                   "sum_k |a b| vs the CPU, max and median");

    const int warmup = int(opt.common.warmup), reps = int(opt.common.reps);
    bool ok = true;
    // Each row waits for its peer's second timing (below) before it is printed.
    struct Pending { common::Row row; matmul::Math math; };
    std::vector<Pending> rows;
    // The first launch is checked (output poisoned before it) and timed once;
    // the one rule for slow kernels (common::plan_reps) decides the
    // repetitions, and the launch column says where it cut them.
    auto run_one = [&](const std::string& name, const std::function<std::string()>& launch, bool is_peer,
                       bool pitfall, matmul::Math math) {
        dC.poison();
        std::string what;
        float first_ms = common::time_once_ms([&] { what = launch(); });
        dC.download(got);
        std::string why;
        std::pair<double, double> rel;
        // The fp32 peer is checked against the CPU only; it is then what the others are compared with.
        const bool fp32_peer = is_peer && math == matmul::Math::Fp32;
        const common::Comparison c = ver.check(got, !fp32_peer, math, &why, &rel);
        if (fp32_peer && !ver.full) ver.peer = got;
        const common::Timing t = common::time_kernel([&] { launch(); }, first_ms, warmup, reps);
        const double ms = t.ms;
        what += common::reps_note(t.plan);
        if (!c.pass()) std::printf("  %s: %zu of %zu checked elements wrong; first %s\n", name.c_str(), c.mismatches,
                                   c.n, why.c_str());
        rows.push_back({{problem, flops, name, what, ms, flops / (ms * 1e6), -1, c.max_abs_err,
                         c.pass() ? "PASS" : pitfall ? "FAIL (pitfall, expected)" : "FAIL",
                         {math == matmul::Math::Tf32 ? "tf32" : "fp32", common::fmt("%.2e", rel.first),
                          common::fmt("%.2e", rel.second)}},
                        math});
        if (!pitfall) ok &= c.pass();
        return ms;
    };

    // The peers first, and again after the kernels (below).
    CUBLAS_CHECK(cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH));
    auto fp32_peer = [&] { cublas_sgemm(handle, dA.get(), dB.get(), dC.get(), s); };
    auto tf32_peer = [&] { cublas_tf32(handle, dA.get(), dB.get(), dC.get(), s); };
    double peer_ms = run_one(
        "cublasSgemm", [&] { fp32_peer(); return std::string("fp32, CUBLAS_DEFAULT_MATH"); }, true, false,
        matmul::Math::Fp32);
    const size_t fp32_peer_row = rows.size() - 1;
    const std::string no_tf32 = tf32_peer_refusal();  // main says why, once
    double tf32_peer_ms = 0;
    if (no_tf32.empty())
        tf32_peer_ms = run_one(
            "cublasGemmEx TF32", [&] { tf32_peer(); return std::string("CUBLAS_COMPUTE_32F_FAST_TF32"); }, true,
            false, matmul::Math::Tf32);

    struct Best { std::string name; double ms = 0; };
    Best best[3];  // by Math: fp32, TF32, 3xTF32
    const bool sweep_skip_seeds = opt.common.sweep && flops > kSeedSweepMaxFlops;
    for (const matmul::Kernel& k : matmul::kernels()) {
        if (!opt.common.kernel.empty() && opt.common.kernel != k.name) continue;
        const std::string name = k.name;
        if (sweep_skip_seeds && k.seed) {
            std::printf("%-28s skipped in --sweep above 4096^3 flops (seconds per launch)\n", k.name);
            continue;
        }
        const std::string why = matmul::waiver(k);
        if (!why.empty()) {
            std::printf("%-28s not run: %s\n", k.name, why.c_str());
            common::note_waived(k.name);
            continue;
        }
        const double ms =
            run_one(name, [&] { return k.launch(dA.get(), dB.get(), dC.get(), s.m, s.n, s.k); }, false, false, k.math);
        Best& b = best[int(k.math)];
        if (b.name.empty() || ms < b.ms) b = {name, ms};
    }
    if (opt.pitfalls)
        for (const matmul::Kernel& k : matmul::pitfalls())
            if (opt.common.kernel.empty() || opt.common.kernel == k.name)
                run_one(k.name, [&] { return k.launch(dA.get(), dB.get(), dC.get(), s.m, s.n, s.k); }, false, true,
                        k.math);

    // The peers again: each one's baseline is the faster of its two medians
    // (as in 04_reduction). A peer timed once can come out slow (5-7% for
    // cuBLAS TF32 in one H200 sweep, more at small shapes: README, "Results on
    // the H200"); that must not flatter the kernels. Checked the first time only.
    auto again = [&](const std::function<void()>& peer, double& ms, size_t row) {
        const common::Timing t = common::time_kernel(peer, ms, warmup, reps);
        if (t.ms >= ms) return;
        ms = t.ms;
        rows[row].row.ms = ms;
        rows[row].row.rate = flops / (ms * 1e6);
    };
    again(fp32_peer, peer_ms, fp32_peer_row);
    if (no_tf32.empty()) again(tf32_peer, tf32_peer_ms, fp32_peer_row + 1);
    auto peer_of = [&](matmul::Math m) { return m == matmul::Math::Tf32 ? tf32_peer_ms : peer_ms; };
    for (Pending& p : rows) {
        p.row.pct_of_peer = 100.0 * peer_of(p.math) / p.row.ms;
        report.add(p.row);
    }
    const char* peer_name[3] = {"cublasSgemm (fp32)", "cublasGemmEx TF32", "cublasSgemm (fp32)"};
    for (int m = 0; m < 3; ++m)
        if (!best[m].name.empty()) {
            const double pm = peer_of(matmul::Math(m));
            std::printf("best %s / %s at %s: %.3f (%.1f vs %.1f TFLOP/s)\n", best[m].name.c_str(), peer_name[m],
                        problem.c_str(), pm / best[m].ms, flops / best[m].ms / 1e9, flops / pm / 1e9);
        }

    if (opt.tune) {
        // Every sgemmCpAsync configuration x split-K factor and sgemmStreamK per
        // configuration, each checked; * = what the launchers pick (their own
        // plans, asked here, not re-derived); - = more splits than the split-K
        // scratch bound allows (the launcher would run fewer).
        const matmul::Plan pick = matmul::choose_sgemmCpAsync(s.m, s.n, s.k, common::gpu());
        const matmul::Plan pick_sk = matmul::plan_for(s.m, s.n, s.k);
        const int max_splits = matmul::max_splits_in_scratch(s.m, s.n);
        const float *a = dA.get(), *b = dB.get();
        float* c = dC.get();
        std::printf("tune at %s: %% of cublasSgemm by configuration: sgemmCpAsync x split-K, then sgemmStreamK "
                    "(* = the launchers' picks)\n", problem.c_str());
        std::printf("%-16s", "config\\splitK");
        for (int z : matmul::kSplitFactors) std::printf(" %8d", z);
        std::printf(" %8s\n", "streamK");
        auto measure = [&](const std::function<void()>& launch, bool picked, const std::string& what,
                           matmul::Math math = matmul::Math::Fp32) {
            dC.poison();
            launch();
            CHECK(cudaDeviceSynchronize());
            dC.download(got);
            std::string why;
            std::pair<double, double> rel;
            const bool pass = ver.check(got, true, math, &why, &rel).pass();
            if (!pass) std::printf("\n  %s: %s\n", what.c_str(), why.c_str());
            ok &= pass;
            const double ms = common::time_median_ms(launch, warmup, reps);
            std::printf(" %7.1f%s", 100.0 * peer_ms / ms, !pass ? "!" : picked ? "*" : " ");
        };
        // Where M is a few rows past a multiple of 128: every row again with those rows as a strip
        // ("+strip", sgemmAutotuned's other candidates; the model-based launchers do not use it).
        std::vector<int> strips = {0};
        if (matmul::strip_rows(s.m) > 0) strips.push_back(matmul::strip_rows(s.m));
        for (int strip : strips) {
            for (bool pad : {true, false}) {
                if (!pad && s.n % 4 == 0) continue;  // only N % 4 != 0 has a 4-byte-B variant
                for (size_t ci = 0; ci < matmul::configs().size(); ++ci) {
                    const matmul::Config& cfg = matmul::configs()[ci];
                    std::printf("%-16s", (std::string(cfg.name) + (s.n % 4 == 0 ? "" : pad ? " pad" : " B4") +
                                          (strip ? " +strip" : "")).c_str());
                    // This row is the launchers' B (N % 4 == 0: the only row), with no strip.
                    auto row_of = [&](const matmul::Plan& p) {
                        return strip == 0 && (s.n % 4 == 0 || pad == p.pad_b);
                    };
                    auto rows = [&](auto&& tiled) {  // the tiled launch on the first m rows, then the strip
                        matmul::with_row_strip(strip, a, b, c, s.m, s.n, s.k, tiled);
                    };
                    for (int z : matmul::kSplitFactors) {
                        if (z > matmul::max_splits_in_scratch(s.m - strip, s.n)) {
                            std::printf(" %8s", "-");
                            continue;
                        }
                        measure([&] { rows([&](int m) { return cfg.launch(a, b, c, m, s.n, s.k, z, pad); }); },
                                row_of(pick) && int(ci) == pick.config && z == pick.splits,
                                std::string(cfg.name) + " splitK " + std::to_string(z));
                    }
                    measure([&] { rows([&](int m) { return cfg.streamk(a, b, c, m, s.n, s.k, pad, 0); }); },
                            row_of(pick_sk) && pick_sk.streamk && int(ci) == pick_sk.config,
                            std::string(cfg.name) + " streamK");
                    std::printf("\n");
                }
            }
        }
        // sgemm3xTf32 (step 16): A split by a pre-pass or in the kernel, x split-K.
        if (matmul::waiver(common::kernel_named(matmul::kernels(), "sgemm3xTf32")).empty()) {
            const matmul::Pick3xTf32 pick = matmul::pick_3xtf32(dA.get(), s.m, s.n, s.k, common::gpu());
            std::printf("sgemm3xTf32: %% of cublasSgemm by where A is split x split-K (* = the launcher's pick)%s%s\n",
                        pick.strip ? (", the last " + std::to_string(pick.strip) + " row(s) as a strip").c_str() : "",
                        pick.col_strip ? (", the last " + std::to_string(pick.col_strip) + " column(s) as a strip").c_str()
                                       : "");
            for (bool in_kernel : {false, true}) {
                std::printf("%-16s", in_kernel ? "A in kernel" : "A pre-pass");
                for (int z : matmul::kSplitFactors) {
                    if (z > max_splits) {
                        std::printf(" %8s", "-");
                        continue;
                    }
                    measure([&] { matmul::launch_3xtf32_strips(pick, a, b, c, s.m, s.n, s.k, z, in_kernel); },
                            in_kernel == pick.a_in_kernel && z == pick.plan.splits,
                            std::string("sgemm3xTf32 splitK ") + std::to_string(z), matmul::Math::Tf32x3);
                }
                std::printf("\n");
            }
        }
    }
    return ok;
}

}  // namespace

int main(int argc, char** argv) {
    int64_t m = 4096, n = 4096, k = 4096;
    Options opt;
    const std::string summary =
        "Matrix multiply C (M x N) = A (M x K) B (K x N), fp32 in and out, row-major. The fp32 kernels are\n"
        "timed against cublasSgemm (CUBLAS_DEFAULT_MATH: no TF32, checked at start), the TF32 tensor-core\n"
        "kernels against cublasGemmEx with CUBLAS_COMPUTE_32F_FAST_TF32. Each kernel's first launch is\n"
        "checked (output poisoned with NaN) against a double-precision CPU reference: every element up to\n"
        "~645^3 multiply-adds, else 1028 sampled elements plus every element against cuBLAS fp32. Tolerance\n"
        "(S = sum_k |a_ik b_kj|, Q = sqrt(sum_k (a_ik b_kj)^2)): fp32 4 sqrt(K) 2^-24 S; TF32\n"
        "2^-10 (|c| + 8 Q) + 4 sqrt(K) 2^-24 S (01_matmul/matmul.cuh). GFLOP/s = 2 M N K / median time.\n"
        "Kernels, in teaching order:" +
        common::kernel_list_text(matmul::kernels(), matmul::pitfalls());
    common::Cli cli("matmul", summary);
    cli.option("m", &m, "rows of A and C", 1, matmul::kMaxDim)
        .option("n", &n, "columns of B and C", 1, matmul::kMaxDim)
        .option("k", &k, "columns of A, rows of B", 1, matmul::kMaxDim)
        .flag("pitfalls", &opt.pitfalls, "also run the seed's unguarded-grid kernel (MatMulKernelSeedGrid)")
        .flag("tune", &opt.tune,
              "also time every configuration of sgemmCpAsync (x split-K) and sgemmStreamK, and sgemm3xTf32 by "
              "where A is split (x split-K)");
    common::add_common_options(cli, opt.common, common::kernel_names(matmul::kernels(), matmul::pitfalls()));
    cli.mode("", common::timed_options({"m", "n", "k", "pitfalls", "tune"}))
        .mode("sweep", common::timed_options({"pitfalls", "tune"}));
    cli.parse_or_exit(argc, argv);
    cli.fail_if(matmul::check_shape(m, n, k));
    cli.fail_if(common::pitfall_refusal(opt.common.kernel, matmul::pitfalls(), opt.pitfalls));

    const std::vector<Shape> shapes = opt.common.sweep ? kSweep : std::vector<Shape>{{int(m), int(n), int(k)}};
    const common::DeviceInfo dev = common::require_device(int(opt.common.device));
    common::print_device_header(dev);
    // Device: A, B and C of the largest shape, plus the scratch buffers the launchers keep for
    // the whole run (steps/operands.cuh: each kind as large as its largest shape asked):
    // split-K's partials, sgemm3xTf32's split A (two M x K, rows padded to 32 floats), and the
    // padded copies of B (N % 4 != 0) and A (K % 4 != 0); then cuBLAS's workspace (the slack).
    // Host: A, B, a result, and the fp64 CPU reference (three M x N) where it is full, else
    // cuBLAS fp32's C.
    double operands = 0, partials = 0, split_a = 0, padded_b = 0, padded_a = 0, host = 0;
    for (const Shape& s : shapes) {
        const double mk = double(s.m) * s.k, kn = double(s.k) * s.n, mn = double(s.m) * s.n;
        const double pk = matmul::padded_pitch(s.k), pn = matmul::padded_pitch(s.n);
        operands = std::max(operands, 4.0 * (mk + kn + mn));
        partials = std::max(partials, std::min(4.0 * matmul::kSplitFactors.back() * mn,
                                               double(matmul::kSplitKScratchMaxBytes)));
        split_a = std::max(split_a, 4.0 * 2.0 * s.m * pk);
        if (s.n % 4) padded_b = std::max(padded_b, 4.0 * s.k * pn);
        if (s.k % 4) padded_a = std::max(padded_a, 4.0 * s.m * pk);
        const bool full = mn * s.k <= kFullReferenceMaxMacs;  // as Verifier decides
        host = std::max(host, 4.0 * (mk + kn + mn) + (full ? 24.0 * mn : 4.0 * mn));
    }
    common::require_host_memory("matmul", host);
    common::require_device_memory("matmul", operands + partials + split_a + padded_b + padded_a + kDeviceSlackBytes);

    cublasHandle_t handle;
    CUBLAS_CHECK(cublasCreate(&handle));
    CUBLAS_CHECK(cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH));
    const bool fp32 = returns_a_exactly([&](const float* A, const float* B, float* C, const Shape& s) {
        cublas_sgemm(handle, A, B, C, s);
    });
    const std::string no_tf32 = tf32_peer_refusal();
    const bool has_tf32 = no_tf32.empty();
    const bool tf32 = has_tf32 && !returns_a_exactly([&](const float* A, const float* B, float* C, const Shape& s) {
        cublas_tf32(handle, A, B, C, s);
    });
    std::printf("peers: cublasSgemm (math mode CUBLAS_DEFAULT_MATH) for the fp32 rows, cublasGemmEx "
                "(CUBLAS_COMPUTE_32F_FAST_TF32) for the tf32 rows; probe A (1 + j 2^-20) times I: fp32 peer %s, "
                "TF32 peer %s\n",
                fp32 ? "exact (no TF32)" : "NOT exact: TF32 or another reduced precision is in use",
                !has_tf32 ? "not run (no TF32 before sm_80)"
                : tf32    ? "rounded (TF32 in use)"
                          : "EXACT: not TF32 (set NVIDIA_TF32_OVERRIDE?)");
    // A note, not a WAIVED row: the peer is not one of the chapter's kernels (check_gpus.sh skips notes).
    if (!has_tf32) std::printf("note: the TF32 peer (cublasGemmEx) is not run: %s\n", no_tf32.c_str());

    common::Report report("GFLOP/s", "cublas", {"peer", "rel_max", "rel_med"});
    bool ok = fp32 && (tf32 || !has_tf32);
    for (const Shape& s : shapes) ok &= run_shape(s, opt, handle, report);
    CUBLAS_CHECK(cublasDestroy(handle));
    if (!opt.common.csv.empty()) {
        common::Metadata meta = common::run_metadata(dev, cli.command_line());
        meta.push_back({"default_problem", std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k)});
        meta.push_back({"flop_model", "2 * M * N * K (one multiply and one add per term)"});
        meta.push_back({"peer", "per row (column peer): fp32 = cublasSgemm CUBLAS_DEFAULT_MATH (no TF32), tf32 = "
                                "cublasGemmEx CUBLAS_COMPUTE_32F_FAST_TF32; same run (pct_of_cublas = peer time / "
                                "kernel time)"});
        meta.push_back({"rel_max, rel_med", "|C - exact| / sum_k |a_ik b_kj| over the elements checked against "
                                            "the double CPU reference: max and median"});
        report.write_csv(opt.common.csv, meta);
    }
    return common::finish(ok, opt.common.kernel);
}
