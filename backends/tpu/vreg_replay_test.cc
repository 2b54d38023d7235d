#include "backends/tpu/vreg_replay.h"

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "backends/tpu/spill_model.h"
#include "sim/expr.h"
#include "google/protobuf/text_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sim/test_data.h"
#include "sim/test_util.h"

namespace scratchsim {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// A softmax over a (256, 1024) f32 block, as scratchsim.pallas traces it: x is read by the max,
// then by the subtraction after it; e by the sum, then by the division after it.
constexpr char kSoftmax[] = R"pb(
  program {
    values: "ref" values: "f32[256,1024]" values: "f32[256]" values: "f32[256,1]" values: "f32[256,1024]"
    values: "f32[256,1024]" values: "f32[256]" values: "f32[256,1]" values: "f32[256,1024]" values: "ref"
    values: "f32[256,1024]"
    ops { op: "get" operands: 0 results: 1 }
    ops { op: "reduce_max" operands: 1 results: 2 axes: 1 }
    ops { op: "broadcast_in_dim" operands: 2 results: 3 }
    ops { op: "sub" operands: 1 operands: 3 results: 4 }
    ops { op: "exp" operands: 4 results: 5 }
    ops { op: "reduce_sum" operands: 5 results: 6 axes: 1 }
    ops { op: "broadcast_in_dim" operands: 6 results: 7 }
    ops { op: "div" operands: 5 operands: 7 results: 8 }
    ops { op: "swap" operands: 9 operands: 8 results: 10 }
  }
)pb";

// A dequantizing matmul: an int8 weight block converted to bf16 and scaled in the body, then
// multiplied; the bf16 activations are a load.
constexpr char kDequantMatmul[] = R"pb(
  program {
    values: "ref" values: "ref" values: "ref" values: "bf16[128,512]" values: "i8[512,1024]"
    values: "bf16[512,1024]" values: "bf16[1,1024]" values: "bf16[512,1024]" values: "f32[128,1024]"
    ops { op: "get" operands: 0 results: 3 }
    ops { op: "get" operands: 1 results: 4 }
    ops { op: "convert_element_type" operands: 4 results: 5 }
    ops { op: "get" operands: 2 results: 6 }
    ops { op: "mul" operands: 5 operands: 6 results: 7 }
    ops { op: "dot_general" operands: 3 operands: 7 results: 8 }
  }
)pb";

// An im2col patch matrix: two computed (negated) column blocks concatenated on the lanes and
// multiplied as the dot's left operand; the weights are a load.
constexpr char kConcatenatedPatches[] = R"pb(
  program {
    values: "ref" values: "ref" values: "bf16[256,128]" values: "bf16[256,128]" values: "bf16[256,128]"
    values: "bf16[256,128]" values: "bf16[256,256]" values: "bf16[256,128]" values: "f32[256,128]"
    ops { op: "get" operands: 0 results: 2 }
    ops { op: "neg" operands: 2 results: 3 }
    ops { op: "get" operands: 0 results: 4 }
    ops { op: "neg" operands: 4 results: 5 }
    ops { op: "concatenate" operands: 3 operands: 5 results: 6 }
    ops { op: "get" operands: 1 results: 7 }
    ops { op: "dot_general" operands: 6 operands: 7 results: 8 }
  }
)pb";

class VregReplayTest : public ::testing::Test {
 protected:
  static PallasBody Body(const char* text) {
    PallasBody body;
    EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &body));
    return body;
  }
  // kDequantMatmul with 32-bit weights: a dot operand computed in the body, not from 8 bits.
  static std::string F32WeightsMatmul() {
    std::string text = kDequantMatmul;
    text.replace(text.find("\"i8[512,1024]\""), 14, "\"f32[512,1024]\"");
    return text;
  }
  // A matmul with its computed block as the dot's left operand, the one the MXU streams.
  static std::string ComputedLeft(std::string text) {
    text.replace(text.find("operands: 3 operands: 7"), 23, "operands: 7 operands: 3");
    return text;
  }
  static std::string F32WeightsLeftMatmul() { return ComputedLeft(F32WeightsMatmul()); }
  // kSoftmax's spill estimate with reduction figures inside the fitted shapes (a quarter of the
  // exp block), so that its band is the validated class's.
  static SpillEstimate SoftmaxInsideTheFit(const DeviceModel& device) {
    PallasBody body = Body(kSoftmax);
    body.set_reduction_live_bytes("262144");
    body.set_reduction_input_bytes("262144");
    body.set_reduction_output_bytes("1024");
    return EstimateSpills(body, device);
  }
  // The traced bodies the bands were fitted on or checked against (bench/tpu/validated_bodies.py);
  // a record that does not parse fails the test that reads them.
  static constexpr char kFitBodies[] = "backends/tpu/testdata/validated_bodies.pbtxt.gz";
  static std::vector<KernelGraph> FitBodies() {
    std::vector<KernelGraph> graphs;
    absl::StatusOr<std::string> text = testing::ReadTestData(kFitBodies);
    EXPECT_TRUE(text.ok()) << kFitBodies << ": " << text.status();
    if (!text.ok()) return graphs;
    for (absl::string_view record : absl::StrSplit(*text, "\n---\n")) {
      KernelGraph& graph = graphs.emplace_back();
      EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(std::string(record), &graph)) << record.substr(0, 200);
    }
    return graphs;
  }
  const DeviceModel v4_ = testing::ShippedDevice("tpu_v4");
  const DeviceModel v5e_ = testing::ShippedDevice("tpu_v5e");
  const DeviceModel v6e_ = testing::ShippedDevice("tpu_v6e");
};

TEST_F(VregReplayTest, ParsesValueTypes) {
  absl::StatusOr<VregValueType> t = ParseValueType("bf16[4,256,512]", "v");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_TRUE(t->vector);
  EXPECT_EQ(t->bits, 16);
  EXPECT_EQ(t->dims, (std::vector<int64_t>{4, 256, 512}));
  EXPECT_FALSE(ParseValueType("ref", "v")->vector);
  EXPECT_FALSE(ParseValueType("i32[]", "v")->vector);  // a scalar
}

TEST_F(VregReplayTest, RefusesAMalformedTypeNamingTheField) {
  absl::StatusOr<VregValueType> t = ParseValueType("f32[8,x]", "body.program[0].values[3]");
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(std::string(t.status().message()), HasSubstr("body.program[0].values[3]"));
  EXPECT_FALSE(ParseValueType("f32", "v").ok());
  EXPECT_FALSE(ParseValueType("q7[8,128]", "v").ok());
  EXPECT_FALSE(ParseValueType("f32[-1,128]", "v").ok());
}

TEST_F(VregReplayTest, PadsToTilesAndPacksNarrowValuesUnlessWidened) {
  const VregValueType bf16 = *ParseValueType("bf16[20,130]", "v");
  EXPECT_EQ(VregBytes(bf16, /*widened=*/false), 32 * 256 * 2);  // 16 packed rows, 2 lane tiles
  EXPECT_EQ(VregBytes(bf16, /*widened=*/true), 24 * 256 * 4);   // 8 rows a tile at 32 bits
  EXPECT_EQ(VregBytes(*ParseValueType("f32[3,8,128]", "v"), false), 3 * 4096);
  EXPECT_EQ(VregBytes(*ParseValueType("f32[100]", "v"), false), 128 * 4);
}

