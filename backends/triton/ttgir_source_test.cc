#include "backends/triton/ttgir_source.h"

#include <string>

#include "gtest/gtest.h"

namespace scratchsim::triton {
namespace {

constexpr char kModule[] = R"(#loc = loc("/home/u/kernel.py":10:0)
module {
  tt.func public @k() {
    %a = ttg.local_alloc : () -> !ttg.memdesc<2x64x32xf16, #shared, #smem, mutable> loc(#loc5)
    %d = tt.dot %x, %y, %z : tensor<64x32xf16> loc(#loc7)
    %r = "tt.reduce"(%v) <{axis = 1 : i32}> ({
    ^bb0(%p: f32, %q: f32):
      %s = arith.addf %p, %q : f32 loc(#loc9)
      tt.reduce.return %s : f32 loc(#loc9)
    }) : (tensor<64x32xf32>) -> tensor<64xf32> loc(#loc8)
    %u = arith.addf %r, %r : tensor<64xf32> loc(unknown)
    %w = arith.addf %r, %r : tensor<64xf32> loc(#loc11)
    %f = arith.addf %r, %r : tensor<64xf32> loc(fused[#loc12, #loc3])
    %c = arith.addf %r, %r : tensor<64xf32> loc(#loc13)
    tt.return loc(#loc)
  } loc(#loc)
} loc(#loc)
#loc2 = loc("/home/u/kernel.py":20:24)
#loc3 = loc("/home/u/kernel.py":22:8)
#loc4 = loc("/venv/lib/python3.12/site-packages/triton/language/standard.py":43:17)
#loc5 = loc("a"(#loc2))
#loc6 = loc(callsite(#loc4 at #loc3))
#loc7 = loc("acc"(#loc6))
#loc8 = loc("/home/u/kernel.py":30:11)
#loc9 = loc("/home/u/kernel.py":31:2)
#loc11 = loc(#loc12)
#loc12 = loc(#loc11)
#loc13 = loc("c"("/home/u/kernel.py":40:1 to 40:9))
)";

class TtgirSourceMapTest : public ::testing::Test {
 protected:
  std::string Describe(int line) {
    auto where = map_.At(line);
    return where ? where->Describe() : "(none)";
  }
  TtgirSourceMap map_ = TtgirSourceMap::Read(kModule);
};

TEST_F(TtgirSourceMapTest, NameAndLineOfAnAlloc) { EXPECT_EQ(Describe(4), "a at kernel.py:20"); }

TEST_F(TtgirSourceMapTest, LibraryCalleeGivesTheCallersLine) { EXPECT_EQ(Describe(5), "acc at kernel.py:22"); }

TEST_F(TtgirSourceMapTest, RegionOpTakesTheLocationAfterItsClosingBrace) {
  EXPECT_EQ(Describe(6), "kernel.py:30");
  EXPECT_EQ(Describe(8), "kernel.py:31");
}

TEST_F(TtgirSourceMapTest, UnknownLocationIsNone) { EXPECT_EQ(Describe(11), "(none)"); }

TEST_F(TtgirSourceMapTest, CyclicTableStopsWithoutALocation) { EXPECT_EQ(Describe(12), "(none)"); }

TEST_F(TtgirSourceMapTest, FusedTakesTheFirstPositionItResolves) { EXPECT_EQ(Describe(13), "kernel.py:22"); }

TEST_F(TtgirSourceMapTest, RangeLocationGivesItsFirstLine) { EXPECT_EQ(Describe(14), "c at kernel.py:40"); }

TEST(TtgirSourceLocationTest, ControlCharactersAreNotPassedOn) {
  SourceLocation where{"x\ty", "/a/ker\x01nel.py", 40};
  EXPECT_EQ(where.Describe(), "x?y at ker?nel.py:40");
}

TEST_F(TtgirSourceMapTest, LineWithoutALocationHasNone) { EXPECT_EQ(Describe(7), "(none)"); }

// Fused lists that fan out at every level would visit 2^30 locations: resolution stops after
// kMaxLocationSteps, having found the position on its first way down.
TEST(TtgirSourceMapStepsTest, FanningTablesStopAfterTheStepBound) {
  std::string text = "    %a = arith.addf %x, %x : f32 loc(#loc1)\n";
  for (int i = 1; i < 30; ++i) {
    text += "#loc" + std::to_string(i) + " = loc(fused[#loc" + std::to_string(i + 1) + ", #loc" +
            std::to_string(i + 1) + "])\n";
  }
  text += "#loc30 = loc(\"/k.py\":3:1)\n";
  const TtgirSourceMap map = TtgirSourceMap::Read(text);
  ASSERT_TRUE(map.At(1).has_value());
  EXPECT_EQ(map.At(1)->Describe(), "k.py:3");
}

TEST(TtgirSourceLocationTest, LongNamesAreCut) {
  SourceLocation where{std::string(500, 'n'), "/k.py", 3};
  EXPECT_EQ(where.Describe(), std::string(120, 'n') + "... at k.py:3");
}

}  // namespace
}  // namespace scratchsim::triton
