#include "sim/engine.h"

#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sim/occupancy.h"
#include "sim/simulator.h"
#include "sim/test_util.h"

namespace scratchsim {
namespace {

using ::testing::HasSubstr;
using namespace ::scratchsim::testing;

// A tunable value in the parameter's range, or one near a problem size's default.
int64_t RandomValue(const Parameter& p, std::mt19937_64& rng) {
  if (p.max() > 0 && !p.problem_size()) {
    if (p.power_of_two()) {
      std::vector<int64_t> options;
      for (int64_t v = 1; v <= p.max(); v <<= 1) {
        if (v >= p.min()) options.push_back(v);
      }
      return options[rng() % options.size()];
    }
    return p.min() + static_cast<int64_t>(rng() % (p.max() - p.min() + 1));
  }
  const int64_t d = std::max<int64_t>(p.default_value(), 1);
  switch (rng() % 4) {
    case 0: return std::max<int64_t>(d / 2, 1);
    case 1: return d * 2;
    case 2: return d + 1;
    default: return d;
  }
}

// The engine's placement takes shortcuts (a closed form when every block meets every other, a
// scan of the placed blocks when they are few); the reference path is the interference graph.
// They must agree on every figure, on random configurations of every shipped GPU graph.
TEST(FitEngineTest, PlacementShortcutsAgreeWithTheInterferenceGraphPath) {
  std::mt19937_64 rng(20261126);
  int compared = 0;
  for (const auto& entry : std::filesystem::directory_iterator(SourcePath("models/graphs"))) {
    const std::string name = entry.path().filename().string();
    if (entry.path().extension() != ".pbtxt" || name.rfind("tpu_", 0) == 0) continue;  // Pallas: backends/tpu
    const CompiledGraph graph = CompileExampleGraph(name);
    for (const char* device_name : {"h100", "a100", "b200", "mi300x", "t4"}) {
      const DeviceModel device = ShippedDevice(device_name);
      for (PlacementPolicyKind kind : {PlacementPolicyKind::kFirstFitDecreasing, PlacementPolicyKind::kBestFitDecreasing}) {
        EngineOptions fast;
        fast.policy = kind;
        EngineOptions reference = fast;
        reference.policy_override = MakePlacementPolicy(kind, PlacementTuning{kDefaultMaxOverlapPairs, 0, false});
        auto a = FitEngine::Create(graph, device, fast);
        auto b = FitEngine::Create(graph, device, reference);
        ASSERT_TRUE(a.ok() && b.ok()) << name << ": " << a.status() << " " << b.status();
        FitEngine::Scratch sa, sb;
        sa.keep_layout = sb.keep_layout = true;
        auto values = BindParameters(graph, {});
        ASSERT_TRUE(values.ok());
        for (int trial = 0; trial < 60; ++trial) {
          for (const Parameter& p : graph.graph.parameters()) (*values)[graph.symbols.Find(p.name())] = RandomValue(p, rng);
          FitResult fa, fb;
          absl::Status x = a->Evaluate(*values, sa, &fa), y = b->Evaluate(*values, sb, &fb);
          const std::string where = absl::StrCat(name, " on ", device_name, " trial ", trial);
          ASSERT_EQ(x.ok(), y.ok()) << where;
          if (!x.ok()) continue;
          ++compared;
          EXPECT_EQ(fa.fits, fb.fits) << where;
          EXPECT_EQ(fa.limit, fb.limit) << where;
          for (int s = 0; s < kMaxSpaces; ++s) EXPECT_EQ(fa.spaces[s].peak, fb.spaces[s].peak) << where << " space " << s;
          ASSERT_EQ(sa.layout.size(), sb.layout.size());
          for (size_t g = 0; g < sa.layout.size(); ++g) {
            ASSERT_EQ(sa.layout[g].size(), sb.layout[g].size()) << where;
            for (size_t k = 0; k < sa.layout[g].size(); ++k) {
              EXPECT_EQ(sa.layout[g][k].offset, sb.layout[g][k].offset) << where << " group " << g << " block " << k;
            }
          }
        }
      }
    }
  }
  EXPECT_GT(compared, 1000);
}

constexpr char kOneBuffer[] = R"pb(
  parameters { name: "ROWS" default_value: 64 }
  parameters { name: "WARPS" default_value: 4 }
  buffers { name: "tile" shape: "ROWS" shape: "1024" dtype: "f32" memory_space: "%s" }
  ops { name: "use" writes: "tile" }
  launch { num_warps: "WARPS" }
)pb";

// The engine's result for graph text on a shipped device, or Evaluate's error.
absl::StatusOr<FitResult> TryEvaluate(const std::string& graph_text, const std::string& device_name,
                                      std::vector<std::string> sets = {}) {
  const CompiledGraph graph = CompileGraphText(graph_text);
  const DeviceModel device = ShippedDevice(device_name);
  auto engine = FitEngine::Create(graph, device);
  if (!engine.ok()) return engine.status();
  auto values = BindParameters(graph, sets);
  if (!values.ok()) return values.status();
  FitEngine::Scratch scratch;
  FitResult fit;
  if (absl::Status status = engine->Evaluate(*values, scratch, &fit); !status.ok()) return status;
  return fit;
}

FitResult Evaluate(const std::string& graph_text, const std::string& device_name, std::vector<std::string> sets = {}) {
  absl::StatusOr<FitResult> fit = TryEvaluate(graph_text, device_name, std::move(sets));
  EXPECT_TRUE(fit.ok()) << fit.status();
  return fit.ok() ? *fit : FitResult();
}

TEST(FitEngineTest, SharedMemoryOverTheLimitCannotLaunch) {
  // 64 x 1024 f32 = 256 KiB > the H100's 227 KiB opt-in maximum.
  const FitResult fit = Evaluate(absl::StrFormat(kOneBuffer, "smem"), "h100");
  EXPECT_FALSE(fit.fits);
  EXPECT_EQ(fit.limit, Limit::kSharedMemory);
  ASSERT_TRUE(fit.has_occupancy);
  EXPECT_EQ(fit.blocks_per_core(), 0);
  EXPECT_EQ(fit.cannot_launch, Limit::kSharedMemory);
}

TEST(FitEngineTest, TooManyThreadsCannotLaunch) {
  const FitResult fit = Evaluate(absl::StrFormat(kOneBuffer, "smem"), "h100", {"ROWS=8", "WARPS=64"});
  EXPECT_EQ(fit.limit, Limit::kThreads);
  ASSERT_TRUE(fit.has_occupancy);
  EXPECT_EQ(fit.blocks_per_core(), 0);
  EXPECT_EQ(fit.cannot_launch, Limit::kThreads);
}

TEST(FitEngineTest, TensorMemoryColumnsBoundResidency) {
  // 64 x 1024 f32 = 256 KiB of TMEM = 512 columns of 128 lanes x 4 B: the whole SM's tensor
  // memory, so one block is resident however little else it uses.
  const FitResult fit = Evaluate(absl::StrFormat(kOneBuffer, "tmem"), "b200");
  EXPECT_TRUE(fit.fits);
  EXPECT_EQ(fit.occupancy_input.tensor_memory_columns, 512);
  EXPECT_EQ(fit.blocks_per_core(), 1);
  EXPECT_EQ(fit.occupancy.first_factor(), OccupancyFactor::kTensorMemory);
}

TEST(FitEngineTest, TensorMemoryOverTheColumnsCannotLaunch) {
  const FitResult fit = Evaluate(absl::StrFormat(kOneBuffer, "tmem"), "b200", {"ROWS=128"});
  EXPECT_EQ(fit.limit, Limit::kTensorMemory);
  EXPECT_EQ(fit.blocks_per_core(), 0);
  EXPECT_EQ(fit.cannot_launch, Limit::kTensorMemory);
}

TEST(FitEngineTest, StaticSharedMemoryOverTheDefaultCannotLaunch) {
  const FitResult fit = Evaluate(R"pb(
    buffers { name: "s" shape: "16384" dtype: "f32" memory_space: "smem" static_allocation: true }
    ops { name: "use" writes: "s" }
  )pb", "h100");
  EXPECT_EQ(fit.limit, Limit::kStaticSharedMemory);
  EXPECT_EQ(fit.blocks_per_core(), 0);
  EXPECT_EQ(fit.cannot_launch, Limit::kStaticSharedMemory);
}

TEST(FitEngineTest, ABufferNoOpTouchesIsAllocatedForTheWholeKernel) {
  const CompiledGraph graph = CompileGraphText(R"pb(
    buffers { name: "used" shape: "1024" dtype: "f32" memory_space: "smem" }
    buffers { name: "declared" shape: "2048" dtype: "f32" memory_space: "smem" }
    ops { name: "use" writes: "used" }
  )pb");
  const DeviceModel device = ShippedDevice("h100");
  auto engine = FitEngine::Create(graph, device);
  ASSERT_TRUE(engine.ok());
  EXPECT_THAT(engine->untouched_buffers(), ::testing::ElementsAre(1));
  FitEngine::Scratch scratch;
  FitResult fit;
  ASSERT_TRUE(engine->Evaluate(graph.defaults, scratch, &fit).ok());
  EXPECT_EQ(fit.spaces[0].peak, 3 * 4096);
}

TEST(FitEngineTest, SpillArithmeticOverflowIsAnErrorNotANegativeSpill) {
  absl::StatusOr<FitResult> fit = TryEvaluate(R"pb(
    buffers { name: "a" shape: "64" dtype: "f32" memory_space: "smem" }
    ops { name: "use" writes: "a" }
    launch { num_warps: "4" registers_per_thread: "4611686018427387904" }
  )pb", "h100");
  EXPECT_EQ(fit.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(fit.status().message(), HasSubstr("registers_per_thread"));
}

TEST(FitEngineTest, ABrokenRequirementIsInvalidNotAnError) {
  const FitResult fit = Evaluate(R"pb(
    parameters { name: "B" default_value: 3 }
    requirements { expr: "B % 2 == 0" doc: "even" }
    buffers { name: "a" shape: "B" dtype: "f32" memory_space: "smem" }
    ops { name: "use" writes: "a" }
  )pb", "h100");
  EXPECT_FALSE(fit.fits);
  EXPECT_EQ(fit.limit, Limit::kInvalid);
  EXPECT_EQ(fit.broken_requirement, 0);
}


// Issue 17: a negative num_stages was accepted (mlp.pbtxt's copies are max(1, num_stages - 1)).
TEST(FitEngineTest, ANegativeNumStagesNamesTheLoop) {
  const CompiledGraph graph = CompileExampleGraph("mlp.pbtxt");
  const DeviceModel device = ShippedDevice("h100");
  auto engine = FitEngine::Create(graph, device);
  ASSERT_TRUE(engine.ok());
  auto values = BindParameters(graph, {"num_stages=-5"});
  ASSERT_TRUE(values.ok());
  FitEngine::Scratch scratch;
  FitResult fit;
  const absl::Status status = engine->Evaluate(*values, scratch, &fit);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("mlp.pbtxt: loop 'h_loop' num_stages: must not be negative, got -5"));
}

// Every copy of every buffer is a block to place: their number is bounded, naming the buffer
// where the count passes the limit.
TEST(FitEngineTest, MoreBlocksThanTheLimitNameTheBuffer) {
  std::string text;
  for (int b = 0; b < 65; ++b) {
    text += absl::StrCat("buffers { name: \"b", b, "\" size_bytes: \"16\" memory_space: \"smem\" copies: \"65536\" }\n");
  }
  absl::StatusOr<FitResult> fit = TryEvaluate(text + "ops { name: \"o\" writes: \"b0\" }", "h100");
  EXPECT_EQ(fit.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(fit.status().message(), HasSubstr("test.pbtxt: buffer 'b64' copies: the graph's buffers and their copies come to more than 4194304 blocks"));
}

// Issue 17: "placement offset overflows 64 bits" named neither the file nor the buffer.
TEST(FitEngineTest, APlacementPastInt64NamesFileSpaceAndBuffer) {
  absl::StatusOr<FitResult> fit = TryEvaluate(R"pb(
    buffers { name: "small" size_bytes: "16" memory_space: "smem" }
    buffers { name: "huge" size_bytes: "4611686018427387904" memory_space: "smem" copies: "2" }
    ops { name: "use" writes: "small" writes: "huge" }
  )pb", "h100");
  EXPECT_EQ(fit.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(fit.status().message(), HasSubstr("test.pbtxt: memory space 'smem': buffer 'huge' (2 x 4611686018427387904 B)"));
  EXPECT_THAT(fit.status().message(), HasSubstr("overflows 64 bits"));
}

}  // namespace
}  // namespace scratchsim