TEST_F(VregReplayTest, AReplicatedAxisHoldsOneTile) {
  // An iota along the minor dim: one vreg per 128 lanes, whatever the rows (Mosaic's IotaOp layout).
  const VregValueType columns = *ParseValueType("i32[128,1024]{sublanes replicated}", "v");
  EXPECT_EQ(columns.replicated, Replicated::kSublanes);
  EXPECT_EQ(VregBytes(columns, false), 8 * 4096);
  // Along the second-minor dim: one vreg per 8 rows; 16-bit values pack 16 rows to a vreg.
  EXPECT_EQ(VregBytes(*ParseValueType("f32[4,256,512]{lanes replicated}", "v"), false), 4 * 32 * 4096);
  EXPECT_EQ(VregBytes(*ParseValueType("bf16[256,512]{lanes replicated}", "v"), false), 16 * 4096);
  EXPECT_EQ(ParseValueType("f32[256,512]", "v")->replicated, Replicated::kNone);
  // A scalar broadcast replicates both: one vreg per leading index.
  const VregValueType scalar = *ParseValueType("f32[2,256,512]{sublanes and lanes replicated}", "v");
  EXPECT_EQ(scalar.replicated, Replicated::kBoth);
  EXPECT_EQ(VregBytes(scalar, false), 2 * 4096);
}

TEST_F(VregReplayTest, RefusesAReplicatedLayoutItCannotHaveNamingTheField) {
  absl::StatusOr<VregValueType> one_dim = ParseValueType("i32[1024]{sublanes replicated}", "body.program[1].values[0]");
  ASSERT_FALSE(one_dim.ok());
  EXPECT_THAT(one_dim.status().message(), HasSubstr("body.program[1].values[0]"));
  EXPECT_THAT(one_dim.status().message(), HasSubstr("two or more dims"));
  absl::StatusOr<VregValueType> unknown = ParseValueType("i32[8,128]{rows replicated}", "v");
  ASSERT_FALSE(unknown.ok());
  EXPECT_THAT(unknown.status().message(), HasSubstr("{sublanes replicated}"));
}

TEST_F(VregReplayTest, AReplicatedValueHeldAcrossAReductionHoldsItsTiles) {
  // topk_mask's round: the column index (an iota along the lanes) is read after the max, as the
  // block is: 1 MiB of block and 8 vregs of index, not two blocks.
  absl::StatusOr<VregReplay> r = ReplayVregs(Body(R"pb(
    program {
      values: "ref" values: "f32[256,1024]" values: "f32[256,1024]{sublanes replicated}" values: "f32[256]"
      values: "f32[256,1]" values: "i1[256,1024]" values: "f32[256,1024]"
      ops { op: "get" operands: 0 results: 1 }
      ops { op: "iota" results: 2 }
      ops { op: "reduce_max" operands: 1 results: 3 axes: 1 }
      ops { op: "broadcast_in_dim" operands: 3 results: 4 }
      ops { op: "eq" operands: 2 operands: 4 results: 5 }
      ops { op: "select_n" operands: 5 operands: 1 operands: 2 results: 6 }
    }
  )pb"), v5e_);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->peak_held_bytes, 256 * 1024 * 4 + 8 * 4096);
}

TEST_F(VregReplayTest, SaturatesInsteadOfWrapping) {
  EXPECT_EQ(VregBytes(*ParseValueType("f32[1099511627776,1099511627776,1099511627776]", "v"), false),
            std::numeric_limits<int64_t>::max());
}

// Values whose bytes saturate (hostile dims) keep every figure in range through a nested region.
TEST_F(VregReplayTest, SaturatedValuesKeepTheFiguresInRange) {
  PallasBody body = Body(R"pb(
    program {
      values: "f32[1099511627776,1099511627776]" values: "f32[1099511627776,1099511627776]" values: "f32[8]"
      ops { op: "exp" operands: 0 results: 1 }
      ops { op: "scan" operands: 1 results: 2 }
      ops { op: "exp" operands: 1 operands: 2 }
    }
    program {
      parent: 0 at_op: 1
      values: "f32[1099511627776,1099511627776]" values: "f32[1099511627776]"
      ops { op: "reduce_sum" operands: 0 results: 1 axes: 1 }
      ops { op: "exp" operands: 0 operands: 1 }
    }
  )pb");
  absl::StatusOr<VregReplay> r = ReplayVregs(body, v5e_);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->peak_live_bytes, std::numeric_limits<int64_t>::max());
  EXPECT_GE(r->peak_held_bytes, 0);
  EXPECT_GE(SpillBoundBytes(*r), 0);
}

TEST_F(VregReplayTest, ReductionsDotsAndMinorTransposesAreBarriers) {
  PallasOp op;
  op.set_op("reduce_max");
  EXPECT_TRUE(IsBarrier(op));
  op.set_op("transpose");
  for (int a : {0, 2, 1}) op.add_axes(a);
  EXPECT_TRUE(IsBarrier(op));
  op.clear_axes();
  for (int a : {1, 0, 2, 3}) op.add_axes(a);  // leading dims only: renames vregs
  EXPECT_FALSE(IsBarrier(op));
  op.set_op("exp");
  EXPECT_FALSE(IsBarrier(op));
}

TEST_F(VregReplayTest, HoldsWhatStraddlesAReduction) {
  absl::StatusOr<VregReplay> r = ReplayVregs(Body(kSoftmax), v5e_);
  ASSERT_TRUE(r.ok()) << r.status();
  // x across the max (1 MiB); e across the sum likewise: the peak is one block.
  EXPECT_EQ(r->peak_held_bytes, 256 * 1024 * 4);
  EXPECT_THAT(r->peak_at, HasSubstr("reduce_max"));
  EXPECT_EQ(r->max_barriers_per_region, 2);
  EXPECT_TRUE(r->primitives.count("exp"));
}

TEST_F(VregReplayTest, TheComputedFigureLeavesLoadsOut) {
  absl::StatusOr<VregReplay> r = ReplayVregs(Body(kSoftmax), v5e_);
  ASSERT_TRUE(r.ok());
  // x, a load, across the max does not count; e, computed, across the sum does; the sum's row
  // vector is the barrier's result.
  EXPECT_EQ(r->peak_computed_held_bytes, 256 * 1024 * 4);
  EXPECT_EQ(r->barrier_results_bytes, 1024);
  EXPECT_EQ(r->computed_peak_at, "reduce_sum (region 0, op 5)");
  absl::StatusOr<VregReplay> dot = ReplayVregs(Body(F32WeightsLeftMatmul().c_str()), v5e_);
  ASSERT_TRUE(dot.ok());
  // The scaled block the MXU streams whole is computed (kept packed); the other operand is a load.
  EXPECT_EQ(dot->peak_computed_held_bytes, 512 * 1024 * 2);
  EXPECT_EQ(dot->barrier_results_bytes, 128 * 1024 * 4);
}

// Welford's column statistics over a (512, 1024) bf16 block: x, converted to f32, is read by the
// column sum and then by the subtraction of the column mean. `sum_axis` is the reduced axis.
std::string ColumnStatistics(int sum_axis, const char* reduction = "reduce_sum") {
  return absl::StrCat(R"pb(
    program {
      values: "ref" values: "bf16[512,1024]" values: "f32[512,1024]" values: "f32[1024]"
      values: "f32[1,1024]{sublanes replicated}" values: "f32[512,1024]" values: "f32[512,1024]"
      ops { op: "get" operands: 0 results: 1 }
      ops { op: "convert_element_type" operands: 1 results: 2 }
      ops { op: ")pb", reduction, R"pb(" operands: 2 results: 3 axes: )pb", sum_axis, R"pb( }
      ops { op: "broadcast_in_dim" operands: 3 results: 4 }
      ops { op: "sub" operands: 2 operands: 4 results: 5 }
      ops { op: "mul" operands: 5 operands: 5 results: 6 }
    }
  )pb");
}

