// End-to-end tests of the `simulate` command: exit codes and the messages a user sees for
// good input and for every bad-input path (each names the file, the field and the problem).
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sim/driver/cli.h"
#include "sim/driver/cli_test_util.h"
#include "sim/frontend.h"
#include "sim/test_util.h"
#include "sim/proto_io.h"
#include "proto/graph.pb.h"

namespace scratchsim {
namespace {

using ::testing::HasSubstr;

using Result = testing::CliRun;

Result Simulate(const std::vector<std::string>& args) { return testing::RunCli(args); }

std::string Source(const std::string& relative) { return testing::SourcePath(relative); }
std::string Bad(const std::string& name) { return Source("tests/data/bad/" + name); }

TEST(CliTest, SeedMlpDoesNotFitWithTritonsNumbers) {
  Result r = Simulate({"--device", "h100", "--graph", Source("models/graphs/mlp.pbtxt")});
  EXPECT_EQ(r.code, kExitDoesNotFit);
  EXPECT_THAT(r.out, HasSubstr("Required: 526336, Hardware limit: 232448"));
  r = Simulate({"--device=h100", "--graph", Source("models/graphs/mlp.pbtxt"), "--set", "tile_t=32", "--set=tile_h=32"});
  EXPECT_THAT(r.out, HasSubstr("Required: 1056768, Hardware limit: 232448"));
}

TEST(CliTest, BinaryAndJsonGraphsGiveTheSameVerdict) {
  KernelGraph graph;
  ASSERT_TRUE(LoadProtoFile(Source("models/graphs/mlp.pbtxt"), &graph).ok());
  for (auto [format, extension] : {std::pair{ProtoFormat::kBinary, ".pb"}, std::pair{ProtoFormat::kJson, ".json"}}) {
    std::string path = ::testing::TempDir() + "/mlp" + extension;
    auto bytes = SerializeProto(graph, format);
    ASSERT_TRUE(bytes.ok());
    std::ofstream(path, std::ios::binary) << *bytes;
    Result r = Simulate({"--device", "h100", "--graph", path});
    EXPECT_EQ(r.code, kExitDoesNotFit) << r.err;
    EXPECT_THAT(r.out, HasSubstr("Required: 526336, Hardware limit: 232448")) << extension;
  }
}

TEST(CliTest, FittingConfigExitsZeroAndJsonIsStable) {
  Result r = Simulate({"--device", "h100", "--graph", Source("models/graphs/mlp.pbtxt"), "--set", "I_RED=256",
                       "--format", "json"});
  EXPECT_EQ(r.code, kExitFits) << r.err;
  EXPECT_THAT(r.out, HasSubstr("\"fits\": true"));
  EXPECT_THAT(r.out, HasSubstr("\"blocks_per_core\""));
}

TEST(CliTest, WarpSpecializedThreadsSeed003) {
  Result r = Simulate({"--device", "h100", "--graph", Source("models/graphs/ws_4_4_4.pbtxt")});
  EXPECT_EQ(r.code, kExitDoesNotFit);
  EXPECT_THAT(r.out, HasSubstr("out of resource: threads, Required: 384, Hardware limit: 256"));
}

TEST(CliTest, WhatIfOccupancy) {
  Result r = Simulate({"--device", "h100", "--threads", "256", "--regs", "128", "--smem", "115712"});
  EXPECT_EQ(r.code, kExitFits) << r.err;
  EXPECT_THAT(r.out, HasSubstr("occupancy: 2 blocks per SM"));
}

// The what-if mode follows the same rules: a static __shared__ array above 48 KiB cannot launch.
TEST(CliTest, WhatIfAppliesTheStaticSharedMemoryCap) {
  Result r = Simulate({"--device", "h100", "--threads", "128", "--static-smem", "65536"});
  EXPECT_EQ(r.code, kExitDoesNotFit) << r.err;
  EXPECT_THAT(r.out, HasSubstr("verdict  DOES NOT FIT"));
  EXPECT_THAT(r.out, HasSubstr("static __shared__ 65536 B exceeds the 49152 B"));
}

// pytorch/pytorch#133254: FlexAttention's backward kernel (D=128) asks for 131074 B of shared
// memory per block, which Triton refuses on an RTX 4090 (`Required: 131074, Hardware limit:
// 101376`) and which fits on an H100 (232448 B opt-in).
TEST(CliTest, FlexAttentionBackwardDoesNotFitAnRtx4090) {
  Result r = Simulate({"--device", "rtx4090", "--threads", "256", "--smem", "131074"});
  EXPECT_EQ(r.code, kExitDoesNotFit) << r.err;
  EXPECT_THAT(r.out, HasSubstr("dynamic 131074"));
  EXPECT_THAT(r.out, HasSubstr("exceeds the per-block opt-in maximum of 101376 B"));
  Result h100 = Simulate({"--device", "h100", "--threads", "256", "--smem", "131074"});
  EXPECT_EQ(h100.code, kExitFits) << h100.err;
}

// What-if JSON: fits agrees with the exit code, no empty strings, no INT32_MAX for "no limit".
TEST(CliTest, WhatIfJsonAgreesWithTheExitCode) {
  Result fits = Simulate({"--device", "h100", "--threads", "256", "--format", "json"});
  EXPECT_EQ(fits.code, kExitFits);
  EXPECT_THAT(fits.out, HasSubstr("\"fits\": true"));
  EXPECT_THAT(fits.out, HasSubstr("\"kernel\": \"what-if: 256 threads"));
  EXPECT_THAT(fits.out, ::testing::Not(HasSubstr("\"\"")));
  EXPECT_THAT(fits.out, ::testing::Not(HasSubstr("2147483647")));
  EXPECT_THAT(fits.out, ::testing::Not(HasSubstr("limit_registers")));  // no registers: no limit, absent
  Result over = Simulate({"--device", "h100", "--threads", "256", "--smem", "300000", "--format", "json"});
  EXPECT_EQ(over.code, kExitDoesNotFit);
  EXPECT_THAT(over.out, HasSubstr("\"fits\": false"));
}

// A configuration that cannot launch says so in its occupancy too, with the reason.
TEST(CliTest, OccupancyNeverContradictsTheVerdict) {
  Result r = Simulate({"--device", "h100", "--graph", Source("models/graphs/ws_4_4_4.pbtxt"), "--format", "json"});
  EXPECT_EQ(r.code, kExitDoesNotFit);
  EXPECT_THAT(r.out, HasSubstr("\"blocks_per_core\": 0"));
  EXPECT_THAT(r.out, HasSubstr("\"limiting_factor\": \"threads\""));
  EXPECT_THAT(r.out, HasSubstr("\"reason\": \"out of resource: threads, Required: 384"));
}

// simulate and plan write 64-bit figures the same way: as JSON numbers.
TEST(CliTest, SixtyFourBitNumbersAreJsonNumbers) {
  Result r = Simulate({"--device", "h100", "--graph", Source("models/graphs/mlp.pbtxt"), "--format", "json"});
  EXPECT_THAT(r.out, HasSubstr("\"peak_bytes\": 526336"));
  EXPECT_THAT(r.out, HasSubstr("\"required\": 526336"));
}

TEST(CliTest, ABufferNoOpTouchesIsCountedAndNamed) {
  const std::string path = ::testing::TempDir() + "/untouched.pbtxt";
  std::ofstream(path) << R"pb(
    buffers { name: "used" shape: "1024" dtype: "f32" memory_space: "smem" }
    buffers { name: "declared" shape: "2048" dtype: "f32" memory_space: "smem" }
    ops { name: "use" writes: "used" }
  )pb";
  Result r = Simulate({"--device", "h100", "--graph", path});
  EXPECT_EQ(r.code, kExitFits) << r.err;
  EXPECT_THAT(r.out, HasSubstr("smem: peak 12288 B"));
  EXPECT_THAT(r.out, HasSubstr("buffer 'declared' is touched by no op: allocated for the whole kernel"));
}

// Suggestions change tuning parameters only; where only a problem dimension would help, the
// suggestion says so in words and changes nothing (seed 002: I_RED held whole).
TEST(CliTest, SuggestionsNeverChangeAProblemSize) {
  Result r = Simulate({"--device", "h100", "--graph", Source("models/graphs/mlp.pbtxt"), "--format", "json"});
  EXPECT_THAT(r.out, HasSubstr("\"restructure\": true"));
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("\"name\": \"I_RED\", \"value\": 1024")));
  Result text = Simulate({"--device", "h100", "--graph", Source("models/graphs/mlp.pbtxt")});
  EXPECT_THAT(text.out, HasSubstr("I_RED is a problem dimension held whole in one block"));
}

