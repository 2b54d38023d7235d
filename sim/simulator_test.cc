#include "sim/simulator.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <regex>

#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "sim/device.h"
#include "absl/strings/match.h"
#include "sim/report.h"
#include "absl/strings/str_cat.h"
#include "sim/test_util.h"

namespace scratchsim {
namespace {

using ::testing::HasSubstr;

std::string ModelsDir() { return std::string(SCRATCHSIM_SOURCE_DIR) + "/models"; }

DeviceModel Device(const std::string& name) {
  auto device = LoadDevice(ModelsDir() + "/devices/" + name + ".textproto");
  EXPECT_TRUE(device.ok()) << device.status();
  return *device;
}

CompiledGraph CompileText(const std::string& text) {
  KernelGraph graph;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &graph));
  auto compiled = CompileGraph(graph, "test.pbtxt");
  EXPECT_TRUE(compiled.ok()) << compiled.status();
  return *compiled;
}

Report SimulateConfig(const CompiledGraph& graph, const DeviceModel& device, std::vector<std::string> overrides = {}) {
  auto values = BindParameters(graph, overrides);
  EXPECT_TRUE(values.ok()) << values.status();
  auto report = Simulate(graph, device, *values, SimulateOptions());
  EXPECT_TRUE(report.ok()) << report.status();
  return *report;
}

CompiledGraph Mlp() {
  std::string path = ModelsDir() + "/graphs/mlp.pbtxt";
  auto graph = LoadGraph(path);
  EXPECT_TRUE(graph.ok()) << graph.status();
  auto compiled = CompileGraph(*graph, path);
  EXPECT_TRUE(compiled.ok()) << compiled.status();
  return *compiled;
}

TEST(SimulatorTest, ReproducesTritonsRequiredFigureForSeed002) {
  DeviceModel h100 = Device("h100");
  CompiledGraph mlp = Mlp();
  Report report = SimulateConfig(mlp, h100);
  EXPECT_FALSE(report.fits());
  ASSERT_GE(report.violations_size(), 1);
  EXPECT_EQ(report.violations(0).message(), "out of resource: shared memory, Required: 526336, Hardware limit: 232448");
  EXPECT_THAT(report.violations(0).culprits(), ::testing::ElementsAre("gate_tile", "up_tile", "x_tile"));
  Report larger = SimulateConfig(mlp, h100, {"tile_t=32", "tile_h=32"});
  EXPECT_EQ(larger.violations(0).required(), 1056768);
  ASSERT_FALSE(report.suggestions().empty());
  EXPECT_THAT(report.suggestions(0).text(), HasSubstr("I_RED"));
}

// Found by the planner fuzz target (issue 17): a ring of 681 copies that cannot fit. The
// suggestion search evaluated up to 65,536 configurations of 683 blocks each and took minutes;
// its work is now bounded by what the evaluations place (sim/suggest.cc kMaxSearchWork), so this
// returns in about a second with the verdict and whatever the bounded search found.
TEST(SimulatorTest, TheSuggestionSearchOnAHugeRingIsBoundedByItsWork) {
  const std::string path = ModelsDir() + "/graphs/ws_producer_consumer.pbtxt";
  auto graph = LoadGraph(path);
  ASSERT_TRUE(graph.ok()) << graph.status();
  auto compiled = CompileGraph(*graph, path);
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  Report report = SimulateConfig(*compiled, Device("h100"), {"NUM_STAGES=681", "TILE_BYTES=205529"});
  EXPECT_FALSE(report.fits());
  ASSERT_GE(report.violations_size(), 1);
  EXPECT_EQ(report.violations(0).message(), "out of resource: shared memory, Required: 139970265, Hardware limit: 232448");
}

TEST(SimulatorTest, FittingConfigurationHasOccupancy) {
  Report report = SimulateConfig(Mlp(), Device("h100"), {"I_RED=256"});
  EXPECT_TRUE(report.fits());
  EXPECT_EQ(report.spaces(0).peak_bytes(), 2 * (16 * 16 + 2 * 16 * 256) * 4);
  EXPECT_GT(report.occupancy().blocks_per_core(), 0);
}