// A reduction over a block's sublanes reads every vreg of its operand before it yields: what is
// computed before it and read after it is held whole, on any schedule. One over the lanes, or a
// cumulative one, yields row by row and holds nothing whole by necessity.
TEST_F(VregReplayTest, AColumnSumHoldsWhatIsComputedBeforeItAndReadAfter) {
  absl::StatusOr<VregReplay> column = ReplayVregs(Body(ColumnStatistics(0).c_str()), v5e_);
  ASSERT_TRUE(column.ok()) << column.status();
  EXPECT_EQ(column->sublane_reduction_computed_held_bytes, 512 * 1024 * 4);
  for (const std::string& text : {ColumnStatistics(1), ColumnStatistics(0, "cumsum")}) {
    absl::StatusOr<VregReplay> other = ReplayVregs(Body(text.c_str()), v5e_);
    ASSERT_TRUE(other.ok()) << other.status();
    EXPECT_EQ(other->sublane_reduction_computed_held_bytes, 0) << text;
  }
}

// The band's low is at least what the register file cannot keep of a column sum's held values:
// 32 vregs on v4, 64 on v5e-v7x (tests/data/tpu/vreg_alloc_probe.txt); the central and high with it.
TEST_F(VregReplayTest, AColumnSumsHeldValuesBeyondTheRegisterFileAreTheLowOfTheBand) {
  const PallasBody body = Body(ColumnStatistics(0).c_str());
  for (const auto& [device, vregs] : {std::pair{&v4_, 32}, std::pair{&v5e_, 64}, std::pair{&v6e_, 64}}) {
    const SpillEstimate estimate = EstimateSpills(body, *device);
    const int64_t floor = 512 * 1024 * 4 - vregs * 4096;
    for (const std::string* figure : {&estimate.low, &estimate.central, &estimate.high}) {
      const absl::StatusOr<int64_t> bytes = Expr::EvaluateConstant(*figure);
      ASSERT_TRUE(bytes.ok()) << *figure;
      EXPECT_GE(*bytes, floor) << *figure;
    }
    EXPECT_EQ(*Expr::EvaluateConstant(estimate.low), floor);
    EXPECT_THAT(estimate.basis, HasSubstr(absl::StrCat("less the register file (", vregs, " vregs)")));
  }
}

// The probe's elementwise body (docs/validation/data/tpu/store-groups-probe.txt): f32 (256, 512)
// blocks x, y, z; a = y * 0.9 + x, b = z * x, o = x - a * b; `stores` names what it stores, in order,
// each to its own ref. `convert` makes x a bf16 block's convert.
std::string StoredResults(const std::string& stores, bool convert = false) {
  std::string values =
      R"pb(values: "ref" values: "ref" values: "ref" values: "f32[256,512]" values: "f32[256,512]"
           values: "f32[256,512]" values: "f32[256,512]" values: "f32[256,512]" values: "f32[256,512]"
           values: "f32[256,512]" values: "f32[256,512]" values: "ref" values: "ref" values: "ref"
           values: "f32[256,512]" values: "f32[256,512]" values: "f32[256,512]" values: "bf16[256,512]")pb";
  // 0-2 input refs; 3 x (or x's convert), 4 y, 5 z; 6 y * 0.9, 7 a, 8 b, 9 a * b, 10 o; 11-13 output
  // refs of o, a, b; 14-16 the stores' old contents; 17 the bf16 load.
  std::string ops = convert ? R"pb(ops { op: "get" operands: 0 results: 17 }
                                  ops { op: "convert_element_type" operands: 17 results: 3 })pb"
                            : R"pb(ops { op: "get" operands: 0 results: 3 })pb";
  absl::StrAppend(&ops, R"pb(ops { op: "get" operands: 1 results: 4 } ops { op: "get" operands: 2 results: 5 }
                             ops { op: "mul" operands: 4 results: 6 } ops { op: "add" operands: 6 operands: 3 results: 7 }
                             ops { op: "mul" operands: 5 operands: 3 results: 8 }
                             ops { op: "mul" operands: 7 operands: 8 results: 9 }
                             ops { op: "sub" operands: 3 operands: 9 results: 10 })pb");
  for (char c : stores) {
    const int ref = c == 'o' ? 11 : c == 'a' ? 12 : 13, value = c == 'o' ? 10 : c == 'a' ? 7 : 8;
    absl::StrAppend(&ops, " ops { op: \"swap\" operands: ", ref, " operands: ", value, " results: ", ref + 3, " }");
  }
  return absl::StrCat("program { ", values, " ", ops, " }");
}

// Each output's stores are one run of LLO's schedule, so a computed value two outputs' stores need
// is whole between their runs on any order: here a and b, each read by o's chain and stored by its
// own output. On the best order (a, o, b) one of them at a time: one block.
TEST_F(VregReplayTest, StoresOfSeveralOutputsHoldWhatTwoOfThemNeed) {
  for (const char* stores : {"oab", "abo", "bao"}) {
    absl::StatusOr<VregReplay> r = ReplayVregs(Body(StoredResults(stores).c_str()), v5e_);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->store_group_held_bytes, 256 * 512 * 4) << stores;
  }
}

// One output, or outputs that share no computed value, hold nothing so (the probe: both spill none).
TEST_F(VregReplayTest, OutputsSharingNoComputedValueHoldNothing) {
  for (const char* stores : {"o", "ab"}) {
    absl::StatusOr<VregReplay> r = ReplayVregs(Body(StoredResults(stores).c_str()), v5e_);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->store_group_held_bytes, 0) << stores;
  }
}

// What one op makes of a load alone (here x's convert, which o and b both read) is loaded again and
// remade where it is read: the shared values are a and b alone, as before.
TEST_F(VregReplayTest, AConvertOfALoadIsRemadeNotHeld) {
  absl::StatusOr<VregReplay> r = ReplayVregs(Body(StoredResults("oab", /*convert=*/true).c_str()), v5e_);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->store_group_held_bytes, 256 * 512 * 4);
}

// On the program's order of the runs: o first holds a and b both until theirs; a, b, o holds both
// until o's. Two blocks where the least over every order is one.
TEST_F(VregReplayTest, StoresInTheProgramsOrderHoldWhatItsRunsNeed) {
  for (const char* stores : {"oab", "abo"}) {
    absl::StatusOr<VregReplay> r = ReplayVregs(Body(StoredResults(stores).c_str()), v5e_);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->store_group_program_order_bytes, 2 * 256 * 512 * 4) << stores;
  }
}

// The band's low is at least what the register file cannot keep of the least hold, its central
// of the hold on the program's order.
TEST_F(VregReplayTest, WhatStoresHoldBeyondTheRegisterFileIsTheLowAndTheCentral) {
  const SpillEstimate estimate = EstimateSpills(Body(StoredResults("oab").c_str()), v5e_);
  EXPECT_EQ(*Expr::EvaluateConstant(estimate.low), 256 * 512 * 4 - 64 * 4096);
  EXPECT_EQ(*Expr::EvaluateConstant(estimate.central), 2 * 256 * 512 * 4 - 64 * 4096);
  EXPECT_GE(*Expr::EvaluateConstant(estimate.high), 2 * 256 * 512 * 4 - 64 * 4096);
  EXPECT_THAT(estimate.basis, HasSubstr("the stores of several outputs hold"));
}

