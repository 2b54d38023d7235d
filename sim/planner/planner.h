// The tile planner: enumerates a kernel's parameter space on a device, prunes every
// configuration that does not fit (by the same rules as Simulate) and ranks the rest by speed.
#ifndef SCRATCHSIM_SIM_PLANNER_H_
#define SCRATCHSIM_SIM_PLANNER_H_

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "proto/device.pb.h"
#include "sim/expr.h"
#include "sim/graph.h"
#include "sim/liveness.h"
#include "sim/perf_model.h"
#include "sim/placement.h"

namespace scratchsim {

// One swept parameter and the values it takes, in sweep order.
struct ParamAxis {
  std::string name;
  int slot = -1;                 // index into the graph's parameter values
  std::vector<int64_t> values;
  bool from_graph = false;       // the graph's min/max/power_of_two, not --param
};

// Parses a --param spec: NAME=LO..HI, NAME=LO..HI:pow2, NAME=LO..HI:step=S or NAME=V1,V2,...
// Unknown or problem-size parameters, malformed numbers and empty ranges are errors that quote
// the spec.
absl::StatusOr<ParamAxis> ParseParamSpec(absl::string_view spec, const CompiledGraph& graph);

// The space to sweep: every --param spec, then every other tuning parameter the graph gives a
// range (min/max, power_of_two) that --set does not fix. Problem-size parameters stay fixed.
absl::StatusOr<std::vector<ParamAxis>> BuildParamSpace(const CompiledGraph& graph,
                                                       absl::Span<const std::string> param_specs,
                                                       absl::Span<const std::string> set_overrides);

// Why a configuration is pruned; the planner credits the first in this order.
enum class Limit : uint8_t {
  kInvalid = 0,         // an expression fails: a non-positive extent, overflow, division by zero
  kThreads,             // threads per block above the kernel's or hardware's maximum
  kSharedMemory,        // per-block shared memory / LDS
  kStaticSharedMemory,  // static __shared__ above the 48 KiB default
  kTensorMemory,        // TMEM columns
  kVmemScoped,          // TPU scoped VMEM limit
  kVmemProgram,         // TPU program-scoped VMEM plus the scoped region above capacity
  kCapacity,            // any other space (TPU SMEM) above its capacity
  kRegisterSpill,       // register demand above the budget (Simulate warns; the planner prunes)
  kNoResidency,         // fits the per-block limits but no block can be resident on a core
};
inline constexpr int kNumLimits = 10;
absl::string_view LimitName(Limit limit);

inline constexpr int kMaxSpaces = 8;

// What the planner learns about one configuration; mirrors the verdicts of a Simulate Report.
struct FitResult {
  bool simulate_fits = false;    // Report.fits
  bool fits = false;             // the planner's verdict (also no spills, a block can be resident)
  Limit limit = Limit::kInvalid; // the first limit violated when !fits
  int64_t required = 0;          // for `limit`
  int64_t available = 0;
  // Per device memory space (DeviceModel.memory_spaces order): SpaceReport.peak_bytes, -1 when
  // the graph places nothing there.
  std::array<int64_t, kMaxSpaces> peak_bytes{};
  int64_t threads = 0;           // 0 when the device has no thread model (TPU)
  int64_t warps = 0;
  int64_t register_demand = -1;  // -1: the graph gives none
  int64_t register_budget = 0;
  int64_t spill_bytes_per_thread = 0;
  bool has_occupancy = false;
  int32_t blocks_per_core = 0;
  int8_t occupancy_factor = -1;  // 0 warps, 1 registers, 2 shared memory, 3 blocks
  int broken_requirement = -1;   // limit kInvalid: the graph requirement it breaks, if that is why
};

// Evaluates configurations without building Reports: everything that does not depend on the
// parameter values (live ranges, space groups, interference) is derived once by Create.
class FitEvaluator {
 public:
  // Buffers reused between calls so that Evaluate does not allocate once warmed up; one per thread.
  struct Scratch {
    struct Item {
      int64_t size, alignment, start, end, offset;
      int64_t key;  // original position in the group, the last tie-break of the sort
    };
    std::vector<Item> items;
    std::vector<int> order;
    std::vector<int> placed;
    std::vector<int64_t> bytes;   // per buffer
    std::vector<int64_t> copies;
    std::vector<int64_t> align;
  };

  // `prune_spills`: register spills make a configuration not fit (Simulate only warns).
  static absl::StatusOr<FitEvaluator> Create(const CompiledGraph& graph, const DeviceModel& device,
                                             PlacementPolicyKind policy, bool prune_spills = true);

