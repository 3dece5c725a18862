// Random command lines for every program, run as on a machine without a GPU: each must end in
// exit 0 (--help), 2 (refused, with the usage) or 77 (waived: no device) within a second of the
// program's own start-up (the slowest of three --help runs, measured first), never
// a crash, a hang or a stack trace, and leave no file behind or changed. The lines mix numbers
// at the edges of every option's range, repeated options, modes together, and output paths of
// every kind (new, existing, folder, FIFO, device, /proc, too long).
//
// FUZZ_SEED=S reproduces a run (the seed is printed either way); FUZZ_LINES=N sets the lines
// per program (default 2000: seconds on 2 cores for most programs; ~9 minutes for matmul, whose
// start-up loads cuBLAS, about half a second a line); FUZZ_LIMIT_S the time limit per line beyond
// the start-up (default 1).
#include <sys/stat.h>
#include <unistd.h>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdio>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>
#include <gtest/gtest.h>
#include "tests/program_runner.hpp"

namespace {

uint64_t env_or(const char* name, uint64_t fallback) {
    const char* v = std::getenv(name);
    return v && *v ? std::strtoull(v, nullptr, 10) : fallback;
}

std::string read_all(const std::string& path) {
    std::string s;
    if (FILE* f = std::fopen(path.c_str(), "r")) {
        char buf[256];
        size_t got;
        while ((got = std::fread(buf, 1, sizeof buf, f)) > 0) s.append(buf, got);
        std::fclose(f);
    }
    return s;
}

std::string join(const std::vector<std::string>& args) {
    std::string s;
    for (const std::string& a : args) s += " '" + a + "'";
    return s;
}

struct Lines {
    const runner::Program& p;
    const std::vector<std::string>& paths;
    std::mt19937_64 rng;

    size_t pick(size_t n) { return size_t(rng() % n); }
    template <class T> const T& any(const std::vector<T>& v) { return v[pick(v.size())]; }

    std::string number(const runner::Option& o) {
        const std::vector<std::string> edges = {
            std::to_string(o.lo), std::to_string(o.hi), std::to_string(o.lo - 1),
            o.hi == INT64_MAX ? "9223372036854775808" : std::to_string(o.hi + 1),
            "0", "-1", "1", "2", std::to_string(o.lo + (o.hi - o.lo) / 2), "9223372036854775807",
            "-9223372036854775808", "99999999999999999999999", "2^0", "2^31", "2^32", "2^62", "2^63", "2^-1",
            "2^", "abc", "", "1e3", "0x10", " 5", "5 ", "+5", "--5", "3.5", "4294967295", "4294967296"};
        if (pick(4) == 0) return std::to_string(o.lo + int64_t(rng() % uint64_t(std::min<int64_t>(o.hi - o.lo, 1 << 20) + 1)));
        return any(edges);
    }

    std::string value(const runner::Option& o) {
        switch (o.kind) {
            case runner::Option::Int: return number(o);
            case runner::Option::Choice:
                if (pick(3) == 0) return any(std::vector<std::string>{"", "bogus", any(o.choices) + "x", "INT"});
                return any(o.choices);
            case runner::Option::Path: return any(paths);
            default: return "x";
        }
    }