// A widened band's central is the computed values held across a barrier, not the loads (LLO loads
// a block again where it needs it), and not the class's central. Here a loaded block and its
// exponential both straddle a cumulative sum (no fitted reduction body has one): 1 MiB computed,
// 2 MiB with the load.
TEST_F(VregReplayTest, TheWidenedCentralLeavesLoadsOut) {
  const PallasBody body = Body(R"pb(
    reduction_live_bytes: "2097152" reduction_input_bytes: "1048576" reduction_output_bytes: "1048576"
    program {
      values: "ref" values: "f32[256,1024]" values: "f32[256,1024]" values: "f32[256,1024]"
      values: "f32[256,1024]" values: "f32[256,1024]"
      ops { op: "get" operands: 0 results: 1 }
      ops { op: "exp" operands: 1 results: 2 }
      ops { op: "cumsum" operands: 2 results: 3 axes: 1 }
      ops { op: "sub" operands: 3 operands: 1 results: 4 }
      ops { op: "mul" operands: 4 operands: 2 results: 5 }
    }
  )pb");
  absl::StatusOr<VregReplay> r = ReplayVregs(body, v5e_);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->peak_held_bytes, 2 * 256 * 1024 * 4);
  EXPECT_EQ(r->peak_computed_held_bytes, 256 * 1024 * 4);
  const SpillEstimate estimate = EstimateSpills(body, v5e_, &*r);
  EXPECT_THAT(estimate.unvalidated, HasSubstr("cumsum"));
  // The replay's figure alone: the reduction class's fitted central is no evidence for this body.
  EXPECT_EQ(estimate.central, absl::StrCat("round_up(", 256 * 1024 * 4 - kVregFileBytes, ", 4096)"));
  // The high bound is the replay's proven bound, not the class's fitted high.
  EXPECT_EQ(estimate.high,
            absl::StrCat("round_up(max(", SpillBoundBytes(*r), ", ", 256 * 1024 * 4 - kVregFileBytes, "), 4096)"));
  EXPECT_THAT(estimate.basis, HasSubstr("central the 1048576 B of computed values the vreg replay holds across cumsum (region 0, op 2)"));
}

// A body that rolls lanes: LLO unpacks its 16-bit loads ahead of the roll and holds them, so the
// widened band's high bound is at least every value it widens from 16 bits
// (docs/validation/data/tpu/rotate-heads-spill-probe.txt). Four bf16 heads here, each loaded,
// converted, rolled and stored one after another: 4 x 128 KiB at 32 bits, more than the program
// order ever holds.
TEST_F(VregReplayTest, ABodyThatRollsBoundsItsSpillsByWhatItUnpacks) {
  constexpr int kHeads = 4;
  std::string values = "values: \"ref\"", ops;
  for (int h = 0; h < kHeads; ++h) {
    const int base = 1 + 4 * h;  // the head's load, its f32 copy, the rolled copy, the bf16 result
    absl::StrAppend(&values, " values: \"bf16[256,128]\" values: \"f32[256,128]\" values: \"f32[256,128]\"",
                    " values: \"bf16[256,128]\"");
    absl::StrAppend(&ops, "ops { op: \"get\" operands: 0 results: ", base, " }",
                    " ops { op: \"convert_element_type\" operands: ", base, " results: ", base + 1, " }",
                    " ops { op: \"roll\" operands: ", base + 1, " results: ", base + 2, " axes: 1 }",
                    " ops { op: \"convert_element_type\" operands: ", base + 2, " results: ", base + 3, " }",
                    " ops { op: \"swap\" operands: 0 operands: ", base + 3, " }");
  }
  const PallasBody body = Body(absl::StrCat("program { ", values, " ", ops, " }").c_str());
  absl::StatusOr<VregReplay> r = ReplayVregs(body, v5e_);
  ASSERT_TRUE(r.ok()) << r.status();
  const int64_t unpacked = kHeads * 256 * 128 * 4;
  ASSERT_LT(SpillBoundBytes(*r), unpacked);
  const SpillEstimate estimate = EstimateSpills(body, v5e_, &*r);
  EXPECT_THAT(estimate.unvalidated, HasSubstr("roll"));
  EXPECT_THAT(estimate.high, HasSubstr(absl::StrCat("max(", unpacked, ", ")));
  EXPECT_THAT(estimate.basis, HasSubstr("the 16-bit values it unpacks, which LLO loads ahead of a roll"));
}

TEST_F(VregReplayTest, BoundsSpillsByEveryValueTheBodyDefines) {
  absl::StatusOr<VregReplay> r = ReplayVregs(Body(kSoftmax), v5e_);
  ASSERT_TRUE(r.ok());
  // Four blocks of 1 MiB (x, x - max, e, e / sum; the swap's old value is never read), two
  // row vectors of 1 KiB, two columns of 32 vregs.
  EXPECT_EQ(r->all_values_bytes, 4 * (1 << 20) + 2 * 1024 + 2 * 32 * 4096);
}

// The patch matrix times a right operand of `lanes` lanes (kConcatenatedPatches has 128).
std::string PatchesTimesARightOperandOf(int lanes) {
  return absl::StrReplaceAll(kConcatenatedPatches, {{"values: \"bf16[256,128]\" values: \"f32[256,128]\"",
                                                     absl::StrCat("values: \"bf16[256,", lanes, "]\" values: \"f32[256,",
                                                                  lanes, "]\"")}});
}

// Concatenated operands that fill whole native tiles are their vregs side by side
// (tpu_concatenate_rule): the patch matrix is held once, as the two blocks it is made of.
TEST_F(VregReplayTest, AConcatenationOfWholeTilesHoldsItsOperandsOnce) {
  // 512 lanes: two tiles of v6e's 256-wide MXUs.
  const std::string text = PatchesTimesARightOperandOf(512);
  absl::StatusOr<VregReplay> v6e = ReplayVregs(Body(text.c_str()), v6e_);
  ASSERT_TRUE(v6e.ok()) << v6e.status();
  const int64_t block = 256 * 128 * 2;  // one bf16 block of 256 x 128, packed on v6e
  // Most live: the two negated blocks and the loaded weights (four blocks), not a third copy at the
  // concatenation.
  EXPECT_EQ(v6e->peak_live_bytes, 6 * block);
  // The dot's computed left operand is the two blocks, held whole across the MXU's two passes.
  EXPECT_EQ(v6e->peak_held_bytes, 2 * block);
  EXPECT_EQ(v6e->peak_computed_held_bytes, 2 * block);
  // Two loads, two negations and the weights; the unread dot result never occupies a vreg.
  EXPECT_EQ(v6e->all_values_bytes, 8 * block);
}

// Through one tile of the right operand (128 lanes) the MXU streams the patch matrix once: each
// block is made as it is pushed, and nothing is held across the dot.
TEST_F(VregReplayTest, ALeftOperandThroughOneMxuTileIsMadeAsItIsPushed) {
  for (const DeviceModel* device : {&v4_, &v5e_, &v6e_}) {
    absl::StatusOr<VregReplay> replay = ReplayVregs(Body(kConcatenatedPatches), *device);
    ASSERT_TRUE(replay.ok()) << replay.status();
    EXPECT_EQ(replay->peak_held_bytes, 0) << device->name();
    EXPECT_EQ(replay->peak_computed_held_bytes, 0) << device->name();
  }
}

// 256 lanes are one tile of v6e's MXU and two of v5e's: held on v5e alone.
TEST_F(VregReplayTest, WhetherTheLeftOperandIsHeldFollowsTheGenerationsMxuWidth) {
  const std::string text = PatchesTimesARightOperandOf(256);
  absl::StatusOr<VregReplay> v5e = ReplayVregs(Body(text.c_str()), v5e_);
  absl::StatusOr<VregReplay> v6e = ReplayVregs(Body(text.c_str()), v6e_);
  ASSERT_TRUE(v5e.ok() && v6e.ok());
  EXPECT_EQ(v5e->peak_computed_held_bytes, 2 * 256 * 128 * 2);
  EXPECT_EQ(v6e->peak_computed_held_bytes, 0);
}

