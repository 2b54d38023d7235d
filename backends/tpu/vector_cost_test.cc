// The TPU vector unit's issue cost (vector_cost.h): one behaviour per test on shared devices, then
// the shipped model against libtpu's recorded static schedules (tests/data/tpu/bundles*.jsonl.gz,
// bench/tpu/compute_oracle.py): the holdout half of the kernels without a dot, and the steps with
// dots, where the planner takes the longer of the dots at the MXU's peak and the vector bundles.
#include "backends/tpu/vector_cost.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "backends/tpu/pallas_lowering.h"
#include "backends/tpu/tpu_corpus_util.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "sim/graph.h"
#include "sim/test_util.h"

namespace scratchsim {
namespace {

using testing::ShippedDevice;

class VectorCostTest : public ::testing::Test {
 protected:
  DeviceModel v5e_ = ShippedDevice("tpu_v5e");
  DeviceModel v6e_ = ShippedDevice("tpu_v6e");
};

TEST_F(VectorCostTest, AFittedGenerationUsesItsOwnCoefficients) {
  bool assumed = true;
  EXPECT_STREQ(CoefficientsFor(v6e_, &assumed).generation, "v6e");
  EXPECT_FALSE(assumed);
}

TEST_F(VectorCostTest, ANewerTpuTakesTheNewestFittedGenerationAndSaysSo) {
  DeviceModel next = v6e_;
  next.set_name("tpu_next");
  next.mutable_tpu()->set_generation(9);
  const StepBundles cost = EstimateStepBundles(PallasVectorWork(), "", "bf16", next);
  EXPECT_TRUE(cost.assumed);
  EXPECT_TRUE(absl::StrContains(cost.basis, "assumed for tpu_next")) << cost.basis;
}

TEST_F(VectorCostTest, AStepWithoutVectorWorkCostsTheFixedBundlesAlone) {
  bool assumed = false;
  const VectorCostCoefficients c = CoefficientsFor(v5e_, &assumed);
  EXPECT_EQ(EstimateStepBundles(PallasVectorWork(), "", "bf16", v5e_).bundles, absl::StrCat(std::llround(c.step)));
}

TEST_F(VectorCostTest, EachVregOfWorkAddsItsWeightInBundles) {
  bool assumed = false;
  const VectorCostCoefficients c = CoefficientsFor(v5e_, &assumed);
  PallasVectorWork work;
  work.set_stores("1000");
  absl::StatusOr<Expr> bundles = Expr::Parse(EstimateStepBundles(work, "", "bf16", v5e_).bundles, SymbolTable());
  ASSERT_TRUE(bundles.ok()) << bundles.status();
  EXPECT_EQ(*bundles->Evaluate({}), std::llround(c.step) + std::llround(c.stores * 1000));
}

TEST_F(VectorCostTest, DotsAddTheirMxuCyclesAtThePeakAndClock) {
  // v5e: 197 TFLOP/s at 1503 MHz, one TensorCore: 131,071 flops a cycle (4 MXUs of 128 x 128 make
  // 131,072), so 2 x 512^3 flops take 2,049 cycles.
  absl::StatusOr<Expr> bundles =
      Expr::Parse(EstimateStepBundles(PallasVectorWork(), "2 * 512 * 512 * 512", "bf16", v5e_).bundles, SymbolTable());
  ASSERT_TRUE(bundles.ok()) << bundles.status();
  bool assumed = false;
  EXPECT_EQ(*bundles->Evaluate({}), std::llround(CoefficientsFor(v5e_, &assumed).step) + 2049);
}

TEST_F(VectorCostTest, TheLoweringChargesABodysVectorWorkAsIssueSlots) {
  KernelGraph graph = testing::ExampleGraph("tpu_flash_attention.pbtxt");
  ASSERT_TRUE(graph.pallas().body().has_vector());
  absl::StatusOr<PallasLowering> lowered = LowerPallas(graph, v5e_);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  EXPECT_FALSE(lowered->graph.issue_slots().empty());
  EXPECT_TRUE(absl::c_any_of(lowered->notes, [](const std::string& n) { return absl::StartsWith(n, "grid step compute:"); }));
}

TEST_F(VectorCostTest, ABodyWithoutVectorFiguresIsNotCharged) {
  KernelGraph graph = testing::ExampleGraph("tpu_flash_attention.pbtxt");
  graph.mutable_pallas()->mutable_body()->clear_vector();
  absl::StatusOr<PallasLowering> lowered = LowerPallas(graph, v5e_);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  EXPECT_TRUE(lowered->graph.issue_slots().empty());
}

TEST_F(VectorCostTest, ANegativeFigureIsRefusedByName) {
  KernelGraph graph = testing::ExampleGraph("tpu_flash_attention.pbtxt");
  graph.mutable_pallas()->mutable_body()->mutable_vector()->set_alu("0 - 1");
  absl::StatusOr<PallasLowering> lowered = LowerPallas(graph, v5e_);
  ASSERT_FALSE(lowered.ok());
  EXPECT_TRUE(absl::StrContains(lowered.status().message(), "pallas.body.vector.alu")) << lowered.status();
}

TEST_F(VectorCostTest, ANegativeFigureIsRefusedWhenTheUserGivesTheSpills) {
  KernelGraph graph = testing::ExampleGraph("tpu_flash_attention.pbtxt");
  graph.mutable_pallas()->set_spill_bytes_estimate("0");
  graph.mutable_pallas()->mutable_body()->mutable_vector()->set_converts("0 - 1");
  absl::StatusOr<PallasLowering> lowered = LowerPallas(graph, v5e_);
  ASSERT_FALSE(lowered.ok());
  EXPECT_TRUE(absl::StrContains(lowered.status().message(), "pallas.body.vector.converts")) << lowered.status();
}

// ---- Against libtpu's recorded schedules ----

// Kinds whose static schedule is not one grid step (bench/tpu/fit_vector_cost.py NOT_A_STEP).
bool NotAStep(const std::string& kind) {
  return kind == "gmm" || kind == "paged_attention" || kind == "ragged_paged";
}

struct ScheduledStep {
  std::string id, gen, kind;
  bool fit_half = false, has_dots = false;
  double recorded = 0;   // bundles of the grid loop's body
  double issue = 0;      // our issue_slots: vector bundles plus the dots' MXU cycles
  double mxu = 0;        // our dots at the MXU's peak, in cycles of the device's clock
  double grid_steps = 0;  // the launch grid's size
  std::string problem;    // the kernel's parameters less its block sizes (a planner's fixed set)
};

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::vector<double> Ranks(const std::vector<double>& v) {
  std::vector<size_t> order(v.size());
  for (size_t i = 0; i < v.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
  std::vector<double> ranks(v.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]]) ++j;
    for (size_t k = i; k <= j; ++k) ranks[order[k]] = 0.5 * static_cast<double>(i + j);
    i = j + 1;
  }
  return ranks;
}

