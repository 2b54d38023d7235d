#include "sim/driver/calibrate_command.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sim/driver/cli.h"
#include "sim/driver/cli_test_util.h"
#include "sim/test_data.h"

namespace scratchsim {
namespace {

using ::testing::HasSubstr;

std::string Source(const std::string& relative) { return std::string(SCRATCHSIM_SOURCE_DIR) + "/" + relative; }

// A plain copy of a gzipped timing fixture, for the commands that take a path.
std::string Timings(const std::string& relative) {
  absl::StatusOr<std::string> path = testing::PlainTestDataCopy(relative);
  EXPECT_TRUE(path.ok()) << path.status();
  return path.ok() ? *path : relative;
}

std::string Temp(const std::string& name) { return (std::filesystem::temp_directory_path() / name).string(); }

using Result = testing::CliRun;

Result Simulate(const std::vector<std::string>& args) { return testing::RunCli(args); }

TEST(CalibrateCommandTest, DetectsTheTwoSweepFormats) {
  auto triton = DetectTimingKernel(Timings("tests/data/planner/planner-h100-triton-sweep.json.gz"));
  ASSERT_TRUE(triton.ok()) << triton.status();
  EXPECT_EQ(*triton, TimingKernel::kTriton);
  auto gemm = DetectTimingKernel(Timings("tests/data/planner/planner-h100-cuda-gemm-timing-1.json.gz"));
  ASSERT_TRUE(gemm.ok()) << gemm.status();
  EXPECT_EQ(*gemm, TimingKernel::kCudaGemm);
}

TEST(CalibrateCommandTest, ATritonTimingBindsItsElementSizeAndTf32ForF32) {
  std::string provenance;
  auto samples = ReadTimingSamples(Timings("tests/data/planner/planner-h100-triton-sweep.json.gz"), TimingKernel::kTriton,
                                   &provenance);
  ASSERT_TRUE(samples.ok()) << samples.status();
  ASSERT_FALSE(samples->empty());
  bool f32 = false;
  for (const CalibrationSample& s : *samples) {
    if (s.compute_dtype != "tf32") continue;
    f32 = true;
    EXPECT_THAT(s.sets, ::testing::Contains("ELT=4"));
    break;
  }
  EXPECT_TRUE(f32);
  EXPECT_THAT(provenance, HasSubstr("planner-h100-triton-sweep.json (NVIDIA H100 80GB HBM3, 2026-11-25"));
}

TEST(CalibrateCommandTest, OccupancyRunsAndUntimedRowsAreSkipped) {
  const std::string path = Temp("calibrate_command_test_skip.json");
  std::ofstream(path) << R"({"timings": [
    {"dtype": "f32", "M": 256, "N": 256, "K": 64, "config": {"BLOCK_M": 64}, "ms": 1.0},
    {"dtype": "f32", "M": 256, "N": 256, "K": 64, "config": {"BLOCK_M": 64}, "ms": 2.0, "blocks_cap": 2},
    {"dtype": "f32", "M": 256, "N": 256, "K": 64, "config": {"BLOCK_M": 64}, "error": "OutOfResources"}]})";
  auto samples = ReadTimingSamples(path, TimingKernel::kCudaGemm, nullptr);
  ASSERT_TRUE(samples.ok()) << samples.status();
  ASSERT_EQ(samples->size(), 1u);
  EXPECT_THAT((*samples)[0].sets, ::testing::Contains("DTYPE=0"));
  EXPECT_DOUBLE_EQ((*samples)[0].measured_s, 1e-3);
}