TEST(CliTest, EverySuggestionSaysWhatItGives) {
  for (const char* graph : {"mlp.pbtxt", "ws_4_4_4.pbtxt", "gemm.pbtxt", "regheavy.pbtxt"}) {
    Result r = Simulate({"--device", "t4", "--graph", Source(std::string("models/graphs/") + graph)});
    for (size_t at = r.out.find("  - "); at != std::string::npos; at = r.out.find("  - ", at + 1)) {
      const std::string line = r.out.substr(at, r.out.find('\n', at) - at);
      EXPECT_GT(line.size(), 8u) << graph << ": " << line;
      EXPECT_THAT(line, ::testing::Not(HasSubstr("()"))) << graph;
    }
  }
}

TEST(CliTest, SubcommandHelpExitsZero) {
  for (const char* sub : {"plan", "validate", "probe", "gemm-timing"}) {
    // A build without backends/cuda (no nvcc, or the sanitizer build) has no GPU subcommands.
    if (std::string(sub) != "plan" && !absl::StrContains(Simulate({"--help"}).out, std::string("simulate ") + sub)) continue;
    Result r = Simulate({sub, "--help"});
    EXPECT_EQ(r.code, 0) << sub << ": " << r.err;
    EXPECT_THAT(r.out, HasSubstr("usage:")) << sub;
    EXPECT_THAT(r.out, HasSubstr(std::string("simulate ") + sub)) << sub;
  }
  EXPECT_THAT(Simulate({"--help"}).out, HasSubstr("3 a subcommand needs a GPU"));
}

