// kernel_list.hpp - a chapter's kernels() and pitfalls() lists, looked up by name.
//
// Every chapter keeps its kernels in a std::vector of a struct with at least
// `name` (const char*) and `what` (a one-line description), in teaching order
// (kernels(); 03: tile_kernels() and sweep_kernels()), and, where its program
// shows them (01, 02, 04, 06, 07), its seed's broken patterns in a separate
// pitfalls() list of the same type (05's seed pitfall is in its tests). Programs and tests find a kernel by name, never by position, so
// inserting a step does not silently change what a test checks.
#pragma once
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace common {

// The kernel called `name`, or nullptr.
template <class K>
const K* find_kernel(const std::vector<K>& list, const std::string& name) {
    for (const K& k : list)
        if (name == k.name) return &k;
    return nullptr;
}

// The kernel called `name`; a missing one is a programming error, thrown as
// std::invalid_argument (a test reports it as that test's failure). The name
// is a string_view, taken by value: a reference parameter bound to a
// temporary std::string ("sgemmTmaWgmma") makes GCC 13+ warn that the
// returned reference may dangle (-Wdangling-reference), though it points into `list`.
template <class K>
const K& kernel_named(const std::vector<K>& list, std::string_view name) {
    if (const K* k = find_kernel(list, std::string(name))) return *k;
    throw std::invalid_argument("no kernel named '" + std::string(name) + "' in this list");
}

// Every name --kernel accepts: the kernels, then the pitfalls.
template <class K>
std::vector<std::string> kernel_names(const std::vector<K>& kernels, const std::vector<K>& pitfalls = {}) {
    std::vector<std::string> names;
    for (const K& k : kernels) names.push_back(k.name);
    for (const K& k : pitfalls) names.push_back(k.name);
    return names;
}

// The usage text's list: "  name   what" a line, names padded to `width`,
// then the pitfalls under their own heading (none: no heading).
template <class K>
std::string kernel_list_text(const std::vector<K>& kernels, const std::vector<K>& pitfalls = {}, size_t width = 24) {
    auto line = [width](const K& k) {
        const std::string n = k.name;
        return "\n  " + n + std::string(n.size() < width ? width - n.size() : 1, ' ') + k.what;
    };
    std::string s;
    for (const K& k : kernels) s += line(k);
    if (!pitfalls.empty()) {
        s += "\nPitfalls (only with --pitfalls; their results never set the exit code):";
        for (const K& k : pitfalls) s += line(k);
    }
    return s;
}

// "" unless --kernel names a pitfall and --pitfalls was not given: then the
// reason to refuse the command line (the caller exits 2 with it, Cli::fail).
template <class K>
std::string pitfall_refusal(const std::string& kernel, const std::vector<K>& pitfalls, bool pitfalls_given) {
    if (pitfalls_given || !find_kernel(pitfalls, kernel)) return "";
    return "--kernel " + kernel + " is a pitfall kernel: add --pitfalls to run it";
}

}  // namespace common
