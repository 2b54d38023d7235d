#include "sim/planner/families.h"

#include <algorithm>
#include <functional>
#include <map>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "sim/planner/param_space.h"
#include "sim/status_macros.h"

namespace scratchsim {
namespace {

// The parameter a --set or --param entry names: what precedes its '='.
std::string EntryName(const std::string& entry) { return entry.substr(0, entry.find('=')); }

// Each family's parameters, for a message about a name none of them has.
std::string ParametersOfEach(absl::Span<const KernelFamily> families) {
  std::vector<std::string> parts;
  for (const KernelFamily& f : families) {
    std::vector<std::string> names;
    for (const Parameter& p : f.graph->graph.parameters()) names.push_back(p.name());
    parts.push_back(absl::StrCat(f.graph->graph.name(), ": ", absl::StrJoin(names, ", ")));
  }
  return absl::StrJoin(parts, "; ");
}

// The entries of `entries` that name a symbol of `graph`. The graph's own binding and parsing
// then judge them (a device symbol is refused there, with its reason).
std::vector<std::string> EntriesFor(const CompiledGraph& graph, absl::Span<const std::string> entries) {
  std::vector<std::string> out;
  for (const std::string& entry : entries) {
    if (graph.symbols.Find(EntryName(entry)) >= 0) out.push_back(entry);
  }
  return out;
}

// Every entry names a parameter of some family: one that none has is a typo, not a choice.
absl::Status CheckEntries(absl::Span<const KernelFamily> families, absl::Span<const std::string> entries,
                          const std::function<std::string(absl::string_view)>& given) {
  for (const std::string& entry : entries) {
    const std::string name = EntryName(entry);
    const bool known = std::any_of(families.begin(), families.end(),
                                   [&](const KernelFamily& f) { return f.graph->symbols.Find(name) >= 0; });
    if (!known) {
      return absl::InvalidArgumentError(absl::StrCat(given(entry), ": no graph given has a parameter '", name,
                                                     "' (", ParametersOfEach(families), ")"));
    }
  }
  return absl::OkStatus();
}

// Families are told apart by their graphs' names: every one needs its own.
absl::Status CheckNames(absl::Span<const KernelFamily> families) {
  std::map<std::string, const CompiledGraph*> seen;
  for (const KernelFamily& f : families) {
    if (f.graph == nullptr) return absl::InvalidArgumentError("PlanFamilies: a family has no graph");
    const std::string& name = f.graph->graph.name();
    if (name.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(f.graph->origin, ": the graph has no name; each kernel family is named by its graph's name"));
    }
    auto [it, inserted] = seen.emplace(name, f.graph);
    if (!inserted) {
      return absl::InvalidArgumentError(absl::StrCat(f.graph->origin, ": the graph is named '", name, "', as ",
                                                     it->second->origin,
                                                     " is; each kernel family needs a name of its own"));
    }
  }
  return absl::OkStatus();
}

// The union of the families' top configurations, fastest first, at most top_k.
std::vector<FamilyRank> MergeTop(const std::vector<PlanResult>& plans, size_t top_k) {
  std::vector<FamilyRank> all;
  for (int f = 0; f < static_cast<int>(plans.size()); ++f) {
    for (int i = 0; i < static_cast<int>(plans[f].top.size()); ++i) all.push_back(FamilyRank{f, i});
  }
  // Each plan's top is already in its order; between families equal keys keep the families' order.
  std::stable_sort(all.begin(), all.end(), [&](const FamilyRank& a, const FamilyRank& b) {
    return RankKeyOf(plans[a.family].top[a.index]) < RankKeyOf(plans[b.family].top[b.index]);
  });
  if (all.size() > top_k) all.resize(top_k);
  return all;
}

// FamiliesPlan::shortlist: the pick, the families' hedges within their ranking error of it,
// the rest by estimate.
std::vector<FamilyRank> MergeShortlist(const std::vector<PlanResult>& plans, const std::vector<FamilyRank>& top,
                                       size_t top_k) {
  std::vector<FamilyRank> list;
  if (top.empty()) return list;
  const FamilyRank pick{top.front().family, 0};  // a plan's shortlist opens with its top's first
  const RankedConfig& best = plans[pick.family].shortlist.front();
  list.push_back(pick);
  std::vector<FamilyRank> hedges, rest;
  for (int f = 0; f < static_cast<int>(plans.size()); ++f) {
    const PlanResult& plan = plans[f];
    for (int i = 0; i < static_cast<int>(plan.shortlist.size()); ++i) {
      if (f == pick.family && i == 0) continue;
      const bool hedge = plan.shortlist[i].hedge != Hedge::kNone || (i == 0 && f != pick.family);
      const bool within = plan.shortlist[i].estimated &&
                          WithinRankingError(plan.shortlist[i].perf.time_s, best.perf.time_s, plan.ranking_error_permille);
      (hedge && within ? hedges : rest).push_back(FamilyRank{f, i});
    }
  }
  auto faster = [&](const FamilyRank& a, const FamilyRank& b) {
    return RankKeyOf(plans[a.family].shortlist[a.index]) < RankKeyOf(plans[b.family].shortlist[b.index]);
  };
  std::stable_sort(hedges.begin(), hedges.end(), faster);
  std::stable_sort(rest.begin(), rest.end(), faster);
  list.insert(list.end(), hedges.begin(), hedges.end());
  list.insert(list.end(), rest.begin(), rest.end());
  if (list.size() > top_k) list.resize(top_k);
  return list;
}

// An estimate's longest term, the one its time is made of besides the exposed part.
FamilyTerm BoundTerm(const PerfEstimate& e) {
  if (e.latency_bound) return FamilyTerm::kLatency;
  return e.compute_bound ? FamilyTerm::kOnChip : FamilyTerm::kMemory;
}

// Each family's best, the families in order of it, each one's ratio to the fastest, and why the
// fastest beats the next.
void Compare(FamiliesPlan& result) {
  const std::vector<PlanResult>& plans = result.plans;
  for (size_t f = 0; f < plans.size(); ++f) {
    // A plan's top is in rank order and unestimated configurations rank last.
    if (!plans[f].top.empty() && plans[f].top.front().estimated) {
      result.summaries[f].best = 0;
      result.summaries[f].best_time_s = plans[f].top.front().perf.time_s;
    }
    result.order.push_back(static_cast<int>(f));
  }
  auto estimated = [&](int f) { return result.summaries[f].best >= 0; };
  std::stable_sort(result.order.begin(), result.order.end(), [&](int a, int b) {
    if (estimated(a) != estimated(b)) return estimated(a);
    return estimated(a) && RankKeyOf(plans[a].top.front()) < RankKeyOf(plans[b].top.front());
  });
  FamilyChoice& choice = result.choice;
  if (result.order.empty() || !estimated(result.order[0])) return;
  choice.winner = result.order[0];
  const double best = result.summaries[choice.winner].best_time_s;
  for (FamilySummary& s : result.summaries) {
    if (s.best >= 0 && best > 0) s.ratio = s.best_time_s / best;
  }
  if (result.order.size() < 2 || !estimated(result.order[1])) return;
  choice.runner_up = result.order[1];
  const PerfEstimate& w = plans[choice.winner].top.front().perf;
  const PerfEstimate& r = plans[choice.runner_up].top.front().perf;
  choice.winner_bound = BoundTerm(w);
  choice.runner_up_bound = BoundTerm(r);
  choice.bound_gain_s = FamilyTermSeconds(r, choice.runner_up_bound) - FamilyTermSeconds(w, choice.winner_bound);
  choice.exposed_gain_s = r.exposed_s - w.exposed_s;
  choice.decides = choice.exposed_gain_s > choice.bound_gain_s ? FamilyTerm::kExposed : choice.runner_up_bound;
}

}  // namespace