// The planner prunes a Pallas call by the engine's scoped-VMEM verdict on its lowering.
TEST(CliTest, PlanPrunesPallasBlocksAgainstTheScopedVmemLimit) {
  Result r = Simulate({"plan", "--device", "tpu_v7x", "--graph", Source("models/graphs/tpu_matmul_big.pbtxt"),
                       "--format", "json"});
  if (r.code == kExitBadInput && r.err.find("no TPU front end") != std::string::npos) GTEST_SKIP() << r.err;
  EXPECT_EQ(r.code, kExitFits) << r.err;
  EXPECT_THAT(r.out, HasSubstr("\"limit\": \"scoped vmem\""));
}

// The v7x clock has no published figure: the plan says it is assumed in the device's file.
TEST(CliTest, PlanCallsAnAssumedDeviceTermAssumed) {
  Result r = Simulate({"plan", "--device", "tpu_v7x", "--graph", Source("models/graphs/tpu_matmul_big.pbtxt")});
  if (r.code == kExitBadInput && r.err.find("no TPU front end") != std::string::npos) GTEST_SKIP() << r.err;
  EXPECT_EQ(r.code, kExitFits) << r.err;
  EXPECT_THAT(r.out, HasSubstr("clock_mhz 2,203 MHz (assumed in tpu_v7x's file)"));
}

// A traced body whose pattern no fitted body of its class has (an int8 weight block converted and
// scaled before its dot): the band widens to what the vreg replay proves and the report names the
// pattern. On v5e's 16 MiB the widened band straddles the limit: AT RISK, never a bare FITS; on
// v6e's 32 MiB even the replay's bound fits, so the FITS is proven.
TEST(CliTest, AnUnvalidatedBodyPatternIsNamedAndLeftAtRisk) {
  const std::string graph = Source("backends/tpu/testdata/dequant_i8_matmul.pbtxt");
  Result r = Simulate({"--device", "tpu_v5e", "--graph", graph});
  if (r.code == kExitBadInput && r.err.find("no TPU front end") != std::string::npos) GTEST_SKIP() << r.err;
  EXPECT_EQ(r.code, kExitDoesNotFit) << r.err;
  EXPECT_THAT(r.out, HasSubstr("verdict  AT RISK"));
  EXPECT_THAT(r.out, HasSubstr("the matmul band is not validated for this body (dot_general(convert_element_type))"));
  EXPECT_THAT(r.out, HasSubstr("the register-spill model was fitted on libtpu 0.0.42.1 (jax 0.10.2)"));
  Result roomy = Simulate({"--device", "tpu_v6e", "--graph", graph});
  EXPECT_EQ(roomy.code, kExitFits) << roomy.err;
  EXPECT_THAT(roomy.out, HasSubstr("0 to the program-order peak of live values"));
}

// A figure that does not apply is absent in JSON, not 0: a TPU space without estimated buffers
// has no low/high bounds, a GPU space no TPU scoped parts.
TEST(CliTest, AbsentFiguresAreAbsentInJson) {
  Result tpu = Simulate({"--device", "tpu_v6e", "--graph", Source("models/graphs/tpu_e1001.pbtxt"), "--format", "json"});
  EXPECT_THAT(tpu.out, HasSubstr("\"instruction_scoped_bytes\": "));
  for (const char* absent : {"instruction_scoped_bytes_low", "instruction_scoped_bytes_high", "peak_bytes_low",
                             "estimated_bytes", "bytes_per_copy_low"}) {
    EXPECT_THAT(tpu.out, ::testing::Not(HasSubstr(absent))) << absent;
  }
  Result gpu = Simulate({"--device", "h100", "--graph", Source("models/graphs/mlp.pbtxt"), "--format", "json"});
  EXPECT_THAT(gpu.out, ::testing::Not(HasSubstr("scoped_bytes")));
}

// A plan's sizes use the reports' byte formatter and its counts their plural: "vmem 28.5 MiB",
// "1 core" (not "vmem 29172.0K", "1 cores").
TEST(CliTest, PlanSizesAndCountsReadAsTheReportsDo) {
  Result r = Simulate({"plan", "--device", "tpu_v6e", "--graph", Source("models/graphs/pallas_matmul.pbtxt"), "--top", "1"});
  EXPECT_EQ(r.code, kExitFits) << r.err;
  EXPECT_THAT(r.out, HasSubstr(", 1 core\n"));
  EXPECT_THAT(r.out, ::testing::ContainsRegex("vmem [0-9.]+ MiB"));
  EXPECT_THAT(r.out, ::testing::Not(::testing::ContainsRegex("vmem [0-9.]+K")));
}

