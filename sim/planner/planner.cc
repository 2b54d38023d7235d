#include "sim/planner/planner.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <optional>
#include <thread>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "sim/planner/perf_inputs.h"
#include "sim/status_macros.h"

namespace scratchsim {
namespace {

struct Candidate {
  RankKey key;
  uint64_t index;
  int64_t blocks_per_core = 0;
  // Its estimate where every block adds its own sync waits (PerfEstimate::own_wait_time_s), the
  // reading the shortlist covers beside the ranking's, and the share of those waits that its
  // co-resident blocks could fill, which the occupancy hedge questions (ShortlistCandidates).
  double own_wait_time_s = 0;
  double fillable_wait_s = 0;
  bool operator<(const Candidate& o) const {  // "better than"
    if (!(key == o.key)) return key < o.key;
    return index < o.index;
  }
};

// "Better where every block adds its own sync waits": RankKey's order on that estimate, ties
// broken by index.
bool FasterOwnWait(const Candidate& a, const Candidate& b) {
  const RankKey ka{a.own_wait_time_s, a.key.inflight_bytes_per_core};
  const RankKey kb{b.own_wait_time_s, b.key.inflight_bytes_per_core};
  if (!(ka == kb)) return ka < kb;
  return a.index < b.index;
}

// What one worker saw of the configurations it evaluated; MergeWorkers adds them up.
struct WorkerState {
  uint64_t fitting = 0;
  uint64_t at_risk = 0;
  uint64_t unestimated = 0;
  uint64_t zero_estimates = 0;                // estimated at no time at all: a bug, not a rank
  uint64_t first_zero_estimate = UINT64_MAX;  // the first such configuration's index
  uint64_t counts[kNumLimits] = {};
  uint64_t first_index[kNumLimits];
  std::string first_message[kNumLimits];
  // [limit][axis value slot]
  std::vector<uint64_t> value_counts;
  std::vector<Candidate> heap;  // max-heap by "worse": top is the worst kept
  // For the shortlist, where every block adds its own sync waits: the fastest estimated
  // configuration of each block shape (BlockShape, by FasterOwnWait), and
  // of each block shape at each count of blocks per core the one fastest once its fillable waits
  // are filled (FilledTime), the occupancy twins' candidates.
  absl::flat_hash_map<uint64_t, Candidate> block_best;
  absl::flat_hash_map<std::pair<uint64_t, int64_t>, Candidate> filled_best;
  // Some configuration's estimate changes where every block adds its own sync waits.
  bool own_waits_differ = false;
  WorkerState() { std::fill(std::begin(first_index), std::end(first_index), UINT64_MAX); }
};

// A candidate's estimate where every block adds its own sync waits, less those its co-resident
// blocks could fill.
double FilledTime(const Candidate& c) { return c.own_wait_time_s - c.fillable_wait_s; }

// "Faster once the fillable waits are filled", ties broken as Candidate orders them, so that the
// choice does not depend on how the workers split the space.
bool FasterFilled(const Candidate& a, const Candidate& b) {
  if (FilledTime(a) != FilledTime(b)) return FilledTime(a) < FilledTime(b);
  return a < b;
}

// Keeps in `best` the better by `better` of its entry at `key` and `c`.
template <typename Key, typename Better = std::less<Candidate>>
void KeepBetter(absl::flat_hash_map<Key, Candidate>& best, const Key& key, const Candidate& c, Better better = {}) {
  auto [it, inserted] = best.try_emplace(key, c);
  if (!inserted && better(c, it->second)) it->second = c;
}

// Configurations are handed to workers in chunks of this many.
constexpr uint64_t kChunk = 4096;

// Resolves the compute dtype and the device terms the ranking needs, creates the performance
// model and notes what it assumes about the graph.
absl::Status PreparePerformanceModel(const CompiledGraph& graph, const DeviceModel& device, const PerfExpressions& perf,
                                     const PlanOptions& options, PlanResult& result) {
  result.compute_dtype = PlanComputeDtype(graph, options.compute_dtype);
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
  return absl::OkStatus();
}

// Checks the axes against the parameters and sets the space's size (and, with record_cells, a
// cell per configuration).
absl::Status SizeSpace(const PlanOptions& options, PlanResult& result) {
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
  return absl::OkStatus();
}

// The axis values and every parameter's value of configuration `index` (last axis fastest).
void DecodeIndex(const PlanResult& result, uint64_t index, std::vector<int64_t>* axis_values,
                 std::vector<int64_t>* all_values) {
  const int num_axes = static_cast<int>(result.axes.size());
  axis_values->assign(num_axes, 0);
  *all_values = result.base_values;
  for (int a = num_axes - 1; a >= 0; --a) {
    const uint64_t size = result.axes[a].values.size();
    (*axis_values)[a] = result.axes[a].values[index % size];
    (*all_values)[result.axes[a].slot] = (*axis_values)[a];
    index /= size;
  }
}

// The axes that sweep a block dimension (Parameter.block_dim): what a block shape is made of.
std::vector<int> BlockAxes(const CompiledGraph& graph, const std::vector<ParamAxis>& axes) {
  std::vector<int> block_axes;
  for (size_t a = 0; a < axes.size(); ++a) {
    const int slot = axes[a].slot;
    if (slot >= 0 && slot < graph.graph.parameters_size() && graph.graph.parameters(slot).block_dim()) {
      block_axes.push_back(static_cast<int>(a));
    }
  }
  return block_axes;
}

// A configuration's block shape as one number: its block axes' value positions, mixed radix.
uint64_t BlockShape(const std::vector<int>& block_axes, const std::vector<ParamAxis>& axes,
                    const std::vector<int>& digit) {
  uint64_t shape = 0;
  for (int a : block_axes) shape = shape * axes[a].values.size() + digit[a];
  return shape;
}

// The part of the sync waits every block adds (PerfEstimate::own_wait_sync_s) that its co-resident
// blocks could fill: each block's wait overlapped by the other blocks' work, (blocks - 1) / blocks
// of it (on the H200 co-resident 32-row blocks were measured to fill it,
// docs/validation/planner-h200-workloads.md, "The f32 32-row tiles: L2 delivery").
double FillableWait(const PerfEstimate& e, int64_t blocks_per_core) {
  if (blocks_per_core <= 1) return 0;
  return e.own_wait_sync_s * static_cast<double>(blocks_per_core - 1) / static_cast<double>(blocks_per_core);
}

// The sweep over the space: workers take chunks of configurations, ask the engine about each and
// keep their own tally (what fits and its estimate, what each limit pruned, per axis value).
class Sweep {
 public:
  Sweep(const CompiledGraph& graph, const FitEngine& engine, const PerfExpressions& perf, const PlanOptions& options,
        PlanResult& result)
      : graph_(graph),
        engine_(engine),
        perf_(perf),
        options_(options),
        result_(result),
        num_axes_(static_cast<int>(result.axes.size())),
        total_(result.space_size),
        num_chunks_((result.space_size + kChunk - 1) / kChunk),
        top_k_(static_cast<size_t>(std::max(options.top_k, 0))),
        value_offset_(result.axes.size() + 1, 0) {
    for (size_t a = 0; a < result.axes.size(); ++a) {
      value_offset_[a + 1] = value_offset_[a] + static_cast<int>(result.axes[a].values.size());
    }
    block_axes_ = BlockAxes(graph, result.axes);
    hedging_ = top_k_ > 0 && result.ranking_error_permille >= 0 && !block_axes_.empty();
  }

