// Property tests of the fit engine on thousands of random graphs (seeded, so a failure
// reproduces): placement, peak bounds, verdicts that name their limit, suggestions that fit.
#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sim/engine.h"
#include "sim/limits.h"
#include "sim/simulator.h"
#include "sim/test_util.h"

namespace scratchsim {
namespace {

using namespace ::scratchsim::testing;

constexpr uint64_t kSeed = 20261126;

// A random kernel: 1-20 buffers (shapes or raw sizes, copies, alignments, a few static), 1-24 ops
// reading and writing them, sometimes a loop, a launch of 1-16 warps.
std::string RandomGraphText(std::mt19937_64& rng, bool tpu) {
  auto pick = [&rng](int n) { return static_cast<int>(rng() % n); };
  const int buffers = 1 + pick(20);
  const int ops = 1 + pick(24);
  const char* space = tpu ? "vmem" : "smem";
  std::string text = "parameters { name: \"T\" default_value: 64 min: 16 max: 256 power_of_two: true }\n";
  for (int b = 0; b < buffers; ++b) {
    absl::StrAppend(&text, "buffers { name: \"b", b, "\" memory_space: \"", space, "\"");
    if (pick(3) == 0) {
      absl::StrAppend(&text, " size_bytes: \"", 1 + pick(40000), "\"");
    } else {
      const char* dtypes[] = {"f16", "f32", "i8", "bf16"};
      absl::StrAppend(&text, " dtype: \"", dtypes[pick(4)], "\" shape: \"", pick(2) ? "T" : absl::StrCat(1 + pick(128)),
                      "\" shape: \"", 1 + pick(96), "\"");
    }
    if (pick(3) == 0) absl::StrAppend(&text, " copies: \"", 1 + pick(4), "\"");
    if (pick(4) == 0) absl::StrAppend(&text, " alignment: \"", 1 << pick(11), "\"");
    if (!tpu && pick(8) == 0) absl::StrAppend(&text, " static_allocation: true");
    if (tpu && pick(2) == 0) absl::StrAppend(&text, " scope: INSTRUCTION");
    absl::StrAppend(&text, " }\n");
  }
  const bool loop = pick(2) == 0;
  if (loop) absl::StrAppend(&text, "loops { name: \"k\" trip_count: \"8\" num_stages: \"", 1 + pick(4), "\" }\n");
  for (int o = 0; o < ops; ++o) {
    absl::StrAppend(&text, "ops { name: \"o", o, "\"");
    for (int r = pick(3); r > 0; --r) absl::StrAppend(&text, " reads: \"b", pick(buffers), "\"");
    for (int w = pick(3); w > 0; --w) absl::StrAppend(&text, " writes: \"b", pick(buffers), "\"");
    if (loop && pick(2) == 0) absl::StrAppend(&text, " loop: \"k\"");
    absl::StrAppend(&text, " }\n");
  }
  absl::StrAppend(&text, "launch { num_warps: \"", 1 << pick(5), "\" registers_per_thread: \"", 16 + pick(300), "\" }\n");
  return text;
}

struct Case {
  std::string device;
  std::string text;
};

std::vector<Case> RandomCases(int n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const char* devices[] = {"h100", "a100", "mi300x", "b200", "rtx5090", "tpu_v5e"};
  std::vector<Case> cases;
  for (int i = 0; i < n; ++i) {
    const std::string device = devices[rng() % 6];
    cases.push_back({device, RandomGraphText(rng, device.rfind("tpu", 0) == 0)});
  }
  return cases;
}

// Two blocks whose live ranges meet never share an address: checked on every group's layout.
TEST(InvariantsTest, PlacementNeverOverlapsBuffersLiveTogether) {
  int checked = 0;
  for (const Case& c : RandomCases(3000, kSeed)) {
    const CompiledGraph graph = CompileGraphText(c.text);
    const DeviceModel device = ShippedDevice(c.device);
    for (PlacementPolicyKind policy : {PlacementPolicyKind::kFirstFitDecreasing, PlacementPolicyKind::kBestFitDecreasing}) {
      EngineOptions options;
      options.policy = policy;
      auto engine = FitEngine::Create(graph, device, options);
      ASSERT_TRUE(engine.ok()) << engine.status() << "\n" << c.text;
      FitEngine::Scratch scratch;
      scratch.keep_layout = true;
      FitResult fit;
      ASSERT_TRUE(engine->Evaluate(graph.defaults, scratch, &fit).ok()) << c.text;
      for (const std::vector<PlacedBlock>& group : scratch.layout) {
        for (size_t i = 0; i < group.size(); ++i) {
          for (size_t j = i + 1; j < group.size(); ++j) {
            const PlacedBlock& a = group[i];
            const PlacedBlock& b = group[j];
            const bool live_together = a.block.start <= b.block.end && b.block.start <= a.block.end;
            const bool share = a.offset < b.offset + b.block.size && b.offset < a.offset + a.block.size;
            ASSERT_FALSE(live_together && share && a.block.size > 0 && b.block.size > 0)
                << "buffers b" << a.buffer << " and b" << b.buffer << " on " << c.device << "\n" << c.text;
          }
        }
      }
      ++checked;
    }
  }
  EXPECT_EQ(checked, 6000);
}

// A space's peak is at least the bytes live together at any op, and at most every block's bytes
// plus the alignment gap each may leave (no reuse at all).
TEST(InvariantsTest, PeakLiesBetweenTheLiveBytesAndTheSumWithoutReuse) {
  for (const Case& c : RandomCases(3000, kSeed + 1)) {
    const CompiledGraph graph = CompileGraphText(c.text);
    const DeviceModel device = ShippedDevice(c.device);
    auto engine = FitEngine::Create(graph, device);
    ASSERT_TRUE(engine.ok()) << engine.status();
    FitEngine::Scratch scratch;
    scratch.keep_layout = true;
    FitResult fit;
    ASSERT_TRUE(engine->Evaluate(graph.defaults, scratch, &fit).ok()) << c.text;
    for (int s = 0; s < device.memory_spaces_size(); ++s) {
      if (fit.spaces[s].peak < 0) continue;
      int64_t upper = std::max<int64_t>(device.memory_spaces(s).alignment_bytes(), 1) - 1;  // the static segment's rounding
      int64_t positions = 0;
      for (size_t g = 0; g < scratch.layout.size(); ++g) {
        if (engine->groups()[g].space != s) continue;
        for (const PlacedBlock& p : scratch.layout[g]) {
          upper += p.block.size + p.block.alignment - 1;
          positions = std::max(positions, p.block.end + 1);
        }
      }
      int64_t live = 0;
      for (int64_t position = 0; position < positions; ++position) {
        int64_t here = 0;
        for (size_t g = 0; g < scratch.layout.size(); ++g) {
          if (engine->groups()[g].space != s) continue;
          for (const PlacedBlock& p : scratch.layout[g]) {
            if (p.block.start <= position && position <= p.block.end) here += p.block.size;
          }
        }
        live = std::max(live, here);
      }
      EXPECT_GE(fit.spaces[s].peak, live) << c.device << "\n" << c.text;
      EXPECT_LE(fit.spaces[s].peak, upper) << c.device << "\n" << c.text;
    }
  }
}

// Every configuration that does not fit names its limit: the engine's typed reason is a breach
// it recorded, and the report has a fatal violation naming it.
TEST(InvariantsTest, EveryDoesNotFitNamesAViolatedLimit) {
  int not_fitting = 0;
  for (const Case& c : RandomCases(2000, kSeed + 2)) {
    const CompiledGraph graph = CompileGraphText(c.text);
    const DeviceModel device = ShippedDevice(c.device);
    auto engine = FitEngine::Create(graph, device);
    ASSERT_TRUE(engine.ok());
    SimulateOptions options;
    options.suggest = false;
    FitResult fit;
    auto report = Explain(*engine, graph.defaults, options, &fit);
    ASSERT_TRUE(report.ok()) << report.status() << "\n" << c.text;
    EXPECT_EQ(report->fits(), fit.fits);
    if (fit.fits) continue;
    ++not_fitting;
    EXPECT_TRUE(fit.breaches[static_cast<int>(fit.limit)].breached) << LimitName(fit.limit) << "\n" << c.text;
    const bool named = std::any_of(report->violations().begin(), report->violations().end(),
                                   [](const Violation& v) { return v.fatal() && !v.limit().empty() && !v.message().empty(); });
    EXPECT_TRUE(named) << c.device << "\n" << c.text;
  }
  EXPECT_GT(not_fitting, 50);  // the generator reaches the limits often enough to test this
}

// A suggestion that changes parameters claims the result fits: simulated with them, it does.
TEST(InvariantsTest, EverySuggestionThatClaimsToFitFitsWhenSimulated) {
  int suggestions = 0;
  for (const Case& c : RandomCases(600, kSeed + 3)) {
    const CompiledGraph graph = CompileGraphText(c.text);
    const DeviceModel device = ShippedDevice(c.device);
    SimulateOptions options;
    auto report = Simulate(graph, device, graph.defaults, options);
    ASSERT_TRUE(report.ok()) << report.status();
    for (const Suggestion& s : report->suggestions()) {
      if (s.parameters().empty()) continue;
      ++suggestions;
      std::vector<std::string> sets;
      for (const ParameterValue& p : s.parameters()) sets.push_back(absl::StrCat(p.name(), "=", p.value()));
      auto values = BindParameters(graph, sets);
      ASSERT_TRUE(values.ok()) << values.status();
      options.suggest = false;
      auto again = Simulate(graph, device, *values, options);
      ASSERT_TRUE(again.ok()) << again.status();
      EXPECT_TRUE(again->fits()) << "suggestion '" << s.text() << "' on " << c.device << "\n" << c.text;
      options.suggest = true;
    }
  }
  EXPECT_GT(suggestions, 10);
}

// The same input gives the same report, run after run.
TEST(InvariantsTest, SimulationIsDeterministic) {
  for (const Case& c : RandomCases(300, kSeed + 4)) {
    const CompiledGraph graph = CompileGraphText(c.text);
    const DeviceModel device = ShippedDevice(c.device);
    auto first = Simulate(graph, device, graph.defaults, SimulateOptions());
    auto second = Simulate(graph, device, graph.defaults, SimulateOptions());
    ASSERT_TRUE(first.ok() && second.ok());
    EXPECT_EQ(first->SerializeAsString(), second->SerializeAsString()) << c.text;
  }
}

}  // namespace
}  // namespace scratchsim
