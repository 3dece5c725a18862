// verify.hpp - compare a GPU result with a CPU reference, element by element.
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <limits>
#include <string>

namespace common {

struct Comparison {
    size_t n = 0;           // elements compared
    size_t mismatches = 0;  // elements outside the tolerance (NaN always is)
    size_t first_bad = 0;   // index of the first mismatch (valid if mismatches > 0)
    double max_abs_err = 0; // largest |got - ref| (inf where one side is infinite, or got is NaN and ref not)
    double max_rel_err = 0; // largest |got - ref| / |ref| (ref != 0)
    bool pass() const { return mismatches == 0; }
};

// An element passes when |got - ref| <= atol + rtol * |ref|. With atol = rtol
// = 0 this is exact equality (integers, data movement such as a transpose).
// A NaN in `got` never passes: outputs are poisoned with NaN before a kernel
// runs, so an element the kernel forgot to write is caught here.
template <class G, class R>
Comparison compare(const G* got, const R* ref, size_t n, double atol = 0.0, double rtol = 0.0) {
    Comparison c;
    c.n = n;
    for (size_t i = 0; i < n; ++i) {
        const double g = static_cast<double>(got[i]);
        const double r = static_cast<double>(ref[i]);
        const double err = std::fabs(g - r);
        // An infinity matches only itself (atol + rtol * inf would admit anything, 0 * inf is NaN).
        const bool ok = std::isinf(g) || std::isinf(r) ? g == r : !std::isnan(g) && err <= atol + rtol * std::fabs(r);
        if (!std::isnan(err)) {
            if (err > c.max_abs_err) c.max_abs_err = err;
            if (r != 0 && err / std::fabs(r) > c.max_rel_err) c.max_rel_err = err / std::fabs(r);
        } else if (std::isnan(g) && !std::isnan(r)) {  // an element never written: no finite error
            c.max_abs_err = c.max_rel_err = std::numeric_limits<double>::infinity();
        }
        if (!ok && c.mismatches++ == 0) c.first_bad = i;
    }
    return c;
}

// One line for a failure message: where it went wrong and by how much.
template <class G, class R>
std::string describe(const Comparison& c, const G* got, const R* ref) {
    if (c.pass()) return "all " + std::to_string(c.n) + " elements match";
    char buf[160];
    std::snprintf(buf, sizeof buf, "%zu of %zu elements wrong; first at index %zu: got %.9g, expected %.9g",
                  c.mismatches, c.n, c.first_bad, static_cast<double>(got[c.first_bad]),
                  static_cast<double>(ref[c.first_bad]));
    return buf;
}

}  // namespace common
