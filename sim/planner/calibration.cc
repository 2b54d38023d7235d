#include "sim/planner/calibration.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "sim/device_inherit.h"
#include "sim/engine.h"
#include "sim/planner/model_terms.h"
#include "sim/planner/perf_inputs.h"
#include "sim/planner/perf_model.h"
#include "sim/planner/residuals.h"
#include "sim/status_macros.h"

namespace scratchsim {
namespace {

// A sample the model can estimate: its inputs do not depend on the performance terms, so they
// are evaluated once.
struct Prepared {
  PerfInputs in;
  std::string dtype;
  std::vector<std::string> key;  // ResidualKey of its configuration
  int row = 0;
  double measured_s = 0;
  bool near_best = false;
};

struct Problem {
  std::vector<Prepared> samples;
  int rows = 0;
  std::vector<std::string> dtypes;
};

// Estimates of every sample with `device`'s terms; false when a dtype has no peak.
bool EstimateAll(const Problem& p, const DeviceModel& device, std::vector<PerfEstimate>* out) {
  std::map<std::string, PerfModel> models;
  for (const std::string& dtype : p.dtypes) {
    auto model = PerfModel::Create(device, dtype, true);
    if (!model.ok()) return false;
    models.emplace(dtype, *model);
  }
  out->resize(p.samples.size());
  for (size_t i = 0; i < p.samples.size(); ++i) (*out)[i] = models.at(p.samples[i].dtype).Estimate(p.samples[i].in);
  return true;
}

CalibrationQuality Quality(const Problem& p, const std::vector<PerfEstimate>& estimates, double temperature) {
  CalibrationQuality q;
  std::vector<double> sum(p.rows, 0), count(p.rows, 0);
  std::vector<std::vector<int>> by_row(p.rows);
  for (size_t i = 0; i < p.samples.size(); ++i) {
    const Prepared& s = p.samples[i];
    by_row[s.row].push_back(static_cast<int>(i));
    if (!s.near_best) continue;
    const double e = std::log(estimates[i].time_s / s.measured_s);
    sum[s.row] += e * e;
    count[s.row] += 1;
  }
  double total = 0;
  int rows = 0;
  for (int r = 0; r < p.rows; ++r) {
    if (count[r] > 0) {
      total += sum[r] / count[r];
      ++rows;
    }
    std::vector<int>& list = by_row[r];
    if (list.empty()) continue;
    ++q.rows;
    // The planner's order: estimated time, then more bytes in flight (planner.cc).
    std::stable_sort(list.begin(), list.end(), [&](int a, int b) {
      if (estimates[a].time_s != estimates[b].time_s) return estimates[a].time_s < estimates[b].time_s;
      return estimates[a].inflight_bytes_per_core > estimates[b].inflight_bytes_per_core;
    });
    double best = p.samples[list[0]].measured_s;
    for (int i : list) best = std::min(best, p.samples[i].measured_s);
    // The softened top-1: weights fall off with the estimate's distance from the fastest one.
    const double fastest = estimates[list[0]].time_s;
    double weight_sum = 0, regret = 0;
    for (int i : list) {
      const double w = std::exp(-std::log(estimates[i].time_s / fastest) / temperature);
      if (w < 1e-12) break;
      weight_sum += w;
      regret += w * std::log(p.samples[i].measured_s / best);
    }
    q.expected_regret += weight_sum > 0 ? regret / weight_sum : 0;
    q.top1_within_10 += p.samples[list[0]].measured_s <= 1.10 * best;
    for (size_t k = 0; k < list.size() && k < 5; ++k) {
      if (p.samples[list[k]].measured_s <= best) {
        ++q.best_in_top5;
        break;
      }
    }
  }
  q.log_rms = rows > 0 ? std::sqrt(total / rows) : 0;
  if (q.rows > 0) q.expected_regret /= q.rows;
  return q;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n == 0 ? 0 : n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Per configuration, the median over rows of measured / estimated relative to its row's median:
// what the model misses of that configuration against the others, whatever the shape. Also sets
// each sample's factor (1 where its configuration gets no residual).
std::vector<ConfigResidual> LearnResiduals(const Problem& p, const std::vector<PerfEstimate>& estimates,
                                           const std::string& graph_name, int min_rows,
                                           std::vector<double>* sample_factor) {
  std::vector<std::vector<double>> by_row(p.rows);
  for (size_t i = 0; i < p.samples.size(); ++i) {
    by_row[p.samples[i].row].push_back(p.samples[i].measured_s / estimates[i].time_s);
  }
  std::vector<double> row_median(p.rows);
  for (int r = 0; r < p.rows; ++r) row_median[r] = Median(by_row[r]);
  std::map<std::pair<std::string, std::vector<std::string>>, std::vector<double>> ratios;
  for (size_t i = 0; i < p.samples.size(); ++i) {
    const Prepared& s = p.samples[i];
    if (row_median[s.row] > 0 && estimates[i].time_s > 0) {
      ratios[{s.dtype, s.key}].push_back(s.measured_s / estimates[i].time_s / row_median[s.row]);
    }
  }
  std::vector<ConfigResidual> out;
  std::map<std::pair<std::string, std::vector<std::string>>, double> factor;
  for (const auto& [key, values] : ratios) {
    if (static_cast<int>(values.size()) < min_rows) continue;
    ConfigResidual r;
    r.set_graph(graph_name);
    r.set_compute_dtype(key.first);
    for (const std::string& set : key.second) r.add_sets(set);
    r.set_factor(std::clamp(Median(values), 0.05, 20.0));
    r.set_rows(static_cast<int>(values.size()));
    factor[key] = r.factor();
    out.push_back(std::move(r));
  }
  sample_factor->assign(p.samples.size(), 1.0);
  for (size_t i = 0; i < p.samples.size(); ++i) {
    auto it = factor.find({p.samples[i].dtype, p.samples[i].key});
    if (it != factor.end()) (*sample_factor)[i] = it->second;
  }
  return out;
}

// The device to start from (the model's terms for every dtype, stand-ins where it gives none),
// the terms to fit and which of them are stand-ins.
struct StartingPoint {
  DeviceModel device;
  std::vector<std::string> terms;
  std::set<std::string> assumed;
};

absl::StatusOr<StartingPoint> ResolveStartingPoint(const CompiledGraph& graph, const DeviceModel& device,
                                                   const PerfExpressions& perf, const std::vector<std::string>& dtypes,
                                                   const CalibrationOptions& options) {
  StartingPoint start{device, {}, {}};
  std::vector<std::string> default_terms;
  for (const std::string& dtype : dtypes) {
    ModelTerms terms = ResolveModelTerms(start.device, graph, perf, dtype);
    start.device = terms.device;
    for (const ModelTerm& t : terms.terms) {
      if (t.assumed) start.assumed.insert(t.term);
      if (t.term == "memory_bandwidth_gbps" || t.value <= 0) continue;
      if (std::find(default_terms.begin(), default_terms.end(), t.term) == default_terms.end()) {
        default_terms.push_back(t.term);
      }
    }
  }
  start.terms = options.terms.empty() ? default_terms : options.terms;
  for (const std::string& term : start.terms) {
    DeviceModel probe = start.device;
    if (!SetPerformanceTerm(&probe, term, 1.0)) {
      return absl::InvalidArgumentError(absl::StrCat("calibrate: '", term, "' is no performance term (e.g. clock_mhz, ",
                                                     "l2_bandwidth_gbps, dram_latency_ns, peak.f16)"));
    }
    if (PerformanceTerm(start.device, term) <= 0) {
      return absl::InvalidArgumentError(absl::StrCat("calibrate: device '", device.name(), "' has no value for '", term,
                                                     "' to start from"));
    }
  }
  return start;
}

// The samples that fit `device` and have an estimate, their inputs evaluated once, grouped in
// rows and marked near their row's best. Sets the result's sample counts.
absl::Status PrepareSamples(const CompiledGraph& graph, const DeviceModel& device, const PerfExpressions& perf,
                            const std::vector<CalibrationSample>& samples, const CalibrationOptions& options,
                            Problem& problem, CalibrationResult& result) {
  // The engine decides fit and occupancy once per sample; the performance inputs follow.
  EngineOptions engine_options;
  engine_options.spills_fatal = true;
  ASSIGN_OR_RETURN(FitEngine engine, FitEngine::Create(graph, device, engine_options));
  FitEngine::Scratch scratch;
  std::map<std::string, int> row_index;
  for (const CalibrationSample& s : samples) {
    absl::StatusOr<std::vector<int64_t>> bound = BindParameters(graph, s.sets);
    if (!bound.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(s.origin.empty() ? s.row : s.origin, ": ", bound.status().message()));
    }
    std::vector<int64_t>& values = *bound;
    // The performance expressions read the device symbols (SM_ARCH, WARP_SIZE) too.
    BindDeviceSymbols(graph, device, absl::MakeSpan(values));
    FitResult fit;
    if (!engine.Evaluate(values, scratch, &fit).ok() || !fit.fits) continue;
    Prepared p;
    if (!EvaluatePerfInputs(graph, perf, values, scratch, fit, &p.in)) continue;
    p.dtype = PlanComputeDtype(graph, s.compute_dtype);
    p.key = ResidualKey(s.config_sets, options.residual_params);
    auto [it, inserted] = row_index.emplace(s.row, static_cast<int>(row_index.size()));
    p.row = it->second;
    p.measured_s = s.measured_s;
    problem.samples.push_back(std::move(p));
  }
  problem.rows = static_cast<int>(row_index.size());
  result.samples_estimated = static_cast<int>(problem.samples.size());
  std::vector<double> best(problem.rows, std::numeric_limits<double>::infinity());
  for (const Prepared& p : problem.samples) best[p.row] = std::min(best[p.row], p.measured_s);
  for (Prepared& p : problem.samples) {
    p.near_best = p.measured_s > 0 && p.measured_s <= options.near_best * best[p.row];
    result.samples_used += p.near_best;
  }
  if (result.samples_used == 0) {
    return absl::InvalidArgumentError("calibrate: no timed configuration fits the device model and has an estimate");
  }
  return absl::OkStatus();
}

// The terms' log factors that minimise `loss`: coordinate descent in log space within
// [-span, span], a grid over each term's range, then golden-section refinement around the grid's
// best point.
template <typename Loss>
std::vector<double> DescendCoordinates(size_t num_terms, double span, const CalibrationOptions& options, Loss loss) {
  std::vector<double> x(num_terms, 0.0);
  double current = loss(x);
  for (int pass = 0; pass < (options.fit_terms ? options.passes : 0); ++pass) {
    for (size_t t = 0; t < num_terms; ++t) {
      constexpr int kGrid = 24;
      double best_x = x[t], best_loss = current;
      std::vector<double> trial = x;
      for (int g = 0; g <= kGrid; ++g) {
        trial[t] = -span + 2 * span * g / kGrid;
        const double l = loss(trial);
        if (l < best_loss) best_loss = l, best_x = trial[t];
      }
      const double step = 2 * span / kGrid;
      double lo = std::max(-span, best_x - step), hi = std::min(span, best_x + step);
      const double phi = (std::sqrt(5.0) - 1) / 2;
      for (int i = 0; i < 30; ++i) {
        const double a = hi - phi * (hi - lo), b = lo + phi * (hi - lo);
        trial[t] = a;
        const double la = loss(trial);
        trial[t] = b;
        const double lb = loss(trial);
        if (la < lb) {
          hi = b;
        } else {
          lo = a;
        }
      }
      trial[t] = (lo + hi) / 2;
      const double refined = loss(trial);
      if (refined < best_loss) best_loss = refined, best_x = trial[t];
      x[t] = best_x;
      current = best_loss;
    }
  }
  return x;
}

}  // namespace

absl::StatusOr<CalibrationResult> Calibrate(const CompiledGraph& graph, const DeviceModel& device,
                                            const std::vector<CalibrationSample>& samples,
                                            const CalibrationOptions& options) {
  if (samples.empty()) return absl::InvalidArgumentError("calibrate: no timings");
  ASSIGN_OR_RETURN(PerfExpressions perf, CompilePerfExpressions(graph));
  Problem problem;
  CalibrationResult result;
  result.samples_total = static_cast<int>(samples.size());
  // Every dtype the samples rate their math in; the model's terms for each (with stand-ins).
  for (const CalibrationSample& s : samples) {
    const std::string dtype = PlanComputeDtype(graph, s.compute_dtype);
    if (std::find(problem.dtypes.begin(), problem.dtypes.end(), dtype) == problem.dtypes.end()) {
      problem.dtypes.push_back(dtype);
    }
  }
  ASSIGN_OR_RETURN(const StartingPoint start, ResolveStartingPoint(graph, device, perf, problem.dtypes, options));
  const std::vector<std::string>& terms = start.terms;
  RETURN_IF_ERROR(PrepareSamples(graph, start.device, perf, samples, options, problem, result));

  std::vector<double> base(terms.size());
  for (size_t t = 0; t < terms.size(); ++t) base[t] = PerformanceTerm(start.device, terms[t]);
  std::vector<PerfEstimate> estimates;
  auto device_at = [&](const std::vector<double>& logs) {
    DeviceModel d = start.device;
    for (size_t t = 0; t < terms.size(); ++t) SetPerformanceTerm(&d, terms[t], base[t] * std::exp(logs[t]));
    return d;
  };
  auto loss = [&](const std::vector<double>& logs) -> double {
    if (!EstimateAll(problem, device_at(logs), &estimates)) return std::numeric_limits<double>::infinity();
    const CalibrationQuality q = Quality(problem, estimates, options.rank_temperature);
    double reg = 0;
    for (double v : logs) reg += v * v;
    const double fit = q.log_rms * q.log_rms;
    const double objective =
        options.objective == CalibrationObjective::kRank ? q.expected_regret + options.time_weight * fit : fit;
    return objective + options.regularization * reg;
  };
  if (!EstimateAll(problem, start.device, &estimates)) {
    return absl::InvalidArgumentError(absl::StrCat("calibrate: device '", device.name(), "' has no peak for ",
                                                   absl::StrJoin(problem.dtypes, " or ")));
  }
  result.before = Quality(problem, estimates, options.rank_temperature);

  const double span = std::log(std::max(options.range, 1.0 + 1e-9));
  const std::vector<double> x = DescendCoordinates(terms.size(), span, options, loss);
  result.calibrated = device_at(x);
  EstimateAll(problem, result.calibrated, &estimates);
  result.after = Quality(problem, estimates, options.rank_temperature);
  for (size_t t = 0; t < terms.size() && options.fit_terms; ++t) {
    result.terms.push_back({terms[t], base[t], base[t] * std::exp(x[t]), start.assumed.contains(terms[t])});
  }
  if (options.residuals) {
    std::vector<double> sample_factor;
    result.residuals =
        LearnResiduals(problem, estimates, graph.graph.name(), options.residual_min_rows, &sample_factor);
    std::vector<PerfEstimate> corrected = estimates;
    for (size_t i = 0; i < corrected.size(); ++i) corrected[i].time_s *= sample_factor[i];
    result.with_residuals = Quality(problem, corrected, options.rank_temperature);
  }
  return result;
}

CalibrationProblems FindCalibrationProblems(const CalibrationResult& result) {
  CalibrationProblems problems;
  // Slack for the optimizer's rounding: a ranking is worse only by more than this.
  constexpr double kSlack = 1e-6;
  if (result.after.expected_regret > result.before.expected_regret + kSlack) {
    problems.ranks_worse = true;
    problems.sentences.push_back(absl::StrFormat("it ranks its own timings worse: expected top-1 slowdown %.2f%% -> %.2f%%",
                                       100 * std::expm1(result.before.expected_regret),
                                       100 * std::expm1(result.after.expected_regret)));
  }
  for (const TermFit& t : result.terms) {
    const bool documented = t.term == "clock_mhz" || t.term == "memory_bandwidth_gbps" || absl::StartsWith(t.term, "peak.");
    if (!documented || t.was_assumed || !(t.after > t.before * (1 + kSlack))) continue;
    problems.beyond_documented.push_back(t.term);
    problems.sentences.push_back(absl::StrFormat("%s %.6g -> %.6g is above the device model's documented %.6g (%s)", t.term,
                                       t.before, t.after, t.before,
                                       t.term == "clock_mhz" ? "its boost clock" : t.term == "memory_bandwidth_gbps"
                                                                                      ? "its memory bandwidth"
                                                                                      : "its datasheet peak"));
  }
  return problems;
}

std::string CalibrationTextproto(const DeviceModel& device, const CalibrationResult& result, const std::string& name,
                                 const std::string& raw_provenance, const std::string& raw_command,
                                 const std::string& date) {
  std::string out;
  // What comes from outside (a timing file's "device" and "date", its name, the command line, a
  // model's display name) is written C-escaped: it stays on its comment line and inside its
  // string, so no text can add a field to the file or keep it from parsing.
  const std::string provenance = absl::CHexEscape(raw_provenance), command = absl::CHexEscape(raw_command);
  absl::StrAppend(&out, "# Calibration of ", device.name(), " for the planner (docs/planner.md, \"Calibration\"), written by\n",
                  "# `simulate calibrate` on ", date,
                  ".\n# command: ", command, "\n# timings: ", provenance, "\n");
  absl::StrAppend(&out, absl::StrFormat(
                            "# %d of %d timed configurations in %d rows (%d near their row's best for the time error);\n"
                            "# expected top-1 slowdown %.2f%% -> %.2f%%; log-rms error of the estimates %.3f -> %.3f; top-1 within 10%% of "
                            "the best on %d -> %d rows, best in the top 5 on %d -> %d.\n",
                            result.samples_estimated, result.samples_total, result.after.rows, result.samples_used,
                            100 * std::expm1(result.before.expected_regret), 100 * std::expm1(result.after.expected_regret),
                            result.before.log_rms,
                            result.after.log_rms, result.before.top1_within_10, result.after.top1_within_10,
                            result.before.best_in_top5, result.after.best_in_top5));
  absl::StrAppend(&out, "name: \"", name, "\"\n");
  absl::StrAppend(&out, "display_name: \"", absl::CHexEscape(device.display_name()), " (calibrated)\"\n");
  absl::StrAppend(&out, "# source: inheritance: every field not set below is ", device.name(), "'s\n");
  absl::StrAppend(&out, "inherits: \"", device.name(), "\"\n");
  absl::StrAppend(&out, "performance {\n");
  std::vector<const TermFit*> peaks;
  for (const TermFit& t : result.terms) {
    const std::string was = absl::StrFormat("%s's %.6g%s x %.4f", device.name(), t.before,
                                            t.was_assumed ? " (the planner's stand-in; the model gives none)" : "",
                                            t.before > 0 ? t.after / t.before : 0.0);
    if (t.term.rfind("peak.", 0) == 0) {
      absl::StrAppend(&out, "  # source: calibrated by simulate calibrate from ", provenance, ": ", was, "\n");
      absl::StrAppend(&out, "  peak {\n    dtype: \"", t.term.substr(5), "\"\n", absl::StrFormat("    tflops: %.6g\n", t.after),
                      "  }\n");
      continue;
    }
    absl::StrAppend(&out, "  # source: calibrated by simulate calibrate from ", provenance, ": ", was, "\n");
    absl::StrAppend(&out, absl::StrFormat("  %s: %.6g\n", t.term, t.after));
  }
  absl::StrAppend(&out, "}\n");
  if (!result.residuals.empty()) {
    absl::StrAppend(&out, absl::StrFormat(
        "# %d configuration residuals (measured / estimated over the row's median; the planner multiplies the\n"
        "# estimate by it): with them the samples' top-1 is within 10%% of the best on %d of %d rows, the best in the\n"
        "# top 5 on %d.\n",
        result.residuals.size(), result.with_residuals.top1_within_10, result.with_residuals.rows,
        result.with_residuals.best_in_top5));
    for (const ConfigResidual& r : result.residuals) {
      absl::StrAppend(&out, "config_residuals { graph: \"", r.graph(), "\" compute_dtype: \"", r.compute_dtype(), "\"");
      for (const std::string& set : r.sets()) absl::StrAppend(&out, " sets: \"", set, "\"");
      absl::StrAppend(&out, absl::StrFormat(" factor: %.4f rows: %d }\n", r.factor(), r.rows()));
    }
  }
  absl::StrAppend(&out, "sources: \"simulate calibrate from ", provenance, "\"\n");
  return out;
}

}  // namespace scratchsim
