#include "backends/tpu/tpu_tiling.h"

#include <vector>

#include "sim/test_util.h"
#include "backends/tpu/xla_verdict.h"
#include "gtest/gtest.h"

namespace scratchsim {
namespace {

constexpr int64_t kMiB = 1024 * 1024;

TEST(TpuTilingTest, FullTileRowsFollowTpuInfoPerGeneration) {
  // JAX tpu_info.get_sublane_tiling: 16-bit stays at 8 sublanes before TPU7x, 8-bit is 32.
  for (const char* name : {"tpu_v4", "tpu_v5e", "tpu_v5p", "tpu_v6e"}) {
    DeviceModel d = testing::ShippedDevice(name);
    EXPECT_EQ(*FullTileRows(d, 32), 8) << name;
    EXPECT_EQ(*FullTileRows(d, 16), 8) << name;
    EXPECT_EQ(*FullTileRows(d, 8), 32) << name;
    EXPECT_EQ(*FullTileRows(d, 4), 64) << name;
  }
  DeviceModel v7x = testing::ShippedDevice("tpu_v7x");
  EXPECT_EQ(*FullTileRows(v7x, 32), 8);
  EXPECT_EQ(*FullTileRows(v7x, 16), 16);
  EXPECT_EQ(*FullTileRows(v7x, 8), 32);
}

TEST(TpuTilingTest, SeedLayoutOfE1001CustomCall) {
  // openxla.org/xla/errors/error_1001: bf16[2048,4096]{1,0:T(8,128)(2,1)}.
  DeviceModel v5e = testing::ShippedDevice("tpu_v5e");
  EXPECT_EQ(XlaLayoutString(v5e, {2048, 4096}, 16), "{1,0:T(8,128)(2,1)}");
  EXPECT_EQ(*PaddedBytes(v5e, {2048, 4096}, 16), 16 * kMiB);
}

TEST(TpuTilingTest, ReportedPaddingF32Minor3) {
  // pytorch/xla issue #7942: "Size: 64.0K Shape: f32[128,3]{1,0} Unpadded size: 1.5K".
  DeviceModel v5e = testing::ShippedDevice("tpu_v5e");
  EXPECT_EQ(XlaBytes(*PaddedBytes(v5e, {128, 3}, 32)), "64.0K");
  EXPECT_EQ(XlaBytes(*UnpaddedBytes({128, 3}, 32)), "1.5K");
  EXPECT_EQ(*PaddedShape(v5e, {128, 3}, 32), (std::vector<int64_t>{128, 128}));
}

TEST(TpuTilingTest, ReportedCompactTileForShortSecondMinor) {
  // sglang-jax issue #182: "Shape: bf16[2,32,32,1,2,128]{5,4,3,2,1,0:T(2,128)(2,1)}
  // Unpadded size: 1.00M", Size 1.00M: a 2-row second-minor dim gets a 2-row tile.
  for (const char* name : {"tpu_v5e", "tpu_v6e", "tpu_v7x"}) {
    DeviceModel d = testing::ShippedDevice(name);
    std::vector<int64_t> shape = {2, 32, 32, 1, 2, 128};
    EXPECT_EQ(XlaLayoutString(d, shape, 16), "{5,4,3,2,1,0:T(2,128)(2,1)}") << name;
    EXPECT_EQ(XlaBytes(*PaddedBytes(d, shape, 16)), "1.00M") << name;
  }
}

TEST(TpuTilingTest, ReportedLargeTileOnV7x) {
  // vllm-project/tpu-inference issue #2803 (v7x): "Size: 4.00M Shape:
  // bf16[8,2048,128]{2,1,0:T(16,128)(2,1)} Unpadded size: 4.00M".
  DeviceModel v7x = testing::ShippedDevice("tpu_v7x");
  EXPECT_EQ(XlaLayoutString(v7x, {8, 2048, 128}, 16), "{2,1,0:T(16,128)(2,1)}");
  EXPECT_EQ(XlaBytes(*PaddedBytes(v7x, {8, 2048, 128}, 16)), "4.00M");
}

TEST(TpuTilingTest, SubTilePaddingDiffersByGeneration) {
  // bf16 with 32 rows: 16-row tiles on v7x; with 40 rows (not a multiple of 16) XLA's 8-row tile.
  EXPECT_EQ(*PaddedShape(testing::ShippedDevice("tpu_v5e"), {24, 128}, 16), (std::vector<int64_t>{24, 128}));
  EXPECT_EQ(*PaddedShape(testing::ShippedDevice("tpu_v7x"), {48, 128}, 16), (std::vector<int64_t>{48, 128}));
  EXPECT_EQ(XlaLayoutString(testing::ShippedDevice("tpu_v7x"), {48, 128}, 16), "{1,0:T(16,128)(2,1)}");
  // int8: 32-row tiles for a multiple of 32 rows, on every generation.
  EXPECT_EQ(XlaLayoutString(testing::ShippedDevice("tpu_v5e"), {64, 200}, 8), "{1,0:T(32,128)(4,1)}");
}

TEST(TpuTilingTest, UnalignedWholeDimensionsGetEightRowTiles) {
  // The libtpu oracle (docs/tpu-oracle.md): a block spanning a whole second-minor dimension the
  // large tile does not divide is padded with XLA's 8-row tile: s8[1,17,4096]{2,1,0:T(8,128)(4,1)}
  // (17 rows -> 24, 98304 B, on every generation), s8 100 x 1000 -> 104 x 1024, and on v7x
  // bf16[1,24,4096]{2,1,0:T(8,128)(2,1)} (24 rows stay 24) and bf16 40 x 1024 -> 40 rows.
  for (const char* gen : {"tpu_v4", "tpu_v5e", "tpu_v7x"}) {
    DeviceModel device = testing::ShippedDevice(gen);
    EXPECT_EQ(*PaddedBytes(device, {1, 17, 4096}, 8), 98304) << gen;
    EXPECT_EQ(XlaLayoutString(device, {1, 17, 4096}, 8), "{2,1,0:T(8,128)(4,1)}") << gen;
    EXPECT_EQ(*PaddedShape(device, {100, 1000}, 8), (std::vector<int64_t>{104, 1024})) << gen;
  }
  DeviceModel v7x = testing::ShippedDevice("tpu_v7x");
  EXPECT_EQ(XlaLayoutString(v7x, {1, 24, 4096}, 16), "{2,1,0:T(8,128)(2,1)}");
  EXPECT_EQ(*PaddedShape(v7x, {1, 24, 4096}, 16), (std::vector<int64_t>{1, 24, 4096}));
  EXPECT_EQ(*PaddedShape(v7x, {40, 1024}, 16), (std::vector<int64_t>{40, 1024}));
  // Fewer than 8 rows keep the compact tile: 3 int8 rows -> 4.
  EXPECT_EQ(*PaddedShape(v7x, {3, 4096}, 8), (std::vector<int64_t>{4, 4096}));
}

TEST(TpuTilingTest, OneDimensionalTiles) {
  DeviceModel v5e = testing::ShippedDevice("tpu_v5e");
  EXPECT_EQ(*PaddedBytes(v5e, {100}, 32), 512);   // 128 lanes of f32
  EXPECT_EQ(*PaddedBytes(v5e, {100}, 16), 512);   // 256 bf16
  EXPECT_EQ(*PaddedBytes(v5e, {600}, 8), 1024);   // 512 int8 per tile
}

TEST(TpuTilingTest, RoundUpExprsAreCompactOrFull) {
  DeviceModel v7x = testing::ShippedDevice("tpu_v7x");
  std::vector<std::string> r = *RoundUpExprs(v7x, 16, 2, "BM");
  ASSERT_EQ(r.size(), 2u);
  // The compact-or-full tile, or the 8-row tile for an unaligned extent of at least 8 rows.
  EXPECT_EQ(r[0], "((BM) >= 8 && (BM) % 16 != 0) * 8 + (1 - ((BM) >= 8 && (BM) % 16 != 0)) * min(16, max(2, pow2ceil(BM)))");
  EXPECT_EQ(r[1], "128");
  // Where the full tile is 8 rows the expression stays the compact-or-full one.
  EXPECT_EQ((*RoundUpExprs(testing::ShippedDevice("tpu_v5e"), 16, 2, "BM"))[0], "min(8, max(2, pow2ceil(BM)))");
}

TEST(TpuTilingTest, BadInput) {
  DeviceModel v5e = testing::ShippedDevice("tpu_v5e");
  EXPECT_FALSE(PaddedBytes(v5e, {0, 128}, 32).ok());
  EXPECT_FALSE(PaddedBytes(v5e, {8, -1}, 32).ok());
  EXPECT_FALSE(PaddedBytes(v5e, {}, 32).ok());
  EXPECT_FALSE(PaddedBytes(v5e, {int64_t{1} << 62, 1 << 20}, 32).ok());
  absl::StatusOr<std::string> dtype = NormalizeTpuDtype("bfloat17");
  ASSERT_FALSE(dtype.ok());
  EXPECT_NE(dtype.status().message().find("bfloat17"), std::string::npos);
  EXPECT_EQ(*NormalizeTpuDtype("bfloat16"), "bf16");
  EXPECT_EQ(*NormalizeTpuDtype("int8"), "i8");
  EXPECT_EQ(*NormalizeTpuDtype("f32"), "f32");
}

}  // namespace
}  // namespace scratchsim
