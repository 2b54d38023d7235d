#include "sim/graph.h"

#include <filesystem>
#include <fstream>

#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "sim/liveness.h"
#include "sim/proto_io.h"
#include "sim/test_util.h"

namespace scratchsim {
namespace {

using ::testing::HasSubstr;
using ::scratchsim::testing::CompileGraphText;
using ::scratchsim::testing::CompileGraphTextError;

KernelGraph Parse(const std::string& text) {
  KernelGraph graph;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &graph)) << text;
  return graph;
}

absl::StatusOr<CompiledGraph> Compile(const std::string& text) { return CompileGraph(Parse(text), "test.pbtxt"); }

constexpr char kPipelined[] = R"pb(
  parameters { name: "BM" default_value: 64 }
  parameters { name: "STAGES" default_value: 3 }
  buffers { name: "a" shape: "BM" shape: "32" dtype: "f16" memory_space: "smem" copies: "STAGES" }
  buffers { name: "pre" shape: "128" dtype: "f32" memory_space: "smem" }
  buffers { name: "epi" shape: "BM" shape: "BM" dtype: "f32" memory_space: "smem" }
  loops { name: "k" num_stages: "STAGES" }
  ops { name: "prologue" writes: "pre" }
  ops { name: "load" writes: "a" loop: "k" }
  ops { name: "mma" reads: "a" reads: "pre" loop: "k" }
  ops { name: "tail" loop: "k" }
  ops { name: "store" scratch: "epi" }
)pb";

TEST(GraphTest, SizesCopiesAndShapes) {
  auto graph = Compile(kPipelined);
  ASSERT_TRUE(graph.ok()) << graph.status();
  auto values = BindParameters(*graph, {"BM=128"});
  ASSERT_TRUE(values.ok());
  EXPECT_EQ(*BufferBytes(*graph, 0, *values), 128 * 32 * 2);
  EXPECT_EQ(*BufferCopies(*graph, 0, *values), 3);
  EXPECT_EQ(*BufferCopies(*graph, 1, *values), 1);
  EXPECT_EQ(ShapeString(*graph, 0, *values), "128x32xf16");
}

TEST(GraphTest, LiveRangesFollowLoops) {
  auto graph = Compile(kPipelined);
  ASSERT_TRUE(graph.ok()) << graph.status();
  std::vector<LiveRange> ranges = ComputeLiveRanges(*graph);
  // Pipelined `a` spans the whole loop (positions 1..3), `pre` is used inside and outside the
  // loop so it spans 0..3, and the epilogue scratch lives only in its op.
  EXPECT_EQ(ranges[0].start, 1);
  EXPECT_EQ(ranges[0].end, 3);
  EXPECT_EQ(ranges[1].start, 0);
  EXPECT_EQ(ranges[1].end, 3);
  EXPECT_EQ(ranges[2].start, 4);
  EXPECT_EQ(ranges[2].end, 4);
}

TEST(GraphTest, LoopCarriedBufferStaysLiveAcrossIterations) {
  auto graph = Compile(R"pb(
    buffers { name: "carry" shape: "16" dtype: "f32" memory_space: "smem" }
    loops { name: "l" }
    ops { name: "use" reads: "carry" loop: "l" }
    ops { name: "other" loop: "l" }
    ops { name: "def" writes: "carry" loop: "l" }
    ops { name: "after_loop" }
  )pb");
  ASSERT_TRUE(graph.ok()) << graph.status();
  std::vector<LiveRange> ranges = ComputeLiveRanges(*graph);
  EXPECT_EQ(ranges[0].start, 0);
  EXPECT_EQ(ranges[0].end, 2);
}

TEST(GraphTest, AfterReordersOps) {
  auto graph = Compile(R"pb(
    ops { name: "second" after: "first" }
    ops { name: "first" }
  )pb");
  ASSERT_TRUE(graph.ok()) << graph.status();
  EXPECT_THAT(graph->op_order, ::testing::ElementsAre(1, 0));
}

TEST(GraphTest, CycleIsNamed) {
  auto graph = Compile(R"pb(
    ops { name: "a" after: "c" }
    ops { name: "b" after: "a" }
    ops { name: "c" after: "b" }
  )pb");
  ASSERT_FALSE(graph.ok());
  EXPECT_THAT(graph.status().message(), HasSubstr("test.pbtxt: ops: dependency cycle: "));
  EXPECT_THAT(graph.status().message(), HasSubstr("a -> b -> c -> a"));
}

