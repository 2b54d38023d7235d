#include "sim/planner/planner.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <thread>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "sim/planner/perf_inputs.h"
#include "sim/status_macros.h"

namespace scratchsim {
namespace {

struct Candidate {
  double time;
  double inflight;  // bytes in flight per core: between equal times, more tolerates more latency
  uint64_t index;
  bool operator<(const Candidate& o) const {  // "better than"
    if (time != o.time) return time < o.time;
    if (inflight != o.inflight) return inflight > o.inflight;
    return index < o.index;
  }
};

struct WorkerState {
  uint64_t fitting = 0;
  uint64_t at_risk = 0;
  uint64_t unestimated = 0;
  uint64_t counts[kNumLimits] = {};
  uint64_t first_index[kNumLimits];
  std::string first_message[kNumLimits];
  // [limit][axis value slot]
  std::vector<uint64_t> value_counts;
  std::vector<Candidate> heap;  // max-heap by "worse": top is the worst kept
  WorkerState() { std::fill(std::begin(first_index), std::end(first_index), UINT64_MAX); }
};

}  // namespace

absl::StatusOr<PlanResult> Plan(const CompiledGraph& graph, const DeviceModel& device, std::vector<ParamAxis> axes,
                                std::vector<int64_t> base_values, const PlanOptions& options) {
  if (base_values.size() != graph.symbols.names().size()) {
    return absl::InvalidArgumentError("Plan: parameter values do not match the graph's parameters");
  }
  PlanResult result;
  EngineOptions engine_options;
  engine_options.policy = options.policy;
  engine_options.policy_override = options.policy_override;
  engine_options.spills_fatal = !options.allow_spills;
  ASSIGN_OR_RETURN(FitEngine engine, FitEngine::Create(graph, device, engine_options));
  ASSIGN_OR_RETURN(PerfExpressions perf, CompilePerfExpressions(graph));
  result.compute_dtype = options.compute_dtype.empty() ? DefaultComputeDtype(graph) : options.compute_dtype;
  if (result.compute_dtype.empty()) {
    if (graph.flops) {
      return absl::InvalidArgumentError(absl::StrCat(graph.origin, ": no compute_dtype in the graph and no typed operand; "
                                                     "pass --compute-dtype (bf16, f16, f32, ...)"));
    }
    result.compute_dtype = "f32";
  }
  // Every term the graph's fields call for has a value: the device's, or a stand-in with a warning.
  ModelTerms terms = ResolveModelTerms(device, graph, perf, result.compute_dtype);
  ASSIGN_OR_RETURN(result.model, PerfModel::Create(terms.device, result.compute_dtype, graph.flops.has_value()));
  result.terms = std::move(terms.terms);
  result.warnings = std::move(terms.warnings);
  result.flops_known = graph.flops.has_value();
  if (!graph.flops) result.notes.push_back("the graph gives no flops: configurations rank by global traffic time alone");
  if (!graph.global_bytes) {
    result.notes.push_back(perf.operands.empty()
                               ? "the graph gives no global_bytes and has no operand tiles: memory time is not modelled"
                               : "global_bytes derived: every operand tile is read from global memory once per loop "
                                 "iteration (no L2 reuse)");
  }
  if (graph.launch.grid.empty()) result.notes.push_back("no launch.grid: one full wave assumed, waves do not rank");

  result.axes = std::move(axes);
  result.base_values = std::move(base_values);
  // The device symbols follow the device here too, so the performance expressions see them.
  BindDeviceSymbols(graph, device, absl::MakeSpan(result.base_values));
  uint64_t total = 1;
  for (const ParamAxis& axis : result.axes) {
    if (axis.slot < 0 || axis.slot >= static_cast<int>(result.base_values.size())) {
      return absl::InvalidArgumentError(absl::StrCat("Plan: axis '", axis.name, "' has no parameter slot"));
    }
    if (axis.values.empty()) return absl::InvalidArgumentError(absl::StrCat("Plan: axis '", axis.name, "' is empty"));
    if (total > kMaxPlanSpace / axis.values.size()) {
      return absl::InvalidArgumentError(absl::StrCat("the parameter space has more than ", kMaxPlanSpace,
                                                     " configurations; narrow it with --param or fix parameters with --set"));
    }
    total *= axis.values.size();
  }
  result.space_size = total;
  if (options.record_cells) {
    if (total > kMaxRecordedCells) {
      return absl::InvalidArgumentError(absl::StrCat("Plan: recording every configuration takes a space of at most ",
                                                     kMaxRecordedCells, ", this one has ", total));
    }
    result.cells.assign(total, PlanCell{});  // each worker writes only the indices it evaluates
  }
  std::vector<int> value_offset(result.axes.size() + 1, 0);
  for (size_t a = 0; a < result.axes.size(); ++a) {
    value_offset[a + 1] = value_offset[a] + static_cast<int>(result.axes[a].values.size());
  }
  const int total_values = value_offset.back();

  int threads = options.threads > 0 ? options.threads : static_cast<int>(std::thread::hardware_concurrency());
  threads = std::max(threads, 1);
  constexpr uint64_t kChunk = 4096;
  const uint64_t num_chunks = (total + kChunk - 1) / kChunk;
  threads = static_cast<int>(std::min<uint64_t>(threads, std::max<uint64_t>(num_chunks, 1)));
  result.threads_used = threads;
  const size_t top_k = static_cast<size_t>(std::max(options.top_k, 0));

  std::vector<WorkerState> states(threads);
  std::atomic<uint64_t> next_chunk{0};
  std::atomic<uint64_t> done{0};
  const int num_axes = static_cast<int>(result.axes.size());

  auto worker = [&](int t) {
    WorkerState& state = states[t];
    state.value_counts.assign(static_cast<size_t>(kNumLimits) * total_values, 0);
    FitEngine::Scratch scratch;
    std::vector<int64_t> values = result.base_values;
    std::vector<int> digit(num_axes, 0);
    FitResult fit;
    for (;;) {
      if (options.cancel != nullptr && options.cancel->load(std::memory_order_relaxed)) break;
      const uint64_t chunk = next_chunk.fetch_add(1);
      if (chunk >= num_chunks) break;
      const uint64_t begin = chunk * kChunk;
      const uint64_t end = std::min(total, begin + kChunk);
      // Decode `begin` once (last axis fastest), then count like an odometer.
      uint64_t rest = begin;
      for (int a = num_axes - 1; a >= 0; --a) {
        const uint64_t size = result.axes[a].values.size();
        digit[a] = static_cast<int>(rest % size);
        rest /= size;
        values[result.axes[a].slot] = result.axes[a].values[digit[a]];
      }
      for (uint64_t index = begin; index < end; ++index) {
        absl::Status status = engine.Evaluate(values, scratch, &fit);
        if (!status.ok()) {
          fit.fits = false;
          fit.limit = Limit::kInvalid;
        }
        PlanCell* cell = options.record_cells ? &result.cells[index] : nullptr;
        if (cell != nullptr) {
          cell->fits = fit.fits;
          cell->limit = fit.limit;
          cell->required = fit.required;
          cell->available = fit.available;
          cell->broken_requirement = status.ok() ? fit.broken_requirement : -1;
        }
        if (fit.fits) {
          ++state.fitting;
          if (top_k > 0 || cell != nullptr) {
            PerfInputs in;
            double time = std::numeric_limits<double>::infinity();
            double inflight = 0;
            if (EvaluatePerfInputs(graph, perf, values, scratch, fit, &in)) {
              const PerfEstimate e = result.model.Estimate(in);
              time = e.time_s * (options.residuals ? options.residuals->Factor(values).value_or(1.0) : 1.0);
              inflight = e.inflight_bytes_per_core;
            } else {
              ++state.unestimated;
            }
            if (cell != nullptr) {
              cell->estimated = std::isfinite(time);
              cell->time_s = cell->estimated ? time : 0;
            }
            Candidate c{time, inflight, index};
            if (top_k == 0) {
              // Estimated for the record only.
            } else if (state.heap.size() < top_k) {
              state.heap.push_back(c);
              std::push_heap(state.heap.begin(), state.heap.end());
            } else if (c < state.heap.front()) {
              std::pop_heap(state.heap.begin(), state.heap.end());
              state.heap.back() = c;
              std::push_heap(state.heap.begin(), state.heap.end());
            }
          }
        } else {
          const int l = static_cast<int>(fit.limit);
          ++state.counts[l];
          if (status.ok() && fit.verdict == FitVerdict::kAtRisk) ++state.at_risk;
          if (index < state.first_index[l]) {
            state.first_index[l] = index;
            if (!status.ok()) state.first_message[l] = std::string(status.message());
          }
          uint64_t* row = &state.value_counts[static_cast<size_t>(l) * total_values];
          for (int a = 0; a < num_axes; ++a) ++row[value_offset[a] + digit[a]];
        }
        // Advance the odometer.
        for (int a = num_axes - 1; a >= 0; --a) {
          if (++digit[a] < static_cast<int>(result.axes[a].values.size())) {
            values[result.axes[a].slot] = result.axes[a].values[digit[a]];
            break;
          }
          digit[a] = 0;
          values[result.axes[a].slot] = result.axes[a].values[0];
        }
      }
      const uint64_t finished = done.fetch_add(end - begin) + (end - begin);
      if (options.progress && t == 0) options.progress(finished, total);
    }
  };
  if (threads == 1) {
    worker(0);
  } else {
    std::vector<std::thread> pool;
    pool.reserve(threads);
    for (int t = 0; t < threads; ++t) pool.emplace_back(worker, t);
    for (std::thread& th : pool) th.join();
  }
  result.evaluated = done.load();
  result.partial = result.evaluated < total;
  if (options.progress) options.progress(result.evaluated, total);

  // Merge in a fixed order: sums, minima and a total order on candidates make the result
  // independent of which thread saw what.
  std::vector<Candidate> candidates;
  std::vector<uint64_t> value_counts(static_cast<size_t>(kNumLimits) * total_values, 0);
  uint64_t counts[kNumLimits] = {};
  uint64_t first_index[kNumLimits];
  std::fill(std::begin(first_index), std::end(first_index), UINT64_MAX);
  std::string first_message[kNumLimits];
  for (WorkerState& state : states) {
    result.fitting += state.fitting;
    result.at_risk += state.at_risk;
    result.unestimated += state.unestimated;
    candidates.insert(candidates.end(), state.heap.begin(), state.heap.end());
    for (int l = 0; l < kNumLimits; ++l) {
      counts[l] += state.counts[l];
      if (state.first_index[l] < first_index[l]) {
        first_index[l] = state.first_index[l];
        first_message[l] = state.first_message[l];
      }
    }
    for (size_t i = 0; i < value_counts.size() && i < state.value_counts.size(); ++i) value_counts[i] += state.value_counts[i];
  }
  std::sort(candidates.begin(), candidates.end());
  if (candidates.size() > top_k) candidates.resize(top_k);
  if (result.unestimated > 0) {
    result.notes.push_back(absl::StrCat(
        result.unestimated, " fitting configuration", result.unestimated == 1 ? " has" : "s have",
        " no estimate: a performance expression (flops, global_bytes, smem_bytes, the L2 reuse fields, "
        "peak_percent, sync_cycles, wait_cycles, smem_round_trips, issue_slots, warp_stall_percent, a grid or loop "
        "trip count) failed for ",
        result.unestimated == 1 ? "it" : "them",
        " or left its range (peak_percent must be > 0, the cycle, round-trip and issue-slot counts >= 0, "
        "warp_stall_percent 0-99); they rank last"));
  }

  auto decode = [&](uint64_t index, std::vector<int64_t>* axis_values, std::vector<int64_t>* all_values) {
    axis_values->assign(num_axes, 0);
    *all_values = result.base_values;
    for (int a = num_axes - 1; a >= 0; --a) {
      const uint64_t size = result.axes[a].values.size();
      (*axis_values)[a] = result.axes[a].values[index % size];
      (*all_values)[result.axes[a].slot] = (*axis_values)[a];
      index /= size;
    }
  };

  FitEngine::Scratch scratch;
  for (const Candidate& c : candidates) {
    RankedConfig ranked;
    ranked.index = c.index;
    std::vector<int64_t> all;
    decode(c.index, &ranked.values, &all);
    RETURN_IF_ERROR(engine.Evaluate(all, scratch, &ranked.fit));
    PerfInputs in;
    ranked.estimated = EvaluatePerfInputs(graph, perf, all, scratch, ranked.fit, &in);
    if (ranked.estimated) {
      ranked.perf = result.model.Estimate(in);
      if (const std::optional<double> factor = options.residuals ? options.residuals->Factor(all) : std::nullopt) {
        ranked.residual = *factor;
        ranked.perf.time_s *= ranked.residual;
        ranked.perf.score /= ranked.residual;
      }
    }
    result.top.push_back(std::move(ranked));
  }
  for (int l = 0; l < kNumLimits; ++l) {
    if (counts[l] == 0) continue;
    PrunedFamily family;
    family.limit = static_cast<Limit>(l);
    family.count = counts[l];
    family.example_index = first_index[l];
    std::vector<int64_t> all;
    decode(first_index[l], &family.example, &all);
    FitResult fit;
    absl::Status status = engine.Evaluate(all, scratch, &fit);
    family.message = !status.ok()                   ? std::string(status.message())
                     : fit.broken_requirement >= 0 ? BrokenRequirementMessage(graph, fit.broken_requirement)
                                                   : first_message[l];
    family.required = fit.required;
    family.available = fit.available;
    // Which values were pruned throughout is known only of a whole sweep.
    for (int a = 0; a < num_axes && !result.partial; ++a) {
      const uint64_t per_value = total / result.axes[a].values.size();
      for (size_t v = 0; v < result.axes[a].values.size(); ++v) {
        if (value_counts[static_cast<size_t>(l) * total_values + value_offset[a] + v] == per_value) {
          family.whole_values.emplace_back(a, result.axes[a].values[v]);
        }
      }
    }
    result.pruned.push_back(std::move(family));
  }
  return result;
}

}  // namespace scratchsim
