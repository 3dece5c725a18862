// report.hpp - the results table every program prints, and the CSV it records.
//
// One row per kernel and problem size: the launch configuration, the median
// time, the throughput (bytes or flops over the chapter's stated minimum), the
// throughput as a percentage of the chapter's peer measured in the same run,
// the max error against the CPU reference, PASS/FAIL.
#pragma once
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace common {

struct Row {
    std::string problem;       // e.g. "8192x8192"
    double size = 0;           // the same as a number (the x axis of plots)
    std::string kernel;        // the kernel's name, as in the source
    std::string launch;        // e.g. "grid(128,256) block(32,16)"
    double ms = 0;             // median time
    double rate = 0;           // GB/s or GFLOP/s
    double pct_of_peer = -1;   // < 0: not applicable
    double max_err = 0;        // vs the CPU reference
    std::string result;        // PASS or FAIL
    std::vector<std::string> extra;  // chapter-specific columns
};

using Metadata = std::vector<std::pair<std::string, std::string>>;

inline std::string csv_field(const std::string& s) {
    if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
    std::string q = "\"";
    for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
}

// The metadata as "# key: value" lines, the head of every results CSV. A line break in a value
// (a command-line argument may hold one) becomes a space: it would end the comment line.
inline std::string csv_comments(const Metadata& meta) {
    std::string s;
    for (const auto& kv : meta) {
        std::string v = kv.second;
        for (char& c : v) if (c == '\n' || c == '\r') c = ' ';
        s += "# " + kv.first + ": " + v + "\n";
    }
    return s;
}

// The file that writing `path` replaces: `path` itself, or the file a symbolic link there points
// to (through a chain of links), whether it exists yet or not, as a shell's `>` would write it.
inline std::string output_target(const std::string& path) {
    std::string target = path;
    for (int hops = 0; hops < 40; ++hops) {  // a loop of links stops here; stat then says ELOOP
        char to[4096];
        const ssize_t n = readlink(target.c_str(), to, sizeof to);
        if (n <= 0 || size_t(n) == sizeof to) break;  // not a link
        std::string next(to, size_t(n));
        const size_t slash = target.rfind('/');
        if (next[0] != '/' && slash != std::string::npos) next = target.substr(0, slash + 1) + next;
        target = next;
    }
    return target;
}

// A new file beside `target`, for writing: named `target`.<pid>.<n>.tmp, the first n that no
// other file has (stored in *name), and made by open() with 0666, so that it gets what the umask
// and the folder's default ACL leave of that, as any new file would. (mkstemp's 0600 would make
// a results file private, and reading the umask means setting it for a moment, which another
// thread would see.) The descriptor, or -1 with errno saying why.
inline int create_beside(const std::string& target, std::string* name) {
    int fd = -1;
    for (int n = 0; fd < 0 && n < 100; ++n) {
        *name = target + "." + std::to_string(getpid()) + "." + std::to_string(n) + ".tmp";
        fd = open(name->c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0 && errno != EEXIST) break;
    }
    return fd;
}

// Writes `text` to a new file beside `path` and renames it over `path` only once it is complete
// and on disk, so a failed write (a full disk) never leaves a truncated file where the old one
// stood. "" on success, else why not (the old file is then untouched and the new one removed).
inline std::string write_file_atomically(const std::string& path, const std::string& text) {
    // A symbolic link stays a link: the file it points to is the one replaced.
    const std::string target = output_target(path);
    std::string tmp;
    const int fd = create_beside(target, &tmp);
    if (fd < 0) return "cannot create a file beside " + path + ": " + std::strerror(errno);
    struct stat old;  // an existing file's mode goes to the file that replaces it
    if (stat(target.c_str(), &old) == 0) fchmod(fd, old.st_mode & 07777);
    std::string err;
    for (size_t done = 0; done < text.size() && err.empty();) {
        const ssize_t n = write(fd, text.data() + done, text.size() - done);
        if (n < 0 && errno != EINTR) err = std::strerror(errno);
        if (n > 0) done += size_t(n);
    }
    if (err.empty() && fsync(fd) != 0) err = std::strerror(errno);
    if (close(fd) != 0 && err.empty()) err = std::strerror(errno);
    if (err.empty() && rename(tmp.c_str(), target.c_str()) != 0) err = std::strerror(errno);
    if (err.empty()) return "";
    unlink(tmp.c_str());
    return "cannot write " + path + ": " + err;
}

// What a program does with its results file: write it, or exit 1 saying why.
inline void write_file_or_exit(const std::string& path, const std::string& text) {
    const std::string err = write_file_atomically(path, text);
    if (err.empty()) return;
    std::fprintf(stderr, "%s (the results are above; any old file is left as it was)\n", err.c_str());
    std::exit(1);
}

inline std::string fmt(const char* f, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, f, v);
    return buf;
}