  // Evaluates the space (until options.cancel), on as many threads as asked and there are chunks;
  // returns each worker's tally and sets the result's evaluated, partial and threads_used.
  std::vector<WorkerState> Run() {
    int threads = options_.threads > 0 ? options_.threads : static_cast<int>(std::thread::hardware_concurrency());
    threads = std::max(threads, 1);
    threads = static_cast<int>(std::min<uint64_t>(threads, std::max<uint64_t>(num_chunks_, 1)));
    result_.threads_used = threads;
    std::vector<WorkerState> states(threads);
    if (threads == 1) {
      Work(0, states[0]);
    } else {
      std::vector<std::thread> pool;
      pool.reserve(threads);
      for (int t = 0; t < threads; ++t) pool.emplace_back([this, t, &states] { Work(t, states[t]); });
      for (std::thread& th : pool) th.join();
    }
    result_.evaluated = done_.load();
    result_.partial = result_.evaluated < total_;
    if (options_.progress) options_.progress(result_.evaluated, total_);
    return states;
  }

  int total_values() const { return value_offset_.back(); }
  size_t top_k() const { return top_k_; }
  bool hedging() const { return hedging_; }
  // Where axis a's values start in a row of WorkerState::value_counts.
  int value_offset(int a) const { return value_offset_[a]; }