// The help lists every exit code the command can return, AT RISK and SIGINT included.
TEST(CliTest, HelpDocumentsEveryExitCode) {
  Result r = Simulate({"--help"});
  EXPECT_EQ(r.code, kExitFits) << r.err;
  EXPECT_THAT(r.out, HasSubstr("1 simulated and does not fit or is AT RISK"));
  EXPECT_THAT(r.out, HasSubstr("130 `simulate plan`"));
  EXPECT_THAT(r.out, HasSubstr("stopped by SIGINT"));
}

// `simulate` alone asks how to use it: the usage, not a complaint about --device.
TEST(CliTest, BareSimulatePrintsItsUsage) {
  Result r = Simulate({});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_THAT(r.err, HasSubstr("usage:"));
  EXPECT_THAT(r.err, ::testing::Not(HasSubstr("--device is required")));
}

// Every subcommand, the driver's and the front ends', answers --help with its usage and exit 0.
TEST(CliTest, EverySubcommandAnswersHelp) {
  std::vector<std::string> names = {"plan", "calibrate"};
  for (const auto& front_end : FrontEnds()) {
    for (const Subcommand& sub : front_end->subcommands()) names.push_back(sub.name);
  }
  for (const std::string& name : names) {
    Result r = Simulate({name, "--help"});
    EXPECT_EQ(r.code, kExitFits) << name << ": " << r.err;
  }
}

// An override without a value names the parameter and says its value is empty.
TEST(CliTest, SetWithoutValueSaysTheValueIsEmpty) {
  Result r = Simulate({"--device", "h100", "--graph", Source("models/graphs/mlp.pbtxt"), "--set", "tile_t"});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_THAT(r.err, HasSubstr("--set tile_t: the value of parameter 'tile_t' is empty (give it as --set tile_t=V)"));
}

TEST(CliTest, ListDevices) {
  Result r = Simulate({"--list-devices"});
  EXPECT_EQ(r.code, kExitFits) << r.err;
  EXPECT_THAT(r.out, HasSubstr("h100"));
  EXPECT_THAT(r.out, HasSubstr("mi300x"));
}

struct BadCase {
  std::string name;
  std::vector<std::string> args;
  std::vector<std::string> expected;  // substrings of the error message
};

class BadInputTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadInputTest, ExitsTwoWithAClearMessage) {
  const BadCase& c = GetParam();
  Result r = Simulate(c.args);
  EXPECT_EQ(r.code, kExitBadInput) << r.out;
  EXPECT_THAT(r.err, HasSubstr("simulate: error: "));
  for (const std::string& e : c.expected) EXPECT_THAT(r.err, HasSubstr(e));
}