// A split-K timing binds its SPLIT_K; a timing from before split-K (no SPLIT_K) ran one K share.
TEST(CalibrateCommandTest, ACudaGemmTimingBindsItsSplitKOrOne) {
  const std::string path = Temp("calibrate_command_test_split_k.json");
  std::ofstream(path) << R"({"timings": [
    {"dtype": "f16", "M": 128, "N": 256, "K": 16384, "config": {"BLOCK_M": 64}, "ms": 1.0},
    {"dtype": "f16", "M": 128, "N": 256, "K": 16384, "config": {"BLOCK_M": 64, "SPLIT_K": 4}, "ms": 0.5}]})";
  auto samples = ReadTimingSamples(path, TimingKernel::kCudaGemm, nullptr);
  ASSERT_TRUE(samples.ok()) << samples.status();
  ASSERT_EQ(samples->size(), 2u);
  EXPECT_THAT((*samples)[0].config_sets, ::testing::UnorderedElementsAre("BLOCK_M=64", "DTYPE=1", "SPLIT_K=1"));
  EXPECT_THAT((*samples)[1].config_sets, ::testing::UnorderedElementsAre("BLOCK_M=64", "DTYPE=1", "SPLIT_K=4"));
  EXPECT_THAT((*samples)[1].sets, ::testing::Contains("SPLIT_K=4"));
}

TEST(CalibrateCommandTest, ABadTimingNamesTheFileAndTheEntry) {
  const std::string path = Temp("calibrate_command_test_bad.json");
  std::ofstream(path) << R"({"timings": [{"dtype": "f32", "config": {"BLOCK_M": 64}, "ms": -1}]})";
  auto samples = ReadTimingSamples(path, TimingKernel::kGeneric, nullptr);
  ASSERT_FALSE(samples.ok());
  EXPECT_THAT(samples.status().message(), HasSubstr(path + ": timings[0].ms must be a time from 1e-06 to 3.6e+06 ms"));
}

// Calibrate on one H100 sweep, then plan with the file: the plan names the calibration as the
// source of the terms it fitted.
TEST(CalibrateCommandTest, APlanUsesTheCalibrationItWrote) {
  const std::string out = Temp("calibrate_command_test_h100.textproto");
  const Result calibrated = Simulate({"calibrate", "--device", "h100", "--timings",
                                      Timings("tests/data/planner/planner-h100-triton-sweep.json.gz"), "--terms",
                                      "peak.f16,l2_bandwidth_gbps", "--out", out, "--force"});
  ASSERT_EQ(calibrated.code, 0) << calibrated.err;
  EXPECT_THAT(calibrated.out, HasSubstr("log-rms error"));
  const Result plan = Simulate({"plan", "--device", "h100", "--graph", Source("models/graphs/triton_matmul.pbtxt"),
                                "--calibration", out, "--top", "1"});
  ASSERT_EQ(plan.code, 0) << plan.err;
  EXPECT_THAT(plan.out, HasSubstr("(inherited from h100_calibrated)"));
}

// The default fit on the H100 Triton sweep raises the clock above the boost clock and ranks the
// sweep worse (expected top-1 slowdown 4.21% -> 5.00%): not written without --force, and the
// message says what to try.
TEST(CalibrateCommandTest, ACalibrationThatMakesThingsWorseIsNotWritten) {
  const std::string out = Temp("calibrate_command_test_refused.textproto");
  std::filesystem::remove(out);
  // The sixth sweep's rows: the fitted terms raise the clock past its boost and rank them worse.
  const std::string sweep = Timings("tests/data/planner/planner-h100-triton-sweep-6.json.gz");
  const Result refused = Simulate({"calibrate", "--device", "h100", "--timings", sweep, "--out", out});
  EXPECT_EQ(refused.code, kExitBadInput);
  EXPECT_THAT(refused.err, HasSubstr("it ranks its own timings worse: expected top-1 slowdown"));
  EXPECT_THAT(refused.err, HasSubstr("clock_mhz 1980 -> "));
  EXPECT_THAT(refused.err, HasSubstr("above the device model's documented 1980 (its boost clock)"));
  EXPECT_THAT(refused.err, HasSubstr("Try --objective rank"));
  EXPECT_FALSE(std::filesystem::exists(out));
}