TEST(GraphTest, BadReferencesAndNames) {
  EXPECT_THAT(Compile(R"pb(ops { name: "x" reads: "nope" })pb").status().message(),
              HasSubstr("op 'x' reads: unknown buffer 'nope'"));
  EXPECT_THAT(Compile(R"pb(ops { name: "x" loop: "nope" })pb").status().message(), HasSubstr("unknown loop 'nope'"));
  EXPECT_THAT(Compile(R"pb(buffers { name: "b" shape: "4" dtype: "f17" memory_space: "smem" })pb").status().message(),
              HasSubstr("unknown dtype 'f17'"));
  EXPECT_THAT(Compile(R"pb(buffers { name: "b" shape: "X" dtype: "f32" memory_space: "smem" })pb").status().message(),
              HasSubstr("buffer 'b' shape[0]"));
  EXPECT_THAT(Compile(R"pb(buffers { name: "b" shape: "4" dtype: "f32" })pb").status().message(),
              HasSubstr("memory_space is missing"));
  EXPECT_THAT(Compile(R"pb(parameters { name: "P" } parameters { name: "P" })pb").status().message(),
              HasSubstr("defined twice"));
  EXPECT_THAT(Compile(R"pb(loops { name: "a" parent: "b" } loops { name: "b" parent: "a" })pb").status().message(),
              HasSubstr("cycle"));
}

// A ranking assumption is about the problem's sizes: one naming a configuration parameter is an
// error of the graph, naming the field and the parameter.
TEST(GraphTest, ARankingAssumptionOnAConfigurationParameterIsRefused) {
  EXPECT_THAT(Compile(R"pb(parameters { name: "N" default_value: 64 problem_size: true }
                           parameters { name: "BN" default_value: 32 }
                           ranking_assumptions { expr: "N % BN == 0" })pb")
                  .status()
                  .message(),
              HasSubstr("ranking_assumptions[0] expr: names 'BN', which is not a problem_size parameter"));
}

// A broken ranking assumption is a warning naming the condition, its reason and the sizes that
// break it; one that holds says nothing.
TEST(GraphTest, BrokenRankingAssumptionsAreNamedWithTheirSizes) {
  absl::StatusOr<CompiledGraph> graph = Compile(R"pb(
    parameters { name: "N" default_value: 64 problem_size: true }
    parameters { name: "BN" default_value: 32 }
    ranking_assumptions { expr: "N % 16 == 0" doc: "a specialized stride" })pb");
  ASSERT_TRUE(graph.ok()) << graph.status();
  const int n = graph->symbols.Find("N");
  std::vector<int64_t> values(graph->symbols.names().size(), 32);
  values[n] = 48;
  EXPECT_TRUE(BrokenRankingAssumptions(*graph, values).empty());
  values[n] = 49155;
  const std::vector<std::string> warnings = BrokenRankingAssumptions(*graph, values);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_THAT(warnings[0], HasSubstr("the ranking assumes \"N % 16 == 0\" (a specialized stride), which N = 49155 breaks"));
}

// A requirement on the problem's sizes alone is checked at them, naming each size once; one that
// also names a tuning parameter is left to each configuration (the planner prunes those).
TEST(GraphTest, ProblemRequirementsAreCheckedAtTheSizesAlone) {
  absl::StatusOr<CompiledGraph> graph = Compile(R"pb(
    parameters { name: "N" default_value: 64 problem_size: true }
    parameters { name: "BN" default_value: 32 }
    requirements { expr: "N % BN == 0" doc: "the blocks tile N" }
    requirements { expr: "N >= 1 && N <= 1048576" doc: "a row at all" })pb");
  ASSERT_TRUE(graph.ok()) << graph.status();
  const int n = graph->symbols.Find("N");
  std::vector<int64_t> values(graph->symbols.names().size(), 32);
  values[n] = 48;  // 48 % 32 != 0: a configuration's matter, not the problem's
  EXPECT_TRUE(CheckProblemRequirements(*graph, values).ok());
  values[n] = 0;
  const absl::Status status = CheckProblemRequirements(*graph, values);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("requirements[1]"));
  EXPECT_THAT(status.message(), HasSubstr("(a row at all) at --set N=0: no tiling makes this problem a kernel"));
}