// Operands of 64 lanes are moved into the result's vregs: operands and result are both live at
// the concatenation.
TEST_F(VregReplayTest, AConcatenationOfPartTilesMakesNewVregs) {
  // The patch matrix's fixture with 64-lane blocks and a 128-row right operand.
  const std::string half_tiles = absl::StrReplaceAll(
      kConcatenatedPatches, {{"bf16[256,128]\" values: \"bf16[256,128]\" values: \"bf16[256,128]\"",
                              "bf16[256,64]\" values: \"bf16[256,64]\" values: \"bf16[256,64]\""},
                             {"\"bf16[256,128]\" values: \"bf16[256,256]\" values: \"bf16[256,128]\"",
                              "\"bf16[256,64]\" values: \"bf16[256,128]\" values: \"bf16[128,128]\""}});
  absl::StatusOr<VregReplay> v6e = ReplayVregs(Body(half_tiles.c_str()), v6e_);
  ASSERT_TRUE(v6e.ok()) << v6e.status();
  const int64_t padded_block = 256 * 128 * 2;  // a 64-lane block pads to a whole vreg column
  EXPECT_EQ(v6e->peak_live_bytes, 3 * padded_block);
  EXPECT_EQ(v6e->peak_held_bytes, padded_block);
}

// RoPE by rotate_half at a head dim of 128: its halves are 64 lanes, part tiles, so the
// concatenation shifts lanes across vregs and its result is made whole; the block converted to f32
// before it is read after it.
constexpr char kRotateHalf[] = R"pb(
  program {
    values: "ref" values: "bf16[256,128]" values: "f32[256,128]" values: "f32[256,64]" values: "f32[256,64]"
    values: "f32[256,64]" values: "f32[256,128]" values: "ref" values: "f32[256,128]" values: "f32[256,128]"
    values: "f32[256,128]" values: "f32[256,128]" values: "ref" values: "f32[256,128]"
    ops { op: "get" operands: 0 results: 1 }
    ops { op: "convert_element_type" operands: 1 results: 2 }
    ops { op: "slice" operands: 2 results: 3 }
    ops { op: "neg" operands: 3 results: 4 }
    ops { op: "slice" operands: 2 results: 5 }
    ops { op: "concatenate" operands: 4 operands: 5 results: 6 }
    ops { op: "get" operands: 7 results: 8 }
    ops { op: "mul" operands: 2 operands: 8 results: 9 }
    ops { op: "mul" operands: 6 operands: 8 results: 10 }
    ops { op: "add" operands: 9 operands: 10 results: 11 }
    ops { op: "swap" operands: 12 operands: 11 results: 13 }
  }
)pb";

TEST_F(VregReplayTest, AConcatenationOfPartTilesHoldsItsResultWhole) {
  absl::StatusOr<VregReplay> v6e = ReplayVregs(Body(kRotateHalf), v6e_);
  ASSERT_TRUE(v6e.ok()) << v6e.status();
  const int64_t block = 256 * 128 * 4;  // one f32 block of 256 x 128
  // The converted block, read after the concatenation, and the rotated block it makes.
  EXPECT_EQ(v6e->peak_computed_held_bytes, 2 * block);
  EXPECT_EQ(v6e->computed_peak_at, "concatenate (region 0, op 5)");
  EXPECT_EQ(v6e->max_barriers_per_region, 1);
}

TEST_F(VregReplayTest, AConcatenationOfPartTilesLeavesALoadedBlockToBeLoadedAgain) {
  // An f32 input: the block is a load, not converted.
  const std::string text = absl::StrReplaceAll(
      kRotateHalf, {{"op: \"convert_element_type\" operands: 1", "op: \"get\" operands: 0"}});
  absl::StatusOr<VregReplay> v6e = ReplayVregs(Body(text.c_str()), v6e_);
  ASSERT_TRUE(v6e.ok()) << v6e.status();
  const int64_t block = 256 * 128 * 4;
  EXPECT_EQ(v6e->peak_computed_held_bytes, block);  // the rotated block alone
  EXPECT_EQ(v6e->peak_held_bytes, 2 * block);       // with the loaded block
}

// Partial rotary at a head dim of 128 with 32 rotated lanes: the rotated part and the rest are
// slices of the converted block at lanes 0 and 32, each covering every vreg of it.
constexpr char kPartialRotary[] = R"pb(
  program {
    values: "ref" values: "bf16[256,128]" values: "f32[256,128]" values: "f32[256,32]" values: "f32[256,16]"
    values: "f32[256,16]" values: "f32[256,16]" values: "f32[256,32]" values: "ref" values: "f32[256,32]"
    values: "f32[256,32]" values: "f32[256,32]" values: "f32[256,32]" values: "f32[256,96]"
    values: "f32[256,128]" values: "ref" values: "f32[256,128]"
    ops { op: "get" operands: 0 results: 1 }
    ops { op: "convert_element_type" operands: 1 results: 2 }
    ops { op: "slice" operands: 2 results: 3 start_indices: 0 start_indices: 0 }
    ops { op: "slice" operands: 3 results: 4 start_indices: 0 start_indices: 16 }
    ops { op: "neg" operands: 4 results: 5 }
    ops { op: "slice" operands: 3 results: 6 start_indices: 0 start_indices: 0 }
    ops { op: "concatenate" operands: 5 operands: 6 results: 7 }
    ops { op: "get" operands: 8 results: 9 }
    ops { op: "mul" operands: 3 operands: 9 results: 10 }
    ops { op: "mul" operands: 7 operands: 9 results: 11 }
    ops { op: "add" operands: 10 operands: 11 results: 12 }
    ops { op: "slice" operands: 2 results: 13 start_indices: 0 start_indices: 32 }
    ops { op: "concatenate" operands: 12 operands: 13 results: 14 }
    ops { op: "swap" operands: 15 operands: 14 results: 16 }
  }
)pb";

// A slice keeps its operand's vregs (Mosaic gives it the layout offset of its start): the rotated
// lanes are the converted block's vregs, not a copy held beside it.
TEST_F(VregReplayTest, ASliceCoveringEveryVregOfItsOperandIsThatOperand) {
  absl::StatusOr<VregReplay> v6e = ReplayVregs(Body(kPartialRotary), v6e_);
  ASSERT_TRUE(v6e.ok()) << v6e.status();
  const int64_t block = 256 * 128 * 4;  // one f32 block of 256 x 128
  // At the rotation's concatenation: the converted block (its slices read after) and the result.
  EXPECT_EQ(v6e->peak_computed_held_bytes, 2 * block);
  EXPECT_EQ(v6e->computed_peak_at, "concatenate (region 0, op 6)");
}

TEST_F(VregReplayTest, ASliceOfUnknownStartHoldsVregsOfItsOwn) {
  const std::string text = absl::StrReplaceAll(
      kPartialRotary, {{" start_indices: 0 start_indices: 0 }", " }"}, {" start_indices: 0 start_indices: 16 }", " }"},
                       {" start_indices: 0 start_indices: 32 }", " }"}});
  absl::StatusOr<VregReplay> v6e = ReplayVregs(Body(text.c_str()), v6e_);
  ASSERT_TRUE(v6e.ok()) << v6e.status();
  const int64_t block = 256 * 128 * 4;
  // The rotated lanes are a third block, live across the concatenation beside the other two.
  EXPECT_EQ(v6e->peak_computed_held_bytes, 3 * block);
}

// One slice of `operand` ("f32[256,256]") at `starts` making `result`, then negated and stored: what
// every value the body reads holds.
int64_t SliceBodyValueBytes(const char* operand, const char* result, int row_start, int lane_start) {
  const std::string text = absl::StrCat(
      "program { values: \"ref\" values: \"", operand, "\" values: \"", result, "\" values: \"", result,
      "\" values: \"ref\" values: \"", result, "\"\n",
      "ops { op: \"get\" operands: 0 results: 1 }\n",
      "ops { op: \"slice\" operands: 1 results: 2 start_indices: ", row_start, " start_indices: ", lane_start, " }\n",
      "ops { op: \"neg\" operands: 2 results: 3 }\n",
      "ops { op: \"swap\" operands: 4 operands: 3 results: 5 } }");
  PallasBody body;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &body)) << text;
  absl::StatusOr<VregReplay> replay = ReplayVregs(body, testing::ShippedDevice("tpu_v6e"));
  EXPECT_TRUE(replay.ok()) << replay.status();
  return replay.ok() ? replay->all_values_bytes : -1;
}

