// 04_reduction under every GPU_PROFILE preset (common/gpu.cuh): no launch asks
// for more shared memory than the preset gives one block, and the Hopper
// kernel (reduceBulkCopy: the bulk copy engine and mbarrier tx-counts) is
// waived below 9.0.
//
// What the host decides (the waiver's limits, the dynamic shared memory the
// launchers pass) is checked on the CPU, for every preset, without a GPU. The
// static __shared__ arrays only the compiled code knows: the GPU test reads
// them (cudaFuncGetAttributes) for every kernel each list entry launches.
#include <string>
#include <vector>
#include <gtest/gtest.h>
#include "04_reduction/reduction.cuh"
#include "common/kernel_list.hpp"
#include "tests/gpu_test.hpp"

namespace {

using namespace reduction;

// ---- CPU: the host's decisions, for every preset --------------------------------

// reduceBulkCopy's limits: 9.0, and a block that holds the ring (128 KiB) and
// the static variables beside it. Below 9.0 the reason is the capability;
// the RTX 5090 (12.0) has clusters and bulk copies but 99 KB per block.
TEST(ReductionLimits, BulkCopyIsWaivedBelow90AndWhereTheRingDoesNotFit) {
    for (const common::Gpu& g : testing_gpu::preset_gpus()) {
        const std::string why = bulk_copy_refusal(g);
        const bool ring_fits = kBulkSmem + kBulkStaticSmem <= g.smem_per_block;
        EXPECT_EQ(why.empty(), g.has(90) && ring_fits) << g.profile << ": " << why;
        if (!g.has(90)) EXPECT_NE(why.find("needs sm_90"), std::string::npos) << g.profile << ": " << why;
        else if (!ring_fits) EXPECT_NE(why.find("shared memory"), std::string::npos) << g.profile << ": " << why;
    }
    for (const char* older : {"t4", "a100", "rtx3090", "rtx4090"})
        EXPECT_NE(bulk_copy_refusal(common::gpu_of(testing_gpu::preset_named(older))).find("needs sm_90"),
                  std::string::npos) << older;
    EXPECT_NE(bulk_copy_refusal(common::gpu_of(testing_gpu::preset_named("rtx5090"))).find("shared memory"),
              std::string::npos);
    EXPECT_EQ(bulk_copy_refusal(common::gpu_of(testing_gpu::preset_named("h100"))), "");
}

// Every other kernel runs under every preset: no waiver, and the one dynamic
// size a launcher passes (reduceSmemDyn, reduceGlobalTid: a T per thread)
// fits every preset's block. reduceBulkCopy's waiver is bulk_copy_refusal
// wherever that refuses (and never launches there); where it allows, the
// waiver also asks the build (a CUDA call: the GPU test below).
template <class T>
void waivers_under_every_preset() {
    for (const common::Gpu& g : testing_gpu::preset_gpus()) {
        EXPECT_EQ(common::smem_refusal(dynamic_smem_bytes<T>(), g), "") << g.profile;
        for (const std::vector<Kernel<T>>* list : {&kernels<T>(), &pitfalls<T>()})
            for (const Kernel<T>& k : *list) {
                if (!k.waived) {
                    EXPECT_EQ(waiver(k, g), "") << g.profile << " " << k.name;
                    continue;
                }
                EXPECT_STREQ(k.name, "reduceBulkCopy") << "a new waiver: test its limits here";
                if (!bulk_copy_refusal(g).empty()) EXPECT_EQ(waiver(k, g), bulk_copy_refusal(g)) << g.profile;
            }
    }
}
TEST(ReductionLimits, OnlyTheHopperKernelHasAWaiverInt) { waivers_under_every_preset<int>(); }
TEST(ReductionLimits, OnlyTheHopperKernelHasAWaiverFloat) { waivers_under_every_preset<float>(); }
TEST(ReductionLimits, OnlyTheHopperKernelHasAWaiverDouble) { waivers_under_every_preset<double>(); }

// ---- GPU: the shared memory of every kernel each launcher runs ------------------

using testing_gpu::KernelLaunch;
using testing_gpu::kernel_launch;

// The kernels the entry `name` of kernels<T>() or pitfalls<T>() launches (the
// two-pass steps end with reduceFinal); empty for a name not listed here.
template <class T>
std::vector<KernelLaunch> launches_of(const std::string& name) {
    const KernelLaunch final_pass = kernel_launch(reduceFinal<T>);
    if (name == "reduceNeighbored") return {kernel_launch(reduceNeighbored<T>), final_pass};
    if (name == "reduceGmem") return {kernel_launch(reduceGmem<T>), final_pass};
    if (name == "reduceSmem") return {kernel_launch(reduceSmem<T>), final_pass};
    if (name == "reduceSmemDyn") return {kernel_launch(reduceSmemDyn<T>, dynamic_smem_bytes<T>()), final_pass};
    if (name == "reduceGmemUnroll4") return {kernel_launch(reduceGmemUnroll<4, T>), final_pass};
    if (name == "reduceSmemUnroll4") return {kernel_launch(reduceSmemUnroll<4, T>), final_pass};
    if (name == "reduceGmemUnroll8") return {kernel_launch(reduceGmemUnroll<8, T>), final_pass};
    if (name == "reduceSmemUnroll8") return {kernel_launch(reduceSmemUnroll<8, T>), final_pass};
    if (name == "reduceCompleteUnroll") return {kernel_launch(reduceCompleteUnroll<T, kBlock>), final_pass};
    if (name == "reduceLastWarpShfl") return {kernel_launch(reduceLastWarpShfl<T>), final_pass};
    if (name == "reduceShflDown") return {kernel_launch(reduceShflDown<T>), final_pass};
    if (name == "reduceShflXor") return {kernel_launch(reduceShflXor<T>), final_pass};
    if (name == "reduceGridStrideAtomic") return {kernel_launch(reduceGridStrideAtomic<T>)};
    if (name == "reduceSinglePass") return {kernel_launch(reduceSinglePass<T>)};
    if (name == "reduceVec4") return {kernel_launch(reduceVec4<T>)};
    if (name == "reduceVec4Unroll8") return {kernel_launch(reduceVec4<T, Finish::LastBlock, 8>)};
    if (name == "reduceBulkCopy") return {kernel_launch(reduceBulkCopy<T>, kBulkSmem, 90)};
    if (name == "reduceSmemVolatile") return {kernel_launch(reduceSmemVolatile<T>), final_pass};
    if (name == "reduceSmemEarlyReturn") return {kernel_launch(reduceSmemEarlyReturn<T>), final_pass};
    if (name == "reduceGlobalTid") return {kernel_launch(reduceGlobalTid<T>, dynamic_smem_bytes<T>()), final_pass};
    return {};
}

// Under every preset, every kernel of every entry takes no more shared memory
// than one block may have and has the capability its code needs
// (testing_gpu::launch_refusal), or the entry is waived there: reduceBulkCopy
// below 9.0 and where its ring does not fit. Its static variables fit the
// room its waiver keeps for them.
template <class T>
void every_launch_fits_every_preset() {
    EXPECT_LE(testing_gpu::block_smem(reduceBulkCopy<T>), kBulkStaticSmem);
    for (const std::vector<Kernel<T>>* list : {&kernels<T>(), &pitfalls<T>()})
        for (const Kernel<T>& k : *list) {
            const std::vector<KernelLaunch> launches = launches_of<T>(k.name);
            ASSERT_FALSE(launches.empty()) << k.name << ": add the kernels it launches to launches_of";
            testing_gpu::expect_fits_or_waived(k.name, launches, [&](const common::Gpu& g) { return waiver(k, g); });
        }
}
TEST(ReductionLimits, EveryLaunchFitsEveryPresetOrIsWaivedInt) {
    SKIP_WITHOUT_GPU();
    every_launch_fits_every_preset<int>();
}
TEST(ReductionLimits, EveryLaunchFitsEveryPresetOrIsWaivedFloat) {
    SKIP_WITHOUT_GPU();
    every_launch_fits_every_preset<float>();
}
TEST(ReductionLimits, EveryLaunchFitsEveryPresetOrIsWaivedDouble) {
    SKIP_WITHOUT_GPU();
    every_launch_fits_every_preset<double>();
}

// The program's other launches: the read ceiling, the --final table's ways to
// finish, the toy. None has dynamic shared memory or a waiver.
TEST(ReductionLimits, TheProgramsOtherKernelsFitEveryPreset) {
    SKIP_WITHOUT_GPU();
    const std::vector<KernelLaunch> others = {kernel_launch(readCeiling),
                                              kernel_launch(reduceVec4<int, Finish::Partials>),
                                              kernel_launch(reduceVec4<int, Finish::Atomic>),
                                              kernel_launch(reduceVec4<int, Finish::LastBlockAcqRel>),
                                              kernel_launch(reduceToy<int>),
                                              kernel_launch(emptyKernel)};
    for (const common::Gpu& g : testing_gpu::preset_gpus())
        for (const KernelLaunch& l : others) EXPECT_EQ(testing_gpu::launch_refusal(l, g), "") << g.profile;
}

}  // namespace
