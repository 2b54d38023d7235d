#include "sim/engine.h"

#include <algorithm>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "sim/checked_math.h"
#include "sim/device.h"
#include "sim/liveness.h"
#include "sim/status_macros.h"

namespace scratchsim {
namespace {

bool IsGpuShared(const MemorySpace& space) { return space.kind() == SHARED_MEMORY || space.kind() == LDS; }
bool IsTpuSpace(const MemorySpace& space) { return space.kind() == VMEM || space.kind() == SMEM; }

// The launch's own preference, else Triton's launcher's.
CachePreference LaunchCachePreference(const std::optional<CachePreference>& declared, const OccupancyInput& input) {
  if (declared.has_value()) return *declared;
  return TritonLauncherPreference(input.static_shared_bytes + input.dynamic_shared_bytes);
}

int64_t ColumnBytes(const MemorySpace& space) { return space.lanes() * space.column_bytes_per_lane(); }

// Tensor memory is allocated in whole columns, at least the minimum, in powers of two where the
// hardware asks for them (tcgen05.alloc).
int64_t TmemColumns(const MemorySpace& space, int64_t bytes) {
  int64_t columns = std::max<int64_t>(CeilDiv(bytes, ColumnBytes(space)), 1);
  columns = std::max(columns, space.min_allocation_columns());
  if (space.power_of_two_allocation()) {
    int64_t p = 1;
    while (p < columns) p <<= 1;
    columns = p;
  }
  return columns;
}

// The last copy's bytes: where the space allocates an operand's window, its copies together, in
// whole granules (libtpu's scoped VMEM: tests/data/tpu/allocation_granule_probe.txt), the last
// copy carries the rounding, so that the copies add up to the allocation. Scratch and the
// compiler's own buffers are placed as they are (a 512 B scratch row adds 512 B to libtpu's
// requirement: tests/data/tpu/dev_families.jsonl.gz, cumsum_carry).
absl::StatusOr<int64_t> LastCopyBytes(const CompiledGraph& graph, const MemorySpace& space, int b, int64_t copy_bytes,
                                      int64_t copies) {
  const int64_t granule = space.buffer_granule_bytes();
  if (granule <= 1 || copy_bytes == 0 || graph.buffers[b].role != OPERAND) return copy_bytes;
  const std::optional<int64_t> all = CheckedMul(copy_bytes, copies);
  const std::optional<int64_t> allocated = all ? CheckedRoundUp(*all, granule) : std::nullopt;
  if (!allocated) {
    return absl::OutOfRangeError(absl::StrCat(graph.origin, ": buffer '", graph.buffers[b].name,
                                              "': its copies' bytes overflow 64 bits"));
  }
  return copy_bytes + (*allocated - *all);
}

// The footprint of one memory space from the peaks of its two placement groups: dynamic shared
// memory starts after the (aligned) static segment on GPUs; TPU scoped and program allocations
// simply add up.
absl::StatusOr<int64_t> SpaceFootprint(const MemorySpace& space, int64_t first, int64_t second,
                                       absl::string_view origin) {
  if (IsGpuShared(space) && second > 0) {
    auto aligned = CheckedRoundUp(second, std::max<int64_t>(space.alignment_bytes(), 1));
    if (!aligned) {
      return absl::OutOfRangeError(absl::StrCat(origin, ": memory space '", space.name(),
                                                "': the static __shared__ segment overflows 64 bits"));
    }
    second = *aligned;
  }
  auto peak = CheckedAdd(first, second);
  if (!peak) {
    return absl::OutOfRangeError(absl::StrCat(origin, ": memory space '", space.name(),
                                              "': static plus dynamic bytes overflow 64 bits"));
  }
  return *peak;
}

// The per-thread register budget the compiler works to: the hardware maximum, the kernel's own
// cap, and what lets `min_blocks` blocks of `threads` threads be resident (0: not known).
int64_t RegisterBudgetFor(const DeviceModel& device, int64_t threads, int64_t min_blocks, int64_t declared_cap) {
  const ExecutionLimits& limits = device.limits();
  int64_t budget = MaxRegistersPerThread(device);
  if (declared_cap > 0) budget = std::min(budget, declared_cap);
  if (threads > 0 && limits.registers_per_block() > 0 && limits.warp_size() > 0) {
    // Registers go to whole warps in units of register_allocation_unit per warp, so the
    // per-thread figure moves in steps of unit / warp_size (8 on NVIDIA).
    const int64_t blocks = std::clamp<int64_t>(min_blocks, 1, 1 << 20);
    const int64_t warps = CeilDiv(threads, limits.warp_size()) * blocks;
    const int64_t pool = blocks > 1 ? limits.registers_per_core() : limits.registers_per_block();
    int64_t per_warp = pool / warps;
    const int64_t unit = std::max<int64_t>(limits.register_allocation_unit(), 1);
    per_warp = per_warp / unit * unit;
    budget = std::min(budget, per_warp / limits.warp_size());
  }
  return std::max<int64_t>(budget, 0);
}

// A non-negative launch field; `field` names it in the error (built only then).
template <typename FieldName>
absl::StatusOr<int64_t> EvaluateField(const CompiledGraph& graph, const Expr* expr, int64_t fallback,
                                      FieldName field, absl::Span<const int64_t> values) {
  if (expr == nullptr) return fallback;
  auto value = expr->Evaluate(values);
  if (!value.ok()) return absl::InvalidArgumentError(absl::StrCat(graph.origin, ": ", field(), ": ", value.status().message()));
  if (*value < 0) {
    return absl::InvalidArgumentError(absl::StrCat(graph.origin, ": ", field(), ": must not be negative, got ", *value));
  }
  return *value;
}

const Expr* Optional(const std::optional<Expr>& expr) { return expr ? &*expr : nullptr; }

// The name of a launch field, for EvaluateField's error.
auto Named(const char* name) {
  return [name] { return std::string(name); };
}

// A placement that failed (offsets past 64 bits), named by file, space and the buffer whose
// copies take the running total of bytes past 64 bits (the largest one if none alone does).
absl::Status PlacementError(const CompiledGraph& graph, const MemorySpace& space, const FitEngine::Group& group,
                            const FitEngine::Scratch& scratch, const absl::Status& status) {
  int culprit = group.buffers.empty() ? -1 : group.buffers.front();
  int64_t total = 0, largest = -1;
  for (int b : group.buffers) {
    const auto bytes = CheckedMul(scratch.bytes[b], scratch.copies[b]);
    const auto next = bytes ? CheckedAdd(total, *bytes) : std::nullopt;
    if (!next) {
      culprit = b;
      break;
    }
    total = *next;
    if (scratch.bytes[b] > largest) {
      largest = scratch.bytes[b];
      culprit = b;
    }
  }
  return absl::Status(status.code(),
                      absl::StrCat(graph.origin, ": memory space '", space.name(), "'",
                                   culprit >= 0 ? absl::StrCat(": buffer '", graph.buffers[culprit].name, "' (",
                                                               scratch.copies[culprit], " x ", scratch.bytes[culprit], " B)")
                                                : "",
                                   ": ", status.message()));
}

void Breached(std::array<Breach, kNumLimits>& breaches, Limit limit, int space, int64_t required, int64_t available) {
  Breach& b = breaches[static_cast<int>(limit)];
  if (b.breached) return;  // the first space that breaches a limit is the one reported
  b = Breach{true, space, required, available};
}

void Breached(FitResult* out, Limit limit, int space, int64_t required, int64_t available) {
  Breached(out->breaches, limit, space, required, available);
}

// The verdict: the first fatal breach in Limit order, the memory limits judged with the
// estimates at a bound (`memory`) and every other limit as evaluated. Register spills are fatal
// only with `spills_fatal`.
void DecideVerdict(bool spills_fatal, FitResult* out) {
  auto first_fatal = [&](const std::array<Breach, kNumLimits>& memory) -> const Breach* {
    for (int l = 0; l < kNumLimits; ++l) {
      const Breach& b = IsMemoryLimit(static_cast<Limit>(l)) ? memory[l] : out->breaches[l];
      if (!b.breached) continue;
      if (static_cast<Limit>(l) == Limit::kRegisterSpill && !spills_fatal) continue;
      out->limit = static_cast<Limit>(l);
      out->required = b.required;
      out->available = b.available;
      return &b;
    }
    return nullptr;
  };
  if (!out->has_estimates) {
    out->verdict = first_fatal(out->breaches) == nullptr ? FitVerdict::kFits : FitVerdict::kDoesNotFit;
  } else if (first_fatal(out->breaches_low) != nullptr) {
    out->verdict = FitVerdict::kDoesNotFit;
    first_fatal(out->breaches);  // the reason, at the central sizes where they break too
    if (first_fatal(out->breaches) == nullptr) first_fatal(out->breaches_low);
  } else if (first_fatal(out->breaches_high) != nullptr) {
    out->verdict = FitVerdict::kAtRisk;  // the reason: the first breach at the high bound
  } else {
    out->verdict = FitVerdict::kFits;
  }
  out->fits = out->verdict == FitVerdict::kFits;
  if (out->fits) {
    out->limit = Limit::kInvalid;
    out->required = out->available = 0;
  }
}

// Blocks resident per core for a block that breaks no per-block limit (out->occupancy_input);
// none resident is Limit::kNoResidency.
absl::Status ResolveResidency(const OccupancyCalculator& occupancy, FitResult* out) {
  RETURN_IF_ERROR(occupancy.Compute(out->occupancy_input, &out->occupancy));
  out->has_occupancy = true;
  if (out->occupancy.blocks == 0) {
    out->cannot_launch = Limit::kNoResidency;
    Breached(out, Limit::kNoResidency, -1, out->threads, out->register_budget);
  }
  return absl::OkStatus();
}

}  // namespace

void FitResult::Clear(int num_spaces) {
  fits = false;
  limit = Limit::kInvalid;
  required = available = 0;
  verdict = FitVerdict::kDoesNotFit;
  for (Breach& b : breaches) b.breached = false;
  for (int s = 0; s < num_spaces && s < kMaxSpaces; ++s) spaces[s] = SpaceFigures();
  if (has_estimates) {
    for (Breach& b : breaches_low) b.breached = false;
    for (Breach& b : breaches_high) b.breached = false;
    for (int s = 0; s < num_spaces && s < kMaxSpaces; ++s) spaces_low[s] = spaces_high[s] = SpaceFigures();
    has_estimates = false;
  }
  broken_requirement = -1;
  threads = warps = thread_limit = 0;
  thread_limit_declared = false;
  register_demand = -1;
  registers_compiled = false;
  register_budget = registers_allocated = spill_bytes_per_thread = spill_bytes_per_block = 0;
  has_occupancy = false;
  cannot_launch = Limit::kInvalid;
  occupancy.blocks = 0;
  occupancy_input = OccupancyInput();
}

bool IsMemoryLimit(Limit limit) {
  switch (limit) {
    case Limit::kSharedMemory:
    case Limit::kStaticSharedMemory:
    case Limit::kTensorMemory:
    case Limit::kVmemScoped:
    case Limit::kVmemProgram:
    case Limit::kCapacity:
      return true;
    default:
      return false;
  }
}

absl::string_view VerdictName(FitVerdict verdict) {
  switch (verdict) {
    case FitVerdict::kFits: return "FITS";
    case FitVerdict::kAtRisk: return "AT RISK";
    case FitVerdict::kDoesNotFit: return "DOES NOT FIT";
  }
  return "?";
}

absl::string_view LimitSourceName(LimitSource source) {
  switch (source) {
    case LimitSource::kNone: return "";
    case LimitSource::kOptIn: return "per-block opt-in maximum";
    case LimitSource::kDefault: return "per-block default (no opt-in)";
    case LimitSource::kCapacity: return "capacity per core";
    case LimitSource::kColumns: return "columns x lanes";
    case LimitSource::kVmemLimitBytes: return "vmem_limit_bytes";
    case LimitSource::kScopedFlag: return "--xla_tpu_scoped_vmem_limit_kib";
    case LimitSource::kDefaultScoped: return "default scoped limit";
  }
  return "?";
}

int ResolveSpace(const DeviceModel& device, absl::string_view name) {
  const MemorySpace* space = FindSpace(device, name);
  if (space == nullptr && (name == "smem" || name == "shared" || name == "lds")) {
    space = FindSpaceOfKind(device, SHARED_MEMORY);
    if (space == nullptr) space = FindSpaceOfKind(device, LDS);
  }
  if (space == nullptr) return -1;
  // Repeated message fields are not contiguous: find the index by identity.
  for (int i = 0; i < device.memory_spaces_size(); ++i) {
    if (&device.memory_spaces(i) == space) return i;
  }
  return -1;
}

absl::StatusOr<FitEngine> FitEngine::Create(const CompiledGraph& graph, const DeviceModel& device,
                                            const EngineOptions& options) {
  FitEngine engine;
  engine.graph_ = &graph;
  engine.device_ = &device;
  engine.options_ = options;
  engine.policy_ = options.policy_override;
  if (!engine.policy_) engine.policy_ = MakePlacementPolicy(options.policy);
  if (device.memory_spaces_size() > kMaxSpaces) {
    return absl::InvalidArgumentError(absl::StrCat("device '", device.name(), "' has more than ", kMaxSpaces,
                                                   " memory spaces; at most ", kMaxSpaces, " are supported"));
  }
  for (int s = 0; s < device.memory_spaces_size(); ++s) {
    const MemorySpace& space = device.memory_spaces(s);
    if (space.kind() == TENSOR_MEMORY && ColumnBytes(space) <= 0) {
      return absl::InvalidArgumentError(absl::StrCat("device '", device.name(), "': memory space '", space.name(),
                                                     "' has no lanes / column_bytes_per_lane"));
    }
  }
  for (auto& pair : engine.group_of_space_) pair = {-1, -1};

  engine.ranges_ = ComputeLiveRanges(graph);
  const int64_t last_position = std::max<int64_t>(static_cast<int64_t>(graph.op_order.size()) - 1, 0);
  engine.space_of_.assign(graph.buffers.size(), -1);
  for (int b = 0; b < static_cast<int>(graph.buffers.size()); ++b) {
    const CompiledBuffer& buffer = graph.buffers[b];
    const int s = ResolveSpace(device, buffer.space);
    // Declared only for devices with its space (a tcgen05 accumulator in "tmem"): absent here.
    if (s < 0 && buffer.only_where_space_exists) continue;
    if (s < 0) {
      std::vector<std::string> names;
      for (const MemorySpace& m : device.memory_spaces()) names.push_back(m.name());
      return absl::InvalidArgumentError(absl::StrCat(graph.origin, ": buffer '", buffer.name, "' memory_space: device '",
                                                     device.name(), "' has no memory space '", buffer.space,
                                                     "' (it has: ", absl::StrJoin(names, ", "), ")"));
    }
    engine.space_of_[b] = s;
    LiveRange& range = engine.ranges_[b];
    if (!range.used()) {
      // A declared allocation is allocated whether or not an op touches it.
      engine.untouched_.push_back(b);
      range = LiveRange{0, last_position};
    }
    const MemorySpace& space = device.memory_spaces(s);
    const bool second = IsTpuSpace(space) ? buffer.scope != INSTRUCTION : buffer.static_allocation;
    if (second && !IsTpuSpace(space)) {
      // Static __shared__ arrays are laid out by the linker for the whole kernel: no reuse.
      range = LiveRange{0, last_position};
    }
    int& group = engine.group_of_space_[s][second];
    if (group < 0) {
      group = static_cast<int>(engine.groups_.size());
      engine.groups_.push_back(Group{s, second, {}});
    }
    engine.groups_[group].buffers.push_back(b);
  }

  engine.execution_ = device.vendor() != "google" && device.limits().warp_size() > 0;
  if (engine.execution_) {
    auto calculator = OccupancyCalculator::Create(device);
    engine.occupancy_ok_ = calculator.ok();
    if (calculator.ok()) engine.occupancy_ = *calculator;
  }
  return engine;
}

absl::Status FitEngine::Evaluate(absl::Span<const int64_t> input, Scratch& scratch, FitResult* out) const {
  const CompiledGraph& graph = *graph_;
  const DeviceModel& device = *device_;
  if (input.size() != graph.symbols.names().size()) {
    return absl::InvalidArgumentError("parameter values do not match the graph's parameters");
  }
  scratch.values.assign(input.begin(), input.end());
  BindDeviceSymbols(graph, device, absl::MakeSpan(scratch.values));
  const absl::Span<const int64_t> values = scratch.values;

  out->Clear(device.memory_spaces_size());
  // Not a kernel at all: no message is built on this path (Simulate asks CheckRequirements).
  if (!graph.requirements.empty()) {
    out->broken_requirement = FirstBrokenRequirement(graph, values);
    if (out->broken_requirement >= 0) {
      Breached(out, Limit::kInvalid, -1, 0, 0);
      out->limit = Limit::kInvalid;
      return absl::OkStatus();
    }
  }

  // A loop's pipeline depth is a count: a negative one is not a kernel (0: no pipelining).
  for (size_t l = 0; l < graph.loop_stages.size(); ++l) {
    if (!graph.loop_stages[l]) continue;
    auto stages = graph.loop_stages[l]->Evaluate(values);
    if (!stages.ok() || *stages < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          graph.origin, ": loop '", graph.graph.loops(static_cast<int>(l)).name(), "' num_stages: ",
          stages.ok() ? absl::StrCat("must not be negative, got ", *stages) : std::string(stages.status().message())));
    }
  }

  // Sizes, copies and alignment of every buffer; tensor memory in whole columns.
  const size_t n = graph.buffers.size();
  scratch.bytes.resize(n);
  scratch.copies.resize(n);
  scratch.alignment.resize(n);
  for (const Group& group : groups_) {
    const MemorySpace& space = device.memory_spaces(group.space);
    for (int b : group.buffers) {
      ASSIGN_OR_RETURN(scratch.bytes[b], BufferBytes(graph, b, values));
      ASSIGN_OR_RETURN(scratch.copies[b], BufferCopies(graph, b, values));
      int64_t alignment = std::max<int64_t>(space.alignment_bytes(), 1);
      if (graph.buffers[b].alignment) {
        auto aligned = graph.buffers[b].alignment->Evaluate(values);
        if (!aligned.ok()) {
          return absl::Status(aligned.status().code(), absl::StrCat(graph.origin, ": buffer '", graph.buffers[b].name,
                                                                    "' alignment: ", aligned.status().message()));
        }
        alignment = *aligned;
        if (alignment <= 0 || (alignment & (alignment - 1)) != 0) {
          return absl::InvalidArgumentError(absl::StrCat(graph.origin, ": buffer '", graph.buffers[b].name,
                                                         "' alignment: must be a power of two, got ", alignment));
        }
      }
      // Tensor memory is allocated in whole columns; a buffer of no bytes allocates none.
      if (space.kind() == TENSOR_MEMORY && scratch.bytes[b] > 0) {
        scratch.bytes[b] = TmemColumns(space, scratch.bytes[b]) * ColumnBytes(space);
        alignment = std::max(alignment, ColumnBytes(space));
      }
      scratch.alignment[b] = alignment;
    }
  }

  RETURN_IF_ERROR(PlaceAndCheck(values, scratch, scratch.bytes, scratch.keep_layout, out->spaces, out->breaches));
  if (graph.has_estimates) {
    // The same rules with every estimated buffer at its low, then its high bound.
    out->has_estimates = true;
    scratch.bound_bytes = scratch.bytes;
    for (EstimateBound bound : {EstimateBound::kLow, EstimateBound::kHigh}) {
      for (const Group& group : groups_) {
        const MemorySpace& space = device.memory_spaces(group.space);
        for (int b : group.buffers) {
          if (!graph.buffers[b].estimate_low()) continue;
          ASSIGN_OR_RETURN(int64_t bytes, BufferBytesAt(graph, b, values, bound));
          if (space.kind() == TENSOR_MEMORY && bytes > 0) bytes = TmemColumns(space, bytes) * ColumnBytes(space);
          scratch.bound_bytes[b] = bytes;
        }
      }
      const bool low = bound == EstimateBound::kLow;
      RETURN_IF_ERROR(PlaceAndCheck(values, scratch, scratch.bound_bytes, false, low ? out->spaces_low : out->spaces_high,
                                    low ? out->breaches_low : out->breaches_high));
    }
  }

  if (execution_) RETURN_IF_ERROR(EvaluateExecution(values, scratch, out));

  DecideVerdict(options_.spills_fatal, out);
  return absl::OkStatus();
}

