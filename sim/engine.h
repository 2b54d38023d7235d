// The fit engine: a kernel graph compiled for one device once, then evaluated per configuration.
// Every rule that decides fit lives here, once: Simulate explains a result, the planner ranks many.
#ifndef SCRATCHSIM_SIM_ENGINE_H_
#define SCRATCHSIM_SIM_ENGINE_H_

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "proto/device.pb.h"
#include "sim/compiled_registers.h"
#include "sim/graph.h"
#include "sim/liveness.h"
#include "sim/occupancy.h"
#include "sim/placement.h"

namespace scratchsim {

// Why a configuration does not fit, in the order a verdict credits them (the first one breached
// is the reason a configuration is pruned).
enum class Limit : uint8_t {
  kInvalid = 0,         // not a kernel: a graph requirement breaks, or an expression fails
  kThreads,             // threads per block above the kernel's or hardware's maximum
  kSharedMemory,        // per-block shared memory / LDS
  kStaticSharedMemory,  // static __shared__ above the per-block default (48 KiB)
  kTensorMemory,        // TMEM columns
  kVmemScoped,          // TPU scoped VMEM limit
  kVmemProgram,         // TPU program-scoped VMEM plus the scoped region above capacity
  kCapacity,            // any other space (TPU SMEM) above its capacity
  kRegisterSpill,       // register demand above the budget: fatal only with spills_fatal
  kNoResidency,         // fits the per-block limits but no block can be resident on a core
};
inline constexpr int kNumLimits = 10;
// Each limit's name and words are in sim/limits (LimitName), not here: the engine decides, it
// does not word.
// The limits of a memory space (shared memory, TMEM, VMEM, capacity): the ones an estimated
// buffer's bounds can change.
bool IsMemoryLimit(Limit limit);

// The verdict with estimates (Buffer.estimate): FITS when every limit holds with each estimate at
// its high bound, DOES NOT FIT when one breaks even at the low bound, else AT RISK. Without
// estimates it is FITS or DOES NOT FIT.
enum class FitVerdict : uint8_t { kFits = 0, kAtRisk, kDoesNotFit };
absl::string_view VerdictName(FitVerdict verdict);  // "FITS", "AT RISK", "DOES NOT FIT"

// Where the limit a space is checked against comes from.
enum class LimitSource : uint8_t {
  kNone = 0,
  kOptIn,          // per-block opt-in maximum
  kDefault,        // per-block default: the kernel does not opt in
  kCapacity,       // capacity per core
  kColumns,        // tensor memory columns x lanes
  kVmemLimitBytes, // the kernel's pltpu.CompilerParams(vmem_limit_bytes)
  kScopedFlag,     // --xla_tpu_scoped_vmem_limit_kib
  kDefaultScoped,  // the generation's default scoped VMEM limit
};
absl::string_view LimitSourceName(LimitSource source);

inline constexpr int kMaxSpaces = 8;
// Per configuration: the blocks (buffer copies) placed, and the threads of one block
// (docs/reliability.md). Beyond them Evaluate is InvalidArgument naming the file and field.
inline constexpr int64_t kMaxPlacedBlocks = int64_t{1} << 22;
inline constexpr int64_t kMaxThreadsPerBlock = int64_t{1} << 30;

// One device memory space after placement.
struct SpaceFigures {
  int64_t peak = -1;     // bytes; -1 when the graph places nothing in the space
  int64_t first = 0;     // dynamic shared memory, or instruction-scoped VMEM
  int64_t second = 0;    // static shared memory (aligned), or program-scoped VMEM
  int64_t limit = 0;     // what `peak` (VMEM: `first`) is held against, in bytes
  LimitSource limit_source = LimitSource::kNone;
  int64_t columns = 0;   // tensor memory: columns the peak occupies
};

struct Breach {
  bool breached = false;
  int space = -1;        // device memory space, -1 for threads and registers
  int64_t required = 0;
  int64_t available = 0;
};

struct FitResult {
  bool fits = false;             // verdict == kFits: no fatal breach (with estimates at their high bound)
  FitVerdict verdict = FitVerdict::kDoesNotFit;
  Limit limit = Limit::kInvalid; // the first fatal breach when !fits (AT RISK: at the high bound)
  int64_t required = 0;          // of `limit`
  int64_t available = 0;
  std::array<Breach, kNumLimits> breaches{};  // every breach, fatal or not (central sizes)
  std::array<SpaceFigures, kMaxSpaces> spaces{};
  // With estimated buffers (graph.has_estimates): the memory spaces and their breaches with every
  // estimate at its low and at its high bound (the same rules as `spaces`).
  bool has_estimates = false;
  std::array<SpaceFigures, kMaxSpaces> spaces_low{};
  std::array<SpaceFigures, kMaxSpaces> spaces_high{};
  std::array<Breach, kNumLimits> breaches_low{};
  std::array<Breach, kNumLimits> breaches_high{};
  int broken_requirement = -1;   // limit kInvalid: the graph requirement it breaks
  // Threads (0 when the device has no thread model, e.g. TPU).
  int64_t threads = 0;
  int64_t warps = 0;
  int64_t thread_limit = 0;
  bool thread_limit_declared = false;  // the kernel's maxntid / launch bounds, not the hardware's
  int64_t register_demand = -1;  // -1: the graph gives none
  bool registers_compiled = false;  // register_demand is a compiler's (EngineOptions::compiled_registers)
  // The compiled registers were for other problems (a compiled_where this one breaks), so
  // register_demand is the graph's estimate.
  bool registers_for_other_problems = false;
  int64_t register_budget = 0;
  int64_t registers_allocated = 0;
  int64_t spill_bytes_per_thread = 0;
  int64_t spill_bytes_per_block = 0;
  // Occupancy: blocks resident per core. A configuration that cannot launch has blocks 0 and
  // `cannot_launch` names the breach; without the device's numbers has_occupancy is false.
  bool has_occupancy = false;
  OccupancyFigures occupancy;
  Limit cannot_launch = Limit::kInvalid;  // meaningful when has_occupancy && occupancy.blocks == 0
  OccupancyInput occupancy_input;
  int32_t blocks_per_core() const { return has_occupancy ? static_cast<int32_t>(occupancy.blocks) : 0; }