std::vector<std::string> Graph(const std::string& file, std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {"--device", "h100", "--graph", Bad(file)};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

INSTANTIATE_TEST_SUITE_P(
    AllPaths, BadInputTest,
    ::testing::Values(
        BadCase{"EmptyFile", Graph("empty.pbtxt"), {"empty.pbtxt: file is empty"}},
        BadCase{"GarbageBytes", Graph("garbage.pb"), {"garbage.pb: not a valid binary KernelGraph"}},
        BadCase{"UnknownField", Graph("unknown_field.pbtxt"), {"unknown_field.pbtxt: line 2", "colour"}},
        BadCase{"UnknownJsonField", Graph("unknown_field.json"), {"unknown_field.json: invalid JSON", "bufers"}},
        BadCase{"TruncatedJson", Graph("truncated.json"), {"truncated.json: invalid JSON"}},
        BadCase{"UnknownExtension", Graph("graph.txt"), {"graph.txt: unknown file extension"}},
        BadCase{"MissingFile", Graph("does_not_exist.pbtxt"), {"does_not_exist.pbtxt: cannot open file"}},
        BadCase{"UnknownDevice", {"--device", "h900", "--graph", Bad("cycle.pbtxt")}, {"unknown device 'h900'", "h100"}},
        BadCase{"DeviceFileMissing", {"--device", "/nonexistent/dev.textproto", "--threads", "32"},
                {"/nonexistent/dev.textproto: cannot open file"}},
        BadCase{"Cycle", Graph("cycle.pbtxt"), {"cycle.pbtxt: ops: dependency cycle: load -> compute -> store -> load"}},
        BadCase{"ZeroDimension", Graph("zero_dim.pbtxt"),
                {"zero_dim.pbtxt: buffer 'b_tile' shape[1]: extent must be positive, got 0"}},
        BadCase{"NegativeDimension", Graph("negative_dim.pbtxt"),
                {"negative_dim.pbtxt: buffer 'a_tile' shape[0]: extent must be positive, got -64"}},
        BadCase{"SizeOverflows64Bits", Graph("overflow.pbtxt"), {"overflow.pbtxt: buffer 'huge'", "overflows 64 bits"}},
        BadCase{"ZeroStages", Graph("zero_stages.pbtxt"),
                {"zero_stages.pbtxt: buffer 'a_tile' copies: must be at least 1, got 0"}},
        BadCase{"UnknownDtype", Graph("unknown_dtype.pbtxt"), {"buffer 'a_tile' dtype: unknown dtype 'f12'"}},
        BadCase{"UnknownMemorySpace", Graph("unknown_space.pbtxt"), {"device 'h100' has no memory space 'vmem'"}},
        BadCase{"UnknownParameter", Graph("zero_dim.pbtxt", {"--set", "BLOCK_Q=4"}), {"'BLOCK_Q' is not a parameter"}},
        BadCase{"MalformedRequirement", Graph("bad_requirement.pbtxt"),
                {"bad_requirement.pbtxt: requirements[0] expr", "BLOCK_M % == 0"}},
        // Three warps cannot tile BLOCK_M = 128 in rows of 3: the kernel's static_assert.
        BadCase{"BrokenRequirement",
                {"--device", "h100", "--graph", Source("models/graphs/gemm.pbtxt"), "--set", "NUM_WARPS=3"},
                {"gemm.pbtxt: requirements[1] \"BLOCK_M % (NUM_WARPS * WARP_SIZE / (BLOCK_N / 4)) == 0\" does not hold",
                 "static_assert: the thread rows tile BLOCK_M"}},
        // An empty problem, and a block Triton's tl.arange cannot span (not a power of two).
        BadCase{"EmptyProblem",
                {"--device", "h100", "--graph", Source("models/graphs/triton_matmul.pbtxt"), "--set", "N=0"},
                {"triton_matmul.pbtxt: requirements[0] \"M >= 1 && N >= 1 && K >= 1 && ELT >= 1\" does not hold"}},
        BadCase{"TritonBlockNotAPowerOfTwo",
                {"--device", "h100", "--graph", Source("models/graphs/triton_matmul.pbtxt"), "--set", "BLOCK_M=96"},
                {"requirements[1]", "tl.arange over each block dimension needs a power of two"}},
        BadCase{"NonIntegerParameter", Graph("zero_dim.pbtxt", {"--set", "BLOCK_K=big"}), {"not a 64-bit integer"}},
        BadCase{"UnknownFlag", {"--device", "h100", "--grph", "x"}, {"unknown flag --grph"}},
        BadCase{"MissingDevice", {"--graph", Bad("cycle.pbtxt")}, {"--device is required"}},
        BadCase{"BadFormat", Graph("cycle.pbtxt", {"--format", "xml"}), {"--format: 'xml'"}},
        BadCase{"NegativeThreads", {"--device", "h100", "--threads", "-5"}, {"threads"}},
        BadCase{"ADirectoryAsTheGraph", {"--device", "h100", "--graph", Source("tests/data/bad/dir.pbtxt")},
                {"dir.pbtxt: is a directory"}},
        BadCase{"NegativePallasBodyFigure", {"--device", "tpu_v4", "--graph", Bad("pallas_negative_row_broadcast.pbtxt")},
                {"pallas_negative_row_broadcast.pbtxt: ", "pallas.body.row_broadcast_bytes", "must be >= 0"}},
        BadCase{"PallasProgramOperandOutOfRange",
                {"--device", "tpu_v5e", "--graph", Bad("pallas_program_operand_out_of_range.pbtxt")},
                {"pallas_program_operand_out_of_range.pbtxt: ", "body.program[0].ops[3] (sub): operand 99"}},
        BadCase{"PallasSliceStartOutsideItsOperand",
                {"--device", "tpu_v5e", "--graph", Bad("pallas_slice_start_outside_operand.pbtxt")},
                {"pallas_slice_start_outside_operand.pbtxt: ", "body.program[0].ops[1].start_indices[1]: 112"}},
        BadCase{"PallasProgramBadValueType", {"--device", "tpu_v5e", "--graph", Bad("pallas_program_bad_value_type.pbtxt")},
                {"pallas_program_bad_value_type.pbtxt: ", "body.program[0].values[1]", "f32[256,x]"}},
        BadCase{"NegativePallasReductionOutput",
                {"--device", "tpu_v5e", "--graph", Bad("pallas_negative_reduction_output.pbtxt")},
                {"pallas_negative_reduction_output.pbtxt: ", "pallas.body.reduction_output_bytes", "must be >= 0"}},
        BadCase{"TransposeWithoutRows",
                {"--device", "tpu_v5e", "--graph", Bad("pallas_transpose_without_rows.pbtxt")},
                {"pallas_transpose_without_rows.pbtxt: ", "pallas.body.transposes[0].rows", "missing"}},
        BadCase{"TransposeOfAnUnknownDtype",
                {"--device", "tpu_v5e", "--graph", Bad("pallas_transpose_bad_dtype.pbtxt")},
                {"pallas_transpose_bad_dtype.pbtxt: ", "pallas.body.transposes[0].dtype", "'bf15' is not a TPU dtype"}},
        BadCase{"NarrowLoadWithoutCols",
                {"--device", "tpu_v4", "--graph", Bad("pallas_narrow_load_without_cols.pbtxt")},
                {"pallas_narrow_load_without_cols.pbtxt: ", "pallas.body.unaligned_narrow_loads[0].cols", "missing"}},
        BadCase{"BadSetValueOnAPallasGraph",
                {"--device", "tpu_v5e", "--graph", Source("models/graphs/tpu_e1001.pbtxt"), "--set", "BM=big"},
                {"not a 64-bit integer"}},
        BadCase{"L1WindowWithoutRefetch", Graph("l1_window_without_refetch.pbtxt"),
                {"l1_window_without_refetch.pbtxt: l1_refetch_bytes: missing: l1_window_bytes and l1_refetch_bytes go together"}},
        BadCase{"UnknownCacheConfig", Graph("unknown_cache_config.pbtxt"),
                {"unknown_cache_config.pbtxt: launch.cache_config: 'prefer_texture' is not one of default, prefer_shared, prefer_l1, prefer_equal or triton"}},
        BadCase{"UnknownCacheConfigFlag", {"--device", "h100", "--threads", "128", "--cache-config", "prefer_l2"},
                {"--cache-config: 'prefer_l2' is not one of default, prefer_shared, prefer_l1, prefer_equal"}},
        BadCase{"UnknownConfirmMode",
                {"--device", "tpu_v5e", "--graph", Source("backends/tpu/testdata/confirm_matmul_2048.pbtxt"),
                 "--confirm", "maybe"},
                {"--confirm: 'maybe' is not one of always, at-risk"}},
        BadCase{"ConfirmAPlainGraph",
                {"--device", "h100", "--graph", Source("models/graphs/mlp.pbtxt"), "--confirm", "always"},
                {"--confirm: ", "mlp.pbtxt is a plain graph"}},
        BadCase{"ConfirmAGraphWithoutItsExportedKernel",
                {"--device", "tpu_v6e", "--graph", Source("backends/tpu/testdata/traced_matmul.pbtxt"), "--confirm",
                 "always"},
                {"traced_matmul.pbtxt: field 'pallas.jax_export': empty"}}),
    [](const ::testing::TestParamInfo<BadCase>& info) { return info.param.name; });


// Triton's launcher prefers shared memory above 48 KiB (the whole 228 KiB carve-out); below, the
// driver's default rule sizes it (docs/validation/carveout.md): 7 blocks of 25 KiB, room for
// them in the 196 KiB step, 60 KiB of L1.
TEST(CliTest, TritonLaunchesGetTheCarveoutTheirLauncherAsksFor) {
  const std::string graph = Source("models/graphs/triton_matmul.pbtxt");
  Result large = Simulate({"--device", "h200", "--graph", graph, "--format=json"});
  EXPECT_THAT(large.out, HasSubstr("\"launch_carveout_bytes\": 233472"));
  Result small = Simulate({"--device", "h200", "--graph", graph, "--set", "BLOCK_M=64", "--set", "BLOCK_N=64", "--set",
                           "BLOCK_K=32", "--set", "NUM_STAGES=3", "--format=json"});
  EXPECT_THAT(small.out, HasSubstr("\"launch_carveout_bytes\": 200704"));
  EXPECT_THAT(small.out, HasSubstr("\"l1_bytes_per_core\": 61440"));
}

// Issue 17: --carveout was narrowed to int, so 2^32 + 50 became 50. It is a 64-bit value held to
// -1..100 end to end.
TEST(CliTest, ACarveoutPastInt32IsRefusedNotWrapped) {
  Result r = Simulate({"--device", "h100", "--threads", "128", "--carveout", "4294967346"});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_THAT(r.err, HasSubstr("carveout_percent must be -1 (default) or 0..100, got 4294967346"));
}

// Reproducer of issue 17 (shared/reliability/device_carveout_overflow.textproto): exit 0 after a
// signed overflow in the carveout step; now exit 2 naming the file and the field.
TEST(CliTest, ADeviceWithAnOverflowingCarveoutIsBadInput) {
  const std::string device = Source("tests/data/reliability/device_carveout_overflow.textproto");
  Result r = Simulate({"--device", device, "--graph", Source("models/graphs/gemm.pbtxt")});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_THAT(r.err, HasSubstr(device + ": field 'memory_spaces[smem].carveout_kib' must be 0.."));
}

// Reproducer of issue 17 (shared/reliability/graph_registers_overflow.pbtxt): exit 0, FITS, with
// a negative spill. Now exit 2 naming the field.
TEST(CliTest, RegistersPastTheSpillArithmeticAreBadInput) {
  Result r = Simulate({"--device", "h100", "--graph", Source("tests/data/reliability/graph_registers_overflow.pbtxt"),
                       "--format=json"});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_THAT(r.err, HasSubstr("graph_registers_overflow.pbtxt: launch.registers_per_thread"));
}

// simulate --confirm with a stand-in for the Python that runs libtpu (SCRATCHSIM_PYTHON): the
// compiler's verdict replaces the model's, which the report keeps beside it.
class CliConfirmTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* python = std::getenv("SCRATCHSIM_PYTHON");
    if (python != nullptr) saved_ = python;
    runner_ = std::filesystem::temp_directory_path() / ("cli_confirm_python_" + std::to_string(::getpid()));
  }
  void TearDown() override {
    saved_.empty() ? unsetenv("SCRATCHSIM_PYTHON") : setenv("SCRATCHSIM_PYTHON", saved_.c_str(), 1);
    std::filesystem::remove(runner_);
  }
  // The runner prints `json` (and counts its calls in a file beside it).
  void RunnerPrints(const std::string& json) {
    std::ofstream(runner_) << "#!/bin/sh\necho run >> " << runner_.string() << ".calls\necho '" << json << "'\n";
    std::filesystem::permissions(runner_, std::filesystem::perms::owner_all);
    std::filesystem::remove(runner_.string() + ".calls");
    setenv("SCRATCHSIM_PYTHON", runner_.c_str(), 1);
  }
  bool RunnerRan() const { return std::filesystem::exists(runner_.string() + ".calls"); }

  // AT RISK on v5e by the model: libtpu fits it in 16715776 B (backends/tpu/testdata/confirm_expected.txt).
  const std::string at_risk_ = Source("backends/tpu/testdata/confirm_matmul_f32_768.pbtxt");
  // A band miss of the first holdout sweep (docs/tpu.md): FITS by the model on v7x at a limit
  // between its high bound and libtpu's requirement; the runner prints what libtpu printed of it
  // (confirm_expected.txt): out of VMEM, and what it needs with the limit at the whole 64 MiB.
  const std::string band_miss_ = Source("backends/tpu/testdata/confirm_holdout_band_miss.pbtxt");
  void RunnerPrintsTheBandMissConfirmation() {
    RunnerPrints(R"({"verdict": "vmem_scoped", "confirmed_verdict": "DOES_NOT_FIT", "size_bytes": 10370417, "limit_bytes": 10244588, "capacity_bytes": 67108864, "requirement_bytes": 10371072})");
  }
  std::filesystem::path runner_;
  std::string saved_;
};

