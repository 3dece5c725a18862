// report.hpp - the results table every program prints, and the CSV it records.
//
// One row per kernel and problem size: the launch configuration, the median
// time, the throughput (bytes or flops over the chapter's stated minimum), the
// throughput as a percentage of the chapter's peer measured in the same run,
// the max error against the CPU reference, PASS/FAIL.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

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
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string q = "\"";
    for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
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
        std::string s;
        for (const auto& kv : meta) s += "# " + kv.first + ": " + kv.second + "\n";
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

    // Writes the CSV or exits 1 with the reason (a missing folder, say).
    void write_csv(const std::string& path, const Metadata& meta) const {
        FILE* f = std::fopen(path.c_str(), "w");
        const std::string text = csv(meta);
        if (!f || std::fwrite(text.data(), 1, text.size(), f) != text.size() || std::fclose(f) != 0) {
            std::fprintf(stderr, "cannot write %s\n", path.c_str());
            std::exit(1);
        }
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
