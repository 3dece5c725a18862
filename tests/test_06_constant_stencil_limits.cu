// 06_constant_stencil under every GPU_PROFILE preset (common/gpu.cuh): no
// launch asks for more shared memory than the preset gives one block. The
// tiles are static __shared__ arrays (no dynamic shared memory, nothing the
// host sizes: the grid-stride kernels' grid comes from the profile's
// occupancy, not their tile) and no kernel needs more than 7.5, so the
// chapter has no waiver: every kernel must fit every preset. Only the compiled
// code knows a static size, so the test reads it on the GPU.
#include <string>
#include <vector>
#include <gtest/gtest.h>
#include "06_constant_stencil/constant_stencil.cuh"
#include "tests/gpu_test.hpp"

namespace {

using namespace constant_stencil;
using testing_gpu::KernelLaunch;
using testing_gpu::kernel_launch;

// The kernels the entry `name` of kernels() or pitfalls() launches; empty for
// a name not listed here.
std::vector<KernelLaunch> launches_of(const std::string& name) {
    if (name == "copyVec4") return {kernel_launch(copyVec4)};
    if (name == "stencil1DGlobal") return {kernel_launch(stencil1DGlobal)};
    if (name == "stencil1DConstant") return {kernel_launch(stencil1DConstant<false>)};
    if (name == "stencil1DReadOnly") return {kernel_launch(stencil1DReadOnly)};
    if (name == "stencil1DL1") return {kernel_launch(stencil1DL1)};
    if (name == "stencil1DL1Vec4") return {kernel_launch(stencil1DL1Vec4)};
    if (name == "stencil1DSmemVec4") return {kernel_launch(stencil1DSmemVec4)};
    if (name == "stencil1DConstantRace") return {kernel_launch(stencil1DConstantRace<false>)};
    return {};
}

TEST(StencilLimits, EveryKernelFitsEveryPreset) {
    SKIP_WITHOUT_GPU();
    for (const std::vector<Kernel>* list : {&kernels(), &pitfalls()})
        for (const Kernel& k : *list) {
            const std::vector<KernelLaunch> launches = launches_of(k.name);
            ASSERT_FALSE(launches.empty()) << k.name << ": add the kernels it launches to launches_of";
            for (const common::Gpu& g : testing_gpu::preset_gpus())
                for (const KernelLaunch& l : launches)
                    EXPECT_EQ(testing_gpu::launch_refusal(l, g), "") << g.profile << " " << k.name;
        }
    // The program's constant-cache experiment, and the stalled variants the tests run.
    for (const common::Gpu& g : testing_gpu::preset_gpus())
        for (const KernelLaunch& l : {kernel_launch(warpReads<true>), kernel_launch(warpReads<false>),
                                      kernel_launch(stencil1DConstant<true>),
                                      kernel_launch(stencil1DConstantRace<true>)})
            EXPECT_EQ(testing_gpu::launch_refusal(l, g), "") << g.profile;
}

}  // namespace