TEST_F(CliConfirmTest, TheCompilersFitsReplacesAnAtRiskVerdict) {
  RunnerPrints(R"({"verdict": "fits", "confirmed_verdict": "FITS", "scoped_vmem_bytes": 16715776, "topology": "v5e:2x2", "versions": {"libtpu": "0.0.42.1"}})");
  Result r = Simulate({"--device", "tpu_v5e", "--graph", at_risk_, "--confirm", "at-risk"});
  EXPECT_EQ(r.code, kExitFits) << r.err;
  EXPECT_THAT(r.out, HasSubstr("verdict  FITS, confirmed: libtpu 0.0.42.1 compiled it for v5e:2x2"));
  EXPECT_THAT(r.out, HasSubstr("16715776 B (15.9 MiB) of scoped VMEM"));
  EXPECT_THAT(r.out, HasSubstr("model    AT RISK"));
}

TEST_F(CliConfirmTest, TheCompilersFailureMakesItNotFit) {
  RunnerPrints(R"({"verdict": "vmem_scoped", "confirmed_verdict": "DOES_NOT_FIT", "size_bytes": 17000000, "limit_bytes": 16777216, "message": "RESOURCE_EXHAUSTED: Ran out of memory in memory space vmem"})");
  Result r = Simulate({"--device", "tpu_v5e", "--graph", at_risk_, "--confirm", "always", "--format", "json"});
  EXPECT_EQ(r.code, kExitDoesNotFit) << r.err;
  EXPECT_THAT(r.out, HasSubstr("\"verdict\": \"DOES_NOT_FIT\""));
  EXPECT_THAT(r.out, HasSubstr("\"model_verdict\": \"AT_RISK\""));
  EXPECT_THAT(r.out, HasSubstr("\"size_bytes\": 17000000"));
}

