#include "backends/tpu/libtpu_confirm.h"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sim/json_text.h"
#include "sim/proto_io.h"
#include "sim/test_util.h"

namespace scratchsim {
namespace {

using ::testing::HasSubstr;

const std::string kTestdata = std::string(SCRATCHSIM_SOURCE_DIR) + "/backends/tpu/testdata/";

// One shared fixture: a traced graph with its exported kernel, v5e, and SCRATCHSIM_PYTHON put back
// after each test that points it at a stand-in runner.
class LibtpuConfirmTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(LoadProtoFile(kTestdata + "confirm_matmul_f32_768.pbtxt", &graph_).ok());
    ASSERT_FALSE(graph_.pallas().jax_export().empty());
    const char* python = std::getenv("SCRATCHSIM_PYTHON");
    if (python != nullptr) saved_python_ = python;
    dir_ = std::filesystem::temp_directory_path() / ("libtpu_confirm_test_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    if (saved_python_.empty()) {
      unsetenv("SCRATCHSIM_PYTHON");
    } else {
      setenv("SCRATCHSIM_PYTHON", saved_python_.c_str(), 1);
    }
    std::filesystem::remove_all(dir_);
  }

  // A stand-in for the Python interpreter: a shell script run as `SCRIPT tpu_aot.py confirm --gen
  // GEN FILE`, with `body` as its commands.
  void UseRunner(const std::string& body) {
    const std::string path = (dir_ / "python").string();
    std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
    std::filesystem::permissions(path, std::filesystem::perms::owner_all);
    setenv("SCRATCHSIM_PYTHON", path.c_str(), 1);
  }

  KernelGraph graph_;
  DeviceModel v5e_ = testing::ShippedDevice("tpu_v5e");
  std::filesystem::path dir_;
  std::string saved_python_;
};

TEST_F(LibtpuConfirmTest, ReadsTheRunnersVerdictAndFigures) {
  CompilerConfirmation c = ParseRunnerOutput(
      "a warning on stdout\n{\"verdict\": \"fits\", \"confirmed_verdict\": \"FITS\", \"compile_s\": 1.25, "
      "\"topology\": \"v5e:2x2\", \"versions\": {\"jax\": \"0.10.2\", \"libtpu\": \"0.0.42.1\"}, "
      "\"scoped_vmem_bytes\": 16715776, \"an_unknown_key\": 1}\n",
      "");
  EXPECT_EQ(c.error(), "");
  EXPECT_EQ(c.outcome(), "fits");
  EXPECT_EQ(c.confirmed_verdict(), "FITS");
  EXPECT_EQ(c.scoped_vmem_bytes(), 16715776);
  EXPECT_EQ(c.topology(), "v5e:2x2");
  EXPECT_EQ(c.versions().at("libtpu"), "0.0.42.1");
}

// A figure the compiler did not give is absent in the JSON, not an invented 0.
TEST_F(LibtpuConfirmTest, AbsentFiguresStayAbsentInJson) {
  CompilerConfirmation c = ParseRunnerOutput(
      "{\"verdict\": \"fits\", \"confirmed_verdict\": \"FITS\", \"scoped_vmem_bytes\": 16715776}", "");
  const std::string json = MessageToJson(c);
  EXPECT_THAT(json, ::testing::HasSubstr("\"scoped_vmem_bytes\": 16715776"));
  for (const char* absent : {"size_bytes", "limit_bytes", "requirement_bytes", "capacity_bytes", "compile_s"}) {
    EXPECT_THAT(json, ::testing::Not(::testing::HasSubstr(absent))) << json;
  }
}