TEST(GraphTest, NonPositiveExtentsAndOverflowAreErrors) {
  auto graph = Compile(R"pb(
    parameters { name: "N" default_value: 0 }
    buffers { name: "b" shape: "N" shape: "N" dtype: "f32" memory_space: "smem" copies: "N" }
  )pb");
  ASSERT_TRUE(graph.ok());
  auto zero = BufferBytes(*graph, 0, std::vector<int64_t>{0});
  EXPECT_THAT(zero.status().message(), HasSubstr("buffer 'b' shape[0]: extent must be positive, got 0"));
  EXPECT_FALSE(BufferBytes(*graph, 0, std::vector<int64_t>{-4}).ok());
  auto huge = BufferBytes(*graph, 0, std::vector<int64_t>{int64_t{1} << 31});
  EXPECT_THAT(huge.status().message(), HasSubstr("overflows 64 bits"));
  auto copies = BufferCopies(*graph, 0, std::vector<int64_t>{0});
  EXPECT_THAT(copies.status().message(), HasSubstr("copies: must be at least 1, got 0"));
}

TEST(GraphTest, BindParametersRejectsUnknownAndNonIntegers) {
  auto graph = Compile(kPipelined);
  ASSERT_TRUE(graph.ok());
  EXPECT_THAT(BindParameters(*graph, {"BN=4"}).status().message(), HasSubstr("'BN' is not a parameter"));
  EXPECT_THAT(BindParameters(*graph, {"BM=x"}).status().message(), HasSubstr("not a 64-bit integer"));
  // The device symbols are not parameters: setting one is an error, and they are not listed.
  EXPECT_THAT(BindParameters(*graph, {"SM_ARCH=90"}).status().message(), HasSubstr("comes from the device"));
  EXPECT_THAT(BindParameters(*graph, {"WARP_SIZE=64"}).status().message(), HasSubstr("comes from the device"));
  EXPECT_THAT(BindParameters(*graph, {"BN=4"}).status().message(), HasSubstr("(parameters: BM, STAGES)"));
}

TEST(GraphTest, DeviceSymbolsFollowTheDevice) {
  auto graph = Compile(R"pb(
    parameters { name: "BM" default_value: 64 }
    buffers { name: "a" shape: "BM * (1 + min(1, SM_ARCH / 90))" shape: "WARP_SIZE" dtype: "i8" memory_space: "smem" }
    ops { name: "use" reads: "a" }
  )pb");
  ASSERT_TRUE(graph.ok()) << graph.status();
  const int sm_arch = DeviceSymbolSlot(*graph, "SM_ARCH");
  const int warp_size = DeviceSymbolSlot(*graph, "WARP_SIZE");
  ASSERT_GE(sm_arch, 0);
  EXPECT_TRUE(IsDeviceSymbol(*graph, sm_arch));
  EXPECT_TRUE(IsDeviceSymbol(*graph, warp_size));
  EXPECT_FALSE(IsDeviceSymbol(*graph, 0));
  auto values = BindParameters(*graph, {});
  ASSERT_TRUE(values.ok());
  struct Case {
    const char* vendor;
    int major, minor, warp;
    int64_t sm_arch, bytes;
  };
  for (const Case& c : {Case{"nvidia", 9, 0, 32, 90, 128 * 32}, Case{"nvidia", 12, 0, 32, 120, 128 * 32},
                        Case{"nvidia", 8, 6, 32, 86, 64 * 32}, Case{"amd", 9, 4, 64, 0, 64 * 64}}) {
    DeviceModel device;
    device.set_vendor(c.vendor);
    device.mutable_limits()->set_compute_major(c.major);
    device.mutable_limits()->set_compute_minor(c.minor);
    device.mutable_limits()->set_warp_size(c.warp);
    std::vector<int64_t> bound = *values;
    BindDeviceSymbols(*graph, device, absl::MakeSpan(bound));
    EXPECT_EQ(bound[sm_arch], c.sm_arch) << c.vendor << c.major;
    EXPECT_EQ(bound[warp_size], c.warp);
    EXPECT_EQ(*BufferBytes(*graph, 0, bound), c.bytes) << c.vendor << c.major;
  }
}