TEST(SimulatorTest, WarpSpecializedThreadBudget) {
  CompiledGraph graph = CompileText(R"pb(
    launch {
      num_warps: "4"
      partitions { name: "receiver" warps: "4" }
      partitions { name: "compute" warps: "4" }
      max_threads_per_block: "256"
    }
  )pb");
  Report report = SimulateConfig(graph, Device("h100"));
  EXPECT_FALSE(report.fits());
  EXPECT_EQ(report.violations(0).message(), "out of resource: threads, Required: 384, Hardware limit: 256");
}

TEST(SimulatorTest, StaticSharedMemoryCannotOptIn) {
  CompiledGraph graph = CompileText(R"pb(
    buffers { name: "s" shape: "65536" dtype: "u8" memory_space: "smem" static_allocation: true }
    ops { name: "op" writes: "s" }
  )pb");
  Report report = SimulateConfig(graph, Device("h100"));
  EXPECT_FALSE(report.fits());
  EXPECT_THAT(report.violations(0).message(), HasSubstr("too much shared data (0x10000 bytes, 0xc000 max)"));
}

TEST(SimulatorTest, DynamicSharedMemoryFollowsTheStaticSegment) {
  CompiledGraph graph = CompileText(R"pb(
    buffers { name: "s" shape: "100" dtype: "u8" memory_space: "smem" static_allocation: true }
    buffers { name: "d" shape: "256" dtype: "u8" memory_space: "smem" }
    ops { name: "op" writes: "s" writes: "d" }
  )pb");
  Report report = SimulateConfig(graph, Device("h100"));
  ASSERT_EQ(report.spaces(0).placements_size(), 2);
  EXPECT_EQ(report.spaces(0).peak_bytes(), 112 + 256);  // static rounded to 16 B, then dynamic
  for (const Placement& p : report.spaces(0).placements()) {
    EXPECT_EQ(p.offset(), p.buffer() == "s" ? 0 : 112) << p.buffer();
  }
}

TEST(SimulatorTest, StaticPlacementsNameTheirRegion) {
  CompiledGraph graph = CompileText(R"pb(
    buffers { name: "s" shape: "100" dtype: "u8" memory_space: "smem" static_allocation: true }
    buffers { name: "d" shape: "256" dtype: "u8" memory_space: "smem" }
    ops { name: "op" writes: "s" writes: "d" }
  )pb");
  Report report = SimulateConfig(graph, Device("h100"));
  for (const Placement& p : report.spaces(0).placements()) {
    EXPECT_EQ(p.region(), p.buffer() == "s" ? "static" : "") << p.buffer();
  }
}

TEST(SimulatorTest, KeepBuffersDescribesEveryBufferAndNamesTheOps) {
  CompiledGraph graph = CompileText(R"pb(
    buffers { name: "early" shape: "64" dtype: "f32" memory_space: "smem" copies: "2" }
    buffers { name: "late" shape: "8" shape: "4" dtype: "f16" memory_space: "smem" }
    ops { name: "first" writes: "early" }
    ops { name: "second" reads: "early" }
    ops { name: "third" writes: "late" }
  )pb");
  auto values = BindParameters(graph, {});
  ASSERT_TRUE(values.ok());
  SimulateOptions options;
  options.keep_buffers = true;
  auto report = Simulate(graph, Device("h100"), *values, options);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_THAT(report->ops(), ::testing::ElementsAre("first", "second", "third"));
  ASSERT_EQ(report->spaces(0).buffers_size(), 2);
  EXPECT_EQ(report->spaces(0).buffers(0).buffer(), "early");  // not live with `late`: not at the peak
  EXPECT_EQ(report->spaces(0).buffers(0).copies(), 2);
  EXPECT_EQ(report->spaces(0).buffers(1).shape(), "8x4xf16");
  // Off by default.
  Report plain = SimulateConfig(graph, Device("h100"));
  EXPECT_TRUE(plain.ops().empty());
  EXPECT_TRUE(plain.spaces(0).buffers().empty());
}

