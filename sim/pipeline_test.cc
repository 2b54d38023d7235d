#include "sim/pipeline.h"

#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sim/report.h"
#include "sim/test_util.h"

namespace scratchsim {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::scratchsim::testing::ExampleGraphPath;
using ::scratchsim::testing::ShippedDevice;

constexpr char kMarker[] = "pipeline_test:lower-me";

// What the recording front end's Lower learned, for its Word to read.
struct RecordedLowering : LoweringState {
  std::string note;
};

// A front end that claims graphs whose doc is kMarker and counts each hook it is asked for.
class RecordingFrontEnd : public FrontEnd {
 public:
  mutable int lowered = 0, worded = 0, confirmed = 0;
  mutable bool word_saw_lowering = false;

  absl::string_view name() const override { return "recording"; }
  bool Lowers(const KernelGraph& graph) const override { return graph.doc() == kMarker; }
  absl::StatusOr<Kernel> Lower(Kernel kernel, const DeviceModel& device) const override {
    ++lowered;
    kernel.source = kernel.graph;
    kernel.graph.clear_doc();
    auto state = std::make_shared<RecordedLowering>();
    state->note = "lowered once";
    kernel.lowering = std::move(state);
    return kernel;
  }
  absl::Status Word(const Kernel& kernel, const DeviceModel& device, Report* report) const override {
    ++worded;
    const auto* state = dynamic_cast<const RecordedLowering*>(kernel.lowering.get());
    word_saw_lowering = state != nullptr;
    if (state != nullptr) report->add_notes(state->note);
    return absl::OkStatus();
  }
  absl::Status Confirm(const Kernel& kernel, const DeviceModel& device, Report* report) const override {
    ++confirmed;
    CompilerConfirmation confirmation;
    confirmation.set_outcome("fits");
    confirmation.set_confirmed_verdict("FITS");
    ApplyConfirmation(std::move(confirmation), report);
    return absl::OkStatus();
  }
  std::string ConfirmingCompiler(const Kernel& kernel) const override { return "recordc"; }

  void Reset() const { lowered = worded = confirmed = 0; word_saw_lowering = false; }
};

const RecordingFrontEnd* Recorder() {
  static const RecordingFrontEnd* recorder = [] {
    auto owned = std::make_unique<RecordingFrontEnd>();
    const RecordingFrontEnd* raw = owned.get();
    RegisterFrontEnd(std::move(owned));
    return raw;
  }();
  return recorder;
}

// Every test runs the pipeline on the seed kernel (models/graphs/mlp.pbtxt) on an H100.
class PipelineTest : public ::testing::Test {
 protected:
  void SetUp() override { Recorder()->Reset(); }

  KernelInput SeedFile() const { return KernelInput::GraphFile(ExampleGraphPath("mlp.pbtxt")); }

  // The seed kernel's text marked for the recording front end.
  KernelInput MarkedSeed() const {
    KernelGraph graph = ::scratchsim::testing::ParseGraphText(SeedText());
    graph.set_doc(kMarker);
    KernelInput input;
    input.contents = graph.SerializeAsString();
    input.format = ProtoFormat::kBinary;
    input.origin = "<marked seed>";
    return input;
  }

  static std::string SeedText() {
    absl::StatusOr<std::string> text = ReadFileToString(ExampleGraphPath("mlp.pbtxt"));
    EXPECT_TRUE(text.ok()) << text.status();
    return text.ok() ? *text : "";
  }