// The memory symbols a device binds: {DRAM_LATENCY_CYCLES, L2_BYTES_PER_CORE_CYCLE}.
std::pair<int64_t, int64_t> BoundMemorySymbols(const DeviceModel& device) {
  auto graph = Compile(R"pb(
    buffers { name: "a" shape: "1 + DRAM_LATENCY_CYCLES + L2_BYTES_PER_CORE_CYCLE" dtype: "i8" memory_space: "smem" }
    ops { name: "use" reads: "a" }
  )pb");
  EXPECT_TRUE(graph.ok()) << graph.status();
  if (!graph.ok()) return {-1, -1};
  std::vector<int64_t> values = *BindParameters(*graph, {});
  BindDeviceSymbols(*graph, device, absl::MakeSpan(values));
  return {values[DeviceSymbolSlot(*graph, "DRAM_LATENCY_CYCLES")], values[DeviceSymbolSlot(*graph, "L2_BYTES_PER_CORE_CYCLE")]};
}

// A load's latency and the L2's per-core bandwidth in core cycles, from the device's figures.
TEST(GraphTest, MemorySymbolsAreTheDevicesFiguresInCoreCycles) {
  DeviceModel device;
  device.mutable_limits()->set_num_cores(132);
  device.mutable_performance()->set_clock_mhz(1980);
  device.mutable_performance()->set_dram_latency_ns(343.1);    // 679.3 cycles
  device.mutable_performance()->set_l2_bandwidth_gbps(12500);  // 47.8 B per core and cycle
  EXPECT_EQ(BoundMemorySymbols(device), std::make_pair(int64_t{679}, int64_t{48}));
}

// A device without the figures gives 0, so a graph's term that multiplies by them vanishes.
TEST(GraphTest, MemorySymbolsAreZeroWhereTheDeviceLacksTheFigures) {
  DeviceModel device;
  device.mutable_performance()->set_dram_latency_ns(343.1);  // no clock to convert it
  device.mutable_performance()->set_l2_bandwidth_gbps(12500);
  EXPECT_EQ(BoundMemorySymbols(device), std::make_pair(int64_t{0}, int64_t{0}));
}

TEST(GraphTest, MemorySymbolsCannotBeSet) {
  auto graph = Compile(R"pb(
    buffers { name: "a" shape: "DRAM_LATENCY_CYCLES" dtype: "i8" memory_space: "smem" }
    ops { name: "use" reads: "a" }
  )pb");
  ASSERT_TRUE(graph.ok()) << graph.status();
  EXPECT_THAT(BindParameters(*graph, {"DRAM_LATENCY_CYCLES=1"}).status().message(), HasSubstr("comes from the device"));
}

TEST(GraphTest, PaddingAndRounding) {
  auto graph = Compile(R"pb(
    buffers { name: "p" shape: "64" shape: "32" dtype: "f16" memory_space: "smem" padding { every: "32" add: "8" } }
    buffers { name: "r" shape: "3" shape: "100" dtype: "bf16" memory_space: "vmem" round_up: "16" round_up: "128" }
  )pb");
  ASSERT_TRUE(graph.ok()) << graph.status();
  // 2048 elements with 8 extra after each of the first 63 rows of 32.
  EXPECT_EQ(*BufferBytes(*graph, 0, {}), (2048 + 63 * 8) * 2);
  EXPECT_EQ(*BufferBytes(*graph, 1, {}), 16 * 128 * 2);
}


// A binary KernelGraph of `n` one-letter buffers, written on the wire directly (no messages built).
std::string BinaryGraphOfBuffers(int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += std::string("\x22\x03\x0a\x01b", 5);  // field 4 {field 1: "b"}
  return out;
}

// Issue 17: a 10-million-buffer binary graph took over 10 GB while it was parsed. Its entries are
// counted on the wire first: past kMaxGraphBuffers it is refused before any message is built.
TEST(GraphLimitsTest, ABinaryGraphPastTheBufferLimitIsRefusedBeforeParsing) {
  auto graph = ParseGraph(BinaryGraphOfBuffers(kMaxGraphBuffers + 1), ProtoFormat::kBinary, "big.pb");
  ASSERT_FALSE(graph.ok());
  EXPECT_EQ(graph.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(graph.status().message(),
              HasSubstr("big.pb: field 'buffers' has 1048577 entries, more than the supported 1048576"));
}

// Writes `contents` to a file named `name` in the test's temporary directory; returns its path.
std::string WriteTempFile(const std::string& name, const std::string& contents) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path, std::ios::binary) << contents;
  return path;
}

