// How close a GPU sum of 04_reduction must come, on the CPU side: the
// tolerance for random float/double data, and binary-grid data (fill_grid)
// whose exact sum is known, so that the tests can ask for tolerance 0.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstddef>
#include <limits>
#include <type_traits>

namespace reduction {

// The tolerance of a float or double sum. Every kernel adds each element
// through a chain of k sequential adds (k ~ n / threads) and a tree of
// log2(threads) levels; Higham's bound for any such order is
// |error| <= gamma_h * sum|x| with h the longest chain, which at n = 2^28 is
// ~1000 * eps * sum|x|: true and useless. With inputs of random sign the
// rounding errors do not line up: the error grows like eps * sum|x| times a
// small factor. We allow 2 * (log2(n) + 1) * eps * sum|x|, which holds with a
// wide margin for random data and is still ~17x tighter than that worst case
// (58 eps against ~1000 eps at 2^28).
template <class T>
double tolerance(size_t n, long double sum_abs) {
    const double eps = std::numeric_limits<T>::epsilon();
    return 2.0 * (std::log2(double(n)) + 1.0) * eps * double(sum_abs);
}

// Inputs whose sum is known exactly: the tolerance above cannot see one
// element (at n = 10000019 in float it is ~29 while an element is < 1), so the
// tests also sum values on a binary grid, x[i] = k[i] * 2^-b with k[i] a
// NONZERO integer in [-K, K] (uniform, random sign: not all equal), whose
// exact sum is the integer sum of the k[i], computed in int64. When every
// partial sum a kernel forms is a multiple of 2^-b below 2^p * 2^-b in
// magnitude (p = 24 bits for float, 53 for double), every add is exact, in any
// order, and the result must EQUAL the exact sum: tolerance 0. Then a
// dropped or doubled element (|x| >= 2^-b) always fails, and a wrong one
// fails unless it happens to hold the same k (chance 1 / 2K).
//  - double: K = 2^20, b = 20: |partial| <= sum|k| <= n 2^20 <= 2^51 < 2^53
//    for every n the program admits, so exact in any order: a proof.
//  - int: K = 100, b = 0; exact anyway (32-bit wrap, as on the GPU).
//  - float, n <= 2^20: K = 2^24 / n (a power of two, 16 .. 2^12) makes the
//    same proof (sum|k| <= 2^24). For larger n the proof would leave K < 16
//    (and none at all past 2^24: sum|k| >= n), too few distinct values to
//    catch a wrong element, so there K is the largest power of two
//    with n K^2 <= 2^40: a partial sum is a sum over a subset S of m <= n
//    elements that the kernel's indexing picks, independently of the values,
//    so by Hoeffding P(|sum_S k| >= 2^24) <= 2 exp(-2^48 / (2 m K^2))
//    <= 2 e^-128, and over the < 2n partial sums of a run < 1e-45: every add
//    is exact unless something astronomically unlikely happens, and such a
//    failure would be a false alarm, never a missed bug. K is 16 at
//    n = 2^31 - 1, 256 at n = 10000019.
struct GridScale {
    int64_t K = 1;     // |k| in [1, K]
    int b = 0;         // x = k * 2^-b
    bool proof = true; // sum|k| fits the significand: exact in any order, no probability
};
template <class T>
GridScale grid_scale(size_t n) {
    if constexpr (std::is_integral_v<T>) return {100, 0, true};
    else if constexpr (sizeof(T) == 8) return {int64_t(1) << 20, 20, true};
    else {
        int lk = 0;  // K = 2^lk
        while (lk < 12 && double(n) * std::ldexp(1.0, lk + 1) <= 0x1p24) ++lk;
        if (lk >= 4) return {int64_t(1) << lk, lk, true};  // n <= 2^20: K >= 16 with a proof
        lk = 0;
        while (lk < 12 && double(n) * std::ldexp(1.0, 2 * (lk + 1)) <= 0x1p40) ++lk;
        return {int64_t(1) << lk, lk, false};
    }
}

// x[0..n) on the grid, and the exact sum sum k[i] (in units of 2^-b).
// The int result poison (0xFF bytes = -1) must not be the answer: if the
// sum is -1, one element changes sign (the sum moves by 2 k != 0).
template <class T>
int64_t fill_grid(T* x, size_t n, uint64_t seed, const GridScale& g) {
    uint64_t state = seed;
    auto next = [&state] {  // SplitMix64, as common::fill_uniform
        uint64_t z = (state += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    };
    const T scale = T(std::ldexp(1.0, -g.b));
    int64_t sum = 0;
    for (size_t i = 0; i < n; ++i) {
        const uint64_t r = next();
        const int64_t k = int64_t(r % uint64_t(g.K)) + 1;  // 1 .. K
        const int64_t sk = (r >> 63) ? -k : k;
        x[i] = T(sk) * scale;  // exact: |k| <= 2^20 and a power-of-two scale
        sum += sk;
    }
    if (std::is_integral_v<T> && sum == -1) {
        sum -= 2 * int64_t(x[0]);
        x[0] = -x[0];
    }
    return sum;
}

// The exact sum as a T: k_sum * 2^-b, or NaN if it is not representable
// (|k_sum| >= 2^p), which the float data of grid_scale never produces in
// practice (see above) and a test would report.
template <class T>
T grid_sum(int64_t k_sum, const GridScale& g) {
    if constexpr (std::is_integral_v<T>) return T(int32_t(uint32_t(uint64_t(k_sum))));
    else {
        const int p = std::numeric_limits<T>::digits;
        if (std::fabs(double(k_sum)) >= std::ldexp(1.0, p)) return std::numeric_limits<T>::quiet_NaN();
        return T(std::ldexp(double(k_sum), -g.b));
    }
}

}  // namespace reduction
