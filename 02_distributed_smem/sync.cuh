// sync.cuh - part 2 of the chapter: synchronization beyond one block (./distributed_smem --sync).
// STUB: the interface distributed_smem.cu calls; the synchronization part fills it in.
#pragma once
#include <string>
#include "common/cli.hpp"
#include "common/device.cuh"

namespace distributed_smem::sync {

// ./distributed_smem --sync [--pitfalls] [--csv PATH]: every experiment of part 2, its tables
// printed, its rows written to opt.csv when given. True when every check passed.
inline bool run_sync_part(const common::DeviceInfo& dev, const common::CommonOptions& opt, bool pitfalls) {
    (void)dev; (void)opt; (void)pitfalls;
    return true;
}

// The cheap subset that the default run includes (a second or less). True when every check passed.
inline bool run_sync_quick(const common::DeviceInfo& dev, const common::CommonOptions& opt) {
    (void)dev; (void)opt;
    return true;
}

}  // namespace distributed_smem::sync
