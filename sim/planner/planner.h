// The tile planner's search: sweeps a parameter space on a device, asks the fit engine about
// every configuration (pruning what does not fit, by the limit that pruned it) and ranks the rest.
#ifndef SCRATCHSIM_SIM_PLANNER_PLANNER_H_
#define SCRATCHSIM_SIM_PLANNER_PLANNER_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/device.pb.h"
#include "sim/engine.h"
#include "sim/graph.h"
#include "sim/planner/model_terms.h"
#include "sim/planner/param_space.h"
#include "sim/planner/perf_model.h"
#include "sim/planner/residuals.h"

namespace scratchsim {

// Beyond this the sweep takes hours even at full speed: ask for a narrower space.
inline constexpr uint64_t kMaxPlanSpace = uint64_t{1} << 36;

struct PlanOptions {
  int top_k = 10;
  int threads = 0;   // 0: std::thread::hardware_concurrency
  bool allow_spills = false;
  PlacementPolicyKind policy = PlacementPolicyKind::kFirstFitDecreasing;
  // A front end's own allocator (Triton's, for imported TTGIR) instead of `policy`.
  std::shared_ptr<const PlacementPolicy> policy_override;
  std::string compute_dtype;   // empty: graph.compute_dtype, else the operands' dtype
  // Called now and then from one worker with (configurations done, total).
  std::function<void(uint64_t, uint64_t)> progress;
  // Read before each chunk of configurations: once it is true the sweep stops and Plan returns
  // what it has, marked partial (the driver sets it on SIGINT).
  const std::atomic<bool>* cancel = nullptr;
  // Keep every configuration's outcome (PlanResult::cells), for a map of a small space (at most
  // kMaxRecordedCells configurations).
  bool record_cells = false;
  // Measured corrections per configuration (`simulate calibrate --residuals`): each estimate is
  // multiplied by its configuration's factor. Null or empty: the model's estimates.
  std::shared_ptr<const ResidualTable> residuals;
  // A compiler's registers for the configurations it compiled (`simulate plan --registers`), in
  // place of the graph's estimate: occupancy and spills from what was allocated. Null: estimates.
  std::shared_ptr<const CompiledRegisterTable> compiled_registers;
};

inline constexpr uint64_t kMaxRecordedCells = uint64_t{1} << 20;

// One configuration's outcome, with PlanOptions::record_cells.
struct PlanCell {
  bool fits = false;
  Limit limit = Limit::kInvalid;  // what pruned it, when it does not fit
  int64_t required = 0;           // of `limit`
  int64_t available = 0;
  int broken_requirement = -1;    // Limit::kInvalid: the graph requirement it breaks, if that is why
  bool estimated = false;         // fits and the performance model gave a time
  double time_s = 0;
};

// Why a configuration is in the autotuning shortlist ahead of its place in the ranking.
enum class Hedge {
  kNone,
  // The fastest configuration of its block shape, within the ranking error of the pick.
  kBlockShape,
  // A configuration ranked behind the one it follows, at more blocks per core, whose estimate less
  // the sync waits those blocks could fill is within that one's: the model charges every block's
  // sync wait, and where co-resident blocks fill it the deeper-occupied twin is the faster.
  kMoreBlocksPerCore,
  // The pick where every block adds its own sync waits, co-resident blocks filling none of them:
  // the other reading of those waits, which the ranking takes as shared (PerfEstimate::own_wait_time_s).
  kOwnSyncWaits,
};

struct RankedConfig {
  uint64_t index = 0;            // position in the enumeration
  std::vector<int64_t> values;   // one per axis
  FitResult fit;
  PerfEstimate perf;
  // False when a performance expression failed or left its range for this configuration
  // (PlanResult::unestimated counts them); perf is then empty and the configuration ranks last.
  bool estimated = true;
  // The measured residual its estimate was multiplied by (perf.time_s includes it); 0: none.
  double residual = 0;
  // Why it is in the shortlist out of the ranking's order (PlanResult::shortlist); kNone: for its
  // estimate's place.
  Hedge hedge = Hedge::kNone;
};

// All configurations one limit pruned, and what they have in common.
struct PrunedFamily {
  Limit limit = Limit::kInvalid;
  uint64_t count = 0;
  uint64_t example_index = 0;    // the first pruned configuration in enumeration order
  std::vector<int64_t> example;  // its axis values
  int64_t required = 0;
  int64_t available = 0;
  std::string message;           // kInvalid: the error
  // Axis values every configuration of which this limit pruned: (axis, value).
  std::vector<std::pair<int, int64_t>> whole_values;
};

struct PlanResult {
  std::vector<ParamAxis> axes;
  std::vector<int64_t> base_values;  // every parameter, before the sweep sets the axes
  uint64_t space_size = 0;
  // Configurations evaluated: space_size unless the sweep was cancelled (then partial is true,
  // every count is over the evaluated ones and no family has whole_values).
  uint64_t evaluated = 0;
  bool partial = false;
  uint64_t fitting = 0;
  uint64_t unestimated = 0;          // fitting configurations without an estimate (ranked last)
  // Pruned as AT RISK (counted under their limit too): an estimated buffer's high bound breaks a
  // limit its central size holds, or the low bound holds it (docs/tpu.md).
  uint64_t at_risk = 0;
  std::vector<RankedConfig> top;     // fastest first; ties by enumeration order
  // What an autotuner should time, in order, at most top_k: the pick (top's first), then the
  // fastest configuration of each other block shape (the graph's block_dim parameters) whose
  // estimate is within the ranking error of the pick's, fastest first, then the rest of top.
  // Configurations of one block shape share the model's block-dependent terms, so where the model
  // misjudges a block shape every configuration of it misses together; the hedges bound that.
  // Each of the pick and those hedges is followed by its occupancy twin where it has one
  // (Hedge::kMoreBlocksPerCore). Without a ranking error or block dimensions: top.
  std::vector<RankedConfig> shortlist;
  int64_t ranking_error_permille = -1;  // the graph's, at the problem's sizes; -1: none
  std::vector<PrunedFamily> pruned;  // by Limit order, only limits that pruned something
  std::vector<PlanCell> cells;       // with record_cells: one per configuration, in enumeration order
  std::string compute_dtype;
  bool flops_known = false;          // scores are TFLOP/s; else GB/s of global traffic
  std::vector<std::string> notes;    // what the model assumed
  // The device terms the ranking used and where each came from; a warning per term the device
  // model does not give (its stand-in is in `terms`, marked assumed).
  std::vector<ModelTerm> terms;
  std::vector<std::string> warnings;
  // Where nothing fits: the fixes `simulate` suggests for the configuration the plan started
  // from (the defaults with --set), filled by the caller that can simulate it (sim/driver).
  std::vector<std::string> to_fit;
  PerfModel model;
  int threads_used = 1;
};

// The ranking's order of two estimates: the shorter time first (a configuration without an
// estimate counts as infinitely slow); between equal times, more bytes in flight per core first,
// since they tolerate more latency. Equal keys are the caller's to order (Plan: enumeration
// order; PlanFamilies: the order the families were given).
struct RankKey {
  double time_s = 0;
  double inflight_bytes_per_core = 0;
  bool operator<(const RankKey& o) const {  // "ranks before"
    if (time_s != o.time_s) return time_s < o.time_s;
    return inflight_bytes_per_core > o.inflight_bytes_per_core;
  }
  bool operator==(const RankKey& o) const = default;
};
RankKey RankKeyOf(const RankedConfig& config);

// The shortlist's hedge rule: an estimate within the ranking error (thousandths; negative: none)
// of the pick's. One rule for one plan (PlanResult::shortlist) and for families planned together.
bool WithinRankingError(double time_s, double pick_time_s, int64_t ranking_error_permille);

// Sweeps `axes` over `base_values` (BindParameters output). Deterministic: the result does not
// depend on the thread count.
absl::StatusOr<PlanResult> Plan(const CompiledGraph& graph, const DeviceModel& device,
                                std::vector<ParamAxis> axes, std::vector<int64_t> base_values,
                                const PlanOptions& options);

}  // namespace scratchsim

#endif  // SCRATCHSIM_SIM_PLANNER_PLANNER_H_