TEST_F(LibtpuConfirmTest, ReadsAFailingCompilesFigureAndLimit) {
  CompilerConfirmation c = ParseRunnerOutput(
      "{\"verdict\": \"vmem_scoped\", \"confirmed_verdict\": \"DOES_NOT_FIT\", \"size_bytes\": 67108864, "
      "\"limit_bytes\": 16777216, \"message\": \"RESOURCE_EXHAUSTED: ...\"}",
      "");
  EXPECT_EQ(c.confirmed_verdict(), "DOES_NOT_FIT");
  EXPECT_EQ(c.size_bytes(), 67108864);
  EXPECT_EQ(c.limit_bytes(), 16777216);
}

TEST_F(LibtpuConfirmTest, ReadsWhatAKernelOutOfVmemNeeds) {
  CompilerConfirmation c = ParseRunnerOutput(
      "{\"verdict\": \"vmem_scoped\", \"confirmed_verdict\": \"DOES_NOT_FIT\", \"size_bytes\": 67108864, "
      "\"capacity_bytes\": 134217728, \"requirement_bytes\": 76361728}",
      "");
  EXPECT_EQ(c.capacity_bytes(), 134217728);
  EXPECT_EQ(c.requirement_bytes(), 76361728);
  EXPECT_FALSE(c.exceeds_capacity());
  c = ParseRunnerOutput("{\"verdict\": \"vmem_capacity\", \"confirmed_verdict\": \"DOES_NOT_FIT\", "
                        "\"capacity_bytes\": 16777216, \"exceeds_capacity\": true}",
                        "");
  EXPECT_TRUE(c.exceeds_capacity());
  EXPECT_EQ(c.requirement_bytes(), 0);
  c = ParseRunnerOutput("{\"verdict\": \"vmem_scoped\", \"confirmed_verdict\": \"DOES_NOT_FIT\", "
                        "\"requirement_error\": \"not measured: AttributeError: ...\"}",
                        "");
  EXPECT_EQ(c.confirmed_verdict(), "DOES_NOT_FIT");
  EXPECT_THAT(c.requirement_error(), HasSubstr("not measured"));
}

TEST_F(LibtpuConfirmTest, ARunnerThatPrintsNoResultIsQuoted) {
  CompilerConfirmation c = ParseRunnerOutput("", "Traceback ...\nModuleNotFoundError: No module named 'jax'\n");
  EXPECT_THAT(c.error(), HasSubstr("printed no result"));
  EXPECT_THAT(c.error(), HasSubstr("No module named 'jax'"));
}

TEST_F(LibtpuConfirmTest, AnUnknownVerdictIsAnErrorNotAVerdict) {
  CompilerConfirmation c = ParseRunnerOutput("{\"confirmed_verdict\": \"MAYBE\"}", "");
  EXPECT_THAT(c.error(), HasSubstr("unknown verdict 'MAYBE'"));
}

TEST_F(LibtpuConfirmTest, AGraphWithoutAnExportedKernelIsBadInputNamingTheField) {
  graph_.mutable_pallas()->clear_jax_export();
  absl::StatusOr<CompilerConfirmation> c = ConfirmWithLibtpu(graph_, "kernel.pbtxt", v5e_);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(c.status().message(), HasSubstr("kernel.pbtxt: field 'pallas.jax_export': empty"));
}

TEST_F(LibtpuConfirmTest, ADeviceLibtpuHasNoTopologyForIsNotCompiled) {
  DeviceModel custom = v5e_;
  custom.set_name("tpu_v9_custom");
  absl::StatusOr<CompilerConfirmation> c = ConfirmWithLibtpu(graph_, "kernel.pbtxt", custom);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_THAT(c->error(), HasSubstr("not for tpu_v9_custom"));
}

