// 05_transpose under every GPU_PROFILE preset (common/gpu.cuh): every launch
// fits the preset's block or its entry is waived there (transposeBulkCopy and
// transposeTensorMap below 9.0), and what the host decides from its figures
// of the tiles (kAlignedSmem, kBulkSmem, kMapSmem: the waivers, the blocks of
// the sector-aligned plan an SM holds) is what the compiled sizes give.
// Every tile is a static __shared__ array and no launcher passes dynamic
// shared memory. The compiler refuses more than 48 KiB of static shared
// memory and every preset gives a block at least 64 KiB, so the shared memory
// fits by construction until a launcher passes dynamic bytes (launches_of must
// list them). The figures' check fails where a tile outgrows what its figure
// decides. The compiled size rounds the arrays up (to 128 bytes on sm_90:
// 19968 bytes for kAlignedSmem's 19872), so the two are compared by what they
// decide, not byte for byte.
// Only the compiled code knows a static size, so the test reads it on the GPU
// (cudaFuncGetAttributes).
#include <string>
#include <vector>
#include <gtest/gtest.h>
#include "05_transpose/transpose.cuh"
#include "tests/gpu_test.hpp"

namespace {

using namespace transpose;
using testing_gpu::KernelLaunch;
using testing_gpu::kernel_launch;

// The kernels the entry `name` of kernels() launches; empty for a name not
// listed here. The float4 kernels run transposeSmemPadCoarse for shapes they
// cannot take (rows or cols not a multiple of 4).
std::vector<KernelLaunch> launches_of(const std::string& name) {
    if (name == "copyVec4") return {kernel_launch(copyVec4)};
    if (name == "copyGmem") return {kernel_launch(copyGmem)};
    if (name == "naiveGmem") return {kernel_launch(naiveGmem)};
    if (name == "naiveGmemStridedRead") return {kernel_launch(naiveGmemStridedRead)};
    if (name == "naiveGmemStridedReadLdg") return {kernel_launch(naiveGmemStridedReadLdg)};
    if (name == "transposeSmem") return {kernel_launch(transposeSmem)};
    if (name == "transposeSmemPad") return {kernel_launch(transposeSmemPad)};
    if (name == "transposeSmemUnrollPad") return {kernel_launch(transposeSmemUnrollPad)};
    if (name == "transposeSmemPadCoarse") return {kernel_launch(transposeSmemPadCoarse)};
    if (name == "transposeSwizzleVec4")
        return {kernel_launch(transposeSwizzleVec4<false>), kernel_launch(transposeSmemPadCoarse)};
    if (name == "transposeSwizzleVec4ColGrid")
        return {kernel_launch(transposeSwizzleVec4<true>), kernel_launch(transposeSmemPadCoarse)};
    if (name == "transposeSectorAligned")  // either block size, as its plan chooses
        return {kernel_launch(transposeSectorAligned<512>), kernel_launch(transposeSectorAligned<256>),
                kernel_launch(transposeSectorAligned<256, true>), kernel_launch(transposeSmemPadCoarse)};
    if (name == "transposeBulkCopy")
        return {kernel_launch(transposeBulkCopy<true>, 0, 90), kernel_launch(transposeSmemPadCoarse)};
    if (name == "transposeTensorMap")
        return {kernel_launch(transposeTensorMap<true>, 0, 90), kernel_launch(transposeSmemPadCoarse)};
    return {};
}

// Every kernel of every entry has the capability its code needs and one
// block's shared memory under the preset (testing_gpu::launch_refusal), or
// the entry is waived there.
TEST(TransposeLimits, EveryLaunchFitsEveryPresetOrIsWaived) {
    SKIP_WITHOUT_GPU();
    for (const Kernel& k : kernels()) {
        const std::vector<KernelLaunch> launches = launches_of(k.name);
        ASSERT_FALSE(launches.empty()) << k.name << ": add the kernels it launches to launches_of";
        testing_gpu::expect_fits_or_waived(k.name, launches, [&](const common::Gpu& g) { return waived(k, g); });
    }
}

// The host's figure of a tile against the compiled size of each kernel that
// has it, under every preset: the same waiver and, for the figure the plan
// counts blocks an SM with (kAlignedSmem: sector_aligned_l1_tiles, the
// carveout), the same blocks. A build without sm_90 code has the Hopper
// kernels empty: nothing to compare there.
TEST(TransposeLimits, HostFiguresDecideAsTheCompiledTiles) {
    SKIP_WITHOUT_GPU();
    const struct { const char* kernel; const void* fn; const char* name; size_t figure; bool plans; } tiles[] = {
        {"transposeSectorAligned<256>", kernel_launch(transposeSectorAligned<256>).kernel, "kAlignedSmem", kAlignedSmem, true},
        {"transposeSectorAligned<512>", kernel_launch(transposeSectorAligned<512>).kernel, "kAlignedSmem", kAlignedSmem, true},
        {"transposeSectorAligned<256, true>", kernel_launch(transposeSectorAligned<256, true>).kernel, "kAlignedSmem",
         kAlignedSmem, true},
        {"transposeBulkCopy", kernel_launch(transposeBulkCopy<true>).kernel, "kBulkSmem", kBulkSmem, false},
        {"transposeTensorMap", kernel_launch(transposeTensorMap<true>).kernel, "kMapSmem", kMapSmem, false},
    };
    for (const auto& t : tiles) {
        if (!t.plans && !common::code_refusal(t.fn, 90).empty()) continue;
        const size_t compiled = testing_gpu::block_smem(t.fn);
        for (const common::Gpu& g : testing_gpu::preset_gpus()) {
            const std::string at = g.profile + " " + t.kernel + ": " + t.name + " " + std::to_string(t.figure) +
                                   " B, compiled " + std::to_string(compiled) + " B";
            EXPECT_EQ(common::smem_refusal(t.figure, g).empty(), common::smem_refusal(compiled, g).empty()) << at;
            if (t.plans)
                EXPECT_EQ(common::blocks_per_sm_by_smem(g, t.figure), common::blocks_per_sm_by_smem(g, compiled)) << at;
        }
    }
}

}  // namespace
