// Tests of sweep expansion, predictions for the shipped CUDA graphs, and the CSV round trip
// that --replay relies on. No GPU needed.
#include "backends/cuda/validate.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sim/device.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "sim/graph.h"

namespace scratchsim::cuda {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string GraphPath(const std::string& name) {
  return std::string(SCRATCHSIM_SOURCE_DIR) + "/models/graphs/" + name;
}

Prediction MustPredict(const std::string& graph_file, const std::vector<std::string>& overrides,
                       std::optional<bool> opt_in = std::nullopt,
                       std::optional<int> registers = std::nullopt) {
  absl::StatusOr<KernelGraph> graph = LoadGraph(GraphPath(graph_file));
  EXPECT_TRUE(graph.ok()) << graph.status();
  absl::StatusOr<DeviceModel> device = LoadDevice("h100");
  EXPECT_TRUE(device.ok()) << device.status();
  absl::StatusOr<Prediction> p = Predict(*graph, graph_file, *device, overrides, opt_in, registers);
  EXPECT_TRUE(p.ok()) << p.status();
  return p.ok() ? *p : Prediction{};
}

TEST(ExpandSweepsTest, CartesianProductFirstSweepOutermost) {
  auto configs = ExpandSweeps({"A=1,2", "B=5:9:2"});
  ASSERT_TRUE(configs.ok()) << configs.status();
  ASSERT_EQ(configs->size(), 6u);
  EXPECT_THAT((*configs)[0], ElementsAre("A=1", "B=5"));
  EXPECT_THAT((*configs)[2], ElementsAre("A=1", "B=9"));
  EXPECT_THAT((*configs)[5], ElementsAre("A=2", "B=9"));
}

TEST(ExpandSweepsTest, NoSweepsIsOneDefaultConfig) {
  auto configs = ExpandSweeps({});
  ASSERT_TRUE(configs.ok());
  ASSERT_EQ(configs->size(), 1u);
  EXPECT_TRUE((*configs)[0].empty());
}

// --sweep takes `simulate plan --param`'s syntax; FIRST:LAST[:STEP], the README's first form, still works.
TEST(ExpandSweepsTest, TakesThePlannersSyntaxAndTheOldRange) {
  auto dots = ExpandSweeps({"NUM_STAGES=1..4"});
  auto colon = ExpandSweeps({"NUM_STAGES=1:4"});
  ASSERT_TRUE(dots.ok()) << dots.status();
  ASSERT_TRUE(colon.ok()) << colon.status();
  EXPECT_EQ(*dots, *colon);
  EXPECT_EQ(dots->size(), 4u);
  auto pow2 = ExpandSweeps({"BLOCK_M=16..64:pow2"});
  ASSERT_TRUE(pow2.ok()) << pow2.status();
  EXPECT_EQ((*pow2)[2], std::vector<std::string>{"BLOCK_M=64"});
}

TEST(ExpandSweepsTest, BadSweepsNameTheSweep) {
  EXPECT_THAT(ExpandSweeps({"A"}).status().message(), HasSubstr("--sweep 'A'"));
  EXPECT_THAT(ExpandSweeps({"A=1,x"}).status().message(), HasSubstr("'x' is not an integer"));
  EXPECT_THAT(ExpandSweeps({"A=9:1"}).status().message(), HasSubstr("range is empty"));
  EXPECT_THAT(ExpandSweeps({"A=1:5:0"}).status().message(), HasSubstr("step '0' is not a positive integer"));
  EXPECT_THAT(ExpandSweeps({"A=1", "A=2"}).status().message(), HasSubstr("swept twice"));
  EXPECT_THAT(ExpandSweeps({"A=1:1000000000"}).status().message(), HasSubstr("more than"));
}

TEST(PredictTest, GemmRingIsStagesTimesTilePairs) {
  // f16, 128x128x32, 3 stages: 3 x (128*32 + 32*128) x 2 bytes = 48 KiB exactly.
  Prediction p = MustPredict("gemm.pbtxt", {"DTYPE=1", "BLOCK_M=128", "BLOCK_N=128", "BLOCK_K=32",
                                            "NUM_STAGES=3", "NUM_WARPS=8"});
  EXPECT_EQ(p.static_shared_bytes, 0);
  EXPECT_EQ(p.dynamic_shared_bytes, 49152);
  EXPECT_EQ(p.threads, 256);
  EXPECT_TRUE(p.launches);
  // Without opt-in, 48 KiB is still allowed; one more stage is not.
  EXPECT_TRUE(MustPredict("gemm.pbtxt", {"NUM_STAGES=3"}, false).launches);
  EXPECT_FALSE(MustPredict("gemm.pbtxt", {"NUM_STAGES=4"}, false).launches);
}

TEST(PredictTest, SoftmaxScratchIsReusedBetweenReductions) {
  // Row padded to 16 bytes, then ONE warp-sized scratch (max and sum share the offset).
  Prediction p = MustPredict("softmax.pbtxt", {"ROW=1001", "NUM_WARPS=8"});
  EXPECT_EQ(p.dynamic_shared_bytes, 4016 + 32);
  EXPECT_EQ(p.static_shared_bytes, 0);
}

TEST(PredictTest, WarpSpecializedSplitsStaticBarriersFromDynamicRing) {
  Prediction p = MustPredict("ws_producer_consumer.pbtxt",
                             {"PRODUCER_WARPS=2", "CONSUMER_WARPS=4", "NUM_STAGES=3",
                              "TILE_BYTES=4096", "LAUNCH_BOUND=256"});
  EXPECT_EQ(p.static_shared_bytes, 256);
  EXPECT_EQ(p.dynamic_shared_bytes, 3 * 4096);
  EXPECT_EQ(p.threads, 192);
  EXPECT_TRUE(p.launches);
  // 4 + 8 warps against __launch_bounds__(256): does not launch.
  EXPECT_FALSE(MustPredict("ws_producer_consumer.pbtxt",
                           {"PRODUCER_WARPS=4", "CONSUMER_WARPS=8", "LAUNCH_BOUND=256"})
                   .launches);
}

TEST(PredictTest, GegluMatchesTritonCopiesOfMlpGraph) {
  // mlp.pbtxt: max(1, num_stages - 1) copies of x[16,16], gate[16,I_RED], up[16,I_RED] in f32.
  Prediction p = MustPredict("mlp.pbtxt", {"I_RED=128", "num_stages=3"});
  EXPECT_EQ(p.dynamic_shared_bytes, 2 * (16 * 16 + 2 * 16 * 128) * 4);
}

// A regression found on the GPU (H200 and H100): regheavy has no
// __launch_bounds__, so ptxas keeps its register count whatever the block size, and a block
// whose warps need more than a quarter register file per sub-partition does not launch
// (cudaErrorLaunchOutOfResources). The simulator must not shrink the registers to fit.
TEST(PredictTest, RegistersDoNotShrinkWithoutLaunchBounds) {
  // 125 registers (ptxas, DEMAND=96 under __maxnreg__(128)): 16 warps fit, 17 do not.
  Prediction fits = MustPredict("regheavy.pbtxt", {"DEMAND=96", "REG_CAP=128", "NUM_WARPS=16"},
                                std::nullopt, 125);
  EXPECT_TRUE(fits.launches);
  EXPECT_EQ(fits.blocks_per_sm, 1);
  Prediction too_many = MustPredict("regheavy.pbtxt", {"DEMAND=96", "REG_CAP=128", "NUM_WARPS=17"},
                                    std::nullopt, 125);
  EXPECT_FALSE(too_many.launches);
  EXPECT_EQ(too_many.blocks_per_sm, 0);
  EXPECT_EQ(too_many.failing, "registers");
  // 255 registers: 8 warps is the most that launches; 208 registers: 8 again, not 9.
  EXPECT_TRUE(MustPredict("regheavy.pbtxt", {"DEMAND=320", "REG_CAP=255", "NUM_WARPS=8"}, std::nullopt, 255).launches);
  EXPECT_FALSE(MustPredict("regheavy.pbtxt", {"DEMAND=320", "REG_CAP=255", "NUM_WARPS=9"}, std::nullopt, 255).launches);
  EXPECT_FALSE(MustPredict("regheavy.pbtxt", {"DEMAND=200", "REG_CAP=255", "NUM_WARPS=9"}, std::nullopt, 208).launches);
}

TEST(PredictTest, SharedMemoryLimitsToTheByte) {
  // Opt-in maximum 232448 B: softmax ROW=58104 with 8 warps is exactly 232448 B.
  EXPECT_TRUE(MustPredict("softmax.pbtxt", {"ROW=58104", "NUM_WARPS=8"}).launches);
  EXPECT_FALSE(MustPredict("softmax.pbtxt", {"ROW=58105", "NUM_WARPS=8"}).launches);
  // Two blocks per SM up to 115712 B (228 KiB per SM, 1 KiB reserved per block).
  EXPECT_EQ(MustPredict("softmax.pbtxt", {"ROW=28920", "NUM_WARPS=8"}).blocks_per_sm, 2);
  EXPECT_EQ(MustPredict("softmax.pbtxt", {"ROW=28921", "NUM_WARPS=8"}).blocks_per_sm, 1);
  // 48 KiB default without opt-in.
  EXPECT_TRUE(MustPredict("softmax.pbtxt", {"ROW=12280", "NUM_WARPS=8"}, false).launches);
  EXPECT_FALSE(MustPredict("softmax.pbtxt", {"ROW=12281", "NUM_WARPS=8"}, false).launches);
}

TEST(ReplayTest, CsvRoundTripKeepsMeasurements) {
  ValidationRow row;
  row.graph = "models/graphs/gemm.pbtxt";
  row.overrides = {"NUM_STAGES=2", "DTYPE=1"};
  row.predicted.opt_in = false;
  row.measured.instance = "gemm<f16,128,128,32,8>";
  row.measured.threads = 256;
  row.measured.static_shared_bytes = 0;
  row.measured.dynamic_shared_bytes = 32768;
  row.measured.registers = 130;
  row.measured.local_bytes = 8;
  row.measured.max_threads_per_block = 256;
  row.measured.launched = true;
  row.measured.blocks_per_sm = 1;
  row.measured.opt_in_error = "not requested";
  row.measured.launch_error = "cudaSuccess";
  row.measured.occupancy_error = "cudaSuccess";
  row.measured.correctness = "element 3: got 1, reference \"2\", far";
  row.measured.time_ms = 0.25;
  auto rows = ParseMeasuredCsv(RenderCsv({row}), "x.csv");
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 1u);
  const ValidationRow& back = (*rows)[0];
  EXPECT_EQ(back.graph, row.graph);
  EXPECT_EQ(back.overrides, row.overrides);
  EXPECT_FALSE(back.predicted.opt_in);
  EXPECT_EQ(back.measured.instance, row.measured.instance);
  EXPECT_EQ(back.measured.dynamic_shared_bytes, 32768);
  EXPECT_EQ(back.measured.registers, 130);
  EXPECT_EQ(back.measured.correctness, row.measured.correctness);
  EXPECT_DOUBLE_EQ(back.measured.time_ms, 0.25);
}

