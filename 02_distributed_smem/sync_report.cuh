// sync_report.cuh - part 2 of 02_distributed_smem (./distributed_smem --sync): the table its
// experiments print and the CSV it writes (experiment, variant, config, value, unit, result, note).
#pragma once
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>
#include "common/device.cuh"
#include "common/report.hpp"

namespace distributed_smem::sync {

// ---------------------------------------------------------------------------------------------
// One measured number, printed at once and kept for the CSV.
struct SyncRow {
    std::string experiment, variant, config;
    double value = 0;
    std::string unit, note, result;  // result: PASS, FAIL, or "-" (a measurement with nothing to check)
};

class SyncReport {
  public:
    void section(const std::string& title) const {
        std::printf("\n%s\n%-14s %-36s %-30s %14s %-12s %-6s %s\n", title.c_str(), "experiment", "variant", "config",
                    "value", "unit", "result", "note");
        std::fflush(stdout);
    }
    void add(const SyncRow& r) {
        std::printf("%-14s %-36s %-30s %14s %-12s %-6s %s\n", r.experiment.c_str(), r.variant.c_str(),
                    r.config.c_str(), format(r.value).c_str(), r.unit.c_str(), r.result.c_str(), r.note.c_str());
        std::fflush(stdout);
        rows_.push_back(r);
    }
    bool all_pass() const {
        for (const SyncRow& r : rows_) if (r.result == "FAIL") return false;
        return true;
    }
    const std::vector<SyncRow>& rows() const { return rows_; }
    static std::string format(double v) {
        if (v == double(static_cast<long long>(v)) && v < 1e15) return std::to_string(static_cast<long long>(v));
        return common::fmt(v < 10 ? "%.2f" : v < 1000 ? "%.1f" : "%.0f", v);
    }
    std::string csv(const common::Metadata& meta) const {
        std::string s = common::csv_comments(meta);
        s += "experiment,variant,config,value,unit,result,note\n";
        for (const SyncRow& r : rows_)
            s += common::csv_field(r.experiment) + "," + common::csv_field(r.variant) + "," +
                 common::csv_field(r.config) + "," + format(r.value) + "," + common::csv_field(r.unit) + "," +
                 r.result + "," + common::csv_field(r.note) + "\n";
        return s;
    }

  private:
    std::vector<SyncRow> rows_;
};

// ---------------------------------------------------------------------------------------------
inline void write_sync_csv(const SyncReport& rep, const common::DeviceInfo& dev, const std::string& path,
                           const std::string& command_line) {
    common::Metadata meta = common::run_metadata(dev, command_line);
    meta.push_back({"part", "02_distributed_smem part 2 (synchronization); see the README's Part 2"});
    common::write_file_or_exit(path, rep.csv(meta));
    std::printf("\nwrote %s (%zu rows)\n", path.c_str(), rep.rows().size());
}

}  // namespace distributed_smem::sync