  // `values` as Simulate takes them (WARP_SIZE is bound here). A non-OK status is what
  // Simulate would return for the same values (an expression failing).
  absl::Status Evaluate(absl::Span<const int64_t> values, Scratch& scratch, FitResult* out) const;

  // The blocks-per-core figure of ComputeOccupancy, without building a proto. Exposed for tests.
  // Returns false where ComputeOccupancy would fail (then Simulate reports no occupancy).
  bool Occupancy(int64_t threads, int64_t registers, int64_t static_bytes, int64_t dynamic_bytes,
                 int32_t* blocks, int8_t* factor) const;

  const DeviceModel& device() const { return *device_; }
  const CompiledGraph& graph() const { return *graph_; }

 private:
  struct BufferInfo {
    int buffer;
    int group;
    int64_t start, end;
    int64_t default_alignment;
  };
  struct GroupInfo {
    int space;            // device memory space index
    bool second;          // static (GPU) or program-scoped (TPU) part
    int first_buffer = 0; // range in buffers_
    int num_buffers = 0;
    bool all_interfere = true;
  };
  struct SpaceInfo {
    int index = -1;
    MemoryKind kind = MEMORY_KIND_UNSPECIFIED;
    int group[2] = {-1, -1};
    bool reported = false;
  };

  int64_t PlaceGroup(const GroupInfo& group, Scratch& scratch, bool* overflow) const;

  const CompiledGraph* graph_ = nullptr;
  const DeviceModel* device_ = nullptr;
  bool best_fit_ = false;
  bool prune_spills_ = true;
  std::vector<BufferInfo> buffers_;   // used buffers, grouped, in buffer order within a group
  std::vector<GroupInfo> groups_;
  std::vector<SpaceInfo> spaces_;     // per device memory space
  bool execution_ = false;            // the device has a thread/register model (not TPU)
  // Occupancy constants, derived once.
  bool occupancy_ok_ = false;
  int shared_space_ = -1;
  int64_t preferred_carveout_ = -1;
  std::vector<int64_t> carveout_steps_;  // bytes, ascending
};

// What the performance model derives from the graph once, beyond the expressions CompiledGraph
// holds: per-operand traffic without global_bytes, and the pipelined loop.
struct PerfExpressions {
  // Without global_bytes: each operand tile crosses global memory once per iteration of the
  // loops around its first writer (or first user).
  struct OperandTraffic {
    int buffer;
    std::vector<Expr> trips;
  };
  std::vector<OperandTraffic> operands;
  std::vector<Expr> stages;   // loop num_stages
  // The pipelined loop (the first with num_stages): its trip count, and the buffers that ops
  // of kind "async_copy" inside it write (one copy of each is a stage's load).
  std::optional<Expr> pipeline_trips;
  std::vector<int> stage_buffers;
};
absl::StatusOr<PerfExpressions> CompilePerfExpressions(const CompiledGraph& graph);

struct PlanOptions {
  int top_k = 10;
  int threads = 0;   // 0: std::thread::hardware_concurrency
  bool allow_spills = false;
  PlacementPolicyKind policy = PlacementPolicyKind::kFirstFitDecreasing;
  std::string compute_dtype;   // empty: graph.compute_dtype, else the operands' dtype
  // Called now and then from one worker with (configurations done, total).
  std::function<void(uint64_t, uint64_t)> progress;
};

struct RankedConfig {
  uint64_t index = 0;            // position in the enumeration
  std::vector<int64_t> values;   // one per axis
  FitResult fit;
  PerfEstimate perf;
  // False when a performance expression failed or left its range for this configuration
  // (PlanResult::unestimated counts them); perf is then empty and the configuration ranks last.
  bool estimated = true;
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
  uint64_t fitting = 0;
  uint64_t unestimated = 0;          // fitting configurations without an estimate (ranked last)
  std::vector<RankedConfig> top;     // fastest first; ties by enumeration order
  std::vector<PrunedFamily> pruned;  // by Limit order, only limits that pruned something
  std::string compute_dtype;
  bool flops_known = false;          // scores are TFLOP/s; else GB/s of global traffic
  std::vector<std::string> notes;    // what the model assumed
  PerfModel model;
  int threads_used = 1;
};

// Sweeps `axes` over `base_values` (BindParameters output). Deterministic: the result does not
// depend on the thread count.
absl::StatusOr<PlanResult> Plan(const CompiledGraph& graph, const DeviceModel& device,
                                std::vector<ParamAxis> axes, std::vector<int64_t> base_values,
                                const PlanOptions& options);

}  // namespace scratchsim

#endif  // SCRATCHSIM_SIM_PLANNER_H_