TEST(SimulatorTest, NoOptInMeansTheDefaultLimit) {
  CompiledGraph graph = CompileText(R"pb(
    buffers { name: "d" shape: "50000" dtype: "u8" memory_space: "smem" }
    ops { name: "op" writes: "d" }
    launch { shared_memory_opt_in: false }
  )pb");
  Report report = SimulateConfig(graph, Device("h100"));
  EXPECT_EQ(report.violations(0).message(), "out of resource: shared memory, Required: 50000, Hardware limit: 49152");
}

TEST(SimulatorTest, RegisterDemandAboveBudgetSpills) {
  CompiledGraph graph = CompileText(R"pb(
    launch { num_warps: "8" registers_per_thread: "300" }
  )pb");
  Report report = SimulateConfig(graph, Device("h100"));
  EXPECT_TRUE(report.fits());  // spills are slow, not fatal
  EXPECT_EQ(report.registers().budget_per_thread(), 255);
  EXPECT_EQ(report.registers().spill_bytes_per_thread(), (300 - 255) * 4);
  // A declared limit of 1024 threads (launch bounds, maxntid) leaves 64 registers per thread.
  CompiledGraph wide = CompileText(
      R"pb(launch { num_warps: "32" max_threads_per_block: "1024" registers_per_thread: "100" })pb");
  EXPECT_EQ(SimulateConfig(wide, Device("h100")).registers().budget_per_thread(), 64);
  // Without one the compiler does not know the block size and keeps 100 registers: 32 warps
  // of them do not fit the register file (measured on the H100: docs/validation/h100.md).
  CompiledGraph unbounded = CompileText(R"pb(launch { num_warps: "32" registers_per_thread: "100" })pb");
  Report unbounded_report = SimulateConfig(unbounded, Device("h100"));
  EXPECT_EQ(unbounded_report.registers().allocated_per_thread(), 100);
  EXPECT_FALSE(unbounded_report.fits());
  EXPECT_EQ(unbounded_report.occupancy().blocks_per_core(), 0);
}

TEST(SimulatorTest, SharedMemoryNameMapsToLdsOnAmd) {
  Report report = SimulateConfig(Mlp(), Device("mi300x"), {"I_RED=128"});
  ASSERT_EQ(report.spaces_size(), 1);
  EXPECT_EQ(report.spaces(0).space(), "lds");
}

TEST(SimulatorTest, TensorMemoryInColumns) {
  CompiledGraph graph = CompileText(R"pb(
    buffers { name: "acc" shape: "128" shape: "256" dtype: "f32" memory_space: "tmem" }
    buffers { name: "acc2" shape: "128" shape: "300" dtype: "f32" memory_space: "tmem" }
    ops { name: "mma" writes: "acc" writes: "acc2" }
  )pb");
  Report report = SimulateConfig(graph, Device("b200"));
  // 256 columns, and 300 columns rounded to 512: 768 of 512.
  EXPECT_FALSE(report.fits());
  EXPECT_EQ(report.violations(0).message(), "out of resource: tensor memory, Required: 768, Hardware limit: 512");
}

TEST(SimulatorTest, ScopedVmemAgainstTheLimit) {
  DeviceModel tpu;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(R"pb(
    name: "tpu_test" vendor: "google"
    memory_spaces { name: "vmem" kind: VMEM capacity_per_core_bytes: 134217728
                    default_scoped_limit_bytes: 16777216 max_scoped_limit_bytes: 134217728 }
    limits { num_cores: 1 }
  )pb", &tpu));
  CompiledGraph graph = CompileText(R"pb(
    buffers { name: "operand" shape: "2048" shape: "4096" dtype: "bf16" memory_space: "vmem"
              scope: INSTRUCTION copies: "2" }
    ops { name: "kernel" reads: "operand" }
  )pb");
  Report report = SimulateConfig(graph, tpu);
  EXPECT_FALSE(report.fits());
  EXPECT_EQ(report.violations(0).required(), 2 * 2048 * 4096 * 2);
  EXPECT_EQ(report.violations(0).available(), 16777216);
  EXPECT_THAT(report.violations(0).message(), HasSubstr("Ran out of memory in memory space vmem"));
  bool suggests_limit = false;
  for (const Suggestion& s : report.suggestions()) suggests_limit |= absl::StrContains(s.text(), "vmem_limit_bytes=33554432");
  EXPECT_TRUE(suggests_limit);
}