TEST(CalibrateCommandTest, ForceWritesARefusedCalibration) {
  const std::string out = Temp("calibrate_command_test_forced.textproto");
  const Result forced = Simulate({"calibrate", "--device", "h100", "--timings",
                                  Timings("tests/data/planner/planner-h100-triton-sweep.json.gz"), "--out", out, "--force"});
  EXPECT_EQ(forced.code, 0) << forced.err;
  EXPECT_TRUE(std::filesystem::exists(out));
}

TEST(CalibrateCommandTest, ACalibrationForAnotherDeviceIsExitTwo) {
  const std::string path = Temp("calibrate_command_test_other.textproto");
  std::ofstream(path) << "name: \"mi300x_calibrated\"\ninherits: \"mi300x\"\nperformance { clock_mhz: 1000 }\n";
  const Result plan = Simulate({"plan", "--device", "h100", "--graph", Source("models/graphs/triton_matmul.pbtxt"),
                                "--calibration", path});
  EXPECT_EQ(plan.code, kExitBadInput);
  EXPECT_THAT(plan.err, HasSubstr("made for 'mi300x'"));
}

TEST(CalibrateCommandTest, WithoutTimingsIsExitTwo) {
  const Result r = Simulate({"calibrate", "--device", "h100"});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_THAT(r.err, HasSubstr("--timings FILE is required"));
}

// Residuals learned from the H100's CUDA GEMM sweep reach a plan for the H200 (which inherits the
// H100): the configurations that have one say so, in the JSON and in the notes.
TEST(CalibrateCommandTest, ResidualsLearnedOnTheH100ApplyToAPlanForTheH200) {
  const std::string out = Temp("calibrate_command_test_residuals.textproto");
  const Result calibrated = Simulate({"calibrate", "--device", "h100", "--timings",
                                      Timings("tests/data/planner/planner-h100-cuda-gemm-timing-1.json.gz"), "--timings",
                                      Timings("tests/data/planner/planner-h100-cuda-gemm-timing-2.json.gz"), "--terms", "none",
                                      "--residuals", "--residual-params", "BLOCK_M,BLOCK_N,BLOCK_K,NUM_WARPS,DTYPE", "--out", out});
  ASSERT_EQ(calibrated.code, 0) << calibrated.err;
  EXPECT_THAT(calibrated.out, HasSubstr("configuration residuals"));
  const Result plan = Simulate({"plan", "--device", "h200", "--graph", Source("models/graphs/gemm.pbtxt"), "--param",
                                "BLOCK_M=32,64,128", "--param", "BLOCK_N=32,64,128", "--param", "BLOCK_K=16,32", "--param",
                                "NUM_STAGES=2..4", "--param", "NUM_WARPS=4,8", "--set", "DTYPE=1", "--set", "SPLIT_K=1",
                                "--calibration", out,
                                "--top", "3", "--format", "json"});
  ASSERT_EQ(plan.code, 0) << plan.err;
  EXPECT_THAT(plan.out, ::testing::ContainsRegex("\"residual\": [0-9]"));  // a factor, not null
  EXPECT_THAT(plan.out, HasSubstr("measured configuration residuals from " + out));
}

TEST(CalibrateCommandTest, FittingNothingIsExitTwo) {
  const Result r = Simulate({"calibrate", "--device", "h100", "--timings",
                             Timings("tests/data/planner/planner-h100-cuda-gemm-timing-1.json.gz"), "--terms", "none"});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_THAT(r.err, HasSubstr("--terms none fits nothing"));
}

TEST(CalibrateCommandTest, ABadResidualInACalibrationIsExitTwoNamingIt) {
  const std::string path = Temp("calibrate_command_test_bad_residual.textproto");
  std::ofstream(path) << "name: \"h100_calibrated\"\ninherits: \"h100\"\n"
                         "config_residuals { graph: \"gemm\" compute_dtype: \"f32\" sets: \"BLOCK_M\" factor: 0.9 }\n";
  const Result plan = Simulate({"plan", "--device", "h100", "--graph", Source("models/graphs/gemm.pbtxt"), "--calibration",
                                path, "--top", "1"});
  EXPECT_EQ(plan.code, kExitBadInput);
  EXPECT_THAT(plan.err, HasSubstr("config_residuals[0].sets"));
}