TEST_F(VregReplayTest, ASliceStartingPastItsOperandIsRefusedByTheField) {
  const std::string text = absl::StrReplaceAll(
      kPartialRotary, {{"results: 13 start_indices: 0 start_indices: 32", "results: 13 start_indices: 0 start_indices: 64"}});
  absl::StatusOr<VregReplay> r = ReplayVregs(Body(text.c_str()), v6e_);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("body.program[0].ops[11].start_indices[1]: 64"));
}

TEST_F(VregReplayTest, StartIndicesOfAWrongCountAreRefused) {
  const std::string text = absl::StrReplaceAll(
      kPartialRotary, {{"results: 13 start_indices: 0 start_indices: 32", "results: 13 start_indices: 32"}});
  absl::StatusOr<VregReplay> r = ReplayVregs(Body(text.c_str()), v6e_);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("body.program[0].ops[11].start_indices: 1 starts"));
}

TEST_F(VregReplayTest, StartIndicesOnAnOpOtherThanASliceAreRefused) {
  const std::string text = absl::StrReplaceAll(
      kPartialRotary, {{"op: \"neg\" operands: 4 results: 5", "op: \"neg\" operands: 4 results: 5 start_indices: 0"}});
  absl::StatusOr<VregReplay> r = ReplayVregs(Body(text.c_str()), v6e_);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("only a slice of one operand has them (neg)"));
}

TEST_F(VregReplayTest, ASliceThatLeavesVregsOutHoldsVregsOfItsOwn) {
  constexpr int64_t kVreg = 4096;
  // The loaded block (64 vregs) and the negation (32), with the slice as the block's vregs: 128
  // lanes from lane 64 touch both vreg columns of every row.
  EXPECT_EQ(SliceBodyValueBytes("f32[256,256]", "f32[256,128]", 0, 64), 96 * kVreg);
  // From lane 0 they touch one column: the slice is 32 vregs of its own.
  EXPECT_EQ(SliceBodyValueBytes("f32[256,256]", "f32[256,128]", 0, 0), 128 * kVreg);
  // Rows 4-11 of a 16-row block touch both of its row tiles; rows 0-7 one.
  EXPECT_EQ(SliceBodyValueBytes("f32[16,128]", "f32[8,128]", 4, 0), 2 * kVreg + kVreg);
  EXPECT_EQ(SliceBodyValueBytes("f32[16,128]", "f32[8,128]", 0, 0), 2 * kVreg + 2 * kVreg);
}

// The V part of a loaded fused block (lanes 128-255 of 256), read across a reduction of another
// block: a slice that leaves half its operand's vregs out.
constexpr char kSlicedLoad[] = R"pb(
  program {
    values: "ref" values: "f32[256,256]" values: "f32[256,128]" values: "ref" values: "f32[256,128]"
    values: "f32[256]" values: "f32[256,128]" values: "f32[256,128]" values: "ref" values: "f32[256,128]"
    ops { op: "get" operands: 0 results: 1 }
    ops { op: "slice" operands: 1 results: 2 start_indices: 0 start_indices: 128 }
    ops { op: "get" operands: 3 results: 4 }
    ops { op: "reduce_max" operands: 4 results: 5 axes: 1 }
    ops { op: "broadcast_in_dim" operands: 5 results: 6 }
    ops { op: "add" operands: 2 operands: 6 results: 7 }
    ops { op: "swap" operands: 8 operands: 7 results: 9 }
  }
)pb";

// A slice of a load is part of the load's vregs, which LLO loads again from the block where it is
// read: not a computed value held across the reduction.
TEST_F(VregReplayTest, ASliceOfALoadIsLoadedAgainRatherThanHeld) {
  absl::StatusOr<VregReplay> v6e = ReplayVregs(Body(kSlicedLoad), v6e_);
  ASSERT_TRUE(v6e.ok()) << v6e.status();
  EXPECT_EQ(v6e->peak_computed_held_bytes, 0);
  EXPECT_EQ(v6e->peak_held_bytes, 256 * 128 * 4);  // held if it were not loaded again
}

TEST_F(VregReplayTest, ASliceOfALoadOfUnknownStartIsComputed) {
  const std::string text =
      absl::StrReplaceAll(kSlicedLoad, {{" start_indices: 0 start_indices: 128 }", " }"}});
  absl::StatusOr<VregReplay> v6e = ReplayVregs(Body(text.c_str()), v6e_);
  ASSERT_TRUE(v6e.ok()) << v6e.status();
  EXPECT_EQ(v6e->peak_computed_held_bytes, 256 * 128 * 4);
}

TEST_F(VregReplayTest, ADotsComputedLeftOperandIsKeptPackedBetweenPasses) {
  // A block converted from f32 and scaled: computed in the body, the left operand of a right one
  // of 1,024 lanes, so held whole while the MXU streams it past each tile of the right one.
  const std::string text = F32WeightsLeftMatmul();
  absl::StatusOr<VregReplay> v5e = ReplayVregs(Body(text.c_str()), v5e_);
  absl::StatusOr<VregReplay> v6e = ReplayVregs(Body(text.c_str()), v6e_);
  ASSERT_TRUE(v5e.ok() && v6e.ok());
  // The scaled weights as the MXU takes them, packed: on v5e too, which computes them at 32 bits
  // (tests/data/tpu/left_operand_passes_probe.txt).
  EXPECT_EQ(v5e->peak_held_bytes, 512 * 1024 * 2);
  EXPECT_EQ(v6e->peak_held_bytes, 512 * 1024 * 2);
}

// A computed right operand is made a tile at a time as the MXU latches it: a right block scaled in
// the body spills as the loaded one (tests/data/tpu/streamed_dot_operand_probe.txt, "bf16 x
// bf16*s" against "bf16 x bf16", every generation), so the replay does not hold it.
TEST_F(VregReplayTest, ADotsComputedRightOperandIsNotHeldWhole) {
  const std::string text = F32WeightsMatmul();
  for (const DeviceModel* device : {&v4_, &v5e_, &v6e_}) {
    absl::StatusOr<VregReplay> replay = ReplayVregs(Body(text.c_str()), *device);
    ASSERT_TRUE(replay.ok()) << replay.status();
    EXPECT_EQ(replay->peak_held_bytes, 0) << device->name();
    EXPECT_EQ(replay->peak_computed_held_bytes, 0) << device->name();
  }
}

// A validated band's high holds every computed value the replay keeps whole across a barrier: a
// schedule may spill them all. The softmax's exp block (1 MiB) straddles its sum, whatever the
// body's own figures say (here a reduction figure of a quarter of it, inside the fitted shapes).
TEST_F(VregReplayTest, AValidatedBandsHighHoldsWhatTheReplayHoldsAcrossABarrier) {
  const SpillEstimate v5e = SoftmaxInsideTheFit(v5e_);
  ASSERT_TRUE(v5e.unvalidated.empty()) << v5e.unvalidated;
  const absl::StatusOr<int64_t> high = Expr::EvaluateConstant(v5e.high);
  ASSERT_TRUE(high.ok()) << high.status();
  EXPECT_GE(*high, 256 * 1024 * 4);
}

// Its central is at least those values less v4's register file, the widened central's figure: the
// exp block (1 MiB) held across the sum, less 128 KiB, whatever the fitted central says.
TEST_F(VregReplayTest, AValidatedBandsCentralIsAtLeastWhatTheReplayHoldsBeyondTheFile) {
  const SpillEstimate v5e = SoftmaxInsideTheFit(v5e_);
  ASSERT_TRUE(v5e.unvalidated.empty()) << v5e.unvalidated;
  const absl::StatusOr<int64_t> central = Expr::EvaluateConstant(v5e.central);
  ASSERT_TRUE(central.ok()) << central.status();
  EXPECT_GE(*central, 256 * 1024 * 4 - kVregFileBytes);
  EXPECT_THAT(v5e.basis, ::testing::HasSubstr("central at least 917504 B"));
}