class Report {
  public:
    Report(std::string rate_unit, std::string peer, std::vector<std::string> extra_columns = {})
        : unit_(std::move(rate_unit)), peer_(std::move(peer)), extra_(std::move(extra_columns)) {}

    // A heading for a new problem size, followed by the column titles.
    void section(const std::string& title) const {
        std::printf("\n%s\n", title.c_str());
        std::printf("%-28s %-28s %10s %10s %9s %10s %6s", "kernel", "launch", "ms", unit_.c_str(),
                    ("% " + peer_).c_str(), "max err", "result");
        for (const std::string& e : extra_) std::printf(" %10s", e.c_str());
        std::printf("\n");
        std::fflush(stdout);
    }

    // Prints the row at once (a long run shows progress) and keeps it for the CSV.
    void add(const Row& r) {
        std::printf("%-28s %-28s %10.4f %10.1f %9s %10.3g %6s", r.kernel.c_str(), r.launch.c_str(), r.ms,
                    r.rate, r.pct_of_peer < 0 ? "-" : fmt("%.1f%%", r.pct_of_peer).c_str(), r.max_err,
                    r.result.c_str());
        for (const std::string& e : r.extra) std::printf(" %10s", e.c_str());
        std::printf("\n");
        std::fflush(stdout);
        rows_.push_back(r);
    }

    bool all_pass() const {
        for (const Row& r : rows_) if (r.result != "PASS") return false;
        return !rows_.empty();
    }
    const std::vector<Row>& rows() const { return rows_; }

    // "# key: value" comment lines, then a header and one line per row.
    std::string csv(const Metadata& meta) const {
        std::string s = csv_comments(meta);
        s += "problem,size,kernel,launch,ms," + rate_column() + ",pct_of_" + peer_ + ",max_err,result";
        for (const std::string& e : extra_) s += "," + csv_field(e);
        s += "\n";
        for (const Row& r : rows_) {
            s += csv_field(r.problem) + "," + fmt("%.0f", r.size) + "," + csv_field(r.kernel) + "," +
                 csv_field(r.launch) + "," + fmt("%.5f", r.ms) + "," + fmt("%.2f", r.rate) + "," +
                 (r.pct_of_peer < 0 ? "" : fmt("%.2f", r.pct_of_peer)) + "," + fmt("%.3g", r.max_err) + "," +
                 r.result;
            for (const std::string& e : r.extra) s += "," + csv_field(e);
            s += "\n";
        }
        return s;
    }

    // Writes the CSV (write_file_or_exit), then says so.
    void write_csv(const std::string& path, const Metadata& meta) const {
        write_file_or_exit(path, csv(meta));
        std::printf("\nwrote %s (%zu rows)\n", path.c_str(), rows_.size());
    }

  private:
    std::string rate_column() const {  // "GB/s" -> "GB_per_s"
        std::string c;
        for (char ch : unit_) c += ch == '/' ? std::string("_per_") : std::string(1, ch);
        return c;
    }
    std::string unit_, peer_;
    std::vector<std::string> extra_;
    std::vector<Row> rows_;
};

}  // namespace common