// libtpu's rounded figures are printed as libtpu wrote them, not as bytes they are not.
TEST_F(CliConfirmTest, TheCompilersRoundedFiguresArePrintedAsItsWords) {
  RunnerPrints(R"({"verdict": "vmem_scoped", "confirmed_verdict": "DOES_NOT_FIT", "size_text": "18.03M", "limit_text": "16.00M", "message": "RESOURCE_EXHAUSTED: Ran out of memory in memory space vmem"})");
  Result r = Simulate({"--device", "tpu_v5e", "--graph", at_risk_, "--confirm", "always"});
  EXPECT_EQ(r.code, kExitDoesNotFit) << r.err;
  EXPECT_THAT(r.out, HasSubstr("out of VMEM (vmem_scoped), 18.03M against 16.00M"));
}

TEST_F(CliConfirmTest, AnAtRiskReportSaysTheCompilerCanSettleIt) {
  Result r = Simulate({"--device", "tpu_v5e", "--graph", at_risk_, "--format", "json"});
  EXPECT_EQ(r.code, kExitDoesNotFit) << r.err;
  EXPECT_THAT(r.out, HasSubstr("\"settle_with_compiler\": \"libtpu\""));
  // The same kernel without its exported call has nothing to compile: AT RISK, no such suggestion.
  std::ifstream in(at_risk_);
  std::ostringstream without;
  for (std::string line; std::getline(in, line);) {
    if (line.find("jax_export:") == std::string::npos) without << line << "\n";
  }
  const std::string path = runner_.string() + "_without_export.pbtxt";
  std::ofstream(path) << without.str();
  Result hand = Simulate({"--device", "tpu_v5e", "--graph", path});
  std::filesystem::remove(path);
  EXPECT_THAT(hand.out, HasSubstr("verdict  AT RISK"));
  EXPECT_THAT(hand.out, ::testing::Not(HasSubstr("settle the AT RISK")));
}