double Spearman(const std::vector<double>& a, const std::vector<double>& b) {
  const std::vector<double> ra = Ranks(a), rb = Ranks(b);
  const double n = static_cast<double>(a.size());
  double ma = 0, mb = 0;
  for (size_t i = 0; i < a.size(); ++i) ma += ra[i] / n, mb += rb[i] / n;
  double sab = 0, saa = 0, sbb = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    sab += (ra[i] - ma) * (rb[i] - mb), saa += (ra[i] - ma) * (ra[i] - ma), sbb += (rb[i] - mb) * (rb[i] - mb);
  }
  return saa > 0 && sbb > 0 ? sab / std::sqrt(saa * sbb) : 0;
}

const std::vector<ScheduledStep>& Steps() {
  static const auto* steps = [] {
    auto* out = new std::vector<ScheduledStep>;
    const std::string dir = std::string(SCRATCHSIM_SOURCE_DIR) + "/tests/data/tpu/";
    std::map<std::string, std::string> graphs;  // id -> graph textproto
    for (const std::string& line : ReadGzipLines(dir + "corpus.jsonl.gz")) {
      Struct row;
      if (google::protobuf::util::JsonStringToMessage(line, &row).ok() && !Str(row, "graph").empty()) {
        graphs[Str(row, "id")] = Str(row, "graph");
      }
    }
    std::map<std::string, std::pair<std::string, bool>> bodies;  // id -> (body, fit half)
    for (const std::string& line : ReadGzipLines(dir + "corpus_bodies.jsonl.gz")) {
      Struct s;
      if (!google::protobuf::util::JsonStringToMessage(line, &s).ok()) continue;
      bodies[Str(s, "id")] = {Str(s, "body"), Field(s, "fit") != nullptr && Field(s, "fit")->bool_value()};
    }
    std::map<std::string, DeviceModel> devices;
    for (const char* file : {"bundles.jsonl.gz", "bundles_v4_v5p_v7x.jsonl.gz"}) {
      for (const std::string& line : ReadGzipLines(dir + file)) {
        Struct row;
        if (!google::protobuf::util::JsonStringToMessage(line, &row).ok() || Field(row, "header") != nullptr) continue;
        ScheduledStep step{Str(row, "id"), Str(row, "gen"), Str(row, "kind")};
        const Struct* kernels = Sub(row, "bundles");
        if (NotAStep(step.kind) || kernels == nullptr) continue;
        // The Pallas kernel with the most bundles, and its grid loop's body.
        const Struct* best = nullptr;
        for (const auto& [name, v] : kernels->fields()) {
          if (v.has_struct_value() && (best == nullptr || Num(v.struct_value(), "total") > Num(*best, "total"))) {
            best = &v.struct_value();
          }
        }
        if (best == nullptr || Field(*best, "grid_loop") == nullptr || !Field(*best, "grid_loop")->bool_value()) continue;
        step.recorded = static_cast<double>(Num(*best, "step"));
        auto graph_text = graphs.find(step.id);
        auto body = bodies.find(step.id);
        if (graph_text == graphs.end() || body == bodies.end()) continue;
        KernelGraph graph;
        if (!google::protobuf::TextFormat::ParseFromString(graph_text->second, &graph) ||
            !google::protobuf::TextFormat::ParseFromString(body->second.first, graph.mutable_pallas()->mutable_body())) {
          continue;
        }
        step.fit_half = body->second.second;
        step.has_dots = graph.pallas().body().dots_size() > 0;
        if (!devices.count(step.gen)) devices[step.gen] = ShippedDevice(absl::StrCat("tpu_", step.gen));
        const DeviceModel& device = devices[step.gen];
        absl::StatusOr<PallasLowering> lowered = LowerPallas(graph, device);
        if (!lowered.ok()) continue;
        absl::StatusOr<CompiledGraph> compiled = CompileGraph(lowered->graph, step.id);
        if (!compiled.ok() || !compiled->issue_slots) continue;
        step.issue = static_cast<double>(compiled->issue_slots->Evaluate(compiled->defaults).value_or(0));
        step.grid_steps = 1;
        for (const Expr& g : compiled->launch.grid) step.grid_steps *= static_cast<double>(g.Evaluate(compiled->defaults).value_or(0));
        if (const Struct* params = Sub(row, "params")) {
          std::vector<std::string> fixed;
          for (const auto& [name, v] : params->fields()) {
            if (absl::StartsWith(name, "block")) continue;
            fixed.push_back(absl::StrCat(name, "=", v.has_number_value() ? absl::StrCat(v.number_value()) : v.string_value()));
          }
          std::sort(fixed.begin(), fixed.end());
          step.problem = absl::StrJoin(fixed, ",");
        }
        if (compiled->flops) {
          // The planner's math time (sim/planner/perf_model.cc): flops at the per-core peak of the
          // compute dtype, scaled by peak_percent; here in cycles of the device's clock.
          double peak = 0;
          for (const PeakThroughput& p : device.performance().peak()) {
            if (p.dtype() == lowered->graph.compute_dtype()) peak = p.tflops() * 1e12;
          }
          const double percent =
              compiled->peak_percent ? static_cast<double>(compiled->peak_percent->Evaluate(compiled->defaults).value_or(100)) : 100;
          const double per_core = peak / std::max(1, device.limits().num_cores()) * std::min(percent, 100.0) / 100;
          const double flops = static_cast<double>(compiled->flops->Evaluate(compiled->defaults).value_or(0));
          if (per_core > 0) step.mxu = flops / per_core * device.performance().clock_mhz() * 1e6;
        }
        out->push_back(step);
      }
    }
    return out;
  }();
  return *steps;
}