// A timing file's "device" went unescaped into the calibration file's comments and its `sources`
// string: a newline there added fields, or kept `plan --calibration` from reading the file.
TEST(CalibrateCommandTest, TheTimingFilesTextIsEscapedInTheCalibrationFile) {
  const std::string timings = Temp("calibrate_command_test_inject.json");
  std::ofstream(timings) << R"({"device": "H100\nlimits { warp_size: 1 }\n# \"x\\", "timings": [
    {"dtype": "f16", "M": 256, "N": 256, "K": 64, "config": {"BLOCK_M": 64, "DTYPE": 1}, "ms": 0.02},
    {"dtype": "f16", "M": 256, "N": 256, "K": 64, "config": {"BLOCK_M": 128, "DTYPE": 1}, "ms": 0.03}]})";
  const std::string out = Temp("calibrate_command_test_inject.textproto");
  const Result calibrated = Simulate({"calibrate", "--device", "h100", "--timings", timings, "--graph",
                                      Source("models/graphs/gemm.pbtxt"), "--terms", "clock_mhz", "--out", out});
  ASSERT_EQ(calibrated.code, 0) << calibrated.err;
  std::ifstream in(out);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_THAT(text.str(), HasSubstr(R"(H100\nlimits { warp_size: 1 }\n# \"x\\)"));
  EXPECT_THAT(text.str(), ::testing::Not(::testing::ContainsRegex("(^|\n)limits")));
  const Result plan = Simulate({"plan", "--device", "h100", "--graph", Source("models/graphs/gemm.pbtxt"),
                                "--calibration", out, "--top", "1"});
  EXPECT_EQ(plan.code, 0) << plan.err;
}

// Calibration rows that are nonsense (issue 37): each refused naming the file, the row and the field.
absl::StatusOr<std::vector<CalibrationSample>> ReadRows(const std::string& name, const std::string& rows) {
  const std::string path = Temp(name);
  std::ofstream(path) << R"({"timings": [)" << rows << "]}";
  return ReadTimingSamples(path, TimingKernel::kGeneric, nullptr);
}

constexpr char kRow[] = R"({"dtype": "f16", "M": 128, "N": 128, "K": 64, "config": {"BLOCK_M": 64}, "ms": 1.5})";

TEST(CalibrateRowsTest, ASizeThatIsNoWholeNumberIsRefused) {
  auto samples = ReadRows("calibrate_rows_float.json", R"({"M": 128.5, "config": {"BLOCK_M": 64}, "ms": 1})");
  ASSERT_FALSE(samples.ok());
  EXPECT_THAT(samples.status().message(), HasSubstr("calibrate_rows_float.json: timings[0].M: 128.5 is not a whole number"));
}

TEST(CalibrateRowsTest, AConfigurationValueThatIsNoWholeNumberIsRefused) {
  for (const char* value : {"64.25", "\"64\"", "true", "1e300"}) {
    auto samples = ReadRows("calibrate_rows_config_value.json",
                            absl::StrCat(R"({"M": 128, "config": {"BLOCK_M": )", value, R"(}, "ms": 1})"));
    ASSERT_FALSE(samples.ok()) << value;
    EXPECT_THAT(samples.status().message(), HasSubstr("timings[0].config.BLOCK_M: ")) << value;
  }
}

TEST(CalibrateRowsTest, AnEmptyConfigIsRefused) {
  auto samples = ReadRows("calibrate_rows_empty_config.json", R"({"M": 128, "config": {}, "ms": 1})");
  ASSERT_FALSE(samples.ok());
  EXPECT_THAT(samples.status().message(),
              HasSubstr("calibrate_rows_empty_config.json: timings[0].config is empty"));
}

TEST(CalibrateRowsTest, AConfigKeyThatIsNoParameterNameIsRefused) {
  auto samples = ReadRows("calibrate_rows_config_key.json", R"({"config": {"BLOCK_M=1,X": 64}, "ms": 1})");
  ASSERT_FALSE(samples.ok());
  EXPECT_THAT(samples.status().message(), HasSubstr("timings[0].config: 'BLOCK_M=1,X' is not a parameter name"));
}