    std::vector<std::string> line() {
        std::vector<std::string> args;
        const size_t tokens = pick(7);
        for (size_t t = 0; t < tokens; ++t) {
            const size_t what = pick(20);
            if (what == 0 && !args.empty()) { args.push_back(any(args)); continue; }  // a repeat
            if (what == 1) { args.push_back("--help"); continue; }
            if (what == 2) {
                args.push_back(any(std::vector<std::string>{"stray", "--", "-", "-h", "--no-such", "---reps", "--=3", "",
                                                            "--reps=", "--sweep=1", "--csv"}));
                continue;
            }
            std::vector<const runner::Option*> pool;
            for (const runner::Option& o : p.options) pool.push_back(&o);
            for (const runner::Option& o : p.options)  // modes twice as often: their mixes are the point
                if (p.is_mode(o.name)) pool.push_back(&o);
            const runner::Option& o = *any(pool);
            if (o.kind == runner::Option::Flag) {
                args.push_back("--" + o.name + (pick(10) == 0 ? "=1" : ""));
            } else if (pick(4) == 0) {
                args.push_back("--" + o.name + "=" + value(o));
            } else {
                args.push_back("--" + o.name);
                if (pick(15) != 0) args.push_back(value(o));  // else a missing value
            }
        }
        return args;
    }
};

TEST(Fuzz, RandomCommandLinesEndInZeroTwoOrSeventySevenAtOnce) {
    const std::vector<std::string> progs = runner::programs();
    ASSERT_FALSE(progs.empty()) << "PROGRAMS is empty: run through `make test`";
    const uint64_t seed = env_or("FUZZ_SEED", uint64_t(std::chrono::steady_clock::now().time_since_epoch().count()) % 1000000007u);
    const size_t lines = env_or("FUZZ_LINES", 2000);
    const char* limit = std::getenv("FUZZ_LIMIT_S");
    const double limit_s = limit && *limit ? std::strtod(limit, nullptr) : 1.0;  // seconds, 0.5 allowed
    std::printf("fuzz: FUZZ_SEED=%llu FUZZ_LINES=%zu (set both to repeat this run)\n", (unsigned long long)seed, lines);

    // Output paths of every kind, in a folder of their own.
    char dir_template[] = "/tmp/test_fuzz_XXXXXX";
    ASSERT_NE(mkdtemp(dir_template), nullptr);
    const std::string d = dir_template, keep = d + "/existing.csv", fifo = d + "/fifo", sub = d + "/folder";
    { FILE* f = std::fopen(keep.c_str(), "w"); ASSERT_NE(f, nullptr); std::fputs("keep me\n", f); std::fclose(f); }
    ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
    ASSERT_EQ(mkdir(sub.c_str(), 0700), 0);
    ASSERT_EQ(symlink(sub.c_str(), (d + "/link").c_str()), 0);
    const std::vector<std::string> paths = {
        d + "/new.csv", keep, fifo, sub, d + "/link", d + "/link/x.csv", "/dev/null", "/dev/full", "/proc/x.csv",
        "/nonexistent/x.csv", keep + "/x.csv", "", d + "/with space.csv", d + "/" + std::string(300, 'a'), "-", "--reps"};

    for (const std::string& path : progs) {
        const runner::Program p = runner::describe(path);
        ASSERT_FALSE(p.options.empty()) << path << ": --help lists no options";
        Lines gen{p, paths, std::mt19937_64(seed ^ std::hash<std::string>()(path))};
        std::vector<std::vector<std::string>> all(lines);
        for (auto& l : all) l = gen.line();

        // "At once" means beyond what the program's start-up takes before main() (the dynamic
        // loader; for matmul, libcublasLt's start-up: ~0.5 s on 2 cores), which is not its doing.
        double startup = 0;
        for (int i = 0; i < 3; ++i) startup = std::max(startup, runner::run(path, {"--help"}).seconds);
        const double line_limit_s = limit_s + startup;

        std::map<int, int> codes;
        double slowest = 0;
        std::vector<std::string> failures;
        std::mutex mu;
        std::atomic<size_t> next{0};
        auto work = [&] {
            for (size_t i; (i = next++) < all.size();) {
                const runner::Outcome r = runner::run(path, all[i], line_limit_s + 4);
                const bool code_ok = r.code == 0 || r.code == 2 || r.code == 77;
                const bool trace = r.out.find("terminate called") != std::string::npos ||
                                   r.out.find("Segmentation") != std::string::npos ||
                                   r.out.find("Aborted") != std::string::npos;
                const bool usage = r.code != 2 || r.out.find("usage:") != std::string::npos;
                std::lock_guard<std::mutex> lock(mu);
                ++codes[r.code];
                slowest = std::max(slowest, r.seconds);
                if (!code_ok || trace || !usage || r.seconds > line_limit_s)
                    failures.push_back("line " + std::to_string(i) + ": " + path + join(all[i]) + " -> " +
                                       (r.timed_out ? "timed out" : "exit " + std::to_string(r.code)) + " in " +
                                       std::to_string(r.seconds) + " s" + (usage ? "" : ", exit 2 without the usage") +
                                       "\n" + r.out.substr(0, 600));
            }
        };
        std::vector<std::thread> pool;
        for (unsigned t = 0; t < std::max(2u, std::thread::hardware_concurrency()); ++t) pool.emplace_back(work);
        for (std::thread& t : pool) t.join();

        std::string seen;
        for (const auto& kv : codes) seen += " exit " + std::to_string(kv.first) + ": " + std::to_string(kv.second) + ",";
        std::printf("fuzz %s: %zu lines,%s max %.3f s (limit %.3f s: %.3f of start-up + %.3f)\n", path.c_str(), lines,
                    seen.c_str(), slowest, line_limit_s, startup, limit_s);
        for (size_t i = 0; i < failures.size() && i < 10; ++i) ADD_FAILURE() << "FUZZ_SEED=" << seed << " " << failures[i];
        EXPECT_TRUE(failures.empty()) << failures.size() << " bad lines for " << path << " (FUZZ_SEED=" << seed << ")";
        EXPECT_EQ(read_all(keep), "keep me\n") << path << ": the existing file was changed";
    }
    // Everything under d, folders included (d/link/x.csv is d/folder/x.csv), in sorted order.
    const std::string found = runner::run("/usr/bin/find", {d, "-mindepth", "1", "-printf", "%P\\n"}, 10, false).out;
    std::vector<std::string> names;
    for (size_t at = 0, end; (end = found.find('\n', at)) != std::string::npos; at = end + 1)
        names.push_back(found.substr(at, end - at));
    std::sort(names.begin(), names.end());
    std::string left;
    for (const std::string& n : names) left += n + "\n";
    EXPECT_EQ(left, "existing.csv\nfifo\nfolder\nlink\n") << "files left behind (FUZZ_SEED=" << seed << ")";
    runner::run("/bin/rm", {"-rf", d}, 10, false);
}

}  // namespace
