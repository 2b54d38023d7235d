#include "sim/driver/plan_output.h"

#include <algorithm>
#include <optional>
#include <sstream>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "sim/json_text.h"
#include "sim/limits.h"
#include "sim/occupancy.h"
#include "sim/report.h"

namespace scratchsim {
namespace {

std::string Thousands(uint64_t v) {
  std::string digits = absl::StrCat(v);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string Cores(int64_t n) { return absl::StrCat(n, n == 1 ? " core" : " cores"); }

// A time in microseconds, one decimal at 1 us and above; below, three significant digits, so a
// short kernel never reads as 0.0.
std::string FormatMicroseconds(double seconds) {
  const double us = seconds * 1e6;
  return us >= 1 ? absl::StrFormat("%.1f", us) : absl::StrFormat("%.3g", us);
}

std::string Assignments(const PlanResult& plan, const std::vector<int64_t>& values) {
  std::vector<std::string> parts;
  for (size_t a = 0; a < plan.axes.size(); ++a) parts.push_back(absl::StrCat(plan.axes[a].name, "=", values[a]));
  return absl::StrJoin(parts, " ");
}

// Which phase bounds the estimate, and the comparison that says so in the model's own terms:
// the arithmetic intensity against the ridge where that decides, the phases' times where the
// on-chip time (waits, banks, issue) or the load latency decides instead.
std::string BoundWords(const PlanResult& plan, const PerfEstimate& e) {
  auto us = [](double s) { return FormatMicroseconds(s); };
  if (e.latency_bound) {
    // The latency term is the chain's idle latencies plus the DRAM's transfer time along it
    // (sim/planner/perf_model.cc): which of the two dominates says what would shorten it.
    const double idle_s = std::max(e.latency_s - e.dram_s, 0.0);
    const std::string parts = e.dram_s > 0 && idle_s > 0
                                  ? absl::StrCat(", ", us(e.dram_s), " us of it DRAM transfers, the rest idle along the K loop")
                                  : "";
    return absl::StrCat("latency-bound: the loads' latency (", us(e.latency_s), " us", parts, ") outlasts on-chip ",
                        us(e.core_s), " us and memory ", us(e.memory_s), " us");
  }
  const bool below_ridge = e.intensity > 0 && e.intensity < plan.model.ridge();
  const std::string intensity =
      e.intensity > 0 ? absl::StrFormat("%.0f flop/B is %s the ridge of %.0f", e.intensity,
                                        below_ridge ? "below" : "at or above", plan.model.ridge())
                      : "";
  const std::string name = e.smem_bound ? "shared-memory-bound" : e.compute_bound ? "compute-bound" : "memory-bound";
  // Where the intensity against the ridge gives the same answer, it is the reason.
  const bool ridge_agrees = e.compute_bound ? !below_ridge && !e.smem_bound : below_ridge;
  if (!intensity.empty() && ridge_agrees) return absl::StrCat(name, ": ", intensity);
  // Otherwise the phases' times decide (the on-chip time holds more than the math at the peak:
  // waits, banks, issue), and the intensity is said as what it is.
  const std::string times = e.compute_bound ? absl::StrCat("on-chip ", us(e.core_s), " us outlasts memory ", us(e.memory_s), " us")
                                            : absl::StrCat("memory ", us(e.memory_s), " us outlasts on-chip ", us(e.core_s), " us");
  return absl::StrCat(name, ": ", times, intensity.empty() ? "" : absl::StrCat(", though ", intensity));
}

// One line on why a configuration ranks where it does.
std::string Why(const PlanResult& plan, const RankedConfig& c) {
  if (!c.estimated) return "no estimate: a performance expression failed for this configuration (see the notes)";
  const PerfEstimate& e = c.perf;
  std::vector<std::string> parts;
  parts.push_back(BoundWords(plan, e));
  if (c.residual > 0) parts.push_back(absl::StrFormat("measured residual x%.3f applied", c.residual));
  if (e.issue_to_peak > 1.005) {
    parts.push_back(absl::StrFormat("math issue-limited at %.2fx the flops at the peak", e.issue_to_peak));
  }
  if (e.smem_s > 0 && e.compute_s > 0) {
    parts.push_back(absl::StrFormat("shared-memory banks at %.0f%% of the math time", 100.0 * e.smem_s / e.compute_s));
  }
  if (e.l1_overflow) {
    parts.push_back(absl::StrCat("L1 reuse window ", FormatBytesShort(static_cast<int64_t>(e.l1_window_bytes_per_core)),
                                 " over the ", FormatBytesShort(c.fit.occupancy.l1_bytes_per_core),
                                 " of L1 the carve-out leaves: lines fetched again"));
  }
  if (e.l1_busy_share > 0) {
    parts.push_back(absl::StrFormat("synchronous loads keep the L1 busy %.0f%% of the time (a block %.2f us a step away from it)",
                                    100.0 * e.l1_busy_share, e.step_away_s * 1e6));
  }
  if (e.wait_s > 0 && e.core_s > 0 && !e.smem_bound) {
    // Per round: one block's block-wide waits and the round trips no other warp covered.
    parts.push_back(absl::StrFormat("unfilled waits %.0f%% of the on-chip time", 100.0 * e.wait_s / e.core_s));
  }
  if (e.sync_s > 0 && e.core_s > 0) {
    parts.push_back(absl::StrFormat("sync waits %.0f%% of the on-chip time", 100.0 * e.sync_s / e.core_s));
  }
  if (e.chain_bound) {
    parts.push_back("one chain's own path sets the pace: more chains per SM would fill it");
  }
  if (c.fit.has_occupancy) {
    parts.push_back(absl::StrFormat("%d block%s/SM (%s)", c.fit.blocks_per_core(), c.fit.blocks_per_core() == 1 ? "" : "s",
                                    OccupancyFactorName(c.fit.occupancy.first_factor())));
  }
  parts.push_back(absl::StrFormat("%d wave%s at %.0f%%", e.waves, e.waves == 1 ? "" : "s", 100 * e.wave_efficiency));
  if (e.time_s > 0 && e.exposed_s > 0) {
    parts.push_back(absl::StrFormat("%d load%s in flight, %.0f%% exposed", e.loads_in_flight,
                                    e.loads_in_flight == 1 ? "" : "s", 100 * e.exposed_s / e.time_s));
  } else {
    parts.push_back(absl::StrFormat("%d load%s in flight", e.loads_in_flight, e.loads_in_flight == 1 ? "" : "s"));
  }
  if (e.issue_efficiency < 1) parts.push_back(absl::StrFormat("%.0f%% of schedulers busy", 100 * e.issue_efficiency));
  // Only where it shows at the precision printed: "ready on 100%" would say nothing.
  if (e.ready_share < 0.995) parts.push_back(absl::StrFormat("a warp ready on %.0f%% of cycles", 100 * e.ready_share));
  return absl::StrJoin(parts, ", ");
}

std::string SpaceSummary(const PlanResult& plan, const DeviceModel& device, const FitResult& fit) {
  std::vector<std::string> parts;
  for (int s = 0; s < device.memory_spaces_size() && s < kMaxSpaces; ++s) {
    if (fit.spaces[s].peak < 0) continue;
    parts.push_back(absl::StrCat(device.memory_spaces(s).name(), " ", FormatBytesShort(fit.spaces[s].peak)));
  }
  return absl::StrJoin(parts, " ");
}

// What pruned the family, in the limit's unit (sim/limits).
std::string FamilyDetail(const PrunedFamily& f) { return LimitDetail(f.limit, f.required, f.available, f.message); }

// The values pruned throughout, per axis: a few listed, a long run summarized as its first and
// last values and its count (a problem-size axis of 65,505 values is one line, not 80,000 characters).
std::string WholeValues(const PlanResult& plan, const PrunedFamily& f) {
  constexpr size_t kListed = 6;
  std::vector<std::string> parts;
  for (size_t i = 0; i < f.whole_values.size();) {
    const int axis = f.whole_values[i].first;
    std::vector<int64_t> values;
    for (; i < f.whole_values.size() && f.whole_values[i].first == axis; ++i) values.push_back(f.whole_values[i].second);
    const std::string& name = plan.axes[axis].name;
    if (values.size() <= kListed) {
      for (int64_t v : values) parts.push_back(absl::StrCat(name, "=", v));
    } else {
      parts.push_back(absl::StrCat(name, "=", values[0], ", ", values[1], ", ", values[2], ", ..., ", values.back(),
                                   " (", Thousands(values.size()), " values)"));
    }
  }
  return absl::StrJoin(parts, ", ");
}

// The device terms the ranking used, each with the model that gave it or "assumed".
std::string TermsLine(const PlanResult& plan) {
  std::vector<std::string> parts;
  for (const ModelTerm& t : plan.terms) {
    const std::string from = t.assumed && !t.model.empty() ? absl::StrCat("assumed in ", t.model, "'s file")
                             : t.assumed                   ? "assumed"
                             : t.inherited                 ? absl::StrCat("inherited from ", t.model)
                                                           : t.model;
    parts.push_back(absl::StrCat(t.term, " ", FormatTermValue(t), " (", from, ")"));
  }
  return absl::StrJoin(parts, "; ");
}

std::string TermsJson(const PlanResult& plan) {
  std::vector<std::string> terms;
  for (const ModelTerm& t : plan.terms) {
    terms.push_back(absl::StrCat("{\"term\": ", JsonString(t.term), ", \"value\": ", JsonNumber(t.value),
                                 ", \"unit\": ", JsonString(t.unit), ", \"use\": ", JsonString(t.use),
                                 t.model.empty() ? "" : absl::StrCat(", \"model\": ", JsonString(t.model)),
                                 t.file.empty() ? "" : absl::StrCat(", \"file\": ", JsonString(t.file)),
                                 ", \"inherited\": ", t.inherited ? "true" : "false",
                                 ", \"assumed\": ", t.assumed ? "true" : "false",
                                 t.assumed ? absl::StrCat(", \"assumption\": ", JsonString(t.assumption)) : "", "}"));
  }
  return absl::StrCat("[", absl::StrJoin(terms, ", "), "]");
}

// The parameters the sweep leaves fixed, in the graph's order, with their values.
std::vector<std::pair<std::string, int64_t>> FixedParameters(const PlanResult& plan, const CompiledGraph& graph) {
  std::vector<bool> swept(plan.base_values.size(), false);
  for (const ParamAxis& a : plan.axes) swept[a.slot] = true;
  std::vector<std::pair<std::string, int64_t>> fixed;
  for (const Parameter& p : graph.graph.parameters()) {
    const int slot = graph.symbols.Find(p.name());
    if (slot >= 0 && !swept[slot]) fixed.emplace_back(p.name(), plan.base_values[slot]);
  }
  return fixed;
}

// A ranked configuration with the plan it comes from and its family's name (several families).
struct TopRow {
  const PlanResult* plan = nullptr;
  const RankedConfig* config = nullptr;
  std::string family;
};

// The rows of one plan's list: its ranking (`top`) or its shortlist.
std::vector<TopRow> RowsOf(const PlanResult& plan, std::vector<RankedConfig> PlanResult::*list = &PlanResult::top) {
  std::vector<TopRow> rows;
  for (const RankedConfig& c : plan.*list) rows.push_back(TopRow{&plan, &c, ""});
  return rows;
}

// The rows of several families' ranking (`plan.top`, indices into each plan's top) or shortlist
// (`plan.shortlist`, indices into each plan's shortlist).
std::vector<TopRow> RowsOf(const FamiliesPlan& plan, std::vector<FamilyRank> FamiliesPlan::*ranks = &FamiliesPlan::top) {
  std::vector<RankedConfig> PlanResult::*list =
      ranks == &FamiliesPlan::top ? &PlanResult::top : &PlanResult::shortlist;
  std::vector<TopRow> rows;
  for (const FamilyRank& r : plan.*ranks) {
    rows.push_back(TopRow{&plan.plans[r.family], &(plan.plans[r.family].*list)[r.index], plan.summaries[r.family].name});
  }
  return rows;
}

std::vector<TopRow> ShortlistOf(const PlanResult& plan) { return RowsOf(plan, &PlanResult::shortlist); }
std::vector<TopRow> ShortlistOf(const FamiliesPlan& plan) { return RowsOf(plan, &FamiliesPlan::shortlist); }

// The row's place in the ranking (1-based); 0 where the ranking does not list it.
int RankIn(const std::vector<TopRow>& ranking, const TopRow& row) {
  for (size_t r = 0; r < ranking.size(); ++r) {
    if (ranking[r].plan == row.plan && ranking[r].config->index == row.config->index) return static_cast<int>(r + 1);
  }
  return 0;
}

// The ranking's parameter columns: every plan's axes, in the order they first appear.
std::vector<std::string> AxisColumns(const std::vector<const PlanResult*>& plans) {
  std::vector<std::string> names;
  for (const PlanResult* plan : plans) {
    for (const ParamAxis& a : plan->axes) {
      if (std::find(names.begin(), names.end(), a.name) == names.end()) names.push_back(a.name);
    }
  }
  return names;
}

// The row's value of the swept parameter `name`; none where its family does not sweep it.
std::optional<int64_t> AxisValue(const TopRow& row, const std::string& name) {
  for (size_t a = 0; a < row.plan->axes.size(); ++a) {
    if (row.plan->axes[a].name == name) return row.config->values[a];
  }
  return std::nullopt;
}

// The score's unit: TFLOP/s where every row's graph gives flops, GB/s where none does.
std::string ScoreUnit(const std::vector<TopRow>& rows) {
  const bool all = std::all_of(rows.begin(), rows.end(), [](const TopRow& r) { return r.plan->flops_known; });
  const bool none = std::none_of(rows.begin(), rows.end(), [](const TopRow& r) { return r.plan->flops_known; });
  return all ? "TFLOP/s" : none ? "GB/s" : "score";
}

size_t FamilyWidth(const std::vector<TopRow>& rows) {
  size_t width = 6;  // "family"
  for (const TopRow& r : rows) width = std::max(width, r.family.size());
  return width;
}

// The sweep of one plan: what was swept and fixed, the model and its terms, what fits and what
// pruned the rest.
void RenderTextSweep(const PlanResult& plan, const CompiledGraph& graph, const DeviceModel& device, std::ostream& out) {
  out << absl::StrFormat("plan     %s on %s (%s)\n", graph.graph.name(), device.name(), device.display_name());
  std::vector<std::string> fixed;
  for (const auto& [name, value] : FixedParameters(plan, graph)) fixed.push_back(absl::StrCat(name, "=", value));
  std::vector<std::string> axes;
  for (const ParamAxis& a : plan.axes) {
    std::vector<int64_t> v = a.values;
    axes.push_back(v.size() <= 6 ? absl::StrCat(a.name, "{", absl::StrJoin(v, ","), "}")
                                 : absl::StrCat(a.name, "{", v.front(), "..", v.back(), ": ", v.size(), "}"));
  }
  out << "sweep    " << (axes.empty() ? "(nothing: every parameter is fixed)" : absl::StrJoin(axes, " ")) << "\n";
  if (!fixed.empty()) out << "fixed    " << absl::StrJoin(fixed, " ") << "\n";
  if (plan.model.peak_flops() > 0) {
    out << absl::StrFormat("model    %s peak %.1f TFLOP/s, %.0f GB/s (ridge %.0f flop/B), %s\n",
                           plan.compute_dtype, plan.model.peak_flops() / 1e12, plan.model.bandwidth() / 1e9,
                           plan.model.ridge(), Cores(plan.model.num_cores()));
  } else {
    out << absl::StrFormat("model    %.0f GB/s, %s\n", plan.model.bandwidth() / 1e9, Cores(plan.model.num_cores()));
  }
  if (!plan.terms.empty()) out << "terms    " << TermsLine(plan) << "\n";
  for (const std::string& warning : plan.warnings) out << "warning  " << warning << "\n";
  for (const std::string& note : plan.notes) out << "note     " << note << "\n";
  if (plan.partial) {
    out << absl::StrFormat("partial  interrupted after %s of %s configurations: the counts and the ranking cover those\n",
                           Thousands(plan.evaluated), Thousands(plan.space_size));
  }
  out << absl::StrFormat("fits     %s of %s configurations (%.1f%%)\n", Thousands(plan.fitting),
                         Thousands(plan.space_size),
                         plan.space_size ? 100.0 * plan.fitting / plan.space_size : 0.0);
  if (plan.at_risk > 0) {
    out << absl::StrFormat("at risk  %s pruned: they fit only if an estimated allocation stays below its high bound\n",
                           Thousands(plan.at_risk));
  }
  if (!plan.to_fit.empty()) {
    out << "\nto fit (what `simulate` suggests at the fixed values and defaults):\n";
    for (const std::string& fix : plan.to_fit) out << "  - " << fix << "\n";
  }
  if (plan.pruned.empty()) return;
  out << "\npruned (first limit each configuration breaks; example = first in sweep order)\n";
  for (const PrunedFamily& f : plan.pruned) {
    out << absl::StrFormat("  %-20s %12s (%5.1f%%)  e.g. %s: %s\n", LimitName(f.limit), Thousands(f.count),
                           100.0 * f.count / plan.space_size, Assignments(plan, f.example), FamilyDetail(f));
    if (f.count == plan.space_size) {
      out << "  " << std::string(20, ' ') << " every configuration in the space\n";
    } else if (!f.whole_values.empty()) {
      out << "  " << std::string(20, ' ') << " every configuration with " << WholeValues(plan, f) << "\n";
    }
  }
}

// A table's leading header: `label` in 6 columns, the family where there are several, each axis.
std::string LeadingHeader(const char* label, const std::vector<std::string>& columns, bool families, int family_width) {
  std::string header = absl::StrFormat("%6s", label);
  if (families) header += absl::StrFormat(" %-*s", family_width, "family");
  for (const std::string& name : columns) header += absl::StrFormat(" %*s", std::max<int>(name.size(), 4), name);
  return header;
}

// A row's leading cells: its number, its family, its axis values ("-" where its family has none).
std::string LeadingCells(const TopRow& row, size_t number, const std::vector<std::string>& columns, bool families,
                         int family_width) {
  std::string cells = absl::StrFormat("  %4d", number);
  if (families) cells += absl::StrFormat(" %-*s", family_width, row.family);
  for (const std::string& name : columns) {
    const std::optional<int64_t> v = AxisValue(row, name);
    const int width = std::max<int>(name.size(), 4);
    cells += v ? absl::StrFormat(" %*d", width, *v) : absl::StrFormat(" %*s", width, "-");
  }
  return cells;
}

// The ranking: one line per configuration (with its family where there are several), then why.
void RenderTextTop(const std::vector<TopRow>& rows, const std::vector<std::string>& columns, bool families,
                   const DeviceModel& device, std::ostream& out) {
  if (rows.empty()) return;
  const int family_width = static_cast<int>(FamilyWidth(rows));
  out << absl::StrFormat("\ntop %d (estimated; fastest first)\n", rows.size());
  out << LeadingHeader("rank", columns, families, family_width)
      << absl::StrFormat(" %10s %8s  %s\n", "time(us)", ScoreUnit(rows), "on-chip");
  for (size_t r = 0; r < rows.size(); ++r) {
    const RankedConfig& c = *rows[r].config;
    std::string row = LeadingCells(rows[r], r + 1, columns, families, family_width);
    const std::string spaces = SpaceSummary(*rows[r].plan, device, c.fit);
    row += c.estimated ? absl::StrFormat(" %10s %8.1f  %s\n", FormatMicroseconds(c.perf.time_s), c.perf.score, spaces)
                       : absl::StrFormat(" %10s %8s  %s\n", "-", "-", spaces);
    out << row;
    out << "        why: " << Why(*rows[r].plan, c) << "\n";
  }
}

// The autotuning shortlist where it is not the ranking's order: what to time, in order, each with
// its place in the ranking and, for a hedge, why it is there.
void RenderTextShortlist(const std::vector<TopRow>& shortlist, const std::vector<TopRow>& ranking,
                         const std::vector<std::string>& columns, bool families, std::ostream& out) {
  bool reordered = false;
  for (size_t r = 0; r < shortlist.size(); ++r) reordered = reordered || RankIn(ranking, shortlist[r]) != int(r + 1);
  if (!reordered) return;
  const int family_width = static_cast<int>(FamilyWidth(shortlist));
  const int64_t permille = shortlist.front().plan->ranking_error_permille;
  out << "\nautotune shortlist: the pick and, where co-resident blocks share sync waits, the ranking's second; "
         "then, with each block's sync waits its own, that reading's pick and the fastest configuration of each other "
         "block shape whose estimate is within the model's ranking error ("
      << (families ? std::string("each family's own") : absl::StrFormat("%.1f%%", permille / 10.0))
      << ") of it, each followed by the fastest at more blocks/SM if their sync waits were filled, where that would "
         "make it faster; then the ranking's order; time them in this order\n";
  out << LeadingHeader("try", columns, families, family_width) << absl::StrFormat(" %10s %6s\n", "time(us)", "rank");
  for (size_t r = 0; r < shortlist.size(); ++r) {
    const RankedConfig& c = *shortlist[r].config;
    std::string row = LeadingCells(shortlist[r], r + 1, columns, families, family_width);
    const int rank = RankIn(ranking, shortlist[r]);
    row += absl::StrFormat(" %10s %6s", c.estimated ? FormatMicroseconds(c.perf.time_s) : std::string("-"),
                           rank > 0 ? absl::StrCat(rank) : absl::StrCat(">", ranking.size()));
    if (c.hedge == Hedge::kBlockShape) row += "  the fastest of its block shape";
    if (c.hedge == Hedge::kMoreBlocksPerCore) {
      row += absl::StrCat("  ", c.fit.blocks_per_core(), " blocks/SM: faster if they fill each other's sync waits");
    }
    if (c.hedge == Hedge::kOwnSyncWaits) {
      // The time column carries a calibration's residual; so does this estimate.
      const double own_wait_s = c.perf.own_wait_time_s * (c.residual > 0 ? c.residual : 1.0);
      row += absl::StrFormat("  the pick if co-resident blocks fill none of each other's sync waits (%s us so)",
                             FormatMicroseconds(own_wait_s));
    }
    out << row << "\n";
  }
}

// The JSON name of why a configuration is in the shortlist out of the ranking's order.
std::string HedgeReason(Hedge hedge) {
  switch (hedge) {
    case Hedge::kBlockShape: return "block_shape";
    case Hedge::kMoreBlocksPerCore: return "more_blocks_per_core";
    case Hedge::kOwnSyncWaits: return "own_sync_waits";
    case Hedge::kNone: break;
  }
  return "none";
}

// A JSON array of `entries` one per line, its brackets at `indent`.
std::string JsonLines(const std::vector<std::string>& entries, const std::string& indent) {
  if (entries.empty()) return "[]";
  std::string out = "[";
  for (size_t i = 0; i < entries.size(); ++i) absl::StrAppend(&out, i ? ",\n" : "\n", indent, "  ", entries[i]);
  absl::StrAppend(&out, "\n", indent, "]");
  return out;
}

std::string JsonStrings(const std::vector<std::string>& strings) {
  std::vector<std::string> quoted;
  for (const std::string& s : strings) quoted.push_back(JsonString(s));
  return absl::StrCat("[", absl::StrJoin(quoted, ", "), "]");
}

// The figures with every estimate at its high bound: what the verdict held against the limits,
// and for TPU VMEM the smallest vmem_limit_bytes that keeps the configuration FITS.
std::string HighBoundJson(const RankedConfig& c, const DeviceModel& device) {
  std::string out;
  std::vector<std::string> high;
  for (int s = 0; s < device.memory_spaces_size() && s < kMaxSpaces; ++s) {
    if (c.fit.spaces_high[s].peak < 0) continue;
    high.push_back(absl::StrCat(JsonString(device.memory_spaces(s).name()), ": ", c.fit.spaces_high[s].peak));
    if (device.memory_spaces(s).kind() == VMEM) {
      absl::StrAppend(&out, ", \"vmem_limit_bytes_needed\": ", c.fit.spaces_high[s].first);
    }
  }
  absl::StrAppend(&out, ", \"peak_bytes_high\": {", absl::StrJoin(high, ", "), "}");
  return out;
}

// One ranked configuration as a JSON object (with "family" where there are several).
std::string ConfigJson(const TopRow& row, int rank, const DeviceModel& device) {
  const PlanResult& plan = *row.plan;
  const RankedConfig& c = *row.config;
  const PerfEstimate& e = c.perf;
  std::vector<std::string> params;
  for (size_t a = 0; a < plan.axes.size(); ++a) params.push_back(absl::StrCat(JsonString(plan.axes[a].name), ": ", c.values[a]));
  std::vector<std::string> spaces;
  for (int s = 0; s < device.memory_spaces_size() && s < kMaxSpaces; ++s) {
    if (c.fit.spaces[s].peak >= 0) spaces.push_back(absl::StrCat(JsonString(device.memory_spaces(s).name()), ": ", c.fit.spaces[s].peak));
  }
  // Without an estimate every figure of the model is unknown, not the empty estimate's zeros.
  auto model = [&c](const std::string& value) { return c.estimated ? value : std::string("null"); };
  std::string out = absl::StrCat("{\"rank\": ", rank);
  if (!row.family.empty()) absl::StrAppend(&out, ", \"family\": ", JsonString(row.family));
  absl::StrAppend(&out, ", \"params\": {", absl::StrJoin(params, ", "), "}",
                  ", \"estimated_us\": ", model(JsonNumber(e.time_s * 1e6)),
                  ", \"score\": ", model(JsonNumber(e.score)),
                  ", \"score_unit\": ", JsonString(plan.flops_known ? "TFLOP/s" : "GB/s"),
                  ", \"bound\": ", model(JsonString(e.compute_bound ? "compute" : "memory")),
                  ", \"intensity\": ", model(JsonNumber(e.intensity)));
  absl::StrAppend(&out, ", \"grid_blocks\": ", model(absl::StrCat(e.grid_blocks)),
                  ", \"waves\": ", model(absl::StrCat(e.waves)),
                  ", \"wave_efficiency\": ", model(JsonNumber(e.wave_efficiency)),
                  ", \"loads_in_flight\": ", model(absl::StrCat(e.loads_in_flight)),
                  ", \"residual\": ", c.residual > 0 ? JsonNumber(c.residual) : std::string("null"));
  if (c.estimated) {
    // The model's terms for the busiest core, so a tool can see what the ranking weighed.
    absl::StrAppend(&out, ", \"terms_us\": {\"math\": ", JsonNumber(e.compute_s * 1e6), ", \"banks\": ",
                    JsonNumber(e.smem_s * 1e6), ", \"unfilled_waits\": ", JsonNumber(e.wait_s * 1e6), ", \"sync\": ",
                    JsonNumber(e.sync_s * 1e6), ", \"chain\": ", JsonNumber(e.chain_s * 1e6), ", \"alternation\": ",
                    JsonNumber(e.alternation_s * 1e6), ", \"on_chip\": ", JsonNumber(e.core_s * 1e6));
    absl::StrAppend(&out, ", \"dram\": ", JsonNumber(e.dram_s * 1e6), ", \"l2\": ", JsonNumber(e.l2_s * 1e6),
                    ", \"latency\": ", JsonNumber(e.latency_s * 1e6), ", \"exposed\": ", JsonNumber(e.exposed_s * 1e6),
                    ", \"own_sync_waits_total\": ", JsonNumber(e.own_wait_time_s * 1e6), "}");
    if (e.l1_window_bytes_per_core > 0) {
      absl::StrAppend(&out, ", \"l1_window\": {\"bytes_per_core\": ", JsonNumber(e.l1_window_bytes_per_core),
                      ", \"l1_bytes_per_core\": ", c.fit.occupancy.l1_bytes_per_core,
                      ", \"overflows\": ", e.l1_overflow ? "true" : "false", "}");
    }
    if (e.l1_busy_share > 0) {
      absl::StrAppend(&out, ", \"synchronous_steps\": {\"l1_busy_share\": ", JsonNumber(e.l1_busy_share),
                      ", \"step_away_us\": ", JsonNumber(e.step_away_s * 1e6), "}");
    }
  }
  absl::StrAppend(&out, ", \"peak_bytes\": {", absl::StrJoin(spaces, ", "), "}");
  if (c.fit.has_estimates) absl::StrAppend(&out, HighBoundJson(c, device));
  if (c.fit.threads > 0) absl::StrAppend(&out, ", \"threads\": ", c.fit.threads);
  if (c.fit.register_demand >= 0) absl::StrAppend(&out, ", \"registers_per_thread\": ", c.fit.register_demand);
  // Where a compiler's figure replaced the graph's estimate (simulate plan --registers).
  if (c.fit.registers_compiled) absl::StrAppend(&out, ", \"registers_from\": \"compiler\"");
  if (c.fit.has_occupancy) {
    absl::StrAppend(&out, ", \"blocks_per_core\": ", c.fit.blocks_per_core(), ", \"occupancy_limit\": ",
                    JsonString(OccupancyFactorName(c.fit.occupancy.first_factor())));
  }
  if (c.hedge != Hedge::kNone) {
    absl::StrAppend(&out, ", \"hedge\": true, \"hedge_reason\": ",
                    JsonString(HedgeReason(c.hedge)));
  }
  absl::StrAppend(&out, ", \"why\": ", JsonString(Why(plan, c)), "}");
  return out;
}

std::string ConfigsJson(const std::vector<TopRow>& rows, const DeviceModel& device, const std::string& indent) {
  std::vector<std::string> entries;
  for (size_t r = 0; r < rows.size(); ++r) entries.push_back(ConfigJson(rows[r], static_cast<int>(r + 1), device));
  return JsonLines(entries, indent);
}

std::string PrunedJson(const PlanResult& plan, const std::string& indent) {
  std::vector<std::string> entries;
  for (const PrunedFamily& f : plan.pruned) {
    std::vector<std::string> example;
    for (size_t a = 0; a < plan.axes.size(); ++a) example.push_back(absl::StrCat(JsonString(plan.axes[a].name), ": ", f.example[a]));
    std::vector<std::string> whole;
    for (const auto& [axis, value] : f.whole_values) {
      whole.push_back(absl::StrCat("{", JsonString(plan.axes[axis].name), ": ", value, "}"));
    }
    entries.push_back(absl::StrCat("{\"limit\": ", JsonString(LimitName(f.limit)), ", \"count\": ", f.count,
                                   ", \"example\": {", absl::StrJoin(example, ", "), "}, \"detail\": ",
                                   JsonString(FamilyDetail(f)), ", \"required\": ", f.required,
                                   ", \"available\": ", f.available, ", \"whole_values\": [",
                                   absl::StrJoin(whole, ", "), "]}"));
  }
  return JsonLines(entries, indent);
}

// A plan's fields before its configurations: the space, what fits, what is fixed and swept.
void RenderJsonSpace(const PlanResult& plan, const CompiledGraph& graph, const std::string& indent, std::ostream& out) {
  out << indent << "\"compute_dtype\": " << JsonString(plan.compute_dtype) << ",\n";
  out << indent << "\"space_size\": " << plan.space_size << ",\n";
  if (plan.partial) out << indent << "\"partial\": true,\n" << indent << "\"evaluated\": " << plan.evaluated << ",\n";
  out << indent << "\"fitting\": " << plan.fitting << ",\n";
  out << indent << "\"at_risk\": " << plan.at_risk << ",\n";
  out << indent << "\"ranking_error\": "
      << (plan.ranking_error_permille >= 0 ? JsonNumber(plan.ranking_error_permille / 1000.0) : std::string("null"))
      << ",\n";
  std::vector<std::string> fixed;
  for (const auto& [name, value] : FixedParameters(plan, graph)) {
    fixed.push_back(absl::StrCat(JsonString(name), ": ", value));
  }
  out << indent << "\"fixed\": {" << absl::StrJoin(fixed, ", ") << "},\n";
  std::vector<std::string> axes;
  for (const ParamAxis& a : plan.axes) {
    axes.push_back(absl::StrCat("{\"name\": ", JsonString(a.name), ", \"values\": [", absl::StrJoin(a.values, ", "), "]}"));
  }
  out << indent << "\"axes\": [" << absl::StrJoin(axes, ", ") << "],\n";
}

// A plan's fields after its configurations: what pruned the rest, notes, warnings, the terms;
// the last line ends without a comma.
void RenderJsonFindings(const PlanResult& plan, const std::string& indent, std::ostream& out) {
  out << indent << "\"pruned\": " << PrunedJson(plan, indent) << ",\n";
  out << indent << "\"notes\": " << JsonStrings(plan.notes) << ",\n";
  out << indent << "\"warnings\": " << JsonStrings(plan.warnings) << ",\n";
  if (!plan.to_fit.empty()) out << indent << "\"to_fit\": " << JsonStrings(plan.to_fit) << ",\n";
  out << indent << "\"model_terms\": " << TermsJson(plan) << "\n";
}

void RenderJson(const PlanResult& plan, const CompiledGraph& graph, const DeviceModel& device, std::ostream& out) {
  out << "{\n";
  out << "  \"kernel\": " << JsonString(graph.graph.name()) << ",\n";
  out << "  \"device\": " << JsonString(device.name()) << ",\n";
  RenderJsonSpace(plan, graph, "  ", out);
  out << "  \"configs\": " << ConfigsJson(RowsOf(plan), device, "  ") << ",\n";
  out << "  \"shortlist\": " << ConfigsJson(ShortlistOf(plan), device, "  ") << ",\n";
  RenderJsonFindings(plan, "  ", out);
  out << "}\n";
}

void RenderCsv(const std::vector<TopRow>& rows, const std::vector<std::string>& columns, bool families,
               const DeviceModel& device, std::ostream& out) {
  std::vector<std::string> header = {"rank"};
  if (families) header.push_back("family");
  header.insert(header.end(), columns.begin(), columns.end());
  for (const char* h : {"estimated_us", "score", "bound", "blocks_per_core", "occupancy_limit", "waves",
                        "wave_efficiency", "loads_in_flight", "threads", "registers_per_thread"}) {
    header.push_back(h);
  }
  for (int s = 0; s < device.memory_spaces_size() && s < kMaxSpaces; ++s) {
    header.push_back(absl::StrCat(device.memory_spaces(s).name(), "_bytes"));
  }
  out << absl::StrJoin(header, ",") << "\n";
  for (size_t r = 0; r < rows.size(); ++r) {
    const RankedConfig& c = *rows[r].config;
    std::vector<std::string> row = {absl::StrCat(r + 1)};
    if (families) row.push_back(rows[r].family);
    for (const std::string& name : columns) {
      const std::optional<int64_t> v = AxisValue(rows[r], name);
      row.push_back(v ? absl::StrCat(*v) : "");
    }
    // Without an estimate the model's columns are empty, not the empty estimate's zeros.
    auto model = [&c](const std::string& value) { return c.estimated ? value : std::string(); };
    row.push_back(model(absl::StrFormat("%.3f", c.perf.time_s * 1e6)));
    row.push_back(model(absl::StrFormat("%.3f", c.perf.score)));
    row.push_back(model(c.perf.compute_bound ? "compute" : "memory"));
    row.push_back(c.fit.has_occupancy ? absl::StrCat(c.fit.blocks_per_core()) : "");
    row.push_back(c.fit.has_occupancy ? OccupancyFactorName(c.fit.occupancy.first_factor()) : "");
    row.push_back(model(absl::StrCat(c.perf.waves)));
    row.push_back(model(absl::StrFormat("%.4f", c.perf.wave_efficiency)));
    row.push_back(model(absl::StrCat(c.perf.loads_in_flight)));
    row.push_back(c.fit.threads > 0 ? absl::StrCat(c.fit.threads) : "");
    row.push_back(c.fit.register_demand >= 0 ? absl::StrCat(c.fit.register_demand) : "");
    for (int s = 0; s < device.memory_spaces_size() && s < kMaxSpaces; ++s) {
      row.push_back(c.fit.spaces[s].peak >= 0 ? absl::StrCat(c.fit.spaces[s].peak) : "");
    }
    out << absl::StrJoin(row, ",") << "\n";
  }
}

std::vector<const PlanResult*> PlansOf(const FamiliesPlan& plan) {
  std::vector<const PlanResult*> plans;
  for (const PlanResult& p : plan.plans) plans.push_back(&p);
  return plans;
}

// A grid on the device's cores, where it leaves cores idle.
std::string GridPhrase(const PerfEstimate& e, int num_cores) {
  if (e.grid_blocks < num_cores) {
    return absl::StrFormat("%d blocks (%d of %d SMs idle)", e.grid_blocks, num_cores - e.grid_blocks, num_cores);
  }
  return absl::StrFormat("%d blocks (%d wave%s at %.0f%%)", e.grid_blocks, e.waves, e.waves == 1 ? "" : "s",
                         100 * e.wave_efficiency);
}

// One term of the two best estimates, winner's first, with what sets it.
std::string TermPhrase(FamilyTerm term, const PerfEstimate& w, const PerfEstimate& r) {
  std::string out = absl::StrFormat("%s %.1f vs %.1f us", FamilyTermName(term), FamilyTermSeconds(w, term) * 1e6,
                                    FamilyTermSeconds(r, term) * 1e6);
  if (term == FamilyTerm::kMemory) {
    absl::StrAppendFormat(&out, " (DRAM %.1f vs %.1f, L2 %.1f vs %.1f us)", w.dram_s * 1e6, r.dram_s * 1e6,
                          w.l2_s * 1e6, r.l2_s * 1e6);
  } else if (term == FamilyTerm::kOnChip) {
    absl::StrAppendFormat(&out, " (math %.1f vs %.1f, banks %.1f vs %.1f us)", w.compute_s * 1e6, r.compute_s * 1e6,
                          w.smem_s * 1e6, r.smem_s * 1e6);
  } else {
    absl::StrAppendFormat(&out, " (%d vs %d loads in flight)", w.loads_in_flight, r.loads_in_flight);
  }
  return out;
}

// The families by their best estimate, fastest first: "name 27.2 us (best)", "(1.24x)".
std::string FamiliesLine(const FamiliesPlan& plan) {
  std::vector<std::string> parts;
  for (int f : plan.order) {
    const FamilySummary& s = plan.summaries[f];
    if (s.best < 0) {
      parts.push_back(absl::StrCat(s.name, " ", plan.plans[f].fitting > 0 ? "(no estimate)" : "(nothing fits)"));
    } else {
      const std::string ratio = f == plan.choice.winner ? std::string("best") : absl::StrFormat("%.2fx", s.ratio);
      parts.push_back(absl::StrFormat("%s %.1f us (%s)", s.name, s.best_time_s * 1e6, ratio));
    }
  }
  return absl::StrJoin(parts, "; ");
}

void RenderFamiliesText(const FamiliesPlan& plan, absl::Span<const CompiledGraph* const> graphs,
                        const DeviceModel& device, std::ostream& out) {
  for (size_t f = 0; f < plan.plans.size(); ++f) {
    if (f > 0) out << "\n";
    RenderTextSweep(plan.plans[f], *graphs[f], device, out);
  }
  out << "\nfamilies " << FamiliesLine(plan) << "\n";
  out << "why      " << FamilyChoiceLine(plan, device.limits().num_cores()) << "\n";
  RenderTextTop(RowsOf(plan), AxisColumns(PlansOf(plan)), /*families=*/true, device, out);
  RenderTextShortlist(ShortlistOf(plan), RowsOf(plan), AxisColumns(PlansOf(plan)), /*families=*/true, out);
}

// Each family's summary and its plan's fields, fastest family first.
std::string FamiliesJson(const FamiliesPlan& plan, absl::Span<const CompiledGraph* const> graphs) {
  std::vector<std::string> entries;
  for (int f : plan.order) {
    const FamilySummary& s = plan.summaries[f];
    std::ostringstream fields;
    fields << "{\n      \"family\": " << JsonString(s.name) << ",\n";
    fields << "      \"best_us\": " << (s.best >= 0 ? JsonNumber(s.best_time_s * 1e6) : "null") << ",\n";
    fields << "      \"ratio_to_best\": " << (s.best >= 0 ? JsonNumber(s.ratio) : "null") << ",\n";
    RenderJsonSpace(plan.plans[f], *graphs[f], "      ", fields);
    RenderJsonFindings(plan.plans[f], "      ", fields);
    fields << "    }";
    entries.push_back(fields.str());
  }
  return JsonLines(entries, "  ");
}

std::string ChoiceJson(const FamiliesPlan& plan, int num_cores) {
  const FamilyChoice& c = plan.choice;
  auto name = [&](int f) { return f >= 0 ? JsonString(plan.summaries[f].name) : std::string("null"); };
  std::string out = absl::StrCat("{\"winner\": ", name(c.winner), ", \"runner_up\": ", name(c.runner_up));
  if (c.runner_up >= 0) {
    absl::StrAppend(&out, ", \"decides\": ", JsonString(FamilyTermName(c.decides)),
                    ", \"winner_bound\": ", JsonString(FamilyTermName(c.winner_bound)),
                    ", \"runner_up_bound\": ", JsonString(FamilyTermName(c.runner_up_bound)),
                    ", \"bound_gain_us\": ", JsonNumber(c.bound_gain_s * 1e6),
                    ", \"exposed_gain_us\": ", JsonNumber(c.exposed_gain_s * 1e6));
  }
  absl::StrAppend(&out, ", \"why\": ", JsonString(FamilyChoiceLine(plan, num_cores)), "}");
  return out;
}

void RenderFamiliesJson(const FamiliesPlan& plan, absl::Span<const CompiledGraph* const> graphs,
                        const DeviceModel& device, std::ostream& out) {
  std::vector<std::string> names;
  for (const FamilySummary& s : plan.summaries) names.push_back(s.name);
  out << "{\n";
  out << "  \"kernels\": " << JsonStrings(names) << ",\n";
  out << "  \"device\": " << JsonString(device.name()) << ",\n";
  out << "  \"families\": " << FamiliesJson(plan, graphs) << ",\n";
  out << "  \"choice\": " << ChoiceJson(plan, device.limits().num_cores()) << ",\n";
  out << "  \"configs\": " << ConfigsJson(RowsOf(plan), device, "  ") << ",\n";
  out << "  \"shortlist\": " << ConfigsJson(ShortlistOf(plan), device, "  ") << "\n";
  out << "}\n";
}

}  // namespace

void RenderPlan(const PlanResult& plan, const CompiledGraph& graph, const DeviceModel& device,
                const std::string& format, std::ostream& out) {
  if (format == "json") {
    RenderJson(plan, graph, device, out);
  } else if (format == "csv") {
    RenderCsv(RowsOf(plan), AxisColumns({&plan}), /*families=*/false, device, out);
  } else {
    RenderTextSweep(plan, graph, device, out);
    RenderTextTop(RowsOf(plan), AxisColumns({&plan}), /*families=*/false, device, out);
    RenderTextShortlist(ShortlistOf(plan), RowsOf(plan), AxisColumns({&plan}), /*families=*/false, out);
  }
}

void RenderFamilies(const FamiliesPlan& plan, absl::Span<const CompiledGraph* const> graphs,
                    const DeviceModel& device, const std::string& format, std::ostream& out) {
  if (format == "json") {
    RenderFamiliesJson(plan, graphs, device, out);
  } else if (format == "csv") {
    RenderCsv(RowsOf(plan), AxisColumns(PlansOf(plan)), /*families=*/true, device, out);
  } else {
    RenderFamiliesText(plan, graphs, device, out);
  }
}

std::string FamilyChoiceLine(const FamiliesPlan& plan, int num_cores) {
  const FamilyChoice& c = plan.choice;
  if (c.winner < 0) return "no family has a configuration that fits with an estimate";
  const std::string& winner = plan.summaries[c.winner].name;
  if (c.runner_up < 0) return absl::StrCat(winner, ": the only family with a configuration that fits with an estimate");
  const std::string& runner_up = plan.summaries[c.runner_up].name;
  const PerfEstimate& w = plan.plans[c.winner].top.front().perf;
  const PerfEstimate& r = plan.plans[c.runner_up].top.front().perf;
  // The longest terms: one term of both bests, or each best's own where they differ.
  const std::string bound =
      c.winner_bound == c.runner_up_bound
          ? TermPhrase(c.runner_up_bound, w, r)
          : absl::StrFormat("%s %.1f vs %s %.1f us", FamilyTermName(c.winner_bound),
                            FamilyTermSeconds(w, c.winner_bound) * 1e6, FamilyTermName(c.runner_up_bound),
                            FamilyTermSeconds(r, c.runner_up_bound) * 1e6);
  const std::string exposed = TermPhrase(FamilyTerm::kExposed, w, r);
  // The part of the difference that decides first, then the other, which may go the other way.
  const bool by_exposed = c.decides == FamilyTerm::kExposed;
  const double other_gain = by_exposed ? c.bound_gain_s : c.exposed_gain_s;
  return absl::StrFormat("%s's best is %.2fx faster than %s's (%.1f vs %.1f us): decided by %s; %s %s; grids %s vs %s",
                         winner, plan.summaries[c.runner_up].ratio, runner_up, w.time_s * 1e6, r.time_s * 1e6,
                         by_exposed ? exposed : bound, other_gain >= 0 ? "also" : "despite", by_exposed ? bound : exposed,
                         GridPhrase(w, num_cores), GridPhrase(r, num_cores));
}

}  // namespace scratchsim