  DeviceModel h100_ = ShippedDevice("h100");
  AnalysisOptions options_;
};

TEST_F(PipelineTest, AnalyzesAGraphFileAsTheToolchainSaysIt) {
  absl::StatusOr<Report> report = Analyze(SeedFile(), h100_, options_);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_FALSE(report->fits());
  ASSERT_GT(report->violations_size(), 0);
  EXPECT_EQ(report->violations(0).message(), "out of resource: shared memory, Required: 526336, Hardware limit: 232448");
}

TEST_F(PipelineTest, ContentsGiveTheReportTheFileGives) {
  KernelInput text;
  text.contents = SeedText();
  text.origin = ExampleGraphPath("mlp.pbtxt");
  absl::StatusOr<Report> from_file = Analyze(SeedFile(), h100_, options_);
  absl::StatusOr<Report> from_text = Analyze(text, h100_, options_);
  ASSERT_TRUE(from_file.ok() && from_text.ok());
  EXPECT_EQ(from_text->SerializeAsString(), from_file->SerializeAsString());
}

TEST_F(PipelineTest, SetsBindBeforeSimulating) {
  options_.sets = {"tile_t=32", "tile_h=32"};
  absl::StatusOr<Report> report = Analyze(SeedFile(), h100_, options_);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_THAT(report->violations(0).message(), HasSubstr("Required: 1056768"));
}

TEST_F(PipelineTest, AnUnknownSetIsBadInput) {
  options_.sets = {"NO_SUCH_PARAMETER=1"};
  EXPECT_EQ(Analyze(SeedFile(), h100_, options_).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(PipelineTest, LowersOnceAndWordsFromThatLowering) {
  absl::StatusOr<Report> report = Analyze(MarkedSeed(), h100_, options_);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(Recorder()->lowered, 1);
  EXPECT_EQ(Recorder()->worded, 1);
  EXPECT_TRUE(Recorder()->word_saw_lowering);
  EXPECT_THAT(report->notes(), ::testing::Contains("lowered once"));
}

TEST_F(PipelineTest, ConfirmingAPlainGraphIsRefusedBeforeCompiling) {
  options_.confirm = ConfirmPolicy::kAlways;
  absl::Status status = Analyze(SeedFile(), h100_, options_).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("is a plain graph, which no compiler builds"));
}

TEST_F(PipelineTest, ConfirmAlwaysMakesTheCompilersVerdictTheVerdict) {
  options_.confirm = ConfirmPolicy::kAlways;
  absl::StatusOr<Report> report = Analyze(MarkedSeed(), h100_, options_);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(Recorder()->confirmed, 1);
  EXPECT_TRUE(report->fits());
  EXPECT_EQ(report->confirmation().model_verdict(), DOES_NOT_FIT);
}

TEST_F(PipelineTest, ConfirmAtRiskCompilesNothingForADecisiveVerdict) {
  options_.confirm = ConfirmPolicy::kAtRisk;
  absl::StatusOr<Report> report = Analyze(MarkedSeed(), h100_, options_);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(Recorder()->confirmed, 0);
  EXPECT_FALSE(report->fits());
  EXPECT_THAT(report->notes(), ::testing::Contains(HasSubstr("nothing was compiled")));
}

TEST_F(PipelineTest, ConfirmPolicyNamesItsSpellings) {
  EXPECT_EQ(*ParseConfirmPolicy("always"), ConfirmPolicy::kAlways);
  EXPECT_EQ(*ParseConfirmPolicy("at-risk"), ConfirmPolicy::kAtRisk);
  EXPECT_EQ(*ParseConfirmPolicy("at_risk"), ConfirmPolicy::kAtRisk);
  EXPECT_THAT(ParseConfirmPolicy("sometimes", "confirm").status().message(),
              HasSubstr("confirm: 'sometimes' is not one of always, at-risk"));
}

TEST_F(PipelineTest, ContentsOverTheInputLimitAreRefused) {
  const KernelInput marked = MarkedSeed();
  const int64_t limit = MaxInputBytes();
  SetMaxInputBytes(16);
  absl::Status status = Analyze(marked, h100_, options_).status();
  SetMaxInputBytes(limit);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("<marked seed>: "));
  EXPECT_THAT(status.message(), HasSubstr("larger than the input limit"));
}

TEST_F(PipelineTest, AnInputNoFrontEndReadsIsRefused) {
  KernelInput input = SeedFile();
  input.reader = "cobol";
  EXPECT_THAT(Analyze(input, h100_, options_).status().message(), HasSubstr("no front end of this build reads 'cobol'"));
}

TEST_F(PipelineTest, CompileKernelMovesAPlainGraphAndKeepsAFrontEndsGraph) {
  absl::StatusOr<Kernel> plain = LoadKernel(SeedFile(), h100_, {});
  absl::StatusOr<Kernel> marked = LoadKernel(MarkedSeed(), h100_, {});
  ASSERT_TRUE(plain.ok() && marked.ok());
  absl::StatusOr<CompiledKernel> compiled_plain = CompileKernel(*std::move(plain), {});
  absl::StatusOr<CompiledKernel> compiled_marked = CompileKernel(*std::move(marked), {});
  ASSERT_TRUE(compiled_plain.ok() && compiled_marked.ok());
  EXPECT_EQ(compiled_plain->kernel.graph.buffers_size(), 0);
  EXPECT_GT(compiled_marked->kernel.graph.buffers_size(), 0);
  EXPECT_EQ(compiled_plain->values, compiled_plain->compiled.defaults);
}

}  // namespace
}  // namespace scratchsim