TEST(ReplayTest, MalformedCsvNamesLineAndColumn) {
  EXPECT_THAT(ParseMeasuredCsv("", "m.csv").status().message(), HasSubstr("m.csv: empty CSV"));
  EXPECT_THAT(ParseMeasuredCsv("graph,params\n", "m.csv").status().message(),
              HasSubstr("missing column"));
  std::string csv = RenderCsv({ValidationRow{}});
  std::string broken = csv.substr(0, csv.find('\n') + 1) + "a,b\n";
  EXPECT_THAT(ParseMeasuredCsv(broken, "m.csv").status().message(), HasSubstr("m.csv:2:"));
  std::string good = RenderCsv({ValidationRow{}});
  std::string header = good.substr(0, good.find('\n') + 1);
  std::string line = good.substr(good.find('\n') + 1);
  std::vector<std::string> fields = absl::StrSplit(line, ',');
  fields[5] = "lots";
  EXPECT_THAT(ParseMeasuredCsv(header + absl::StrJoin(fields, ","), "m.csv").status().message(),
              HasSubstr("column 'threads': 'lots' is not an integer"));
}

TEST(SummaryTest, CountsMatchesAndRegisterErrors) {
  ValidationRow a, b;
  a.predicted.has_registers = true;
  a.predicted.registers = 64;
  a.measured.registers = 70;
  a.measured.launched = true;
  a.measured.correctness = "ok";
  b.predicted.dynamic_shared_bytes = 16;
  b.predicted.launches = true;
  CompareRow(a);
  CompareRow(b);
  ValidationSummary s = Summarize({a, b});
  EXPECT_EQ(s.configs, 2);
  EXPECT_EQ(s.smem_exact, 1);
  EXPECT_EQ(s.launch_match, 0);
  EXPECT_EQ(s.register_rows, 1);
  EXPECT_EQ(s.registers_within_8, 1);
  EXPECT_EQ(s.registers_exact, 0);
  EXPECT_EQ(s.correct, 1);
  EXPECT_THAT(SummaryLine(s), HasSubstr("2 configs: smem exact 1/2, launch verdict 0/2"));
}

}  // namespace
}  // namespace scratchsim::cuda
