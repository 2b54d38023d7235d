#include "backends/triton/amd_lds_usage.h"

#include <string>

#include "backends/triton/ttgir_allocation.h"
#include "gtest/gtest.h"

namespace scratchsim::triton {
namespace {

// A 128x128 f32 conversion on gfx942, marked or not for padded scratch. Triton's own allocation
// pass (bench/triton/alloc_ir.py) gives 65536 unmarked under 3.6.0 and 3.9.0, 18432 marked under
// 3.6.0 (a [32, 128] tile whose rows are padded by 16 elements: 32 x 144 x 4 bytes) and 65536
// marked under 3.9.0, whose allocator reads no mark (tests/data/triton/lds/README.md).
std::string Conversion(const std::string& attr, const std::string& shape = "128x128") {
  return "#b1 = #ttg.blocked<{sizePerThread = [8, 4], threadsPerWarp = [8, 8], warpsPerCTA = [4, 1], order = [1, 0]}>\n"
         "#b2 = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [8, 8], warpsPerCTA = [4, 1], order = [1, 0]}>\n"
         "module attributes {\"ttg.num-ctas\" = 1 : i32, \"ttg.num-warps\" = 4 : i32, ttg.target = \"hip:gfx942\", "
         "\"ttg.threads-per-warp\" = 64 : i32} {\n"
         "  tt.func public @k(%p: !tt.ptr<f32>) {\n"
         "    %c = arith.constant dense<1.0> : tensor<" + shape + "xf32, #b1>\n"
         "    %y = ttg.convert_layout %c " + attr + ": tensor<" + shape + "xf32, #b1> -> tensor<" + shape + "xf32, #b2>\n"
         "    %ps = tt.splat %p : !tt.ptr<f32> -> tensor<" + shape + "x!tt.ptr<f32>, #b2>\n"
         "    tt.store %ps, %y : tensor<" + shape + "x!tt.ptr<f32>, #b2>\n"
         "    tt.return\n"
         "  }\n"
         "}\n";
}

int64_t Shared(const std::string& text, TritonRelease release) {
  PlanOptions options;
  options.release = release;
  auto plan = PlanTtgir(text, "cvt.ttgir", options);
  EXPECT_TRUE(plan.ok()) << plan.status();
  return plan.ok() ? plan->allocation.shared : -1;
}

TEST(AmdLdsUsage, PaddedScratchOnlyWhereTriton36ReadsTheMark) {
  EXPECT_EQ(Shared(Conversion(""), TritonRelease::k3_6), 65536);
  EXPECT_EQ(Shared(Conversion("{amdg.use_padded_scratch_shmem} "), TritonRelease::k3_6), 18432);
  EXPECT_EQ(Shared(Conversion("{amdgpu.use_padded_scratch_shmem} "), TritonRelease::k3_6), 65536);
  EXPECT_EQ(Shared(Conversion("{amdg.use_padded_scratch_shmem} "), TritonRelease::k3_9), 65536);
}

// The same conversion of a 256x256 tile (131072 bytes swizzled) is over gfx942's 64 KiB: Triton
// 3.6's OptimizeLDSUsage splits it and allocates 36864 (Triton's allocation pass, which runs it);
// Triton 3.9 runs the pass before writing the TTGIR, so this TTGIR is what its allocator sees.
TEST(AmdLdsUsage, Triton36SplitsAConversionOverTheLds) {
  EXPECT_EQ(Shared(Conversion("", "256x256"), TritonRelease::k3_6), 36864);
  EXPECT_EQ(Shared(Conversion("", "256x256"), TritonRelease::k3_9), 131072);
}

TEST(AmdLdsUsage, LdsPerTarget) {
  EXPECT_EQ(AmdLdsBytes("hip:gfx942"), 65536);
  EXPECT_EQ(AmdLdsBytes("hip:gfx950"), 163840);
}

}  // namespace
}  // namespace scratchsim::triton