  // The state of a default-constructed result for a device of `num_spaces` memory spaces,
  // without rewriting what Evaluate always writes before reading (the planner's hot path).
  void Clear(int num_spaces);
};

struct EngineOptions {
  PlacementPolicyKind policy = PlacementPolicyKind::kFirstFitDecreasing;
  // A front end's own allocator (Triton's, for imported TTGIR) instead of `policy`.
  std::shared_ptr<const PlacementPolicy> policy_override;
  // Register spills make a configuration not fit (the planner's default; Simulate warns).
  bool spills_fatal = false;
  // A compiler's registers for the configurations it compiled, in place of the graph's
  // launch.registers_per_thread (null: the graph's estimate everywhere).
  std::shared_ptr<const CompiledRegisterTable> compiled_registers;
};

// One placed copy of a buffer.
struct PlacedBlock {
  int buffer = 0;
  int64_t copy = 0;
  Block block;          // size after TMEM column rounding; static blocks span the kernel
  int64_t offset = 0;   // within the space (static shared memory first, dynamic after it)
};

class FitEngine {
 public:
  // What one evaluation needs besides the engine; reused between calls so that Evaluate does
  // not allocate once warmed up. One per thread.
  struct Scratch {
    std::vector<int64_t> values;     // parameters with the device symbols bound
    std::vector<int64_t> bytes;      // per buffer
    std::vector<int64_t> bound_bytes;  // per buffer, with the estimates at a bound
    std::vector<int64_t> copies;
    std::vector<int64_t> alignment;
    std::vector<Block> blocks;
    PlacementResult placement;
    // With keep_layout, every placed block by group (group g: layout[g]).
    bool keep_layout = false;
    std::vector<std::vector<PlacedBlock>> layout;
    std::vector<int64_t> partition_warps;  // per launch partition
  };

  static absl::StatusOr<FitEngine> Create(const CompiledGraph& graph, const DeviceModel& device,
                                          const EngineOptions& options = {});

  // Evaluates one configuration: `values` as BindParameters returns them (the device symbols
  // are bound here). A non-OK status is bad input for this configuration: an expression that
  // fails (division by zero, overflow), a non-positive extent. A broken graph requirement is
  // not an error: it is Limit::kInvalid with broken_requirement set.
  absl::Status Evaluate(absl::Span<const int64_t> values, Scratch& scratch, FitResult* out) const;

  const CompiledGraph& graph() const { return *graph_; }
  const DeviceModel& device() const { return *device_; }
  const PlacementPolicy& policy() const { return *policy_; }
  bool has_execution_model() const { return execution_; }

  // The placement groups: a memory space, and within it the split real allocators keep apart
  // (GPU: dynamic, then static __shared__; TPU: instruction-scoped, then program-scoped).
  struct Group {
    int space = -1;       // device memory space index
    bool second = false;  // static (GPU) or program-scoped (TPU)
    std::vector<int> buffers;  // used buffers, in graph order
  };
  const std::vector<Group>& groups() const { return groups_; }
  // Device memory space of each graph buffer.
  int space_of(int buffer) const { return space_of_[buffer]; }
  const LiveRange& live_range(int buffer) const { return ranges_[buffer]; }
  // Graph buffers that no op touches: allocated for the whole kernel, as the compilers keep a
  // declared allocation.
  const std::vector<int>& untouched_buffers() const { return untouched_; }

 private:
  absl::Status EvaluateExecution(absl::Span<const int64_t> values, Scratch& scratch, FitResult* out) const;
  // Places every group with `bytes` per buffer and holds each memory space against its limits:
  // one rule for the central sizes and for the estimates' bounds. keep_layout: record the layout
  // (central sizes only).
  absl::Status PlaceAndCheck(absl::Span<const int64_t> values, Scratch& scratch, const std::vector<int64_t>& bytes,
                             bool keep_layout, std::array<SpaceFigures, kMaxSpaces>& spaces,
                             std::array<Breach, kNumLimits>& breaches) const;

  const CompiledGraph* graph_ = nullptr;
  const DeviceModel* device_ = nullptr;
  std::shared_ptr<const PlacementPolicy> policy_;
  EngineOptions options_;
  std::vector<LiveRange> ranges_;
  std::vector<int> space_of_;
  std::vector<int> untouched_;
  std::vector<Group> groups_;
  std::array<std::array<int, 2>, kMaxSpaces> group_of_space_{};  // [space][second], -1 none
  bool execution_ = false;
  bool occupancy_ok_ = false;
  OccupancyCalculator occupancy_;
};

// The occupancy what-if (`simulate --threads`): a launch of `input` with no graph, judged by the
// rule Evaluate ends with: it fits when a block can be resident (else Limit::kNoResidency). Input
// the occupancy calculator refuses is InvalidArgument.
absl::StatusOr<FitResult> EvaluateLaunch(const DeviceModel& device, const OccupancyInput& input);

// The device memory space a graph's space name means: its own name, or "smem" / "shared" /
// "lds" for the per-block scratchpad whatever the vendor calls it. -1 when there is none.
int ResolveSpace(const DeviceModel& device, absl::string_view name);

}  // namespace scratchsim

#endif  // SCRATCHSIM_SIM_ENGINE_H_