 private:
  // One worker: chunks until none is left or the sweep is cancelled.
  void Work(int t, WorkerState& state) {
    state.value_counts.assign(static_cast<size_t>(kNumLimits) * total_values(), 0);
    FitEngine::Scratch scratch;
    std::vector<int64_t> values = result_.base_values;
    std::vector<int> digit(num_axes_, 0);
    FitResult fit;
    for (;;) {
      if (options_.cancel != nullptr && options_.cancel->load(std::memory_order_relaxed)) break;
      const uint64_t chunk = next_chunk_.fetch_add(1);
      if (chunk >= num_chunks_) break;
      const uint64_t begin = chunk * kChunk;
      const uint64_t end = std::min(total_, begin + kChunk);
      // Decode `begin` once (last axis fastest), then count like an odometer.
      uint64_t rest = begin;
      for (int a = num_axes_ - 1; a >= 0; --a) {
        const uint64_t size = result_.axes[a].values.size();
        digit[a] = static_cast<int>(rest % size);
        rest /= size;
        values[result_.axes[a].slot] = result_.axes[a].values[digit[a]];
      }
      for (uint64_t index = begin; index < end; ++index) {
        EvaluateOne(index, values, digit, scratch, fit, state);
        Advance(values, digit);
      }
      const uint64_t finished = done_.fetch_add(end - begin) + (end - begin);
      if (options_.progress && t == 0) options_.progress(finished, total_);
    }
  }

  // Asks the engine about configuration `index` and adds its outcome to the worker's tally (and
  // its cell, with record_cells).
  void EvaluateOne(uint64_t index, const std::vector<int64_t>& values, const std::vector<int>& digit,
                   FitEngine::Scratch& scratch, FitResult& fit, WorkerState& state) {
    absl::Status status = engine_.Evaluate(values, scratch, &fit);
    if (!status.ok()) {
      fit.fits = false;
      fit.limit = Limit::kInvalid;
    }
    PlanCell* cell = options_.record_cells ? &result_.cells[index] : nullptr;
    if (cell != nullptr) {
      cell->fits = fit.fits;
      cell->limit = fit.limit;
      cell->required = fit.required;
      cell->available = fit.available;
      cell->broken_requirement = status.ok() ? fit.broken_requirement : -1;
    }
    if (fit.fits) {
      ++state.fitting;
      if (top_k_ > 0 || cell != nullptr) Estimate(index, values, digit, scratch, fit, cell, state);
      return;
    }
    const int l = static_cast<int>(fit.limit);
    ++state.counts[l];
    if (status.ok() && fit.verdict == FitVerdict::kAtRisk) ++state.at_risk;
    if (index < state.first_index[l]) {
      state.first_index[l] = index;
      if (!status.ok()) state.first_message[l] = std::string(status.message());
    }
    uint64_t* row = &state.value_counts[static_cast<size_t>(l) * total_values()];
    for (int a = 0; a < num_axes_; ++a) ++row[value_offset_[a] + digit[a]];
  }