// The runner gets the generation, the device's highest scoped limit (v5e: its whole 128 MiB) and
// the graph's exported kernel byte for byte.
TEST_F(LibtpuConfirmTest, TheRunnerGetsTheGenerationAndTheExportedKernel) {
  const std::string expected = (dir_ / "expected").string();
  std::ofstream(expected, std::ios::binary) << graph_.pallas().jax_export();
  UseRunner("[ \"$2 $3 $4 $5 $6\" = \"confirm --gen v5e --capacity-bytes 134217728\" ] && cmp -s \"$7\" " + expected +
            " && echo '{\"verdict\": \"fits\", \"confirmed_verdict\": \"FITS\", \"scoped_vmem_bytes\": 123}'");
  absl::StatusOr<CompilerConfirmation> c = ConfirmWithLibtpu(graph_, "kernel.pbtxt", v5e_);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->error(), "");
  EXPECT_EQ(c->scoped_vmem_bytes(), 123);
}

TEST_F(LibtpuConfirmTest, ARunnerThatFailsGivesItsStatusAndError) {
  UseRunner("echo 'libtpu exploded' >&2; exit 7");
  absl::StatusOr<CompilerConfirmation> c = ConfirmWithLibtpu(graph_, "kernel.pbtxt", v5e_);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_THAT(c->error(), HasSubstr("exited with status 7"));
  EXPECT_THAT(c->error(), HasSubstr("libtpu exploded"));
}

TEST_F(LibtpuConfirmTest, ARunnerThatHangsIsStoppedAtTheTimeout) {
  UseRunner("sleep 30");
  setenv("SCRATCHSIM_CONFIRM_TIMEOUT", "1", 1);
  absl::StatusOr<CompilerConfirmation> c = ConfirmWithLibtpu(graph_, "kernel.pbtxt", v5e_);
  unsetenv("SCRATCHSIM_CONFIRM_TIMEOUT");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_THAT(c->error(), HasSubstr("did not finish within 1 s"));
}

// F7 (issue 37): atoi read "1e3" as 1 s and "abc" as the default; only digits, 1..a day.
TEST_F(LibtpuConfirmTest, ATimeoutThatIsNoWholeNumberOfSecondsIsRefused) {
  UseRunner("echo '{\"confirmed_verdict\": \"FITS\"}'");
  for (const char* bad : {"1e3", "4294967297", "2x", "0", "-1", "abc", "2147483648", "1e20", " 5", "86401"}) {
    setenv("SCRATCHSIM_CONFIRM_TIMEOUT", bad, 1);
    absl::StatusOr<CompilerConfirmation> c = ConfirmWithLibtpu(graph_, "kernel.pbtxt", v5e_);
    EXPECT_FALSE(c.ok()) << bad;
    EXPECT_THAT(c.status().message(), HasSubstr(absl::StrCat("SCRATCHSIM_CONFIRM_TIMEOUT: '", bad,
                                                             "' is not a whole number of seconds from 1 to 86400")));
  }
  setenv("SCRATCHSIM_CONFIRM_TIMEOUT", "86400", 1);
  absl::StatusOr<CompilerConfirmation> c = ConfirmWithLibtpu(graph_, "kernel.pbtxt", v5e_);
  unsetenv("SCRATCHSIM_CONFIRM_TIMEOUT");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->confirmed_verdict(), "FITS");
}