// On v5e-v7x a dot operand converted from 8 bits is converted vreg by vreg as the MXU takes it
// (tests/data/tpu/converted_dot_operand_probe.txt), so the replay does not hold it whole.
TEST_F(VregReplayTest, AnEightBitDotOperandConvertedOnV5eIsNotHeldWhole) {
  const std::string left = ComputedLeft(kDequantMatmul);
  absl::StatusOr<VregReplay> v5e = ReplayVregs(Body(left.c_str()), v5e_);
  absl::StatusOr<VregReplay> v6e = ReplayVregs(Body(left.c_str()), v6e_);
  ASSERT_TRUE(v5e.ok() && v6e.ok());
  EXPECT_EQ(v5e->peak_held_bytes, 0);
  EXPECT_EQ(v6e->peak_held_bytes, 0);
  EXPECT_EQ(v5e->peak_computed_held_bytes, 0);
}

// On v4 a dot operand converted from 8 bits (here scaled after the convert) is unpacked whole to 32
// bits and spills but for what the registers keep (tests/data/tpu/converted_dot_operand_probe.txt);
// on v5e-v7x it is converted vreg by vreg and adds nothing.
TEST_F(VregReplayTest, AnEightBitDotOperandConvertedOnV4SpillsWholeAtThirtyTwoBits) {
  const PallasBody body = Body(kDequantMatmul);
  const int64_t unpacked = 512 * 1024 * 4;
  const SpillEstimate v4 = EstimateSpills(body, v4_);
  EXPECT_THAT(v4.low, HasSubstr(absl::StrCat(unpacked - kVregFileBytes)));
  EXPECT_THAT(v4.central, HasSubstr(absl::StrCat(unpacked - 23 * 4096)));
  const absl::StatusOr<int64_t> high = Expr::EvaluateConstant(v4.high);
  ASSERT_TRUE(high.ok()) << high.status();
  EXPECT_GE(*high, unpacked);
  EXPECT_THAT(v4.basis, HasSubstr("unpacked whole from 8 bits"));
  const SpillEstimate v5e = EstimateSpills(body, v5e_);
  EXPECT_THAT(v5e.basis, Not(HasSubstr("unpacked whole")));
  EXPECT_THAT(v5e.low, Not(HasSubstr(absl::StrCat(unpacked - kVregFileBytes))));
}

// On v5e a bf16 dot whose right operand is converted from 8 bits spills as the bf16 dot of its
// shape (tests/data/tpu/streamed_dot_operand_probe.txt: 256 x 1024 x 1024 spills 528384 B, the
// plain dot 507904): the widened central is what the dot keeps across its MXU passes, the left
// operand (a load) and one column of f32 partials, not 0 for want of a computed value held.
TEST_F(VregReplayTest, AWidenedCentralKeepsWhatASixteenBitDotHolds) {
  std::string text = kDequantMatmul;
  text.replace(text.find("\"bf16[128,512]\""), 15, "\"bf16[256,1024]\"");
  for (const char* block : {"\"i8[512,1024]\"", "\"bf16[512,1024]\"", "\"bf16[512,1024]\""}) {
    text.replace(text.find(block), std::strlen(block), absl::StrReplaceAll(block, {{"512,", "1024,"}}));
  }
  text.replace(text.find("\"f32[128,1024]\""), 15, "\"f32[256,1024]\"");
  PallasBody body = Body(text.c_str());
  body.set_packed_dot_bytes("1");
  body.add_dot_dtypes("bf16");
  PallasDot* dot = body.add_dots();
  dot->set_m("256");
  dot->set_k("1024");
  dot->set_n("1024");
  const SpillEstimate v5e = EstimateSpills(body, v5e_);
  ASSERT_THAT(v5e.basis, HasSubstr("widened"));
  const absl::StatusOr<int64_t> central = Expr::EvaluateConstant(v5e.central);
  ASSERT_TRUE(central.ok()) << central.status();
  EXPECT_EQ(*central, 256 * 1024 * 2 + 256 * 128 * 4);
  const absl::StatusOr<int64_t> high = Expr::EvaluateConstant(v5e.high);
  ASSERT_TRUE(high.ok()) << high.status();
  EXPECT_GE(*high, *central);
}

// A 32-bit value converted for a dot is not unpacked on v4: the rule is the 8-bit unpacking's.
TEST_F(VregReplayTest, AThirtyTwoBitDotOperandConvertedOnV4IsNotUnpackedWhole) {
  const SpillEstimate v4 = EstimateSpills(Body(F32WeightsMatmul().c_str()), v4_);
  EXPECT_THAT(v4.basis, Not(HasSubstr("unpacked whole")));
}

TEST_F(VregReplayTest, UnrolledCopiesMultiply) {
  PallasBody body = Body(kSoftmax);
  body.mutable_program(0)->set_unrolled(3);
  EXPECT_EQ(ReplayVregs(body, v5e_)->peak_held_bytes, 3 * 256 * 1024 * 4);
}

// A loop's body runs while the enclosing code keeps what is live across the loop op: the body's
// pressure sits on top of it.
TEST_F(VregReplayTest, ALoopBodyRunsOnTopOfWhatIsLiveAcrossIt) {
  PallasBody body = Body(R"pb(
    program {
      values: "ref" values: "f32[256,1024]" values: "f32[8,128]" values: "f32[256,1024]" values: "ref"
      ops { op: "get" operands: 0 results: 1 }
      ops { op: "scan" results: 2 }
      ops { op: "add" operands: 1 operands: 1 results: 3 }
      ops { op: "swap" operands: 4 operands: 3 }
    }
    program {
      parent: 0 at_op: 1
      values: "ref" values: "f32[64,1024]" values: "f32[64]"
      ops { op: "get" operands: 0 results: 1 }
      ops { op: "reduce_sum" operands: 1 results: 2 axes: 1 }
      ops { op: "exp" operands: 2 }
      ops { op: "exp" operands: 1 }
    }
  )pb");
  absl::StatusOr<VregReplay> r = ReplayVregs(body, v5e_);
  ASSERT_TRUE(r.ok()) << r.status();
  // The outer block (1 MiB) is live across the scan; inside, the (64, 1024) block is held across
  // the sum: 1 MiB + 256 KiB.
  EXPECT_EQ(r->peak_held_bytes, (1 << 20) + 64 * 1024 * 4);
  EXPECT_GE(r->peak_live_bytes, (1 << 20) + 64 * 1024 * 4);
  body.mutable_program(1)->set_parent(1);  // itself: not an earlier region
  EXPECT_FALSE(ReplayVregs(body, v5e_).ok());
}

TEST_F(VregReplayTest, RefusesAnOperandOutsideTheRegionNamingTheOp) {
  PallasBody body = Body(kSoftmax);
  body.mutable_program(0)->mutable_ops(3)->set_operands(0, 99);
  absl::StatusOr<VregReplay> r = ReplayVregs(body, v5e_);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("body.program[0].ops[3] (sub): operand 99"));
}

TEST_F(VregReplayTest, AnOpNoFittedBodyHasIsNamed) {
  absl::StatusOr<VregReplay> r = ReplayVregs(Body(kSoftmax), v5e_);
  ASSERT_TRUE(r.ok());
  r->primitives.insert("cumsum");
  const std::vector<std::string> unvalidated = UnvalidatedPatterns(BodyClass::kReduction, *r);
  EXPECT_THAT(unvalidated, ::testing::Contains("cumsum"));
  EXPECT_THAT(unvalidated, ::testing::Not(::testing::Contains("exp")));
}