// The 2048-wide matmul does not fit v5e's default limit; the model's limit fix holds its spill
// estimate's high bound, and the report says the compiler can measure the limit it needs.
TEST_F(CliConfirmTest, ALimitFixOverEstimatesSaysTheCompilerCanMeasureIt) {
  Result r = Simulate({"--device", "tpu_v5e", "--graph", Source("backends/tpu/testdata/confirm_matmul_2048.pbtxt")});
  EXPECT_EQ(r.code, kExitDoesNotFit) << r.err;
  EXPECT_THAT(r.out, HasSubstr("--confirm always has libtpu measure the one it needs"));
}

TEST_F(CliConfirmTest, AtRiskModeCompilesNothingWhenTheModelIsSure) {
  RunnerPrints(R"({"verdict": "fits", "confirmed_verdict": "FITS"})");
  Result r = Simulate({"--device", "tpu_v6e", "--graph", at_risk_, "--confirm", "at-risk"});
  EXPECT_EQ(r.code, kExitFits) << r.err;
  EXPECT_FALSE(RunnerRan());
  EXPECT_THAT(r.out, HasSubstr("the model settled the verdict (not AT RISK, not an unsettled FITS), so nothing was compiled"));
}

// The model says FITS with less to spare than its bands have missed by: unsettled, which the
// report says on the verdict's line, and --confirm at-risk has the compiler settle it.
TEST_F(CliConfirmTest, ANearLimitFitsIsUnsettledAndAtRiskModeCompilesIt) {
  Result model = Simulate({"--device", "tpu_v7x", "--graph", band_miss_});
  EXPECT_EQ(model.code, kExitFits) << model.err;
  // Its 147,456 B to spare are less than the holdouts' largest band miss: said, with what settles it.
  EXPECT_THAT(model.out, HasSubstr("verdict  FITS, unsettled: near the limit: 147456 B to spare"));
  EXPECT_THAT(model.out, HasSubstr("--confirm at-risk (Python: confirm=\"at_risk\") has libtpu check it"));
  RunnerPrintsTheBandMissConfirmation();
  Result at_risk = Simulate({"--device", "tpu_v7x", "--graph", band_miss_, "--confirm", "at-risk"});
  EXPECT_EQ(at_risk.code, kExitDoesNotFit) << at_risk.err;
  EXPECT_TRUE(RunnerRan());
  EXPECT_THAT(at_risk.out, HasSubstr("verdict  DOES NOT FIT, confirmed:"));
  EXPECT_THAT(at_risk.out, HasSubstr("model    FITS"));
}

// What libtpu measured a kernel out of VMEM needs is the verdict line's last word and the fix.
TEST_F(CliConfirmTest, TheMeasuredRequirementIsTheFix) {
  RunnerPrintsTheBandMissConfirmation();
  Result r = Simulate({"--device", "tpu_v7x", "--graph", band_miss_, "--confirm", "always"});
  EXPECT_EQ(r.code, kExitDoesNotFit) << r.err;
  EXPECT_THAT(r.out, HasSubstr("with its limit raised to the whole 67108864 B (64.0 MiB) it compiles, in 10371072 B"));
  EXPECT_THAT(r.out, HasSubstr("to fit:\n  - pltpu.CompilerParams(vmem_limit_bytes=10371072) (9.89M): libtpu compiles it"));
}

TEST_F(CliConfirmTest, WithoutTheCompilerTheModelsVerdictStandsAndSaysWhy) {
  RunnerPrints(R"({"error": "libtpu is not installed for python3"})");
  Result r = Simulate({"--device", "tpu_v5e", "--graph", at_risk_, "--confirm", "always"});
  EXPECT_EQ(r.code, kExitDoesNotFit) << r.err;  // AT RISK exits 1
  EXPECT_TRUE(RunnerRan());
  EXPECT_THAT(r.out, HasSubstr("verdict  AT RISK"));
  EXPECT_THAT(r.out, HasSubstr("confirm  not compiled, the model's verdict stands: libtpu is not installed"));
}

}  // namespace
}  // namespace scratchsim