// The central estimate over the limit, the low bound under it: AT RISK; the message keeps the
// toolchain's words, and the text report prints them as a prediction.
TEST(SimulatorTest, AnAtRiskCentralBreachIsPrintedAsAPrediction) {
  CompiledGraph graph = CompileText(R"pb(
    buffers { name: "spills" size_bytes: "20971520" memory_space: "vmem" scope: INSTRUCTION
              estimate { low_bytes: "10485760" high_bytes: "31457280" } }
    ops { name: "kernel" reads: "spills" }
  )pb");
  const DeviceModel v5e = Device("tpu_v5e");
  Report report = SimulateConfig(graph, v5e);
  EXPECT_EQ(report.verdict(), AT_RISK);
  ASSERT_GE(report.violations_size(), 1);
  EXPECT_THAT(report.violations(0).message(), ::testing::StartsWith("RESOURCE_EXHAUSTED"));
  EXPECT_THAT(RenderText(report, v5e),
              HasSubstr("\n  if the central estimate holds, the compiler would say: RESOURCE_EXHAUSTED"));
}

// libtpu's scoped VMEM allocator gives each operand window, its copies together, a whole number of 1 KiB
// (tests/data/tpu/allocation_granule_probe.txt): every probed window, its listed bytes per copy,
// is allocated what libtpu allocated it, on its generation.
TEST(SimulatorTest, TpuWindowsAreAllocatedInWholeGranules) {
  const std::string path = std::string(SCRATCHSIM_SOURCE_DIR) + "/tests/data/tpu/allocation_granule_probe.txt";
  std::ifstream in(path);
  ASSERT_TRUE(in) << path;
  const std::regex field(R"re("(allocated_bytes|copies|gen|listed_bytes)": "?(\w+)"?)re");
  int rows = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::map<std::string, std::string> row;
    for (std::sregex_iterator m(line.begin(), line.end(), field), end; m != end; ++m) row[(*m)[1]] = (*m)[2];
    ASSERT_EQ(row.size(), 4u) << line;
    const int64_t copies = std::stoll(row["copies"]), listed = std::stoll(row["listed_bytes"]);
    CompiledGraph graph = CompileText(absl::StrCat(R"pb(buffers { name: "window" size_bytes: ")pb", listed / copies,
                                                   R"pb(" copies: ")pb", copies,
                                                   R"pb(" memory_space: "vmem" scope: INSTRUCTION role: OPERAND }
                                                        ops { name: "kernel" reads: "window" })pb"));
    SimulateOptions options;
    options.keep_buffers = true;
    auto values = BindParameters(graph, {});
    ASSERT_TRUE(values.ok());
    auto report = Simulate(graph, Device("tpu_" + row["gen"]), *values, options);
    ASSERT_TRUE(report.ok()) << report.status();
    ASSERT_EQ(report->spaces(0).space(), "vmem");
    EXPECT_EQ(report->spaces(0).peak_bytes(), std::stoll(row["allocated_bytes"])) << line;
    ASSERT_EQ(report->spaces(0).buffers_size(), 1);
    EXPECT_EQ(report->spaces(0).buffers(0).total_bytes(), std::stoll(row["allocated_bytes"])) << line;
    ++rows;
  }
  EXPECT_EQ(rows, 70);
}

// The rounding is named where the buffer is listed, so the bytes add up in the text.
TEST(SimulatorTest, TheGranulesPaddingIsShownBesideTheBuffer) {
  CompiledGraph graph = CompileText(R"pb(
    buffers { name: "norm_weight" size_bytes: "512" memory_space: "vmem" scope: INSTRUCTION role: OPERAND }
    ops { name: "kernel" reads: "norm_weight" }
  )pb");
  const DeviceModel v6e = Device("tpu_v6e");
  Report report = SimulateConfig(graph, v6e);
  ASSERT_EQ(report.spaces(0).live_at_peak_size(), 1);
  EXPECT_EQ(report.spaces(0).live_at_peak(0).total_bytes(), 1024);
  EXPECT_EQ(report.spaces(0).live_at_peak(0).granule_padding_bytes(), 512);
  EXPECT_THAT(RenderText(report, v6e), HasSubstr("(the copies rounded up to the space's allocation granule: +512 B)"));
}