absl::Status FitEngine::PlaceAndCheck(absl::Span<const int64_t> values, Scratch& scratch, const std::vector<int64_t>& bytes,
                                      bool keep_layout, std::array<SpaceFigures, kMaxSpaces>& spaces,
                                      std::array<Breach, kNumLimits>& breaches) const {
  const CompiledGraph& graph = *graph_;
  const DeviceModel& device = *device_;
  // Placement, one group at a time, by the policy (the compiler's allocator).
  std::array<std::array<int64_t, 2>, kMaxSpaces> group_peak{};
  if (keep_layout) scratch.layout.assign(groups_.size(), {});
  scratch.placement.offsets_needed = keep_layout;
  int64_t placed_blocks = 0;
  for (size_t g = 0; g < groups_.size(); ++g) {
    const Group& group = groups_[g];
    scratch.blocks.clear();
    for (int b : group.buffers) {
      // Every copy is a block to place: bound them so that memory stays proportional to the graph.
      placed_blocks += scratch.copies[b];
      if (placed_blocks > kMaxPlacedBlocks) {
        return absl::InvalidArgumentError(absl::StrCat(
            graph.origin, ": buffer '", graph.buffers[b].name, "' copies: the graph's buffers and their copies come to more than ",
            kMaxPlacedBlocks, " blocks to place (the supported maximum)"));
      }
      const Block block{bytes[b], scratch.alignment[b], ranges_[b].start, ranges_[b].end};
      for (int64_t c = 0; c < scratch.copies[b]; ++c) scratch.blocks.push_back(block);
      if (scratch.copies[b] > 0) {
        ASSIGN_OR_RETURN(scratch.blocks.back().size,
                         LastCopyBytes(graph, device.memory_spaces(group.space), b, bytes[b], scratch.copies[b]));
      }
    }
    if (absl::Status placed = policy_->PlaceInto(scratch.blocks, &scratch.placement); !placed.ok()) {
      return PlacementError(graph, device.memory_spaces(group.space), group, scratch, placed);
    }
    group_peak[group.space][group.second] = scratch.placement.peak;
    if (keep_layout) {
      std::vector<PlacedBlock>& layout = scratch.layout[g];
      size_t k = 0;
      for (int b : group.buffers) {
        for (int64_t c = 0; c < scratch.copies[b]; ++c, ++k) {
          layout.push_back(PlacedBlock{b, c, scratch.blocks[k], scratch.placement.offsets[k]});
        }
      }
    }
  }

  // Each space against its limit.
  for (int s = 0; s < device.memory_spaces_size(); ++s) {
    if (group_of_space_[s][0] < 0 && group_of_space_[s][1] < 0) continue;
    const MemorySpace& space = device.memory_spaces(s);
    SpaceFigures& fig = spaces[s];
    fig.first = group_peak[s][0];
    ASSIGN_OR_RETURN(fig.peak, SpaceFootprint(space, fig.first, group_peak[s][1], graph.origin));
    fig.second = fig.peak - fig.first;  // the aligned static segment (GPU), or program-scoped bytes (TPU)
    switch (space.kind()) {
      case SHARED_MEMORY:
      case LDS: {
        const bool opt_in = graph.launch.shared_memory_opt_in && space.per_block_optin_bytes() > 0;
        fig.limit = opt_in ? space.per_block_optin_bytes() : space.per_block_default_bytes();
        fig.limit_source = opt_in ? LimitSource::kOptIn : LimitSource::kDefault;
        if (fig.limit <= 0) {
          fig.limit = space.capacity_per_core_bytes();
          fig.limit_source = LimitSource::kCapacity;
        }
        if (fig.peak > fig.limit) Breached(breaches, Limit::kSharedMemory, s, fig.peak, fig.limit);
        const int64_t cap = StaticSharedCap(space);
        if (cap > 0 && fig.second > cap) Breached(breaches, Limit::kStaticSharedMemory, s, fig.second, cap);
        break;
      }
      case TENSOR_MEMORY: {
        fig.columns = CeilDiv(fig.peak, ColumnBytes(space));
        fig.limit = space.columns() * ColumnBytes(space);
        fig.limit_source = LimitSource::kColumns;
        if (fig.columns > space.columns()) Breached(breaches, Limit::kTensorMemory, s, fig.columns, space.columns());
        break;
      }
      case VMEM: {
        fig.limit = space.default_scoped_limit_bytes();
        fig.limit_source = LimitSource::kDefaultScoped;
        if (graph.vmem_limit_bytes) {
          auto limit = graph.vmem_limit_bytes->Evaluate(values);
          if (!limit.ok()) {
            return absl::Status(limit.status().code(),
                                absl::StrCat(graph.origin, ": tpu.vmem_limit_bytes: ", limit.status().message()));
          }
          fig.limit = *limit;
          if (fig.limit <= 0) {
            return absl::InvalidArgumentError(absl::StrCat(graph.origin, ": tpu.vmem_limit_bytes must be positive, got ",
                                                           fig.limit));
          }
          fig.limit_source = LimitSource::kVmemLimitBytes;
        } else if (graph.scoped_vmem_limit_kib) {
          auto scoped = graph.scoped_vmem_limit_kib->Evaluate(values);
          if (!scoped.ok()) {
            return absl::Status(scoped.status().code(),
                                absl::StrCat(graph.origin, ": tpu.scoped_vmem_limit_kib: ", scoped.status().message()));
          }
          const int64_t kib = *scoped;
          const auto bytes = CheckedMul(kib, 1024);
          if (kib <= 0 || !bytes) {
            return absl::InvalidArgumentError(
                absl::StrCat(graph.origin, ": tpu.scoped_vmem_limit_kib must be positive and fit 64 bits, got ", kib));
          }
          fig.limit = *bytes;
          fig.limit_source = LimitSource::kScopedFlag;
        }
        if (fig.first > fig.limit) Breached(breaches, Limit::kVmemScoped, s, fig.first, fig.limit);
        // Everything must fit the core's VMEM (what the compiler lets a program use of it):
        // program-scoped buffers live beside the whole scoped region (whatever it holds now), and
        // a scoped limit above the capacity does not make the scoped allocations fit it.
        const int64_t capacity = UsableBytesPerCore(space);
        const int64_t reserved = fig.second > 0 ? fig.second + std::min(fig.limit, capacity) : 0;
        const int64_t used = std::max(reserved, fig.peak);
        if (used > capacity) Breached(breaches, Limit::kVmemProgram, s, used, capacity);
        break;
      }
      default:
        fig.limit = space.capacity_per_core_bytes();
        fig.limit_source = LimitSource::kCapacity;
        if (fig.peak > fig.limit) Breached(breaches, Limit::kCapacity, s, fig.peak, fig.limit);
        break;
    }
    if (keep_layout && IsGpuShared(space)) {
      // CUDA lays static __shared__ arrays out first and dynamic memory after them.
      const int g = group_of_space_[s][0];
      if (g >= 0) {
        for (PlacedBlock& placed : scratch.layout[g]) placed.offset += fig.second;
      }
    }
  }

  return absl::OkStatus();
}

