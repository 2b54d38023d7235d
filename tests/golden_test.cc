// Golden tests in the style of llvm-mca's per-CPU tests: each line of tests/golden/cases.txt
// is one (graph, device, flags) input whose full text report must equal
// tests/golden/<device>/<case>.txt, exit code included. SCRATCHSIM_UPDATE_GOLDEN=1 rewrites the expectations.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "sim/driver/cli.h"
#include "sim/frontend.h"

namespace scratchsim {
namespace {

struct GoldenCase {
  std::string id;
  std::string device;
  std::vector<std::string> args;
};

std::string Source(const std::string& relative) { return std::string(SCRATCHSIM_SOURCE_DIR) + "/" + relative; }

// Format: `<case-id> <device> <graph path from the source root> [flags...]`.
std::vector<GoldenCase> LoadCases() {
  std::vector<GoldenCase> cases;
  std::ifstream in(Source("tests/golden/cases.txt"));
  std::string line;
  while (std::getline(in, line)) {
    absl::string_view view = absl::StripAsciiWhitespace(line);
    if (view.empty() || view[0] == '#') continue;
    std::vector<std::string> words = absl::StrSplit(view, ' ', absl::SkipEmpty());
    if (words.size() < 3) continue;
    GoldenCase c{words[0], words[1], {"--device", words[1], "--graph", Source(words[2])}};
    c.args.insert(c.args.end(), words.begin() + 3, words.end());
    cases.push_back(std::move(c));
  }
  return cases;
}

class GoldenTest : public ::testing::TestWithParam<GoldenCase> {};

TEST_P(GoldenTest, ReportMatches) {
  const GoldenCase& c = GetParam();
  const bool has_tpu = std::any_of(FrontEnds().begin(), FrontEnds().end(),
                                   [](const auto& front_end) { return front_end->name() == "tpu"; });
  if (c.device.rfind("tpu_", 0) == 0 && !has_tpu) GTEST_SKIP() << "built without backends/tpu";
  std::ostringstream out, err;
  int code = RunSimulateCommand(c.args, out, err);
  // The exit code is part of the expectation: the report's last line.
  out << "exit code " << code << "\n";
  std::string path = Source("tests/golden/" + c.device + "/" + c.id + ".txt");
  const char* update = std::getenv("SCRATCHSIM_UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") {
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    std::ofstream(path) << out.str();
    return;
  }
  std::ifstream in(path);
  ASSERT_TRUE(in.good()) << "missing golden file " << path << " (run with SCRATCHSIM_UPDATE_GOLDEN=1)";
  std::stringstream expected;
  expected << in.rdbuf();
  EXPECT_EQ(out.str(), expected.str()) << "golden mismatch: " << path;
}

INSTANTIATE_TEST_SUITE_P(Cases, GoldenTest, ::testing::ValuesIn(LoadCases()),
                         [](const ::testing::TestParamInfo<GoldenCase>& info) {
                           std::string name = info.param.device + "_" + info.param.id;
                           for (char& ch : name) {
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace scratchsim