// Issue 17: a binary graph's buffers and ops are compiled from the wire one message at a time;
// the result is the graph compiled from its messages.
TEST(GraphWireTest, ABinaryGraphCompilesFromTheWireAsFromItsMessages) {
  const KernelGraph graph = Parse(kPipelined);
  const std::string path = WriteTempFile("pipelined.pb", graph.SerializeAsString());
  absl::StatusOr<GraphFile> file = ReadGraphFile(path);
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_FALSE(file->wire.empty());
  EXPECT_EQ(file->graph.buffers_size(), 0);
  EXPECT_EQ(file->graph.ops_size(), 0);
  EXPECT_EQ(file->graph.parameters_size(), 2);
  absl::StatusOr<CompiledGraph> streamed = CompileGraph(file->graph, path, file->wire);
  absl::StatusOr<CompiledGraph> whole = CompileGraph(graph, path);
  ASSERT_TRUE(streamed.ok()) << streamed.status();
  ASSERT_TRUE(whole.ok()) << whole.status();
  ASSERT_EQ(streamed->buffers.size(), whole->buffers.size());
  for (size_t b = 0; b < whole->buffers.size(); ++b) {
    EXPECT_EQ(streamed->buffers[b].name, whole->buffers[b].name);
    EXPECT_EQ(*BufferBytes(*streamed, b, streamed->defaults), *BufferBytes(*whole, b, whole->defaults));
    EXPECT_EQ(*BufferCopies(*streamed, b, streamed->defaults), *BufferCopies(*whole, b, whole->defaults));
  }
  EXPECT_EQ(streamed->op_names, whole->op_names);
  EXPECT_EQ(streamed->op_order, whole->op_order);
  EXPECT_EQ(streamed->op_buffers, whole->op_buffers);
  EXPECT_EQ(streamed->op_loops, whole->op_loops);

  GraphFile decoded = *std::move(file);
  ASSERT_TRUE(DecodeGraphWire(&decoded, path).ok());
  EXPECT_TRUE(decoded.wire.empty());
  EXPECT_EQ(decoded.graph.SerializeAsString(), graph.SerializeAsString());
}

// Text and JSON graphs are parsed whole, then their buffers and ops go on the wire as a binary
// graph's do (the million-buffer text graph's peak, docs/performance.md): the same compiled graph.
TEST(GraphWireTest, TextAndJsonGraphsCompileFromTheWireAsFromTheirMessages) {
  const KernelGraph graph = Parse(kPipelined);
  absl::StatusOr<CompiledGraph> whole = CompileGraph(graph, "pipelined");
  ASSERT_TRUE(whole.ok()) << whole.status();
  for (ProtoFormat format : {ProtoFormat::kText, ProtoFormat::kJson}) {
    absl::StatusOr<std::string> contents = SerializeProto(graph, format);
    ASSERT_TRUE(contents.ok()) << contents.status();
    const std::string path = WriteTempFile(format == ProtoFormat::kText ? "pipelined.pbtxt" : "pipelined.json", *contents);
    absl::StatusOr<GraphFile> file = ReadGraphFile(path);
    ASSERT_TRUE(file.ok()) << file.status();
    EXPECT_FALSE(file->wire.empty()) << path;
    EXPECT_EQ(file->graph.buffers_size(), 0) << path;
    EXPECT_EQ(file->graph.ops_size(), 0) << path;
    absl::StatusOr<CompiledGraph> streamed = CompileGraph(file->graph, path, file->wire);
    ASSERT_TRUE(streamed.ok()) << streamed.status();
    ASSERT_EQ(streamed->buffers.size(), whole->buffers.size()) << path;
    for (size_t b = 0; b < whole->buffers.size(); ++b) {
      EXPECT_EQ(streamed->buffers[b].name, whole->buffers[b].name);
      EXPECT_EQ(*BufferBytes(*streamed, b, streamed->defaults), *BufferBytes(*whole, b, whole->defaults));
    }
    EXPECT_EQ(streamed->op_names, whole->op_names) << path;
    EXPECT_EQ(streamed->op_order, whole->op_order) << path;
    GraphFile decoded = *std::move(file);
    ASSERT_TRUE(DecodeGraphWire(&decoded, path).ok());
    EXPECT_EQ(decoded.graph.SerializeAsString(), graph.SerializeAsString()) << path;
  }
}