  // A fitting configuration's estimate, kept among the worker's top_k fastest.
  void Estimate(uint64_t index, const std::vector<int64_t>& values, const std::vector<int>& digit,
                FitEngine::Scratch& scratch, const FitResult& fit, PlanCell* cell, WorkerState& state) const {
    PerfInputs in;
    double time = std::numeric_limits<double>::infinity();
    double inflight = 0;
    double own_wait_time = time;
    double fillable_wait = 0;
    if (EvaluatePerfInputs(graph_, perf_, values, scratch, fit, &in)) {
      const PerfEstimate e = result_.model.Estimate(in);
      const double residual = options_.residuals ? options_.residuals->Factor(values).value_or(1.0) : 1.0;
      time = e.time_s * residual;
      own_wait_time = e.own_wait_time_s * residual;
      inflight = e.inflight_bytes_per_core;
      fillable_wait = FillableWait(e, in.blocks_per_core) * residual;
      if (!(time > 0)) {
        ++state.zero_estimates;
        state.first_zero_estimate = std::min(state.first_zero_estimate, index);
      }
    } else {
      ++state.unestimated;
    }
    if (cell != nullptr) {
      cell->estimated = std::isfinite(time);
      cell->time_s = cell->estimated ? time : 0;
    }
    Candidate c{RankKey{time, inflight}, index, in.blocks_per_core, own_wait_time, fillable_wait};
    state.own_waits_differ = state.own_waits_differ || own_wait_time != time;
    if (hedging_ && std::isfinite(time)) {
      const uint64_t shape = BlockShape(block_axes_, result_.axes, digit);
      KeepBetter(state.block_best, shape, c, FasterOwnWait);
      KeepBetter(state.filled_best, std::pair{shape, c.blocks_per_core}, c, FasterFilled);
    }
    if (top_k_ == 0) {
      // Estimated for the record only.
    } else if (state.heap.size() < top_k_) {
      state.heap.push_back(c);
      std::push_heap(state.heap.begin(), state.heap.end());
    } else if (c < state.heap.front()) {
      std::pop_heap(state.heap.begin(), state.heap.end());
      state.heap.back() = c;
      std::push_heap(state.heap.begin(), state.heap.end());
    }
  }

  // The next configuration: the odometer's last digit turns fastest.
  void Advance(std::vector<int64_t>& values, std::vector<int>& digit) const {
    for (int a = num_axes_ - 1; a >= 0; --a) {
      if (++digit[a] < static_cast<int>(result_.axes[a].values.size())) {
        values[result_.axes[a].slot] = result_.axes[a].values[digit[a]];
        return;
      }
      digit[a] = 0;
      values[result_.axes[a].slot] = result_.axes[a].values[0];
    }
  }

