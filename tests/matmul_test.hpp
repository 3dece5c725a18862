// matmul_test.hpp - what 01_matmul's tests share: the shapes, the data (integers,
// exact in fp32 and TF32, or random floats), running a launcher on poisoned C,
// the one comparison, and the skip for a kernel this GPU cannot run.
//
// Two kinds of data:
//  - integers in [-15, 15]: every product and partial sum (at most K * 225 <
//    2^24) is exactly representable in fp32, so every kernel must match the
//    double reference EXACTLY, whatever its summation order. One lost,
//    doubled or wrong term fails. Integers in [-15, 15] are exact in TF32 too
//    (11 significant bits), so the tensor-core kernels must also be exact on them.
//  - uniform floats in [-1, 1): compared with the tolerance of the kernel's
//    kind (matmul.cuh), which must still catch one dropped term (fp32) or
//    one dropped k-step (TF32).
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <tuple>
#include <vector>
#include <gtest/gtest.h>
#include <cmath>
#include "01_matmul/matmul.cuh"
#include "common/buffer.cuh"
#include "common/data.hpp"
#include "common/kernel_list.hpp"
#include "tests/gpu_test.hpp"


using matmul::Shape;
using matmul::name_of;

inline const std::vector<std::string> kKernelNames = common::kernel_names(matmul::kernels());
inline std::vector<std::string> config_names() {
    std::vector<std::string> v;
    for (const matmul::Config& c : matmul::configs()) v.push_back(c.name);
    return v;
}

inline const std::vector<Shape> kShapes = {
    {1, 1, 1},       {1, 77, 1},      {1, 1, 300},      {77, 1, 5},        {17, 19, 23},
    {64, 64, 64},    {127, 129, 65},  {128, 128, 128},  {129, 127, 9},     {33, 64, 1},
    {1000, 333, 77}, {513, 1025, 257}, {260, 132, 36},  {1024, 1024, 1024}, {2047, 1025, 1031}};

struct Data {
    std::vector<float> A, B;
    std::vector<double> ref, scale, sq;  // exact, S and Q (matmul.cuh)
};

inline Data make_data(const Shape& s, uint64_t seed, bool integers) {
    Data d;
    d.A.resize(size_t(s.m) * s.k);
    d.B.resize(size_t(s.k) * s.n);
    if (integers) {
        std::vector<int> a(d.A.size()), b(d.B.size());
        common::fill_uniform(a.data(), a.size(), seed, -15, 15);
        common::fill_uniform(b.data(), b.size(), seed + 1, -15, 15);
        for (size_t i = 0; i < a.size(); ++i) d.A[i] = float(a[i]);
        for (size_t i = 0; i < b.size(); ++i) d.B[i] = float(b[i]);
    } else {
        common::fill_uniform(d.A.data(), d.A.size(), seed, -1.0f, 1.0f);
        common::fill_uniform(d.B.data(), d.B.size(), seed + 1, -1.0f, 1.0f);
    }
    d.ref.resize(size_t(s.m) * s.n);
    d.scale.resize(d.ref.size());
    d.sq.resize(d.ref.size());
    matmul::matmul_cpu(d.A.data(), d.B.data(), d.ref.data(), d.scale.data(), s.m, s.n, s.k, d.sq.data());
    return d;
}

// The integer data of a shape, made once (the large references take seconds on the CPU).
inline const Data& integer_data(const Shape& s) {
    static std::map<std::tuple<int, int, int>, Data> cache;
    const auto key = std::make_tuple(s.m, s.n, s.k);
    auto it = cache.find(key);
    if (it == cache.end()) it = cache.emplace(key, make_data(s, 1000003ull * s.m + 1009ull * s.n + s.k, true)).first;
    return it->second;
}

// Where A, B and C start inside their device buffers, in floats: 0 is
// 256-byte aligned (cudaMalloc), 1..3 is an offset sub-matrix that no 16-byte
// access may touch.
struct Offsets { size_t a = 0, b = 0, c = 0; };
// Each pointer off 16 bytes alone, and all three at once.
inline const std::vector<Offsets> kMisaligned = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {1, 2, 3}};
inline std::string offsets_name(const Offsets& o) {
    return "offsets A+" + std::to_string(o.a) + " B+" + std::to_string(o.b) + " C+" + std::to_string(o.c);
}