TEST(GraphWireTest, ErrorsOnTheWireNameFileAndField) {
  KernelGraph graph = Parse(R"pb(
    buffers { name: "a" shape: "4" dtype: "f32" memory_space: "smem" }
    buffers { name: "a" shape: "4" dtype: "f32" memory_space: "smem" }
  )pb");
  const std::string twice = WriteTempFile("twice.pb", graph.SerializeAsString());
  absl::StatusOr<GraphFile> file = ReadGraphFile(twice);
  ASSERT_TRUE(file.ok()) << file.status();
  absl::StatusOr<CompiledGraph> compiled = CompileGraph(file->graph, twice, file->wire);
  ASSERT_FALSE(compiled.ok());
  EXPECT_THAT(compiled.status().message(), HasSubstr("twice.pb: buffer 'a': is defined twice"));

  graph.mutable_buffers(1)->set_name("b");
  graph.mutable_buffers(1)->set_shape(0, "1 +");
  const std::string bad_shape = WriteTempFile("bad_shape.pb", graph.SerializeAsString());
  file = ReadGraphFile(bad_shape);
  ASSERT_TRUE(file.ok()) << file.status();
  compiled = CompileGraph(file->graph, bad_shape, file->wire);
  ASSERT_FALSE(compiled.ok());
  EXPECT_THAT(compiled.status().message(), HasSubstr("bad_shape.pb: buffer 'b' shape[0]"));

  // A buffer message that is not one (field 1 of Buffer given as a varint): the whole graph's error.
  graph.mutable_buffers(1)->set_shape(0, "4");
  const std::string malformed = WriteTempFile(
      "malformed.pb", graph.SerializeAsString() + std::string("\x22\x02\x08\x01", 4));
  file = ReadGraphFile(malformed);
  ASSERT_TRUE(file.ok()) << file.status();
  compiled = CompileGraph(file->graph, malformed, file->wire);
  ASSERT_FALSE(compiled.ok());
  EXPECT_THAT(compiled.status().message(), HasSubstr("malformed.pb: not a valid binary KernelGraph"));
  EXPECT_THAT(LoadGraph(malformed).status().message(), HasSubstr("malformed.pb: not a valid binary KernelGraph"));
}

TEST(GraphLimitsTest, AShapeOfMoreDimensionsThanTheLimitIsRefused) {
  std::string shape;
  for (int d = 0; d <= kMaxBufferRank; ++d) shape += " shape: \"1\"";
  const absl::Status status = CompileGraphTextError(
      "buffers { name: \"a\" dtype: \"f16\" memory_space: \"smem\"" + shape + " }");
  EXPECT_THAT(status.message(), HasSubstr("test.pbtxt: buffer 'a' shape: has more than the supported 64 dimensions"));
}

TEST(GraphLimitsTest, MorePartitionsThanTheLimitAreRefused) {
  std::string text = "launch {";
  for (int p = 0; p <= kMaxLaunchPartitions; ++p) text += " partitions { name: \"p\" warps: \"1\" }";
  const absl::Status status = CompileGraphTextError(text + " }");
  EXPECT_THAT(status.message(), HasSubstr("test.pbtxt: launch.partitions: has 1025 entries, more than the supported 1024"));
}


// Issue 17: an expression that overflowed while a buffer was sized said only
// 'expression "..." overflows 64 bits': now the file, buffer and field come first.
TEST(GraphLimitsTest, AnOverflowingSizeExpressionNamesFileBufferAndField) {
  const CompiledGraph graph = CompileGraphText(R"pb(
    buffers { name: "a" size_bytes: "9223372036854775807 + 1" memory_space: "smem" }
    buffers { name: "b" dtype: "f16" shape: "64" round_up: "9223372036854775807 * 2" memory_space: "smem" }
  )pb");
  auto a = BufferBytes(graph, 0, graph.defaults);
  EXPECT_EQ(a.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(a.status().message(), HasSubstr("test.pbtxt: buffer 'a' size_bytes: expression \"9223372036854775807 + 1\" overflows 64 bits"));
  auto b = BufferBytes(graph, 1, graph.defaults);
  EXPECT_THAT(b.status().message(), HasSubstr("test.pbtxt: buffer 'b' round_up[0]: expression"));
}

// Definitions (docs/graph-format.md, "Definitions"): a name any expression of the graph may use.
constexpr char kDefined[] = R"pb(
  parameters { name: "BM" default_value: 64 }
  parameters { name: "STAGES" default_value: 3 }
  definitions { name: "TILE_BYTES" expr: "BM * 32 * 2" }
  definitions { name: "ALL_STAGES" expr: "STAGES * TILE_BYTES" }
  buffers { name: "a" size_bytes: "ALL_STAGES" memory_space: "smem" }
)pb";