  const CompiledGraph& graph_;
  const FitEngine& engine_;
  const PerfExpressions& perf_;
  const PlanOptions& options_;
  PlanResult& result_;
  const int num_axes_;
  const uint64_t total_;
  const uint64_t num_chunks_;
  const size_t top_k_;
  std::vector<int> value_offset_;
  std::vector<int> block_axes_;
  bool hedging_ = false;
  std::atomic<uint64_t> next_chunk_{0};
  std::atomic<uint64_t> done_{0};
};
// The workers' tallies added up in a fixed order: sums, minima and a total order on candidates
// make the result independent of which thread saw what. The merged heap is the top_k candidates,
// best first.
WorkerState MergeWorkers(const std::vector<WorkerState>& states, size_t top_k, int total_values) {
  WorkerState merged;
  merged.value_counts.assign(static_cast<size_t>(kNumLimits) * total_values, 0);
  for (const WorkerState& state : states) {
    merged.fitting += state.fitting;
    merged.at_risk += state.at_risk;
    merged.unestimated += state.unestimated;
    merged.zero_estimates += state.zero_estimates;
    merged.first_zero_estimate = std::min(merged.first_zero_estimate, state.first_zero_estimate);
    merged.own_waits_differ = merged.own_waits_differ || state.own_waits_differ;
    merged.heap.insert(merged.heap.end(), state.heap.begin(), state.heap.end());
    for (const auto& [shape, c] : state.block_best) KeepBetter(merged.block_best, shape, c, FasterOwnWait);
    for (const auto& [key, c] : state.filled_best) KeepBetter(merged.filled_best, key, c, FasterFilled);
    for (int l = 0; l < kNumLimits; ++l) {
      merged.counts[l] += state.counts[l];
      if (state.first_index[l] < merged.first_index[l]) {
        merged.first_index[l] = state.first_index[l];
        merged.first_message[l] = state.first_message[l];
      }
    }
    for (size_t i = 0; i < merged.value_counts.size() && i < state.value_counts.size(); ++i) {
      merged.value_counts[i] += state.value_counts[i];
    }
  }
  std::sort(merged.heap.begin(), merged.heap.end());
  if (merged.heap.size() > top_k) merged.heap.resize(top_k);
  return merged;
}

// Configurations again, with every figure the report shows: the engine's result and the
// estimate (with its residual).
absl::StatusOr<std::vector<RankedConfig>> Rank(const CompiledGraph& graph, const FitEngine& engine,
                                               const PerfExpressions& perf, const PlanOptions& options,
                                               const std::vector<Candidate>& candidates, const PlanResult& result) {
  FitEngine::Scratch scratch;
  std::vector<RankedConfig> ranked_list;
  for (const Candidate& c : candidates) {
    RankedConfig ranked;
    ranked.index = c.index;
    std::vector<int64_t> all;
    DecodeIndex(result, c.index, &ranked.values, &all);
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
    ranked_list.push_back(std::move(ranked));
  }
  return ranked_list;
}

// `base`'s occupancy twin: of the candidates filled_best keeps (each block shape's fastest once
// filled at each count of blocks per core), those not yet `listed` that the estimate where every
// block adds its own sync waits puts behind base at more blocks per core, the fastest once the
// sync waits their co-resident blocks could fill are filled (FilledTime), where that is within
// base's such estimate. The depth, the warps and the K step trade blocks per core against sync
// waits per block, and that estimate, which charges every block's sync wait, may put the twin
// behind base where co-resident blocks would fill those waits (Hedge::kMoreBlocksPerCore).
std::optional<Candidate> OccupancyTwin(const WorkerState& merged, const Candidate& base,
                                       const absl::flat_hash_set<uint64_t>& listed) {
  std::optional<Candidate> twin;
  for (const auto& [key, c] : merged.filled_best) {
    if (c.blocks_per_core <= base.blocks_per_core || FilledTime(c) > base.own_wait_time_s || !FasterOwnWait(base, c)) {
      continue;
    }
    if (listed.contains(c.index)) continue;
    if (!twin || FasterFilled(c, *twin)) twin = c;
  }
  return twin;
}

// The ranking's configurations that open the shortlist, ahead of the reading where every block
// adds its own sync waits: the model's reading of those waits (co-resident blocks issue through
// them) was measured on the H200, and the H100's co-resident blocks fill less of them
// (docs/planner.md, "Co-resident blocks and the mma.sync wait").
constexpr size_t kRankingFirst = 2;

// The shortlist's candidates (PlanResult::shortlist) and why each is there: the ranking's first
// kRankingFirst (its pick alone where no estimate has sync waits co-resident blocks share), then,
// where every block adds its own sync waits, that estimate's pick, each
// other block shape's fastest within the ranking error of the pick's, each of those followed by
// its occupancy twin (OccupancyTwin), then the rest of the ranking; each once, at most top_k.
std::vector<std::pair<Candidate, Hedge>> ShortlistCandidates(const WorkerState& merged, const PlanResult& result,
                                                             size_t top_k) {
  std::vector<std::pair<Candidate, Hedge>> list;
  if (merged.heap.empty() || merged.block_best.empty()) return list;
  absl::flat_hash_set<uint64_t> listed;
  auto add = [&](const Candidate& c, Hedge why) {
    if (listed.insert(c.index).second) list.emplace_back(c, why);
  };
  const size_t ranking_first = merged.own_waits_differ ? kRankingFirst : 1;
  for (size_t i = 0; i < std::min(ranking_first, merged.heap.size()); ++i) add(merged.heap[i], Hedge::kNone);
  // block_best holds one candidate a block shape, so its fastest is that reading's pick and every
  // other entry is another shape's fastest.
  std::vector<Candidate> hedges;
  for (const auto& [shape, c] : merged.block_best) hedges.push_back(c);
  std::sort(hedges.begin(), hedges.end(), FasterOwnWait);
  const Candidate own_pick = hedges.front();
  std::erase_if(hedges, [&](const Candidate& c) {
    return c.index != own_pick.index &&
           !WithinRankingError(c.own_wait_time_s, own_pick.own_wait_time_s, result.ranking_error_permille);
  });
  for (const Candidate& c : hedges) {
    add(c, c.index == own_pick.index ? Hedge::kOwnSyncWaits : Hedge::kBlockShape);
    if (const std::optional<Candidate> twin = OccupancyTwin(merged, c, listed)) add(*twin, Hedge::kMoreBlocksPerCore);
  }
  for (const Candidate& c : merged.heap) add(c, Hedge::kNone);
  if (list.size() > top_k) list.resize(top_k);
  return list;
}

// PlanResult::shortlist with every figure the report shows: the ranking's configurations as
// `result.top` has them, the hedges it lacks ranked here.
absl::StatusOr<std::vector<RankedConfig>> RankShortlist(const CompiledGraph& graph, const FitEngine& engine,
                                                        const PerfExpressions& perf, const PlanOptions& options,
                                                        const WorkerState& merged, size_t top_k,
                                                        const PlanResult& result) {
  const std::vector<std::pair<Candidate, Hedge>> listed = ShortlistCandidates(merged, result, top_k);
  absl::flat_hash_map<uint64_t, const RankedConfig*> ranked;
  for (const RankedConfig& c : result.top) ranked[c.index] = &c;
  std::vector<Candidate> unranked;
  for (const auto& [c, why] : listed) {
    if (!ranked.contains(c.index)) unranked.push_back(c);
  }
  ASSIGN_OR_RETURN(const std::vector<RankedConfig> hedges, Rank(graph, engine, perf, options, unranked, result));
  for (const RankedConfig& c : hedges) ranked[c.index] = &c;
  std::vector<RankedConfig> shortlist;
  for (const auto& [c, why] : listed) {
    shortlist.push_back(*ranked.at(c.index));
    shortlist.back().hedge = why;
  }
  return shortlist;
}

// One family per limit that pruned something: its first configuration evaluated again for the
// figures and the message, and (of a whole sweep) the axis values it pruned throughout.
void DescribePruned(const CompiledGraph& graph, const FitEngine& engine, const Sweep& sweep, const WorkerState& merged,
                    PlanResult& result) {
  FitEngine::Scratch scratch;
  const int num_axes = static_cast<int>(result.axes.size());
  for (int l = 0; l < kNumLimits; ++l) {
    if (merged.counts[l] == 0) continue;
    PrunedFamily family;
    family.limit = static_cast<Limit>(l);
    family.count = merged.counts[l];
    family.example_index = merged.first_index[l];
    std::vector<int64_t> all;
    DecodeIndex(result, merged.first_index[l], &family.example, &all);
    FitResult fit;
    absl::Status status = engine.Evaluate(all, scratch, &fit);
    family.message = !status.ok()                   ? std::string(status.message())
                     : fit.broken_requirement >= 0 ? BrokenRequirementMessage(graph, fit.broken_requirement)
                                                   : merged.first_message[l];
    family.required = fit.required;
    family.available = fit.available;
    // Which values were pruned throughout is known only of a whole sweep.
    for (int a = 0; a < num_axes && !result.partial; ++a) {
      const uint64_t per_value = result.space_size / result.axes[a].values.size();
      for (size_t v = 0; v < result.axes[a].values.size(); ++v) {
        if (merged.value_counts[static_cast<size_t>(l) * sweep.total_values() + sweep.value_offset(a) + v] ==
            per_value) {
          family.whole_values.emplace_back(a, result.axes[a].values[v]);
        }
      }
    }
    result.pruned.push_back(std::move(family));
  }
}

// A kernel takes time: an estimate of none means the graph gave the model no work to time, and
// ranking by it would put the emptiest configuration first.
absl::Status ZeroEstimateError(const CompiledGraph& graph, const PlanResult& result, const WorkerState& merged) {
  std::vector<int64_t> values, all;
  DecodeIndex(result, merged.first_zero_estimate, &values, &all);
  std::vector<std::string> assignments;
  for (size_t a = 0; a < result.axes.size(); ++a) assignments.push_back(absl::StrCat(result.axes[a].name, "=", values[a]));
  return absl::InvalidArgumentError(absl::StrCat(
      graph.origin, ": the performance model estimates 0 us for ", merged.zero_estimates, " fitting configuration",
      merged.zero_estimates == 1 ? "" : "s", assignments.empty() ? "" : absl::StrCat(" (e.g. ", absl::StrJoin(assignments, " "), ")"),
      ": the graph gives it no work to time (no flops, no global_bytes, no OPERAND buffer an op loads); give the "
      "graph flops or global_bytes to rank it"));
}

}  // namespace

bool WithinRankingError(double time_s, double pick_time_s, int64_t ranking_error_permille) {
  return ranking_error_permille >= 0 && time_s <= pick_time_s * (1 + ranking_error_permille / 1000.0);
}

RankKey RankKeyOf(const RankedConfig& config) {
  if (!config.estimated) return RankKey{std::numeric_limits<double>::infinity(), 0};
  return RankKey{config.perf.time_s, config.perf.inflight_bytes_per_core};
}

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
  engine_options.compiled_registers = options.compiled_registers;
  ASSIGN_OR_RETURN(FitEngine engine, FitEngine::Create(graph, device, engine_options));
  ASSIGN_OR_RETURN(PerfExpressions perf, CompilePerfExpressions(graph));
  RETURN_IF_ERROR(PreparePerformanceModel(graph, device, perf, options, result));
  {
    // The problem's sizes are fixed for the whole sweep: the requirements on them alone and the
    // graph's ranking assumptions are settled once, at them.
    std::vector<int64_t> sizes = base_values;
    BindDeviceSymbols(graph, device, absl::MakeSpan(sizes));
    RETURN_IF_ERROR(CheckProblemRequirements(graph, sizes));
    for (std::string& warning : BrokenRankingAssumptions(graph, sizes)) result.warnings.push_back(std::move(warning));
    if (graph.ranking_error_permille) {
      absl::StatusOr<int64_t> permille = graph.ranking_error_permille->Evaluate(sizes);
      if (!permille.ok() || *permille < 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            graph.origin, ": ranking_error_permille \"", graph.ranking_error_permille->text(), "\" ",
            permille.ok() ? absl::StrCat("is ", *permille, " at the problem's sizes; it must be >= 0")
                          : absl::StrCat("fails at the problem's sizes: ", permille.status().message())));
      }
      result.ranking_error_permille = *permille;
    }
  }

  result.axes = std::move(axes);
  result.base_values = std::move(base_values);
  // The device symbols follow the device here too, so the performance expressions see them.
  BindDeviceSymbols(graph, device, absl::MakeSpan(result.base_values));
  RETURN_IF_ERROR(SizeSpace(options, result));

  Sweep sweep(graph, engine, perf, options, result);
  const WorkerState merged = MergeWorkers(sweep.Run(), sweep.top_k(), sweep.total_values());
  result.fitting = merged.fitting;
  result.at_risk = merged.at_risk;
  result.unestimated = merged.unestimated;
  if (merged.zero_estimates > 0) return ZeroEstimateError(graph, result, merged);
  if (result.unestimated > 0) {
    result.notes.push_back(absl::StrCat(
        result.unestimated, " fitting configuration", result.unestimated == 1 ? " has" : "s have",
        " no estimate: a performance expression (flops, global_bytes, smem_bytes, the L2 reuse fields, "
        "peak_percent, sync_cycles, wait_cycles, smem_round_trips, issue_slots, warp_stall_percent, chains_per_block, "
        "chain_latency_cycles, a grid or loop trip count) failed for ",
        result.unestimated == 1 ? "it" : "them",
        " or left its range (peak_percent must be > 0, the cycle, round-trip and issue-slot counts >= 0, "
        "chains_per_block >= 1, warp_stall_percent 0-99); they rank last"));
  }
  ASSIGN_OR_RETURN(result.top, Rank(graph, engine, perf, options, merged.heap, result));
  if (sweep.hedging()) {
    ASSIGN_OR_RETURN(result.shortlist,
                     RankShortlist(graph, engine, perf, options, merged, sweep.top_k(), result));
  } else {
    result.shortlist = result.top;
  }
  DescribePruned(graph, engine, sweep, merged, result);
  return result;
}

}  // namespace scratchsim