// Made by bench/tpu (README.md there).
#define REQUIRE_SCHEDULES() SCRATCHSIM_REQUIRE_TEST_DATA("tests/data/tpu/bundles.jsonl.gz", "tests/data/tpu/corpus.jsonl.gz")

// Kernels without a dot, the half the coefficients were not fitted on: the median of ours over
// libtpu's bundles, and the share within 20%, per generation (docs/tpu.md has the table).
TEST(VectorCostScheduleTest, HoldoutStepsWithoutDotsMatchLibtpusSchedule) {
  REQUIRE_SCHEDULES();
  std::map<std::string, std::vector<double>> ratios, ours, theirs;
  for (const ScheduledStep& s : Steps()) {
    if (s.has_dots || s.fit_half) continue;
    ratios[s.gen].push_back(s.issue / s.recorded);
    ours[s.gen].push_back(s.issue);
    theirs[s.gen].push_back(s.recorded);
  }
  ASSERT_FALSE(ratios.empty()) << "no scheduled steps read";
  for (const auto& [gen, r] : ratios) {
    const double within = static_cast<double>(absl::c_count_if(r, [](double x) { return x >= 0.8 && x <= 1.2; })) /
                          static_cast<double>(r.size());
    std::printf(
        "%s: %zu holdout steps without a dot: median ours / libtpu %.3f, range %.2f-%.2f, within 20%% %.0f%%, "
        "Spearman %.3f\n",
        gen.c_str(), r.size(), Median(r), *absl::c_min_element(r), *absl::c_max_element(r), 100 * within,
        Spearman(ours[gen], theirs[gen]));
    EXPECT_GE(Spearman(ours[gen], theirs[gen]), 0.9) << gen;  // as measured: 0.925-0.972
    EXPECT_NEAR(Median(r), 1.0, 0.1) << gen;                     // 0.945-0.972
    EXPECT_GE(within, 0.45) << gen;                              // 50-68%
  }
}

