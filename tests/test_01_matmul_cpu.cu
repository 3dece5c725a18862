// 01_matmul on the CPU alone: the double reference, the tolerances (they
// admit fp32 and TF32 rounding but not a dropped term or k-step), and the
// shapes the program accepts.
#include "tests/matmul_test.hpp"

namespace {

using matmul::Shape;
using matmul::name_of;

// ---- CPU-only: the reference, the tolerance, the size checks ----------------
TEST(MatmulCpu, ReferenceOnASmallProduct) {
    const float A[2 * 3] = {1, 2, 3, 4, 5, 6};     // 2 x 3
    const float B[3 * 2] = {7, 8, 9, 10, 11, -12};  // 3 x 2
    double C[4], S[4];
    matmul::matmul_cpu(A, B, C, S, 2, 2, 3);
    const double want[4] = {58, -8, 139, 10}, want_s[4] = {58, 64, 139, 154};
    for (int i = 0; i < 4; ++i) {
        EXPECT_EQ(C[i], want[i]) << i;
        EXPECT_EQ(S[i], want_s[i]) << i;
    }
    double c, s;
    matmul::matmul_cpu_element(A, B, 2, 3, 1, 1, &c, &s);
    EXPECT_EQ(c, 10);
    EXPECT_EQ(s, 154);
}

TEST(MatmulCpu, IntegerDataIsExactInFloatInAnyOrder) {
    // The premise of the exact tests: K products of integers in [-15, 15]
    // summed in fp32, forwards or backwards, equal the double sum.
    const int K = 4099;
    std::vector<int> a(K), b(K);
    common::fill_uniform(a.data(), K, 1, -15, 15);
    common::fill_uniform(b.data(), K, 2, -15, 15);
    float fwd = 0, bwd = 0;
    double exact = 0;
    for (int k = 0; k < K; ++k) { fwd += float(a[k]) * float(b[k]); exact += double(a[k]) * b[k]; }
    for (int k = K - 1; k >= 0; --k) bwd += float(a[k]) * float(b[k]);
    EXPECT_EQ(double(fwd), exact);
    EXPECT_EQ(double(bwd), exact);
    EXPECT_LT(double(K) * 225, 16777216.0);
}

TEST(MatmulCpu, ToleranceAdmitsRoundingButNotADroppedTerm) {
    // Random floats summed in fp32 sequentially (the order with the largest
    // partial sums) pass; dropping any single term must fail for most terms
    // (all but those smaller than the tolerance) up to K = 4096.
    for (int K : {1, 65, 1024, 4096, 65536}) {
        std::vector<float> a(K), b(K);
        common::fill_uniform(a.data(), K, 3, -1.0f, 1.0f);
        common::fill_uniform(b.data(), K, 4, -1.0f, 1.0f);
        float f = 0;
        double exact = 0, s = 0;
        for (int k = 0; k < K; ++k) {
            f += a[k] * b[k];
            exact += double(a[k]) * b[k];
            s += std::fabs(double(a[k]) * b[k]);
        }
        const double tol = matmul::tolerance_factor(K) * s;
        EXPECT_LE(std::fabs(f - exact), tol) << "K " << K;
        int caught = 0;
        for (int k = 0; k < K; ++k) caught += std::fabs(double(a[k]) * b[k]) > tol;
        if (K <= 4096) EXPECT_GE(caught, 0.85 * K) << "K " << K << ": tolerance " << tol;
    }
}

// TF32 emulated on the CPU: inputs rounded to 10 mantissa bits (to nearest,
// or truncated as the tensor cores do with fp32 bits they are handed), the
// products summed in fp32. Both must pass the TF32 tolerance; dropping 8
// consecutive products (one k-step) must fail at most positions up to K = 4096.
float tf32_round(float x, bool nearest) {
    uint32_t u;
    std::memcpy(&u, &x, 4);
    if (nearest) u += 0x1000u;  // half of the dropped 13 bits: ties away from zero, as cvt.rna
    u &= ~0x1FFFu;
    float r;
    std::memcpy(&r, &u, 4);
    return r;
}

TEST(MatmulCpu, Tf32ToleranceAdmitsTf32ButNotADroppedKStep) {
    for (bool nearest : {true, false})
        for (int K : {1, 8, 65, 1024, 4096, 65536}) {
            std::vector<float> a(K), b(K);
            common::fill_uniform(a.data(), K, 3 + K, -1.0f, 1.0f);
            common::fill_uniform(b.data(), K, 4 + K, -1.0f, 1.0f);
            float f = 0;
            double exact = 0, S = 0, Q = 0;
            for (int k = 0; k < K; ++k) {
                f += tf32_round(a[k], nearest) * tf32_round(b[k], nearest);
                const double p = double(a[k]) * b[k];
                exact += p;
                S += std::fabs(p);
                Q += p * p;
            }
            Q = std::sqrt(Q);
            const double tol = matmul::tf32_tolerance(K, exact, S, Q);
            EXPECT_LE(std::fabs(f - exact), tol) << "K " << K << (nearest ? " nearest" : " truncated");
            if (K < 8 || K > 4096) continue;
            int caught = 0, steps = 0;
            for (int k0 = 0; k0 + 8 <= K; k0 += 8, ++steps) {
                double dropped = 0;
                for (int k = k0; k < k0 + 8; ++k) dropped += double(a[k]) * b[k];
                caught += std::fabs(dropped) > tol;
            }
            EXPECT_GE(caught, 0.75 * steps) << "K " << K << ": tolerance " << tol;
        }
}

TEST(MatmulCpu, ShapeLimits) {
    EXPECT_EQ(matmul::check_shape(1, 1, 1), "");
    EXPECT_EQ(matmul::check_shape(4096, 4096, 4096), "");
    EXPECT_EQ(matmul::check_shape(8192, 128, 8192), "");
    EXPECT_NE(matmul::check_shape(0, 5, 5), "");
    EXPECT_NE(matmul::check_shape(5, -1, 5), "");
    EXPECT_NE(matmul::check_shape(5, 5, 0), "");
    EXPECT_NE(matmul::check_shape(matmul::kMaxDim + 1, 1, 1), "");
    EXPECT_NE(matmul::check_shape(65536, 65537, 1), "");   // C > 2^31 elements
    EXPECT_NE(matmul::check_shape(1, 70000, 70000), "");   // B > 2^31 elements
    EXPECT_EQ(matmul::check_shape(46340, 46340, 8), "");   // just under 2^31 each
}

}  // namespace
