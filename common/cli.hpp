// cli.hpp - command-line options with validation, and the flags every program shares.
//
// Every value is checked before any GPU work starts: a bad value prints a
// one-line reason plus the usage on stderr and exits with 2. parse() itself
// never exits, so it can be unit-tested; parse_or_exit() is what main() calls.
#pragma once
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include "common/report.hpp"

namespace common {

// `arg` as a POSIX shell reads it back: as it is where every character is
// safe, else in single quotes (a ' inside as '\''). The recorded command line
// (a results CSV's "command:") then runs again as it ran.
inline std::string shell_quote(const std::string& arg) {
    const char* safe = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-.,/:=+@%";
    if (!arg.empty() && arg.find_first_not_of(safe) == std::string::npos) return arg;
    std::string q = "'";
    for (char c : arg) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

// "" if `path` can take a program's output file, else why not. Checked while parsing, before
// any GPU work. Only a regular file or a new path is accepted (or a symbolic link to one, which
// is then what is checked): a FIFO with no reader would block the program forever, a device
// (/dev/full) or a folder cannot hold a results file. The file is later written beside itself
// and renamed into place (write_file_atomically in report.hpp), so the check creates a file in
// the same folder the same way and removes it: only a real create answers for a read-only or
// full file system, or /proc, as root too.
inline std::string output_file_problem(const std::string& path) {
    if (path.empty()) return "an empty file name";
    const std::string target = output_target(path);  // where a symbolic link points
    struct stat st;
    if (stat(target.c_str(), &st) == 0) {
        if (S_ISDIR(st.st_mode)) return "'" + path + "' is a folder";
        if (!S_ISREG(st.st_mode)) return "'" + path + "' is not a regular file (a FIFO, a device or a socket)";
        if (access(path.c_str(), W_OK) != 0) return "cannot write '" + path + "' (" + std::strerror(errno) + ")";
    } else if (errno != ENOENT) {
        return "cannot write '" + path + "' (" + std::strerror(errno) + ")";
    }
    std::string probe;
    const int fd = create_beside(target, &probe);
    if (fd < 0) return "cannot write '" + path + "' (" + std::strerror(errno) + ")";
    close(fd);
    unlink(probe.c_str());
    return "";
}

class Cli {
  public:
    Cli(std::string program, std::string summary)
        : program_(std::move(program)), summary_(std::move(summary)) {}

    // --name N, an integer in [lo, hi]. "2^K" is accepted for powers of two.
    Cli& option(const std::string& name, int64_t* dst, const std::string& help, int64_t lo, int64_t hi) {
        opts_.push_back({name, help, Kind::Int, dst, nullptr, nullptr, lo, hi, {}, nullptr});
        return added();
    }
    // --name TEXT, optionally restricted to a list of choices.
    Cli& option(const std::string& name, std::string* dst, const std::string& help,
                std::vector<std::string> choices = {}) {
        opts_.push_back({name, help, Kind::Text, nullptr, dst, nullptr, 0, 0, std::move(choices), nullptr});
        return added();
    }
    // --name PATH of a file the program will write: refused while parsing if it cannot be.
    Cli& output_file(const std::string& name, std::string* dst, const std::string& help) {
        opts_.push_back({name, help, Kind::Text, nullptr, dst, nullptr, 0, 0, {}, output_file_problem});
        return added();
    }
    // --name, a switch.
    Cli& flag(const std::string& name, bool* dst, const std::string& help) {
        opts_.push_back({name, help, Kind::Flag, nullptr, nullptr, dst, 0, 0, {}, nullptr});
        return added();
    }

    // A mode: a flag that runs something other than the default run, and the options that
    // apply to it (`name` "" is the default run itself). Once a program declares its modes, a
    // command line names at most one, and an option its mode would ignore is refused, not
    // silently dropped. --help lists the modes with their options.
    Cli& mode(const std::string& name, std::vector<std::string> takes) {
        modes_.push_back({name, std::move(takes)});
        return *this;
    }

    // Returns "" on success, else the reason. Accepts "--name value" and "--name=value".
    // An option given twice is refused (no silent last-wins), and so are two
    // modes, or an option the chosen mode does not take.
    std::string parse(int argc, const char* const* argv) {
        command_line_.clear();
        given_.clear();
        for (int i = 0; i < argc; ++i) command_line_ += (i ? " " : "") + shell_quote(argv[i]);
        for (int i = 1; i < argc; ++i) {
            std::string arg = argv[i], value;
            if (arg == "--help" || arg == "-h") { help_ = true; continue; }
            if (arg.rfind("--", 0) != 0) return "unexpected argument '" + arg + "'";
            const size_t eq = arg.find('=');
            const bool inline_value = eq != std::string::npos;
            if (inline_value) { value = arg.substr(eq + 1); arg = arg.substr(0, eq); }
            const Opt* o = find(arg.substr(2));
            if (!o) return "unknown option '" + arg + "'";
            if (given(o->name)) return arg + " given twice";
            given_.push_back(o->name);
            if (o->kind == Kind::Flag) {
                if (inline_value) return arg + " takes no value";
                *o->flag = true;
                continue;
            }
            if (!inline_value) {
                if (i + 1 >= argc) return arg + " needs a value";
                value = argv[++i];
                // `--csv --sweep` is a forgotten value, not a file named --sweep (--csv=--sweep or
                // --csv ./--sweep still names one).
                if (value.rfind("--", 0) == 0 && value.size() > 2)
                    return arg + " needs a value, not the option '" + value + "'";
            }
            const std::string err = o->kind == Kind::Int ? set_int(*o, value) : set_text(*o, value);
            if (!err.empty()) return err;
        }
        return mode_problem();
    }

    // Whether --name was on the command line (a default can then mean "not asked for").
    bool given(const std::string& name) const {
        for (const std::string& g : given_) if (g == name) return true;
        return false;
    }

    bool help_requested() const { return help_; }
    const std::string& command_line() const { return command_line_; }

    std::string usage() const {
        std::string u = "usage: " + program_ + " [options]\n" + summary_ + "\n\noptions:\n";
        for (const Opt& o : opts_) {
            std::string left = "  --" + o.name + (o.kind == Kind::Int ? " N" : o.kind == Kind::Text ? " TEXT" : "");
            left.resize(left.size() < 22 ? 22 : left.size() + 1, ' ');
            u += left + o.help + o.shown_default + "\n";
        }
        u += "  --help              this text\n";
        if (modes_.empty()) return u;
        u += "\nmodes (at most one; each takes only the options after it):\n";
        for (const Mode& m : modes_) {
            u += "  " + mode_title(m) + ":";
            for (const std::string& t : m.takes) u += " --" + t;
            u += "\n";
        }
        return u;
    }

    // What main() calls: exits 0 after --help, 2 after a bad command line.
    void parse_or_exit(int argc, const char* const* argv) {
        const std::string err = parse(argc, argv);
        if (!err.empty()) fail(err);
        if (help_) { std::printf("%s", usage().c_str()); std::exit(0); }
    }

    // A command line refused after parsing (a size check, a pitfall without
    // --pitfalls): "program: why", the usage, exit 2. Empty `why`: returns.
    void fail_if(const std::string& why) const {
        if (!why.empty()) fail(why);
    }
    [[noreturn]] void fail(const std::string& why) const {
        std::fprintf(stderr, "%s: %s\n\n%s", program_.c_str(), why.c_str(), usage().c_str());
        std::exit(2);
    }

  private:
    enum class Kind { Int, Text, Flag };
    struct Opt {
        std::string name, help;
        Kind kind;
        int64_t* i;
        std::string* s;
        bool* flag;
        int64_t lo, hi;
        std::vector<std::string> choices;
        std::string (*check)(const std::string&);  // text options: "" or why the value is refused
        std::string shown_default = "";            // " (default X)" as registered, before parsing
    };

    struct Mode {
        std::string name;
        std::vector<std::string> takes;
    };
    static std::string mode_title(const Mode& m) { return m.name.empty() ? "default" : "--" + m.name; }

    // "" or why the modes on the command line do not go together.
    std::string mode_problem() const {
        const Mode* chosen = nullptr;
        for (const Mode& m : modes_) {
            if (m.name.empty() || !given(m.name)) continue;
            if (chosen) return "--" + chosen->name + " and --" + m.name + " cannot be combined (each is a mode of its own)";
            chosen = &m;
        }
        for (const Mode& m : modes_) if (!chosen && m.name.empty()) chosen = &m;
        if (!chosen) return "";
        for (const std::string& g : given_) {
            bool is_mode = false, takes = false;
            std::string goes_with;
            for (const Mode& m : modes_) {
                is_mode |= m.name == g;
                for (const std::string& t : m.takes)
                    if (t == g) goes_with += (goes_with.empty() ? "" : ", ") + mode_title(m);
            }
            for (const std::string& t : chosen->takes) takes |= t == g;
            if (is_mode || takes) continue;
            const std::string run = chosen->name.empty() ? "the default run" : "--" + chosen->name;
            return "--" + g + " does not apply to " + run + " (it goes with: " +
                   (goes_with.empty() ? std::string("no mode") : goes_with) + ")";
        }
        return "";
    }

    const Opt* find(const std::string& name) const {
        for (const Opt& o : opts_) if (o.name == name) return &o;
        return nullptr;
    }

    static std::string set_int(const Opt& o, const std::string& v) {
        const std::string bad = "--" + o.name + " expects an integer in [" + std::to_string(o.lo) + ", " +
                                std::to_string(o.hi) + "], got '" + v + "'";
        int64_t x = 0;
        if (v.size() > 2 && v[0] == '2' && v[1] == '^') {  // 2^K
            int64_t k = 0;
            if (!parse_int(v.substr(2), &k) || k < 0 || k > 62) return bad;
            x = int64_t(1) << k;
        } else if (!parse_int(v, &x)) {
            return bad;
        }
        if (x < o.lo || x > o.hi) return bad;
        *o.i = x;
        return "";
    }

    static bool parse_int(const std::string& v, int64_t* out) {
        if (v.empty() || v.find_first_not_of("+-0123456789") != std::string::npos) return false;
        errno = 0;
        char* end = nullptr;
        const long long x = std::strtoll(v.c_str(), &end, 10);
        if (errno == ERANGE || *end != '\0') return false;  // overflow, or "12abc"
        *out = x;
        return true;
    }

    static std::string set_text(const Opt& o, const std::string& v) {
        if (!o.choices.empty()) {
            bool ok = false;
            std::string list;
            for (const std::string& c : o.choices) { ok |= c == v; list += (list.empty() ? "" : ", ") + c; }
            if (!ok) return "--" + o.name + " must be one of {" + list + "}, got '" + v + "'";
        }
        if (o.check) {
            const std::string why = o.check(v);
            if (!why.empty()) return "--" + o.name + ": " + why;
        }
        *o.s = v;
        return "";
    }

    // The usage shows each option's default as it was when the option was added: a refused
    // command line prints the usage after parsing, when the values may be the user's.
    Cli& added() {
        opts_.back().shown_default = default_of(opts_.back());
        return *this;
    }
    static std::string default_of(const Opt& o) {
        if (o.kind == Kind::Int) return " (default " + std::to_string(*o.i) + ")";
        if (o.kind == Kind::Text && !o.s->empty()) return " (default " + *o.s + ")";
        return "";
    }

    std::string program_, summary_, command_line_;
    std::vector<Opt> opts_;
    std::vector<std::string> given_;
    std::vector<Mode> modes_;
    bool help_ = false;
};

// The options every chapter's program takes (CONTRIBUTING.md, "Program contract").
struct CommonOptions {
    int64_t reps = 20;    // timed repetitions; the median is reported
    int64_t warmup = 3;   // untimed launches first (module load, clocks, caches)
    int64_t seed = 1;     // input data seed
    int64_t device = 0;   // CUDA device ordinal
    std::string csv;      // write the results here as CSV
    std::string kernel;   // run only this kernel (and the baseline)
    bool sweep = false;   // run the chapter's standard size sweep instead of one size
};

// What a mode that times kernels takes from the common options, plus `own` (Cli::mode).
inline std::vector<std::string> timed_options(std::vector<std::string> own = {}) {
    own.insert(own.begin(), {"reps", "warmup", "seed", "device", "csv", "kernel"});
    return own;
}

// `kernels`: the chapter's kernel names, the only values --kernel accepts.
inline void add_common_options(Cli& cli, CommonOptions& c, std::vector<std::string> kernels = {}) {
    cli.option("reps", &c.reps, "timed repetitions, median reported", 1, 100000)
        .option("warmup", &c.warmup, "untimed warm-up launches", 0, 100000)
        .option("seed", &c.seed, "random input seed", 0, INT64_MAX)
        .option("device", &c.device, "CUDA device to run on", 0, 1023)
        .output_file("csv", &c.csv, "write the results to this CSV file (with a metadata header; checked first)")
        .option("kernel", &c.kernel, "run only this kernel (the baseline still runs)", std::move(kernels))
        .flag("sweep", &c.sweep, "run the chapter's size sweep (what `make bench` records)");
}

}  // namespace common