// Runs `launch` on poisoned C and returns C. C's buffer is poisoned around it
// too, before C (its offset) and a row and a float4 after it: a kernel that
// writes there (an edge guard off by one) fails here, not only under memcheck.
// The launchers' scratch that earlier runs left (split-K partials, padded and
// split copies) is poisoned as well: a slice or a copy that a launch forgets to
// write is then not read, right, from an earlier launch's.
template <class Launch>
inline std::vector<float> run(const Data& d, const Shape& s, Launch&& launch, Offsets o = {}) {
    const size_t nc = size_t(s.m) * s.n, after = size_t(s.n) + 4;
    common::DeviceBuffer<float> dA(d.A.size() + o.a), dB(d.B.size() + o.b), dC(o.c + nc + after);
    CHECK(cudaMemcpy(dA.get() + o.a, d.A.data(), d.A.size() * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dB.get() + o.b, d.B.data(), d.B.size() * sizeof(float), cudaMemcpyHostToDevice));
    dC.poison();  // NaN: an element nobody writes fails
    const matmul::ScratchBuffers& scratch = matmul::scratch_buffers();
    for (int w = 0; w < matmul::kScratchKinds; ++w)
        if (scratch.p[w]) common::poison(scratch.p[w], scratch.floats[w] * sizeof(float));
    launch(dA.get() + o.a, dB.get() + o.b, dC.get() + o.c);
    CHECK(cudaDeviceSynchronize());
    std::vector<float> all;
    dC.download(all);
    const size_t outside = common::written_outside(all, o.c, o.c + nc);
    if (outside > 0)
        ADD_FAILURE() << outside << " floats written outside C (" << s.m << " x " << s.n << " x " << s.k << ", "
                      << offsets_name(o) << ")";
    return std::vector<float>(all.begin() + o.c, all.begin() + o.c + nc);
}

// The tolerance of a check: exact (integer data), or that of a kernel kind at K
// (matmul.cuh: tolerance_of).
struct Tol {
    bool exact;
    matmul::Math math;
    int K;
};
inline Tol exact() { return {true, matmul::Math::Fp32, 0}; }
inline Tol within(matmul::Math math, int K) { return {false, math, K}; }

// The elements outside the tolerance, and the first of them. NaN never passes.
struct Result { size_t bad = 0, first = 0; float got = 0; double want = 0; };
inline Result compare(const std::vector<float>& got, const Data& d, const Tol& t) {
    Result r;
    for (size_t i = 0; i < got.size(); ++i) {
        const double err = std::fabs(double(got[i]) - d.ref[i]);
        const double tol = t.exact ? 0.0 : matmul::tolerance_of(t.math, t.K, d.ref[i], d.scale[i], d.sq[i]);
        if (std::isnan(got[i]) || !(err <= tol)) {
            if (r.bad++ == 0) { r.first = i; r.got = got[i]; r.want = d.ref[i]; }
        }
    }
    return r;
}

// "" where this GPU (or GPU_PROFILE) can launch configuration c of steps 8-10, else why not.
inline std::string config_refusal(const matmul::Config& c) {
    if (matmul::blocks_per_sm(c, common::gpu()) > 0) return "";
    const std::string why = common::smem_refusal(c.smem);
    return why.empty() ? std::string("no block of ") + c.name + " fits one SM's shared memory" : why;
}

// A loop over kernels: false (and, where everything must run, a failure) where k is waived.
inline bool runs_here(const matmul::Kernel& k) { return testing_gpu::runs_here(k.name, matmul::waiver(k)); }
// The same for a configuration that the GPU has too little shared memory for.
inline bool runs_here(const matmul::Config& c) { return testing_gpu::runs_here(c.name, config_refusal(c)); }

inline std::string describe(const Result& r, const Shape& s) {
    return std::to_string(r.bad) + " wrong, first C[" + std::to_string(r.first / s.n) + "][" +
           std::to_string(r.first % s.n) + "] = " + std::to_string(r.got) + ", expected " + std::to_string(r.want);
}

// Runs `launch` (returning its launch column) on the integer data of s: exact, or a failure naming `label`.
template <class Launch>
inline void expect_exact(const Shape& s, const std::string& label, Launch&& launch, Offsets o = {}) {
    const Data& d = integer_data(s);
    std::string what;
    const std::vector<float> got =
        run(d, s, [&](const float* A, const float* B, float* C) { what = launch(A, B, C); }, o);
    const Result r = compare(got, d, exact());
    EXPECT_EQ(r.bad, 0u) << label << " (" << what << ") on " << name_of(s) << ": " << describe(r, s);
}