// A scratch operand is not a window: libtpu places a 512 B scratch row as 512 B.
TEST(SimulatorTest, AScratchRowIsNotRoundedToTheGranule) {
  CompiledGraph graph = CompileText(R"pb(
    buffers { name: "carry" size_bytes: "512" memory_space: "vmem" scope: INSTRUCTION role: SCRATCH }
    ops { name: "kernel" reads: "carry" }
  )pb");
  Report report = SimulateConfig(graph, Device("tpu_v6e"));
  EXPECT_EQ(report.spaces(0).peak_bytes(), 512);
  EXPECT_EQ(report.spaces(0).live_at_peak(0).granule_padding_bytes(), 0);
}

// A vmem_limit_bytes above the VMEM is no more room: the report says so (and fits by the VMEM).
TEST(SimulatorTest, AScopedLimitAboveTheVmemIsNamed) {
  CompiledGraph graph = CompileText(R"pb(
    tpu { vmem_limit_bytes: "209715200" }
    buffers { name: "operand" shape: "1024" shape: "1024" dtype: "f32" memory_space: "vmem" scope: INSTRUCTION }
    ops { name: "kernel" reads: "operand" }
  )pb");
  Report report = SimulateConfig(graph, Device("tpu_v6e"));
  EXPECT_TRUE(report.fits());
  ASSERT_EQ(report.notes_size(), 1);
  EXPECT_THAT(report.notes(0), HasSubstr("the scoped limit, 209715200 B (vmem_limit_bytes), is above what one program "
                                         "may use of this TPU's VMEM, 134152192 B"));
}

TEST(SimulatorTest, TextReportExplainsTheFigure) {
  DeviceModel h100 = Device("h100");
  Report report = SimulateConfig(Mlp(), h100);
  std::string text = RenderText(report, h100);
  EXPECT_THAT(text, HasSubstr("= 2 copies x (gate_tile 131072 + up_tile 131072 + x_tile 1024)"));
  EXPECT_THAT(text, HasSubstr("DOES NOT FIT"));
  // 64-bit figures are JSON numbers (sim/json_text.h).
  EXPECT_THAT(RenderJson(report), HasSubstr("\"peak_bytes\": 526336"));
}


// Issue 17: a graph of a million untouched buffers gave a million notes and a million rows live
// at the peak. The report lists kMaxListedBuffers of each and counts the rest.
TEST(SimulatorTest, AReportListsABoundedNumberOfBuffers) {
  std::string text = "ops { name: \"o\" }\n";
  for (int b = 0; b < 200; ++b) text += absl::StrCat("buffers { name: \"b", b, "\" size_bytes: \"", 16 + b, "\" memory_space: \"smem\" }\n");
  const CompiledGraph graph = testing::CompileGraphText(text);
  auto report = Simulate(graph, testing::ShippedDevice("h100"), graph.defaults, SimulateOptions());
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_EQ(report->spaces_size(), 1);
  EXPECT_EQ(report->spaces(0).live_at_peak_size(), static_cast<int>(kMaxListedBuffers));
  EXPECT_EQ(report->spaces(0).live_at_peak(0).buffer(), "b199");  // largest first
  const int untouched = static_cast<int>(std::count_if(report->notes().begin(), report->notes().end(), [](const std::string& n) {
    return absl::StrContains(n, "' is touched by no op");
  }));
  EXPECT_EQ(untouched, static_cast<int>(kMaxListedBuffers));
  EXPECT_THAT(report->notes(), ::testing::Contains(::testing::HasSubstr("136 more buffers are touched by no op")));
  EXPECT_THAT(report->notes(), ::testing::Contains(::testing::HasSubstr("smem: 200 buffers are live at the peak; the 64 largest are listed")));
  // The breakdown adds what the listed buffers leave out: 136 buffers of 16..151 bytes.
  EXPECT_THAT(RenderText(*report, testing::ShippedDevice("h100")), HasSubstr(" + 11356 in buffers not listed"));
}

}  // namespace
}  // namespace scratchsim
