// Kernel families: several graphs that compute one result in different ways (the plain and the
// split-K matmul) planned for one problem, ranked together, with why the fastest family wins.
#ifndef SCRATCHSIM_SIM_PLANNER_FAMILIES_H_
#define SCRATCHSIM_SIM_PLANNER_FAMILIES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "proto/device.pb.h"
#include "sim/graph.h"
#include "sim/planner/planner.h"

namespace scratchsim {

// One family: its graph, compiled with its defaults (not owned; its name names the family), and
// the options its sweep takes (its residuals, its front end's allocator). top_k is the number
// of configurations ranked overall, and each family keeps that many of its own (at least its best).
struct KernelFamily {
  const CompiledGraph* graph = nullptr;
  PlanOptions options;
};

// The parts of an estimate the families are compared by (PerfEstimate: time = the longest of
// the on-chip, memory and latency terms, plus the exposed part of the shorter phase).
enum class FamilyTerm { kOnChip, kMemory, kLatency, kExposed };
const char* FamilyTermName(FamilyTerm term);
// A term's value in an estimate, in seconds.
double FamilyTermSeconds(const PerfEstimate& estimate, FamilyTerm term);

// What a family's sweep found, beside its PlanResult.
struct FamilySummary {
  std::string name;
  int best = -1;           // its fastest estimated configuration in its plan's top; -1: none
  double best_time_s = 0;  // that configuration's estimate
  double ratio = 0;        // best_time_s over the fastest family's; 0 without an estimate
};

// Why the fastest family's best configuration beats the next family's best. Each best's time is
// its longest term plus its exposed time, so the runner-up's lost time splits exactly into the
// difference of the longest terms (`bound_gain_s`, each best's own longest) and the difference
// of the exposed times; `decides` is the larger part: the runner-up's longest term, or kExposed.
struct FamilyChoice {
  int winner = -1;     // family index; -1: no family has an estimated configuration
  int runner_up = -1;  // -1: no other family has one
  FamilyTerm winner_bound = FamilyTerm::kOnChip;     // the winner's longest term
  FamilyTerm runner_up_bound = FamilyTerm::kOnChip;  // the runner-up's
  double bound_gain_s = 0;    // the runner-up's longest term minus the winner's
  double exposed_gain_s = 0;  // the runner-up's exposed time minus the winner's
  FamilyTerm decides = FamilyTerm::kOnChip;
};

// A configuration of the overall ranking: plans[family].top[index].
struct FamilyRank {
  int family = 0;
  int index = 0;
};

struct FamiliesPlan {
  std::vector<PlanResult> plans;          // one per family, in the order given
  std::vector<FamilySummary> summaries;   // the same order
  // Family indices by their best configuration, fastest first (the ranking's order; equal keys
  // in the order given); families without an estimated configuration last, in the order given.
  std::vector<int> order;
  std::vector<FamilyRank> top;            // the union of their top, fastest first
  // The autotuning shortlist over every family (indices into plans[family].shortlist, not top):
  // the overall pick, then each family's hedges (its own pick where it is not the winner, and
  // its shortlist's other block shapes) whose estimate is within that family's ranking error of
  // the pick's, fastest first, then the rest by estimate; at most top_k. A family without a
  // ranking error adds no hedge.
  std::vector<FamilyRank> shortlist;
  FamilyChoice choice;
  uint64_t fitting = 0;                   // over every family
  bool partial = false;                   // some family's sweep was cancelled
};

// Plans every family for one problem: each --set (`sets`) and --param (`params`) applies to
// every family whose graph has that parameter; one that no family has is an error naming it, as
// are two families of one name. Ranks the union of their configurations that fit by estimate
// (RankKey; equal keys in the order the families were given) and says which family wins and why.
// Deterministic, as Plan is.
absl::StatusOr<FamiliesPlan> PlanFamilies(absl::Span<const KernelFamily> families, const DeviceModel& device,
                                          absl::Span<const std::string> sets, absl::Span<const std::string> params,
                                          const Spelling& spelling = {});

}  // namespace scratchsim

#endif  // SCRATCHSIM_SIM_PLANNER_FAMILIES_H_