// Steps with dots: the vector bundles plus the dots' MXU cycles order them as libtpu's schedule
// does, and come to its bundles (the median per generation within 25%).
TEST(VectorCostScheduleTest, StepsWithDotsAreOrderedAsLibtpuSchedulesThem) {
  REQUIRE_SCHEDULES();
  std::map<std::string, std::vector<double>> ours, theirs, mxu_only;
  for (const ScheduledStep& s : Steps()) {
    if (!s.has_dots) continue;
    ours[s.gen].push_back(s.issue);
    mxu_only[s.gen].push_back(s.mxu);
    theirs[s.gen].push_back(s.recorded);
  }
  ASSERT_FALSE(ours.empty()) << "no scheduled steps with dots read";
  for (const auto& [gen, o] : ours) {
    std::vector<double> ratio;
    for (size_t i = 0; i < o.size(); ++i) ratio.push_back(o[i] / theirs[gen][i]);
    const double rho = Spearman(o, theirs[gen]);
    std::printf("%s: %zu steps with dots: Spearman %.3f (MXU alone %.3f), median ours / libtpu %.3f\n", gen.c_str(),
                o.size(), rho, Spearman(mxu_only[gen], theirs[gen]), Median(ratio));
    EXPECT_GE(rho, 0.98) << gen;                  // as measured: 0.988-0.995
    EXPECT_NEAR(Median(ratio), 1.0, 0.25) << gen;  // 0.946-1.150
  }
}

// The planner's question: which block shapes of one flash attention problem compute fastest.
// Per generation and problem (the corpus's flash_fwd kernels that differ only in their blocks),
// the kernel's bundles (a step's times the grid's steps) ordered as libtpu's schedule orders them,
// and libtpu's fastest among our three fastest.
TEST(VectorCostScheduleTest, FlashAttentionBlockShapesRankAsLibtpuSchedulesThem) {
  REQUIRE_SCHEDULES();
  std::map<std::string, std::map<std::string, std::vector<const ScheduledStep*>>> by_problem;  // gen -> problem
  for (const ScheduledStep& s : Steps()) {
    if (s.kind == "flash_fwd" && s.grid_steps > 0) by_problem[s.gen][s.problem].push_back(&s);
  }
  ASSERT_FALSE(by_problem.empty());
  for (const auto& [gen, problems] : by_problem) {
    std::vector<double> rhos, mxu_rhos;
    int groups = 0, best_in_top3 = 0;
    for (const auto& [problem, steps] : problems) {
      if (steps.size() < 4) continue;
      std::vector<double> ours, theirs, mxu;
      for (const ScheduledStep* s : steps) {
        ours.push_back(s->issue * s->grid_steps);
        theirs.push_back(s->recorded * s->grid_steps);
        mxu.push_back(s->mxu * s->grid_steps);
      }
      rhos.push_back(Spearman(ours, theirs));
      mxu_rhos.push_back(Spearman(mxu, theirs));
      ++groups;
      const size_t best = absl::c_min_element(theirs) - theirs.begin();
      int ahead = 0;
      for (double o : ours) ahead += o < ours[best];
      best_in_top3 += ahead < 3;
    }
    if (groups == 0) continue;
    std::printf("%s: %d flash attention problems of 4-7 block shapes: Spearman median %.3f (min %.3f; the MXU alone "
                "%.3f), libtpu's fastest in our first three on %d\n",
                gen.c_str(), groups, Median(rhos), *absl::c_min_element(rhos), Median(mxu_rhos), best_in_top3);
    EXPECT_GE(Median(rhos), 0.8) << gen;
  }
}

}  // namespace
}  // namespace scratchsim