TEST(CalibrateRowsTest, ConflictingDuplicateRowsAreRefused) {
  const std::string other = R"({"dtype": "f16", "M": 128, "N": 128, "K": 64, "config": {"BLOCK_M": 64}, "ms": 2.5})";
  auto samples = ReadRows("calibrate_rows_conflict.json", absl::StrCat(kRow, ",", kRow, ",", other));
  ASSERT_FALSE(samples.ok());
  EXPECT_THAT(samples.status().message(),
              HasSubstr("calibrate_rows_conflict.json: timings[2]: the same dtype, shape and config as timings[0] "
                        "with another time (2.5 ms, not 1.5 ms)"));
}

// The same configuration at another shape, or timed again with the same time, is no conflict.
TEST(CalibrateRowsTest, ARepeatedRowWithItsTimeAndAnotherShapeAreRead) {
  const std::string other_shape = R"({"dtype": "f16", "M": 256, "N": 128, "K": 64, "config": {"BLOCK_M": 64}, "ms": 2.5})";
  auto samples = ReadRows("calibrate_rows_repeat.json", absl::StrCat(kRow, ",", kRow, ",", other_shape));
  ASSERT_TRUE(samples.ok()) << samples.status();
  EXPECT_EQ(samples->size(), 3u);
}

TEST(CalibrateRowsTest, AbsurdTimesAreRefused) {
  for (const char* ms : {"1e-300", "-1", "0", "1e300", "\"NaN\"", "\"Infinity\"", "null"}) {
    auto samples = ReadRows("calibrate_rows_time.json", absl::StrCat(R"({"config": {"BLOCK_M": 64}, "ms": )", ms, "}"));
    ASSERT_FALSE(samples.ok()) << ms;
    EXPECT_THAT(samples.status().message(),
                HasSubstr("calibrate_rows_time.json: timings[0].ms must be a time from 1e-06 to 3.6e+06 ms"))
        << ms;
  }
}

TEST(CalibrateRowsTest, ARowLargerThanTheLimitIsRefused) {
  const std::string big = absl::StrCat(R"({"config": {"BLOCK_M": 64}, "note": ")", std::string(kMaxTimingRowBytes, 'x'),
                                       R"(", "ms": 1})");
  auto samples = ReadRows("calibrate_rows_big.json", big);
  ASSERT_FALSE(samples.ok());
  EXPECT_THAT(samples.status().message(), HasSubstr("calibrate_rows_big.json: timings[0]: 655")); EXPECT_THAT(samples.status().message(), HasSubstr(" bytes, more than the 65536 a row may have"));
}

// The limit itself is read (F4's refusal is one row past it: tests/hostile_input_test.cc).
TEST(CalibrateRowsTest, AsManyRowsAsTheLimitAreRead) {
  std::string rows;
  for (int i = 0; i < kMaxTimingRows; ++i) {
    absl::StrAppend(&rows, i > 0 ? "," : "", R"({"M": )", i + 1, R"(, "config": {"BLOCK_M": 64}, "ms": 1})");
  }
  auto samples = ReadRows("calibrate_rows_limit.json", rows);
  ASSERT_TRUE(samples.ok()) << samples.status();
  EXPECT_EQ(samples->size(), static_cast<size_t>(kMaxTimingRows));
}

TEST(CalibrateRowsTest, AFileThatIsNoObjectNamesTheLine) {
  const std::string path = Temp("calibrate_rows_not_object.json");
  std::ofstream(path) << "[\n1]";
  auto samples = ReadTimingSamples(path, TimingKernel::kGeneric, nullptr);
  ASSERT_FALSE(samples.ok());
  EXPECT_THAT(samples.status().message(), HasSubstr(path + ": line 1: not JSON: the file is not one JSON object"));
}

}  // namespace
}  // namespace scratchsim