TEST(GraphDefinitionsTest, AnExpressionUsesTheDefinitionsBeforeIt) {
  const CompiledGraph graph = CompileGraphText(kDefined);
  auto values = BindParameters(graph, {"BM=128"});
  ASSERT_TRUE(values.ok());
  EXPECT_EQ(*BufferBytes(graph, 0, *values), 3 * 128 * 32 * 2);
}

TEST(GraphDefinitionsTest, ADefinitionCannotUseOneAfterIt) {
  EXPECT_THAT(CompileGraphTextError(R"pb(definitions { name: "A" expr: "B + 1" }
                                         definitions { name: "B" expr: "2" })pb").message(),
              HasSubstr("definition 'A' expr: expression \"B + 1\": unknown parameter 'B'"));
}

TEST(GraphDefinitionsTest, ADefinitionCannotTakeTheNameOfAnotherName) {
  EXPECT_THAT(CompileGraphTextError(R"pb(parameters { name: "BM" }
                                         definitions { name: "BM" expr: "2" })pb").message(),
              HasSubstr("definition 'BM': has the name of a parameter"));
  EXPECT_THAT(CompileGraphTextError(R"pb(definitions { name: "SM_ARCH" expr: "2" })pb").message(),
              HasSubstr("definition 'SM_ARCH': has the name of a value that comes from the device"));
  EXPECT_THAT(CompileGraphTextError(R"pb(definitions { name: "cdiv" expr: "2" })pb").message(),
              HasSubstr("definition 'cdiv': has the name of a function"));
  EXPECT_THAT(CompileGraphTextError(R"pb(definitions { name: "A" expr: "1" }
                                         definitions { name: "A" expr: "2" })pb").message(),
              HasSubstr("definition 'A': is defined twice"));
  EXPECT_THAT(CompileGraphTextError(R"pb(definitions { name: "2A" expr: "1" })pb").message(),
              HasSubstr("definition '2A': name must be an identifier"));
}

// Writes `contents` to `name` under a directory of the test's own; returns its path.
std::string WriteDefinitionsFile(const std::string& name, const std::string& contents) {
  const std::filesystem::path path = std::filesystem::path(::testing::TempDir()) / "definitions" / name;
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << contents;
  return path.string();
}

TEST(GraphDefinitionsTest, DefinitionsFromAnotherFileComeFirstAndNameIt) {
  WriteDefinitionsFile("rules/tiles.pbtxt", R"pb(name: "tiles" definitions { name: "TILE_BYTES" expr: "BM * 32 * 2" })pb");
  const std::string graph_path = WriteDefinitionsFile("kernel.pbtxt", R"pb(
    parameters { name: "BM" default_value: 64 }
    definitions_from: "rules/tiles.pbtxt"
    definitions { name: "TWICE" expr: "2 * TILE_BYTES" }
    buffers { name: "a" size_bytes: "TWICE" memory_space: "smem" }
  )pb");
  absl::StatusOr<KernelGraph> graph = LoadGraph(graph_path);
  ASSERT_TRUE(graph.ok()) << graph.status();
  EXPECT_EQ(graph->definitions_from_size(), 0);
  ASSERT_EQ(graph->definitions_size(), 2);
  EXPECT_EQ(graph->definitions(0).name(), "TILE_BYTES");
  EXPECT_THAT(graph->definitions(0).from_file(), HasSubstr("definitions/rules/tiles.pbtxt"));
  EXPECT_EQ(graph->definitions(1).from_file(), "");
  absl::StatusOr<CompiledGraph> compiled = CompileGraph(*graph, graph_path);
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  EXPECT_EQ(*BufferBytes(*compiled, 0, compiled->defaults), 2 * 64 * 32 * 2);

  // ReadGraphFile, the pipeline's reader, resolves them as LoadGraph does.
  absl::StatusOr<GraphFile> file = ReadGraphFile(graph_path);
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ(file->graph.definitions_size(), 2);
}