// F8 (issue 37): the timeout killed the runner only; a child it started (sleeper_child's
// `sleep 60 &`) kept running. The runner's whole process group goes.
TEST_F(LibtpuConfirmTest, TheTimeoutKillsTheRunnersChildrenToo) {
  const std::string pid_file = (dir_ / "child_pid").string();
  UseRunner("sleep 60 & echo $! > " + pid_file + "; sleep 30");
  setenv("SCRATCHSIM_CONFIRM_TIMEOUT", "1", 1);
  absl::StatusOr<CompilerConfirmation> c = ConfirmWithLibtpu(graph_, "kernel.pbtxt", v5e_);
  unsetenv("SCRATCHSIM_CONFIRM_TIMEOUT");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_THAT(c->error(), HasSubstr("did not finish within 1 s"));
  std::ifstream in(pid_file);
  pid_t child = 0;
  ASSERT_TRUE(in >> child);
  // Gone, or dead and waiting for init to reap it: never still sleeping.
  bool alive = true;
  for (int i = 0; i < 100 && alive; ++i) {
    std::ifstream stat("/proc/" + std::to_string(child) + "/stat");
    std::string pid, name, state;
    alive = static_cast<bool>(stat >> pid >> name >> state) && state != "Z" && state != "X";
    if (alive) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_FALSE(alive) << "the runner's child " << child << " outlived the timeout";
  if (alive) kill(child, SIGKILL);
}

TEST_F(LibtpuConfirmTest, AMissingInterpreterIsNamed) {
  setenv("SCRATCHSIM_PYTHON", "/nonexistent/python3", 1);
  absl::StatusOr<CompilerConfirmation> c = ConfirmWithLibtpu(graph_, "kernel.pbtxt", v5e_);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_THAT(c->error(), HasSubstr("/nonexistent/python3"));
}

// A report as the model leaves it: AT RISK, a block-shape fix, the limit fix the model's high
// estimate asks for, a second block-shape fix.
Report ModelReport() {
  Report report;
  report.set_verdict(AT_RISK);
  report.add_suggestions()->set_text("BM=256");
  Suggestion* limit = report.add_suggestions();
  limit->set_text("pltpu.CompilerParams(vmem_limit_bytes=17571840)");
  limit->set_raise_limit_bytes(17571840);
  report.add_suggestions()->set_text("BN=256");
  return report;
}

CompilerConfirmation Compiled(absl::string_view verdict) {
  CompilerConfirmation c;
  c.set_confirmed_verdict(std::string(verdict));
  c.set_capacity_bytes(134217728);
  return c;
}

TEST_F(LibtpuConfirmTest, AConfirmedFitLeavesNothingToFix) {
  Report report = ModelReport();
  ApplyLibtpuConfirmation(Compiled("FITS"), v5e_, &report);
  EXPECT_EQ(report.verdict(), FITS);
  EXPECT_EQ(report.confirmation().model_verdict(), AT_RISK);
  EXPECT_TRUE(report.suggestions().empty());
}

TEST_F(LibtpuConfirmTest, TheMeasuredRequirementTakesThePlaceOfTheModelsLimit) {
  Report report = ModelReport();
  CompilerConfirmation c = Compiled("DOES_NOT_FIT");
  c.set_requirement_bytes(16850616);
  ApplyLibtpuConfirmation(c, v5e_, &report);
  EXPECT_EQ(report.verdict(), DOES_NOT_FIT);
  ASSERT_EQ(report.suggestions_size(), 3);
  EXPECT_EQ(report.suggestions(0).text(), "BM=256");
  EXPECT_EQ(report.suggestions(1).raise_limit_bytes(), 16850616);
  EXPECT_THAT(report.suggestions(1).text(), HasSubstr("vmem_limit_bytes=16850616"));
  EXPECT_THAT(report.suggestions(1).text(), HasSubstr("libtpu compiles it at this limit"));
  EXPECT_EQ(report.suggestions(2).text(), "BN=256");
}

TEST_F(LibtpuConfirmTest, AMeasuredRequirementIsAddedWhereTheModelAskedForNoLimit) {
  Report report;
  report.set_verdict(FITS);
  CompilerConfirmation c = Compiled("DOES_NOT_FIT");
  c.set_requirement_bytes(10371072);
  ApplyLibtpuConfirmation(c, v5e_, &report);
  ASSERT_EQ(report.suggestions_size(), 1);
  EXPECT_EQ(report.suggestions(0).raise_limit_bytes(), 10371072);
}

TEST_F(LibtpuConfirmTest, AKernelBeyondTheWholeVmemKeepsNoLimitFixAndSaysWhy) {
  Report report = ModelReport();
  CompilerConfirmation c = Compiled("DOES_NOT_FIT");
  c.set_exceeds_capacity(true);
  ApplyLibtpuConfirmation(c, v5e_, &report);
  ASSERT_EQ(report.suggestions_size(), 2);
  EXPECT_EQ(report.suggestions(0).text(), "BM=256");
  EXPECT_EQ(report.suggestions(1).text(), "BN=256");
  ASSERT_FALSE(report.notes().empty());
  EXPECT_THAT(report.notes(report.notes_size() - 1), HasSubstr("no limit helps"));
}

TEST_F(LibtpuConfirmTest, WhereWhatItNeedsWasNotMeasuredTheModelsLimitFixStays) {
  Report report = ModelReport();
  CompilerConfirmation c = Compiled("DOES_NOT_FIT");
  c.set_requirement_error("not measured: AttributeError: ...");
  ApplyLibtpuConfirmation(c, v5e_, &report);
  ASSERT_EQ(report.suggestions_size(), 3);
  EXPECT_EQ(report.suggestions(1).raise_limit_bytes(), 17571840);
}

TEST_F(LibtpuConfirmTest, AKernelMosaicRefusesKeepsNoLimitFix) {
  Report report = ModelReport();
  ApplyLibtpuConfirmation(Compiled("NOT_COMPILABLE"), v5e_, &report);
  EXPECT_EQ(report.verdict(), DOES_NOT_FIT);
  ASSERT_EQ(report.suggestions_size(), 2);
  EXPECT_EQ(report.suggestions(1).text(), "BN=256");
}

TEST_F(LibtpuConfirmTest, AConfirmationThatCouldNotCompileChangesOnlyTheRecord) {
  Report report = ModelReport();
  CompilerConfirmation c;
  c.set_error("libtpu is not installed");
  ApplyLibtpuConfirmation(c, v5e_, &report);
  EXPECT_EQ(report.verdict(), AT_RISK);
  EXPECT_EQ(report.suggestions_size(), 3);
  EXPECT_EQ(report.confirmation().error(), "libtpu is not installed");
}

// The real compiler, where this host has it (SCRATCHSIM_PYTHON or python3 with jax[tpu] and
// flatbuffers): each testdata graph compiles as confirm_expected.txt recorded, and a kernel out
// of VMEM needs what it recorded.
TEST_F(LibtpuConfirmTest, LibtpuConfirmsAsRecorded) {
  std::ifstream in(kTestdata + "confirm_expected.txt");
  ASSERT_TRUE(in) << "confirm_expected.txt";
  std::string line;
  int checked = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> f = absl::StrSplit(line, ' ');
    ASSERT_EQ(f.size(), 6u) << line;
    KernelGraph graph;
    ASSERT_TRUE(LoadProtoFile(kTestdata + "confirm_" + f[0] + ".pbtxt", &graph).ok()) << f[0];
    absl::StatusOr<CompilerConfirmation> c = ConfirmWithLibtpu(graph, f[0], testing::ShippedDevice("tpu_" + f[1]));
    ASSERT_TRUE(c.ok()) << c.status();
    if (absl::StrContains(c->error(), "No module named") || absl::StrContains(c->error(), "not installed") ||
        absl::StrContains(c->error(), "could not start")) {
      GTEST_SKIP() << "no libtpu here: " << c->error();
    }
    EXPECT_EQ(c->error(), "") << line;
    EXPECT_EQ(c->confirmed_verdict(), f[2]) << line;
    EXPECT_EQ(c->outcome(), f[3]) << line;
    EXPECT_EQ(std::to_string(c->confirmed_verdict() == "FITS" ? c->scoped_vmem_bytes() : c->size_bytes()), f[4])
        << line;
    EXPECT_EQ(c->requirement_bytes() > 0 ? std::to_string(c->requirement_bytes())
              : c->exceeds_capacity()    ? "exceeds"
                                         : "-",
              f[5])
        << line;
    ++checked;
  }
  EXPECT_EQ(checked, 6);
}

}  // namespace
}  // namespace scratchsim