// A band applies within the shapes it was drawn from (spill_coverage.inc): on v7x the matmul band
// whose dot holds nothing (k of at most 512: the left operand re-read) was drawn from left operands
// of at most 524288 elements, so a 2048 x 512 one is outside it, named; 1024 x 512 is inside.
TEST_F(VregReplayTest, AShapeOutsideTheFitIsNamed) {
  const DeviceModel v7x = testing::ShippedDevice("tpu_v7x");
  PallasBody body = Body(R"pb(packed_dot_bytes: "1" dot_dtypes: "bf16"
                              dots { m: "2048" n: "512" k: "512" count: "1" })pb");
  EXPECT_THAT(ShapesOutsideTheFit(body, EstimateSpills(body, v7x), v7x),
              ::testing::ElementsAre("m x k = 1048576, outside the 16384 to 524288 of the fitted v7x matmul bodies "
                                     "whose figure is 0"));
  body.mutable_dots(0)->set_m("1024");
  EXPECT_THAT(ShapesOutsideTheFit(body, EstimateSpills(body, v7x), v7x), ::testing::IsEmpty());
  // A figure that is an expression (a graph written by hand) is not judged here.
  body.mutable_dots(0)->set_m("bm");
  EXPECT_THAT(ShapesOutsideTheFit(body, EstimateSpills(body, v7x), v7x), ::testing::IsEmpty());
}

// Two matmuls of loaded blocks whose results are added to accumulators and stored (a LoRA matmul's
// x W and x A): nothing computed from either result is held across the other dot.
constexpr char kIndependentDots[] = R"pb(
  program {
    values: "ref" values: "ref" values: "ref" values: "bf16[512,1024]" values: "bf16[1024,512]"
    values: "f32[512,512]" values: "bf16[1024,128]" values: "f32[512,128]" values: "ref" values: "f32[512,512]"
    ops { op: "get" operands: 0 results: 3 }
    ops { op: "get" operands: 1 results: 4 }
    ops { op: "dot_general" operands: 3 operands: 4 results: 5 }
    ops { op: "swap" operands: 8 operands: 5 results: 9 }
    ops { op: "get" operands: 2 results: 6 }
    ops { op: "dot_general" operands: 3 operands: 6 results: 7 }
  }
)pb";

TEST_F(VregReplayTest, IndependentDotsHoldNoDotResult) {
  absl::StatusOr<VregReplay> r = ReplayVregs(Body(kIndependentDots), v5e_);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->dot_result_held);
}

// The first dot's result, read after the second, is held across it: what the dot band's figure
// presumes.
TEST_F(VregReplayTest, ADotResultReadAfterAnotherDotIsHeld) {
  std::string text = kIndependentDots;
  const std::string store = "    ops { op: \"swap\" operands: 8 operands: 5 results: 9 }\n";
  text.erase(text.find(store), store.size());
  text.insert(text.rfind("  }"), store);
  absl::StatusOr<VregReplay> r = ReplayVregs(Body(text.c_str()), v5e_);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->dot_result_held);
}

// A dot's result computed on and fed to another dot as its left operand (flash attention's p) is
// held whole for the MXU.
TEST_F(VregReplayTest, ADotResultFedToADotAsItsLeftOperandIsHeld) {
  absl::StatusOr<VregReplay> r = ReplayVregs(Body(R"pb(
    program {
      values: "ref" values: "ref" values: "ref" values: "bf16[256,128]" values: "bf16[512,128]"
      values: "f32[256,512]" values: "f32[256,512]" values: "bf16[512,128]" values: "f32[256,128]"
      ops { op: "get" operands: 0 results: 3 }
      ops { op: "get" operands: 1 results: 4 }
      ops { op: "dot_general" operands: 3 operands: 4 results: 5 }
      ops { op: "exp" operands: 5 results: 6 }
      ops { op: "get" operands: 2 results: 7 }
      ops { op: "dot_general" operands: 6 operands: 7 results: 8 }
    })pb"),
                                           v5e_);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->dot_result_held);
}

// A body of several dots none of whose results is held is not what the dot band was drawn from:
// it is widened, the pattern named.
TEST_F(VregReplayTest, DotsWhoseResultsStreamOutAreNamed) {
  absl::StatusOr<VregReplay> r = ReplayVregs(Body(kIndependentDots), v5e_);
  ASSERT_TRUE(r.ok());
  EXPECT_THAT(UnvalidatedPatterns(BodyClass::kDot, *r),
              ::testing::Contains(HasSubstr("dots whose results stream out")));
  r->dot_result_held = true;
  EXPECT_THAT(UnvalidatedPatterns(BodyClass::kDot, *r),
              ::testing::Not(::testing::Contains(HasSubstr("dots whose results stream out"))));
}

// The dot classes' figure is the largest dot's f32 result, held: every fitted body of several dots
// holds a value computed from a dot's result across another whole-operand op, or feeds one to a dot
// as its left operand (UnvalidatedPatterns widens a body that does not).
TEST_F(VregReplayTest, EveryFittedDotBodyHoldsADotResult) {
  SCRATCHSIM_REQUIRE_TEST_DATA(kFitBodies);
  const std::vector<KernelGraph> graphs = FitBodies();
  int dot_bodies = 0;
  for (const KernelGraph& graph : graphs) {
    const PallasBody& body = graph.pallas().body();
    const BodyClass c = ClassifyBody(body);
    if (c != BodyClass::kDot && c != BodyClass::kDot32) continue;
    ++dot_bodies;
    absl::StatusOr<VregReplay> r = ReplayVregs(body, v5e_);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_TRUE(r->dot_result_held) << graph.name();
  }
  EXPECT_GE(dot_bodies, 2);
}

// The table compiled into spill_model.cc is what the bodies the bands were fitted on replay to:
// per class, the union of their ops and the most whole-operand ops one of their regions has.
TEST_F(VregReplayTest, ValidatedSignaturesAreTheFitBodies) {
  SCRATCHSIM_REQUIRE_TEST_DATA(kFitBodies);
  const std::vector<KernelGraph> graphs = FitBodies();
  std::map<BodyClass, std::set<std::string>> ops;
  std::map<BodyClass, int> barriers;
  int bodies = 0;
  for (const KernelGraph& graph : graphs) {
    const PallasBody& body = graph.pallas().body();
    absl::StatusOr<VregReplay> r = ReplayVregs(body, v5e_);
    ASSERT_TRUE(r.ok()) << r.status();
    const BodyClass c = ClassifyBody(body);
    ops[c].insert(r->primitives.begin(), r->primitives.end());
    barriers[c] = std::max(barriers[c], r->max_barriers_per_region);
    ++bodies;
  }
  EXPECT_GE(bodies, 40);
  std::string table =
      "// Generated by VregReplayTest.ValidatedSignaturesAreTheFitBodies (SCRATCHSIM_UPDATE_GOLDEN=1):\n"
      "// per class, the most whole-operand ops one region has and the ops of its fitted bodies.\n";
  std::string compiled = table;
  for (const auto& [c, names] : ops) {
    absl::StrAppend(&table, ValidatedSignatureLine(c, barriers[c], absl::StrJoin(names, " ")), "\n");
  }
  absl::StrAppend(&compiled, ValidatedSignatureTable());
  if (std::getenv("SCRATCHSIM_UPDATE_GOLDEN") != nullptr) {
    std::ofstream(testing::SourcePath("backends/tpu/validated_signatures.inc")) << table;
    GTEST_SKIP() << "rewrote backends/tpu/validated_signatures.inc; rebuild";
  }
  EXPECT_EQ(compiled, table) << "run with SCRATCHSIM_UPDATE_GOLDEN=1 and rebuild";
}

}  // namespace
}  // namespace scratchsim