const char* FamilyTermName(FamilyTerm term) {
  switch (term) {
    case FamilyTerm::kOnChip:
      return "on-chip";
    case FamilyTerm::kMemory:
      return "memory";
    case FamilyTerm::kLatency:
      return "latency";
    case FamilyTerm::kExposed:
      return "exposed";
  }
  return "?";
}

double FamilyTermSeconds(const PerfEstimate& estimate, FamilyTerm term) {
  switch (term) {
    case FamilyTerm::kOnChip:
      return estimate.core_s;
    case FamilyTerm::kMemory:
      return estimate.memory_s;
    case FamilyTerm::kLatency:
      return estimate.latency_s;
    case FamilyTerm::kExposed:
      return estimate.exposed_s;
  }
  return 0;
}

absl::StatusOr<FamiliesPlan> PlanFamilies(absl::Span<const KernelFamily> families, const DeviceModel& device,
                                          absl::Span<const std::string> sets, absl::Span<const std::string> params,
                                          const Spelling& spelling) {
  if (families.empty()) return absl::InvalidArgumentError("PlanFamilies: no family given");
  RETURN_IF_ERROR(CheckNames(families));
  RETURN_IF_ERROR(CheckEntries(families, sets, [&](absl::string_view e) { return spelling.Set(e); }));
  RETURN_IF_ERROR(CheckEntries(families, params, [&](absl::string_view e) { return spelling.Param(e); }));
  FamiliesPlan result;
  for (const KernelFamily& family : families) {
    const CompiledGraph& graph = *family.graph;
    const std::vector<std::string> family_sets = EntriesFor(graph, sets);
    ASSIGN_OR_RETURN(std::vector<int64_t> values, BindParameters(graph, family_sets, spelling));
    ASSIGN_OR_RETURN(std::vector<ParamAxis> axes, BuildParamSpace(graph, EntriesFor(graph, params), family_sets, spelling));
    // Each family keeps at least its best, so the families compare even where no configuration
    // is asked for (--top 0); the overall ranking keeps top_k.
    PlanOptions options = family.options;
    options.top_k = std::max(options.top_k, 1);
    ASSIGN_OR_RETURN(PlanResult plan, Plan(graph, device, std::move(axes), std::move(values), options));
    result.fitting += plan.fitting;
    result.partial = result.partial || plan.partial;
    result.plans.push_back(std::move(plan));
    result.summaries.push_back(FamilySummary{graph.graph.name()});
  }
  const size_t top_k = static_cast<size_t>(std::max(families.front().options.top_k, 0));
  result.top = MergeTop(result.plans, top_k);
  result.shortlist = MergeShortlist(result.plans, result.top, top_k);
  Compare(result);
  return result;
}

}  // namespace scratchsim
