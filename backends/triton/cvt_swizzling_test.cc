#include "backends/triton/cvt_swizzling.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backends/triton/ttgir_layout.h"
#include "gtest/gtest.h"

namespace scratchsim::triton {
namespace {

// The scratch ScratchFor gives one ttg.convert_layout of an MxN tile between two layouts.
int64_t CvtScratchBytes(const std::string& src, const std::string& dst, int m, int n,
                        const std::string& elem, int num_warps, int cc) {
  absl::StatusOr<ScratchNeed> need = ConvertLayoutScratch(src, dst, m, n, elem, num_warps, 32, cc, "test");
  EXPECT_TRUE(need.ok()) << need.status();
  return need.ok() ? need->bytes : -1;
}

// Fixture matmul_sm90_cf7aa31ab3 (fp32 128x128x32, 8 warps, num_stages 1): Triton 3.6 reported
// metadata.shared = 65536, the epilogue conversion's scratch, i.e. the whole f32 tile in one
// round: no register basis of the accumulator is also a register basis of the store layout
// outside the vectorized access, so nothing is left to split into rounds.
TEST(CvtSwizzlingTest, WgmmaF32EpilogueIsOneRoundOnSm90) {
  const std::string mma =
      "#ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [8, 1], instrShape = "
      "[16, 128, 8]}>";
  const std::string blocked =
      "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [1, 32], warpsPerCTA = [8, 1], "
      "order = [1, 0]}>";
  EXPECT_EQ(CvtScratchBytes(mma, blocked, 128, 128, "f32", 8, 90), 65536);
}

// Fixture matmul_sm100_1a238d480c (fp8 in, f16 out, 128x128x32, 4 warps, num_stages 2):
// Triton 3.6 reported 16400 = the operand buffers (16384) and two mbarriers, so the
// epilogue's TMEM-layout -> blocked conversion needs at most 16400 bytes, less than the
// 32768-byte tile. The ldmatrix/stmatrix pairs make the difference: with ld/st.shared alone
// the conversion would be one round of the whole tile.
TEST(CvtSwizzlingTest, TmemF16EpilogueFitsUnderTheOperandsOnSm100) {
  const std::string tmem =
      "#ttg.linear<{register = [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [0, 32], [0, 64]], "
      "lane = [[1, 0], [2, 0], [4, 0], [8, 0], [16, 0]], warp = [[32, 0], [64, 0]], block = []}>";
  const std::string blocked =
      "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], "
      "order = [1, 0]}>";
  const int64_t bytes = CvtScratchBytes(tmem, blocked, 128, 128, "f16", 4, 100);
  EXPECT_GT(bytes, 0);
  EXPECT_LE(bytes, 16400);
  EXPECT_EQ(CvtScratchBytes(tmem, blocked, 128, 128, "f16", 4, 0), 32768);
}

// Layouts whose counts are not positive (the bases would double forever) are refused: the
// conversion is an error naming the line and the layout, never a guessed size.
TEST(CvtSwizzlingTest, NonPositiveLayoutCountsAreRefused) {
  const std::string blocked =
      "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], "
      "order = [1, 0]}>";
  for (const std::string& bad :
       {std::string("#ttg.blocked<{sizePerThread = [0, 4], threadsPerWarp = [32, 1], warpsPerCTA = [1, 4], "
                    "order = [1, 0]}>"),
        std::string("#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [32, 1], warpsPerCTA = [1, 4], "
                    "order = [2, 0]}>"),
        std::string("#ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = "
                    "[16, 0, 8]}>"),
        std::string("#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [0, 4], instrShape = "
                    "[16, 8]}>")}) {
    absl::StatusOr<ScratchNeed> need = ConvertLayoutScratch(bad, blocked, 64, 64, "f32", 4, 32, 90, "test");
    ASSERT_FALSE(need.ok()) << bad;
    EXPECT_NE(need.status().message().find("test:1: unsupported construct: malformed"), absl::string_view::npos)
        << need.status();
  }
}

// A CDNA4 (gfx950) LDS line is 64 banks wide: more of a conversion fits in one line, so the
// segment is shorter and fewer of its bases become rounds (catalogue 3.9.0 reduce2d on gfx950:
// Triton's scratch is twice gfx942's for the same layouts).
TEST(CvtSwizzlingTest, WiderBankLineLeavesFewerRounds) {
  FlatLayout regs_then_lanes, lanes_then_regs;
  // 2^10 elements: 4 register bits and 6 lane bits swapped between the two layouts.
  for (uint32_t b = 0; b < 4; ++b) regs_then_lanes.reg.push_back(1u << b);
  for (uint32_t b = 4; b < 10; ++b) regs_then_lanes.lane.push_back(1u << b);
  for (uint32_t b = 6; b < 10; ++b) lanes_then_regs.reg.push_back(1u << b);
  for (uint32_t b = 0; b < 6; ++b) lanes_then_regs.lane.push_back(1u << b);
  const auto narrow = SwizzledCvtScratchElems(regs_then_lanes, lanes_then_regs, 10, 32, 0, 32);
  const auto wide = SwizzledCvtScratchElems(regs_then_lanes, lanes_then_regs, 10, 32, 0, 64);
  ASSERT_TRUE(narrow && wide);
  EXPECT_GE(*wide, *narrow);
  EXPECT_FALSE(SwizzledCvtScratchElems(regs_then_lanes, lanes_then_regs, 10, 32, 0, 48).has_value());
}

TEST(CvtSwizzlingTest, AccessTilesFollowTheTarget) {
  AccessTiles t = SharedAccessTiles(80, 16);  // ldmatrix only (sm_75+); stmatrix is sm_90+
  EXPECT_EQ(t.src.size(), 1u);
  EXPECT_EQ(t.dst.size(), 3u);
  t = SharedAccessTiles(90, 16);
  EXPECT_EQ(t.src.size(), 3u);
  EXPECT_EQ(t.dst.size(), 3u);
  t = SharedAccessTiles(90, 32);  // no .trans forms but for 16-bit elements
  EXPECT_EQ(t.src.size(), 2u);
  EXPECT_EQ(t.dst.size(), 2u);
  t = SharedAccessTiles(90, 64);  // matrix instructions move at most 32-bit elements
  EXPECT_EQ(t.src.size(), 1u);
  t = SharedAccessTiles(0, 16);  // not NVIDIA: ld/st only
  EXPECT_EQ(t.src.size(), 1u);
  EXPECT_EQ(t.dst.size(), 1u);
  EXPECT_TRUE(t.dst[0].lane_addr == (LaneIds{0, 1, 2}));
  EXPECT_TRUE(t.dst[0].lane_contig.empty());
}

// A 32x32 f32 transpose between two blocked layouts, 4 warps. Checks the invariants of
// any plan: the shared layout's bases span the tensor, and rounds only split bases that both
// sides hold in registers.
TEST(CvtSwizzlingTest, RoundsAreRegistersOfBothSides) {
  // Flattened with dimension 0 (rows, 5 bits) the most minor: row r, column c -> r + 32 c.
  FlatLayout rows;  // each thread 4 consecutive columns; lanes along columns, then rows
  rows.reg = {32, 64, 16};
  rows.lane = {128, 256, 512, 1, 2};
  rows.warp = {4, 8};
  FlatLayout cols;  // each thread 4 consecutive rows; lanes along rows, then columns
  cols.reg = {1, 2, 512};
  cols.lane = {4, 8, 16, 32, 64};
  cols.warp = {128, 256};
  for (int cc : {0, 80, 90}) {
    const AccessTiles t = SharedAccessTiles(cc, 32);
    const SwizzledRound r = SwizzleWithTiles(rows, cols, 10, 32, t.src, t.dst);
    std::vector<uint32_t> all(r.vec.begin(), r.vec.end());
    for (const auto* v : {&r.bank, &r.segment, &r.reps}) all.insert(all.end(), v->begin(), v->end());
    EXPECT_EQ(all.size(), 10u) << cc;
    uint32_t span = 0;
    for (uint32_t x : all) span |= x;
    EXPECT_EQ(span, 1023u) << cc;
    for (uint32_t x : r.reps) {
      EXPECT_NE(std::find(rows.reg.begin(), rows.reg.end(), x), rows.reg.end());
      EXPECT_NE(std::find(cols.reg.begin(), cols.reg.end(), x), cols.reg.end());
    }
    auto elems = SwizzledCvtScratchElems(rows, cols, 10, 32, cc);
    ASSERT_TRUE(elems.has_value());
    EXPECT_EQ(*elems, int64_t{1024} >> r.reps.size());
  }
}

TEST(CvtSwizzlingTest, LayoutsThatDoNotCoverTheTensorAreRefused) {
  FlatLayout a;
  a.reg = {1, 2};
  a.lane = {4, 8, 16, 32, 64};
  FlatLayout b = a;
  EXPECT_TRUE(SwizzledCvtScratchElems(a, b, 7, 16, 90).has_value());
  EXPECT_FALSE(SwizzledCvtScratchElems(a, b, 8, 16, 90).has_value());   // 2^8 elements: a misses one
  b.reg = {1, 1};                                                        // dependent bases
  EXPECT_FALSE(SwizzledCvtScratchElems(a, b, 7, 16, 90).has_value());
  b.reg = {1, 256};                                                      // outside the tensor
  EXPECT_FALSE(SwizzledCvtScratchElems(a, b, 7, 16, 90).has_value());
  EXPECT_FALSE(SwizzledCvtScratchElems(a, a, 31, 16, 90).has_value());
  EXPECT_FALSE(SwizzledCvtScratchElems(a, a, 7, 0, 90).has_value());
}

// Lists are kept inline; a layout with more bases than kMaxLayoutBases of one kind (more than
// 2^32 registers per thread) is refused rather than truncated.
TEST(CvtSwizzlingTest, OversizedLayoutsAreRefused) {
  FlatLayout a;
  a.reg = {1, 2};
  a.lane = {4, 8, 16, 32, 64};
  FlatLayout b = a;
  for (size_t i = b.reg.size(); i < kMaxLayoutBases; ++i) b.reg.push_back(0);  // broadcast
  EXPECT_TRUE(SwizzledCvtScratchElems(a, b, 7, 16, 90).has_value());
  b.reg.push_back(0);
  EXPECT_FALSE(SwizzledCvtScratchElems(a, b, 7, 16, 90).has_value());
  while (b.reg.size() < BasisList::capacity()) b.reg.push_back(0);
  EXPECT_FALSE(b.reg.overflowed());
  b.reg.push_back(0);  // past the capacity: dropped, and the list says so
  EXPECT_TRUE(b.reg.overflowed());
  EXPECT_EQ(b.reg.size(), BasisList::capacity());
  EXPECT_FALSE(SwizzledCvtScratchElems(b, a, 7, 16, 90).has_value());
}

TEST(CvtSwizzlingTest, InlineListComparesLikeAVector) {
  const BasisList a = {1, 2}, b = {1, 3}, c = {1, 2, 0};
  EXPECT_TRUE(a < b);
  EXPECT_TRUE(a < c);
  EXPECT_TRUE(b >= c);
  EXPECT_TRUE(a >= a);
  EXPECT_FALSE(a == c);
  BasisList d = c;
  d.truncate(2);
  EXPECT_TRUE(d == a);
  d.truncate(5);  // never grows
  EXPECT_EQ(d.size(), 2u);
}

}  // namespace
}  // namespace scratchsim::triton
