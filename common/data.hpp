// data.hpp - seeded random inputs, reproducible on every platform.
//
// std::uniform_*_distribution is implementation-defined, so the same seed can
// give different data with another standard library. SplitMix64 is ten lines,
// fast (a few ns per value, enough for 10^8 elements), and defined bit for bit.
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace common {

struct SplitMix64 {
    uint64_t state;
    explicit SplitMix64(uint64_t seed) : state(seed) {}
    uint64_t next() {
        uint64_t z = (state += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    // uniform in [0, 1) with 53 random bits
    double uniform() { return (next() >> 11) * (1.0 / 9007199254740992.0); }
};

// Fill p[0..n) with values uniform in [lo, hi) (floating point) or [lo, hi]
// (integers). Never all zeros or all ones: such inputs hide indexing bugs.
template <class T>
void fill_uniform(T* p, size_t n, uint64_t seed, T lo, T hi) {
    SplitMix64 g(seed);
    for (size_t i = 0; i < n; ++i) {
        if constexpr (std::is_floating_point_v<T>) {
            // Computed in double; rounding to float can reach hi (u within 2^-25 of 1 in [-1, 1)).
            const T v = static_cast<T>(lo + (hi - lo) * g.uniform());
            p[i] = v < hi ? v : std::nextafter(hi, lo);
        } else {
            const uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo) + 1;  // 0: the whole 64 bits
            p[i] = static_cast<T>(static_cast<uint64_t>(lo) + (span ? g.next() % span : g.next()));
        }
    }
}

}  // namespace common