absl::Status FitEngine::EvaluateExecution(absl::Span<const int64_t> values, Scratch& scratch, FitResult* out) const {
  const CompiledGraph& graph = *graph_;
  const DeviceModel& device = *device_;
  const ExecutionLimits& limits = device.limits();
  const CompiledLaunch& launch = graph.launch;

  // Threads: every warp-specialized partition runs beside the default one.
  ASSIGN_OR_RETURN(const int64_t num_warps, EvaluateField(graph, Optional(launch.num_warps), 4, Named("launch.num_warps"), values));
  if (num_warps <= 0) return absl::InvalidArgumentError(absl::StrCat(graph.origin, ": launch.num_warps must be positive"));
  int64_t warps = num_warps;
  scratch.partition_warps.clear();
  for (const CompiledPartition& partition : launch.partitions) {
    ASSIGN_OR_RETURN(const int64_t w,
                     EvaluateField(graph, &partition.warps, 0,
                                   [&] { return absl::StrCat("partition '", partition.name, "' warps"); }, values));
    scratch.partition_warps.push_back(w);
    const auto sum = CheckedAdd(warps, w);
    if (!sum) {
      return absl::InvalidArgumentError(absl::StrCat(graph.origin, ": launch.partitions '", partition.name,
                                                     "' warps: the block's warp count overflows 64 bits"));
    }
    warps = *sum;
  }
  const auto threads = CheckedMul(warps, limits.warp_size());
  if (!threads || *threads > kMaxThreadsPerBlock) {
    return absl::InvalidArgumentError(absl::StrCat(graph.origin, ": launch.num_warps: ", warps, " warps of ",
                                                   limits.warp_size(), " threads exceed the supported maximum of ",
                                                   kMaxThreadsPerBlock, " threads per block"));
  }
  out->warps = warps;
  out->threads = *threads;
  out->thread_limit = limits.max_threads_per_block();
  ASSIGN_OR_RETURN(const int64_t declared,
                   EvaluateField(graph, Optional(launch.max_threads_per_block), 0, Named("launch.max_threads_per_block"), values));
  if (declared > 0 && declared < out->thread_limit) {
    out->thread_limit = declared;
    out->thread_limit_declared = true;
  }
  if (out->threads > out->thread_limit) Breached(out, Limit::kThreads, -1, out->threads, out->thread_limit);

  // Registers: the compiler fits demand into the budget that lets a block launch; the rest
  // spills. Without a declared thread limit (CUDA without __launch_bounds__) ptxas does not know
  // the block size, so registers do not shrink to fit it; only a declared cap applies
  // (measured on the GPU, docs/validation/h100.md).
  ASSIGN_OR_RETURN(const int64_t min_blocks,
                   EvaluateField(graph, Optional(launch.min_blocks_per_core), 1, Named("launch.min_blocks_per_core"), values));
  ASSIGN_OR_RETURN(const int64_t declared_cap,
                   EvaluateField(graph, Optional(launch.max_registers_per_thread), 0, Named("launch.max_registers_per_thread"), values));
  const int64_t launch_threads = std::min(out->threads, out->thread_limit);
  out->register_budget = RegisterBudgetFor(device, launch.max_threads_per_block ? launch_threads : 0, min_blocks, declared_cap);
  bool assumed = true;
  const CompiledFigure* compiled =
      options_.compiled_registers ? options_.compiled_registers->Find(values, &assumed) : nullptr;
  out->registers_for_other_problems = !assumed;
  if (compiled != nullptr) {
    // What the compiler allocated, and a register for each 4 bytes it spilled: the demand its
    // allocation did not hold.
    out->register_demand = compiled->registers + compiled->spill_bytes / 4 + (compiled->spill_bytes % 4 != 0);
    out->registers_compiled = true;
  } else if (launch.registers_per_thread) {
    ASSIGN_OR_RETURN(out->register_demand, EvaluateField(graph, Optional(launch.registers_per_thread), 0,
                                                         Named("launch.registers_per_thread"), values));
  }
  if (out->register_demand >= 0) {
    out->registers_allocated = std::min(out->register_demand, out->register_budget);
    const int64_t over = out->register_demand - out->registers_allocated;
    const auto per_thread = CheckedMul(over, 4);
    const auto per_block = per_thread ? CheckedMul(*per_thread, launch_threads) : std::nullopt;
    if (!per_block) {
      return absl::InvalidArgumentError(absl::StrCat(graph.origin, ": launch.registers_per_thread: ",
                                                     out->register_demand, " registers overflow the spill arithmetic"));
    }
    out->spill_bytes_per_thread = *per_thread;
    out->spill_bytes_per_block = *per_block;
    if (over > 0) Breached(out, Limit::kRegisterSpill, -1, out->register_demand, out->register_budget);
  }

  // Occupancy, consistent with the verdict: a block that breaks a per-block limit is never
  // resident, and says which.
  if (!occupancy_ok_) return absl::OkStatus();
  out->has_occupancy = true;
  for (Limit per_block : {Limit::kThreads, Limit::kSharedMemory, Limit::kStaticSharedMemory, Limit::kTensorMemory}) {
    if (out->breaches[static_cast<int>(per_block)].breached) {
      out->occupancy = OccupancyFigures();
      out->cannot_launch = per_block;
      return absl::OkStatus();
    }
  }
  OccupancyInput& input = out->occupancy_input;
  input.threads_per_block = out->threads;
  input.registers_per_thread = out->registers_allocated;
  input.shared_memory_opt_in = launch.shared_memory_opt_in;
  for (int s = 0; s < device.memory_spaces_size(); ++s) {
    const SpaceFigures& fig = out->spaces[s];
    if (fig.peak < 0) continue;
    const MemorySpace& space = device.memory_spaces(s);
    if (IsGpuShared(space)) {
      input.static_shared_bytes = fig.second;
      input.dynamic_shared_bytes = fig.peak - fig.second;
    } else if (space.kind() == TENSOR_MEMORY) {
      input.tensor_memory_columns = fig.columns;
    }
  }
  input.cache_preference = LaunchCachePreference(launch.cache_preference, input);
  if (!ResolveResidency(occupancy_, out).ok()) out->has_occupancy = false;  // Simulate says why in a note
  return absl::OkStatus();
}

absl::StatusOr<FitResult> EvaluateLaunch(const DeviceModel& device, const OccupancyInput& input) {
  ASSIGN_OR_RETURN(OccupancyCalculator occupancy, OccupancyCalculator::Create(device));
  FitResult out;
  out.threads = input.threads_per_block;
  out.registers_allocated = input.registers_per_thread;
  out.occupancy_input = input;
  RETURN_IF_ERROR(ResolveResidency(occupancy, &out));
  DecideVerdict(/*spills_fatal=*/false, &out);
  return out;
}

}  // namespace scratchsim
