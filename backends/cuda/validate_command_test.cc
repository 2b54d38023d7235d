// Bad input to `validate`, `probe` and `gemm-timing` is exit code 2 with a message, before any GPU is needed.
#include "backends/cuda/validate_command.h"
#include "backends/cuda/gemm_timing_command.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "backends/cuda/measure.h"
#include "gtest/gtest.h"

namespace scratchsim::cuda {
namespace {

int Invoke(int (*command)(int, char**), std::vector<std::string> args) {
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  return command(static_cast<int>(argv.size()), argv.data());
}

std::string WriteTemp(const std::string& name, const std::string& contents) {
  std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path) << contents;
  return path;
}

TEST(ValidateCommandTest, BadFlagsAreUsageErrors) {
  EXPECT_EQ(Invoke(RunValidateCommand, {"validate"}), 2);
  EXPECT_EQ(Invoke(RunValidateCommand, {"validate", "--frobnicate"}), 2);
  EXPECT_EQ(Invoke(RunValidateCommand, {"validate", "--sweep", "A=1"}), 2);
  EXPECT_EQ(Invoke(RunValidateCommand, {"validate", "--graph"}), 2);
  EXPECT_EQ(Invoke(RunValidateCommand, {"validate", "--no-opt-in"}), 2);
  EXPECT_EQ(Invoke(RunValidateCommand, {"validate", "--device", "nonesuch", "--graph", "x.pbtxt"}), 2);
}

TEST(ValidateCommandTest, BadPlanLinesAreUsageErrors) {
  EXPECT_EQ(Invoke(RunValidateCommand, {"validate", "--plan", "/nonexistent/plan.txt"}), 2);
  std::string two = WriteTemp("two.txt", "--graph a.pbtxt --graph b.pbtxt\n");
  EXPECT_EQ(Invoke(RunValidateCommand, {"validate", "--plan", two}), 2);
  std::string stray = WriteTemp("stray.txt", "# comment\n--graph a.pbtxt extra\n");
  EXPECT_EQ(Invoke(RunValidateCommand, {"validate", "--plan", stray}), 2);
}

TEST(ValidateCommandTest, BadReplayInputIsAUsageError) {
  EXPECT_EQ(Invoke(RunValidateCommand, {"validate", "--replay", "/nonexistent.csv"}), 2);
  std::string csv = WriteTemp("bad.csv", "graph,params\nx,y\n");
  EXPECT_EQ(Invoke(RunValidateCommand, {"validate", "--replay", csv}), 2);
}

TEST(ValidateCommandTest, ReplayOfTheH100RunAgreesWithTheModel) {
  setenv("SCRATCHSIM_MODELS", SCRATCHSIM_SOURCE_DIR "/models/devices", 1);
  std::string csv = std::string(SCRATCHSIM_SOURCE_DIR) + "/tests/data/cuda/h100.csv";
  // The CSV names graphs relative to the repository root.
  ASSERT_EQ(chdir(SCRATCHSIM_SOURCE_DIR), 0);
  EXPECT_EQ(Invoke(RunValidateCommand, {"validate", "--device", "h100", "--quiet", "--replay", csv}), 0);
}

// Each command answers --help itself, however it is run (`simulate X` or `scratchsim_cuda X`).
TEST(CudaCommandsTest, EveryCommandAnswersHelp) {
  EXPECT_EQ(Invoke(RunValidateCommand, {"validate", "--help"}), 0);
  EXPECT_EQ(Invoke(RunProbeCommand, {"probe", "--help"}), 0);
  EXPECT_EQ(Invoke(RunGemmTimingCommand, {"gemm-timing", "--help"}), 0);
  EXPECT_EQ(Invoke(RunGemmTimingCommand, {"gemm-timing", "--shapes", "64x64x64", "-h"}), 0);
}

TEST(GemmTimingCommandTest, BadFlagsAreUsageErrorsAndNoDeviceIsExitThree) {
  EXPECT_EQ(Invoke(RunGemmTimingCommand, {"gemm-timing"}), 2);
  EXPECT_EQ(Invoke(RunGemmTimingCommand, {"gemm-timing", "--shapes", "64x64", "--out", "x.json"}), 2);
  EXPECT_EQ(Invoke(RunGemmTimingCommand, {"gemm-timing", "--shapes", "64x-64x64", "--out", "x.json"}), 2);
  EXPECT_EQ(Invoke(RunGemmTimingCommand, {"gemm-timing", "--shapes", "64x64x64", "--out", "x.json", "--stages", "3:2"}), 2);
  EXPECT_EQ(Invoke(RunGemmTimingCommand, {"gemm-timing", "--shapes", "64x64x64", "--out", "x.json", "--launches", "0"}), 2);
  EXPECT_EQ(Invoke(RunGemmTimingCommand, {"gemm-timing", "--shapes", "64x64x64", "--frobnicate"}), 2);
  EXPECT_EQ(Invoke(RunGemmTimingCommand, {"gemm-timing", "--shapes", "64x64x64"}), 2);
  for (const char* caps : {"0", "2,x", "65", "-1"}) {
    EXPECT_EQ(Invoke(RunGemmTimingCommand, {"gemm-timing", "--shapes", "64x64x64", "--out", "x.json",
                                            "--blocks-per-sm", caps}),
              2)
        << caps;
  }
  if (DevicePresent()) GTEST_SKIP() << "a CUDA device is present; the GPU run covers gemm-timing";
  const std::string out = ::testing::TempDir() + "/gemm_timing.json";
  EXPECT_EQ(Invoke(RunGemmTimingCommand, {"gemm-timing", "--shapes", "128x128x128", "--out", out}), 3);
}

// --split-k: each value an integer in [1, 64], and at most the K tiles every shape has at the
// largest compiled BLOCK_K (32): exit 2 with a message naming the flag, before any GPU is needed.
TEST(GemmTimingCommandTest, BadSplitKIsAUsageErrorNamingTheFlag) {
  const std::string out = ::testing::TempDir() + "/gemm_timing_split.json";
  for (const char* splits : {"0", "-2", "x", "2,y", "65", "1.5", ""}) {
    ::testing::internal::CaptureStderr();
    EXPECT_EQ(Invoke(RunGemmTimingCommand, {"gemm-timing", "--shapes", "128x256x16384", "--out", out, "--split-k",
                                            splits}),
              2)
        << splits;
    const std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_NE(err.find("--split-k"), std::string::npos) << err;
    EXPECT_NE(err.find("[1, 64]"), std::string::npos) << err;
  }
  // 256 / 32 = 8 K tiles: a split of 16 leaves K shares without one, in the second shape.
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(Invoke(RunGemmTimingCommand, {"gemm-timing", "--shapes", "128x256x16384,128x128x256", "--out", out,
                                          "--split-k", "2,16"}),
            2);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("--split-k 16: shape 128x128x256 has 8 K tiles at BLOCK_K 32"), std::string::npos) << err;
  if (DevicePresent()) GTEST_SKIP() << "a CUDA device is present; the GPU run covers --split-k";
  // Good splits get as far as the device check.
  EXPECT_EQ(Invoke(RunGemmTimingCommand, {"gemm-timing", "--shapes", "128x256x16384,128x128x256", "--out", out,
                                          "--split-k", "1,2", "--split-k", "8"}),
            3);
}

TEST(ProbeCommandTest, BadFlagsAreUsageErrors) {
  EXPECT_EQ(Invoke(RunProbeCommand, {"probe", "--frobnicate"}), 2);
  EXPECT_EQ(Invoke(RunProbeCommand, {"probe", "--out"}), 2);
  EXPECT_EQ(Invoke(RunProbeCommand, {"probe", "--device-index", "-1"}), 2);
}

TEST(ProbeCommandTest, MeasureMemoryWithoutADeviceIsACleanError) {
  if (DevicePresent()) GTEST_SKIP() << "a CUDA device is present; the GPU run covers --measure-memory";
  EXPECT_EQ(Invoke(RunProbeCommand, {"probe", "--measure-memory"}), 3);
  EXPECT_EQ(Invoke(RunProbeCommand, {"probe", "--measure-memory", "--compare", "h100"}), 3);
}

}  // namespace
}  // namespace scratchsim::cuda
