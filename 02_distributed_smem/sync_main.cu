// sync_main.cu - a developer's driver for part 2 alone, until (or besides) ./distributed_smem:
//   nvcc -std=c++17 -O3 -lineinfo -arch=sm_90 -I. -o sync_main 02_distributed_smem/sync_main.cu
//   ./sync_main [--quick] [--pitfalls] [--csv PATH] [--reps N] [--device N]
// The chapter's program runs the same code as `./distributed_smem --sync [--pitfalls]`.
#include <cstdio>
#include "02_distributed_smem/sync.cuh"
#include "common/cli.hpp"
#include "common/device.cuh"

int main(int argc, char** argv) {
    common::CommonOptions opt;
    bool pitfalls = false, quick = false;
    common::Cli cli("sync_main", "part 2 of 02_distributed_smem: synchronization experiments");
    common::add_common_options(cli, opt);
    cli.flag("pitfalls", &pitfalls, "also run the pitfall kernels").flag("quick", &quick, "only the quick subset");
    cli.parse_or_exit(argc, argv);
    const common::DeviceInfo dev = common::require_device(int(opt.device));
    common::print_device_header(dev);
    const bool ok = quick ? distributed_smem::sync::run_sync_quick(dev, opt)
                          : distributed_smem::sync::run_sync_part(dev, opt, pitfalls);
    std::printf("%s\n", ok ? "PASS" : "FAIL");
    return ok ? 0 : 1;
}