TEST(GraphDefinitionsTest, AnImportedDefinitionsErrorNamesItsFile) {
  WriteDefinitionsFile("rules/bad.pbtxt", R"pb(definitions { name: "TILE_BYTES" expr: "BM *" })pb");
  const std::string graph_path = WriteDefinitionsFile("uses_bad.pbtxt", R"pb(
    parameters { name: "BM" default_value: 64 }
    definitions_from: "rules/bad.pbtxt"
  )pb");
  absl::StatusOr<KernelGraph> graph = LoadGraph(graph_path);
  ASSERT_TRUE(graph.ok()) << graph.status();
  EXPECT_THAT(CompileGraph(*graph, graph_path).status().message(),
              HasSubstr("definition 'TILE_BYTES' (from "));
}

TEST(GraphDefinitionsTest, AMissingDefinitionsFileIsNamedWithTheField) {
  const std::string graph_path = WriteDefinitionsFile("uses_missing.pbtxt", R"pb(definitions_from: "rules/none.pbtxt")pb");
  EXPECT_THAT(LoadGraph(graph_path).status().message(),
              HasSubstr("uses_missing.pbtxt: definitions_from[0] 'rules/none.pbtxt': "));
}

TEST(GraphDefinitionsTest, AKernelGraphIsNotADefinitionsFile) {
  WriteDefinitionsFile("rules/kernel.pbtxt", R"pb(buffers { name: "a" size_bytes: "4" memory_space: "smem" })pb");
  const std::string graph_path = WriteDefinitionsFile("uses_kernel.pbtxt", R"pb(definitions_from: "rules/kernel.pbtxt")pb");
  EXPECT_THAT(LoadGraph(graph_path).status().message(), HasSubstr("gives buffers or ops; a file named here gives definitions only"));
}

TEST(GraphDefinitionsTest, DefinitionFilesThatImportEachOtherAreACycle) {
  WriteDefinitionsFile("rules/one.pbtxt", R"pb(definitions_from: "two.pbtxt" definitions { name: "ONE" expr: "1" })pb");
  WriteDefinitionsFile("rules/two.pbtxt", R"pb(definitions_from: "one.pbtxt" definitions { name: "TWO" expr: "2" })pb");
  const std::string graph_path = WriteDefinitionsFile("uses_cycle.pbtxt", R"pb(definitions_from: "rules/one.pbtxt")pb");
  EXPECT_THAT(LoadGraph(graph_path).status().message(), HasSubstr("imports itself through"));
}

// A file two others import gives its definitions once, so names are not defined twice.
TEST(GraphDefinitionsTest, AFileImportedTwiceGivesItsDefinitionsOnce) {
  WriteDefinitionsFile("rules/base.pbtxt", R"pb(definitions { name: "BASE" expr: "8" })pb");
  WriteDefinitionsFile("rules/left.pbtxt", R"pb(definitions_from: "base.pbtxt" definitions { name: "LEFT" expr: "BASE + 1" })pb");
  WriteDefinitionsFile("rules/right.pbtxt", R"pb(definitions_from: "base.pbtxt" definitions { name: "RIGHT" expr: "BASE + 2" })pb");
  const std::string graph_path = WriteDefinitionsFile("uses_diamond.pbtxt", R"pb(
    definitions_from: "rules/left.pbtxt"
    definitions_from: "rules/right.pbtxt"
    buffers { name: "a" size_bytes: "LEFT * RIGHT" memory_space: "smem" }
  )pb");
  absl::StatusOr<KernelGraph> graph = LoadGraph(graph_path);
  ASSERT_TRUE(graph.ok()) << graph.status();
  EXPECT_EQ(graph->definitions_size(), 3);
  absl::StatusOr<CompiledGraph> compiled = CompileGraph(*graph, graph_path);
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  EXPECT_EQ(*BufferBytes(*compiled, 0, compiled->defaults), 9 * 10);
}

// A graph given as contents (the Python module's `contents=`) has no directory to resolve
// definitions_from in: an error, never the definitions silently missing.
TEST(GraphDefinitionsTest, DefinitionsFromAGraphNotReadFromAFileAreRefused) {
  EXPECT_THAT(CompileGraphTextError(R"pb(definitions_from: "rules/tiles.pbtxt")pb").message(),
              HasSubstr("definitions_from: 'rules/tiles.pbtxt' is not resolved"));
}

}  // namespace
}  // namespace scratchsim
