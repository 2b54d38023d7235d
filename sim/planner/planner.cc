#include "sim/planner.h"

#include <algorithm>
#include <atomic>
#include <climits>
#include <limits>
#include <mutex>
#include <thread>
#include <tuple>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "sim/checked_math.h"
#include "sim/device.h"
#include "sim/dtype.h"
#include "sim/limits.h"
#include "sim/occupancy.h"
#include "sim/status_macros.h"

namespace scratchsim {
namespace {

constexpr int64_t kMaxAxisValues = 1 << 20;
// Beyond this the sweep takes hours even at full speed: ask for a narrower space.
constexpr uint64_t kMaxSpace = uint64_t{1} << 36;
constexpr int64_t kUnlimited = INT32_MAX;

absl::Status BadSpec(absl::string_view spec, absl::string_view problem) {
  return absl::InvalidArgumentError(absl::StrCat("--param '", spec, "': ", problem,
                                                 " (expected NAME=LO..HI, NAME=LO..HI:pow2, "
                                                 "NAME=LO..HI:step=S or NAME=V1,V2,...)"));
}


// Graphs name spaces the way their author thinks; the same resolution as Simulate's.
int ResolveSpaceIndex(const DeviceModel& device, absl::string_view name) {
  const MemorySpace* space = FindSpace(device, name);
  if (space == nullptr && (name == "smem" || name == "shared" || name == "lds")) {
    space = FindSpaceOfKind(device, SHARED_MEMORY);
    if (space == nullptr) space = FindSpaceOfKind(device, LDS);
  }
  if (space == nullptr) return -1;
  for (int i = 0; i < device.memory_spaces_size(); ++i) {
    if (&device.memory_spaces(i) == space) return i;
  }
  return -1;
}

absl::StatusOr<int64_t> EvalNonNegative(const CompiledGraph& graph, const Expr& expr, absl::string_view field,
                                        absl::Span<const int64_t> values) {
  auto value = expr.Evaluate(values);
  if (!value.ok()) return absl::InvalidArgumentError(absl::StrCat(graph.origin, ": ", field, ": ", value.status().message()));
  if (*value < 0) return absl::InvalidArgumentError(absl::StrCat(graph.origin, ": ", field, ": must not be negative, got ", *value));
  return *value;
}

}  // namespace

absl::string_view LimitName(Limit limit) {
  switch (limit) {
    case Limit::kInvalid: return "invalid";
    case Limit::kThreads: return "threads";
    case Limit::kSharedMemory: return "shared memory";
    case Limit::kStaticSharedMemory: return "static shared memory";
    case Limit::kTensorMemory: return "tensor memory";
    case Limit::kVmemScoped: return "scoped vmem";
    case Limit::kVmemProgram: return "program vmem";
    case Limit::kCapacity: return "capacity";
    case Limit::kRegisterSpill: return "register spills";
    case Limit::kNoResidency: return "no resident block";
  }
  return "?";
}

// ---------------------------------------------------------------------------------------------
// Parameter space

absl::StatusOr<ParamAxis> ParseParamSpec(absl::string_view spec, const CompiledGraph& graph) {
  std::pair<absl::string_view, absl::string_view> parts = absl::StrSplit(spec, absl::MaxSplits('=', 1));
  if (spec.find('=') == absl::string_view::npos || parts.first.empty() || parts.second.empty()) {
    return BadSpec(spec, "missing NAME= or values");
  }
  ParamAxis axis;
  axis.name = std::string(parts.first);
  axis.slot = graph.symbols.Find(axis.name);
  if (axis.slot < 0 || IsDeviceSymbol(graph, axis.slot)) {
    std::vector<std::string> names;
    for (const Parameter& p : graph.graph.parameters()) names.push_back(p.name());
    return BadSpec(spec, absl::StrCat("the graph has no parameter '", axis.name, "' (it has: ",
                                      absl::StrJoin(names, ", "), ")"));
  }
  for (const Parameter& p : graph.graph.parameters()) {
    if (p.name() == axis.name && p.problem_size()) {
      return absl::InvalidArgumentError(absl::StrCat("--param '", spec, "': '", axis.name,
                                                     "' is a problem size; fix it with --set ", axis.name, "=V"));
    }
  }
  absl::string_view body = parts.second;
  size_t dots = body.find("..");
  if (dots == absl::string_view::npos) {
    for (absl::string_view item : absl::StrSplit(body, ',')) {
      int64_t v;
      if (!absl::SimpleAtoi(item, &v)) return BadSpec(spec, absl::StrCat("'", item, "' is not an integer"));
      axis.values.push_back(v);
    }
  } else {
    absl::string_view lo_text = body.substr(0, dots);
    absl::string_view rest = body.substr(dots + 2);
    absl::string_view hi_text = rest;
    absl::string_view modifier;
    if (size_t colon = rest.find(':'); colon != absl::string_view::npos) {
      hi_text = rest.substr(0, colon);
      modifier = rest.substr(colon + 1);
    }
    int64_t lo, hi;
    if (!absl::SimpleAtoi(lo_text, &lo)) return BadSpec(spec, absl::StrCat("'", lo_text, "' is not an integer"));
    if (!absl::SimpleAtoi(hi_text, &hi)) return BadSpec(spec, absl::StrCat("'", hi_text, "' is not an integer"));
    if (lo > hi) return BadSpec(spec, absl::StrCat("the range is empty (", lo, " > ", hi, ")"));
    int64_t step = 1;
    bool pow2 = false;
    if (modifier == "pow2") {
      pow2 = true;
    } else if (absl::ConsumePrefix(&modifier, "step=")) {
      if (!absl::SimpleAtoi(modifier, &step) || step <= 0) {
        return BadSpec(spec, absl::StrCat("step '", modifier, "' is not a positive integer"));
      }
    } else if (!modifier.empty()) {
      return BadSpec(spec, absl::StrCat("unknown modifier '", modifier, "'"));
    }
    if (pow2) {
      for (int64_t v = 1; v > 0 && v <= hi; v <<= 1) {
        if (v >= lo) axis.values.push_back(v);
        if (v > (int64_t{1} << 61)) break;
      }
      if (axis.values.empty()) return BadSpec(spec, "no power of two in the range");
    } else {
      if ((hi - lo) / step >= kMaxAxisValues) {
        return BadSpec(spec, absl::StrCat("more than ", kMaxAxisValues, " values"));
      }
      for (int64_t v = lo; v <= hi; v += step) {
        axis.values.push_back(v);
        if (v > hi - step) break;  // no overflow past hi
      }
    }
  }
  if (axis.values.empty()) return BadSpec(spec, "no values");
  if (static_cast<int64_t>(axis.values.size()) > kMaxAxisValues) {
    return BadSpec(spec, absl::StrCat("more than ", kMaxAxisValues, " values"));
  }
  std::vector<int64_t> sorted = axis.values;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) return BadSpec(spec, "a value repeats");
  return axis;
}

absl::StatusOr<std::vector<ParamAxis>> BuildParamSpace(const CompiledGraph& graph,
                                                       absl::Span<const std::string> param_specs,
                                                       absl::Span<const std::string> set_overrides) {
  std::vector<ParamAxis> axes;
  std::vector<bool> taken(graph.symbols.names().size(), false);
  for (const std::string& assignment : set_overrides) {
    std::string name = assignment.substr(0, assignment.find('='));
    int slot = graph.symbols.Find(name);
    if (slot >= 0) taken[slot] = true;
  }
  for (const std::string& spec : param_specs) {
    ASSIGN_OR_RETURN(ParamAxis axis, ParseParamSpec(spec, graph));
    if (taken[axis.slot]) {
      return absl::InvalidArgumentError(absl::StrCat("--param '", spec, "': '", axis.name,
                                                     "' is already fixed by --set or swept by another --param"));
    }
    taken[axis.slot] = true;
    axes.push_back(std::move(axis));
  }
  for (const Parameter& p : graph.graph.parameters()) {
    int slot = graph.symbols.Find(p.name());
    if (slot < 0 || taken[slot] || p.problem_size() || p.max() <= 0) continue;
    ParamAxis axis;
    axis.name = p.name();
    axis.slot = slot;
    axis.from_graph = true;
    int64_t lo = p.min(), hi = p.max();
    if (lo > hi) {
      return absl::InvalidArgumentError(absl::StrCat(graph.origin, ": parameter '", p.name(), "': min ", lo,
                                                     " is above max ", hi));
    }
    if (p.power_of_two()) {
      for (int64_t v = 1; v > 0 && v <= hi; v <<= 1) {
        if (v >= lo) axis.values.push_back(v);
        if (v > (int64_t{1} << 61)) break;
      }
    } else {
      if (hi - lo >= kMaxAxisValues) {
        return absl::InvalidArgumentError(absl::StrCat(graph.origin, ": parameter '", p.name(), "': range ", lo,
                                                       "..", hi, " has more than ", kMaxAxisValues,
                                                       " values; narrow it with --param"));
      }
      for (int64_t v = lo; v <= hi; ++v) axis.values.push_back(v);
    }
    if (axis.values.empty()) continue;
    taken[slot] = true;
    axes.push_back(std::move(axis));
  }
  return axes;
}

// ---------------------------------------------------------------------------------------------
// FitEvaluator

absl::StatusOr<FitEvaluator> FitEvaluator::Create(const CompiledGraph& graph, const DeviceModel& device,
                                                  PlacementPolicyKind policy, bool prune_spills) {
  FitEvaluator ev;
  ev.prune_spills_ = prune_spills;
  ev.graph_ = &graph;
  ev.device_ = &device;
  ev.best_fit_ = policy == PlacementPolicyKind::kBestFitDecreasing;
  if (device.memory_spaces_size() > kMaxSpaces) {
    return absl::InvalidArgumentError(absl::StrCat("device '", device.name(), "' has more than ", kMaxSpaces,
                                                   " memory spaces; the planner supports at most that many"));
  }
  ev.spaces_.resize(device.memory_spaces_size());
  for (int s = 0; s < device.memory_spaces_size(); ++s) {
    ev.spaces_[s].index = s;
    ev.spaces_[s].kind = device.memory_spaces(s).kind();
    if (ev.spaces_[s].kind == TENSOR_MEMORY &&
        device.memory_spaces(s).lanes() * device.memory_spaces(s).column_bytes_per_lane() <= 0) {
      return absl::InvalidArgumentError(absl::StrCat("device '", device.name(), "': memory space '",
                                                     device.memory_spaces(s).name(), "' has no lanes/column bytes"));
    }
  }

  const std::vector<LiveRange> ranges = ComputeLiveRanges(graph);
  const int64_t last_position = std::max<int64_t>(static_cast<int64_t>(graph.op_order.size()) - 1, 0);
  // Group used buffers by (space, second part), keeping buffer order inside each group.
  std::vector<std::vector<BufferInfo>> grouped;
  for (int b = 0; b < static_cast<int>(graph.buffers.size()); ++b) {
    const CompiledBuffer& buffer = graph.buffers[b];
    int s = ResolveSpaceIndex(device, buffer.space);
    if (s < 0) {
      std::vector<std::string> names;
      for (const MemorySpace& m : device.memory_spaces()) names.push_back(m.name());
      return absl::InvalidArgumentError(absl::StrCat(graph.origin, ": buffer '", buffer.name, "' memory_space: device '",
                                                     device.name(), "' has no memory space '", buffer.space,
                                                     "' (it has: ", absl::StrJoin(names, ", "), ")"));
    }
    if (!ranges[b].used()) continue;
    const MemorySpace& space = device.memory_spaces(s);
    const bool tpu_space = space.kind() == VMEM || space.kind() == SMEM;
    const bool second = tpu_space ? buffer.scope != INSTRUCTION : buffer.static_allocation;
    SpaceInfo& info = ev.spaces_[s];
    info.reported = true;
    if (info.group[second] < 0) {
      info.group[second] = static_cast<int>(grouped.size());
      grouped.emplace_back();
      ev.groups_.push_back(GroupInfo{s, second});
    }
    BufferInfo bi{b, info.group[second], ranges[b].start, ranges[b].end,
                  std::max<int64_t>(space.alignment_bytes(), 1)};
    if (second && !tpu_space) {
      // Static __shared__ arrays are laid out by the linker for the whole kernel: no reuse.
      bi.start = 0;
      bi.end = last_position;
    }
    grouped[bi.group].push_back(bi);
  }
  for (size_t g = 0; g < grouped.size(); ++g) {
    GroupInfo& group = ev.groups_[g];
    group.first_buffer = static_cast<int>(ev.buffers_.size());
    group.num_buffers = static_cast<int>(grouped[g].size());
    for (const BufferInfo& a : grouped[g]) {
      for (const BufferInfo& b : grouped[g]) {
        if (a.start > b.end || b.start > a.end) group.all_interfere = false;
      }
    }
    ev.buffers_.insert(ev.buffers_.end(), grouped[g].begin(), grouped[g].end());
  }

  ev.execution_ = device.vendor() != "google" && device.limits().warp_size() > 0;
  if (ev.execution_) {
    // ComputeOccupancy's device checks do not depend on the configuration: probe them once.
    OccupancyInput probe;
    probe.threads_per_block = device.limits().warp_size();
    ev.occupancy_ok_ = device.limits().max_threads_per_block() >= probe.threads_per_block &&
                       ComputeOccupancy(device, probe).ok();
    const MemorySpace* shared = FindSpaceOfKind(device, SHARED_MEMORY);
    if (shared == nullptr) shared = FindSpaceOfKind(device, LDS);
    if (shared != nullptr && ev.occupancy_ok_) {
      for (int s = 0; s < device.memory_spaces_size(); ++s) {
        if (&device.memory_spaces(s) == shared) ev.shared_space_ = s;
      }
      for (int64_t kib : shared->carveout_kib()) ev.carveout_steps_.push_back(kib * 1024);
      std::sort(ev.carveout_steps_.begin(), ev.carveout_steps_.end());
      for (int64_t step : ev.carveout_steps_) {
        if (step >= shared->capacity_per_core_bytes()) {
          ev.preferred_carveout_ = step;
          break;
        }
      }
    }
  }
  return ev;
}

bool FitEvaluator::Occupancy(int64_t threads, int64_t registers, int64_t static_bytes, int64_t dynamic_bytes,
                             int32_t* blocks, int8_t* factor) const {
  if (!occupancy_ok_ || shared_space_ < 0) return false;
  const ExecutionLimits& limits = device_->limits();
  const MemorySpace& space = device_->memory_spaces(shared_space_);
  if (threads <= 0 || threads > limits.max_threads_per_block() || registers < 0 || static_bytes < 0 ||
      dynamic_bytes < 0) {
    return false;
  }
  const int64_t warps = CeilDiv(threads, limits.warp_size());
  const int64_t limit_warps = limits.max_threads_per_core() / limits.warp_size() / warps;

  int64_t limit_registers = 0;
  if (registers <= limits.max_registers_per_thread()) {
    const int64_t unit = limits.register_allocation_unit();
    const int64_t per_warp = CeilDiv(registers * limits.warp_size(), unit) * unit;
    const int64_t sub = limits.register_sub_partitions();
    const int64_t assumed = per_warp * (CeilDiv(warps, sub) * sub);
    if (assumed <= limits.registers_per_block() && per_warp * warps <= limits.registers_per_block()) {
      limit_registers = per_warp == 0 ? kUnlimited : (limits.registers_per_core() / sub / per_warp) * sub / warps;
    }
  }

  int64_t limit_shared = 0;
  const int64_t reserved = space.reserved_per_block_bytes();
  const int64_t per_block_default = space.per_block_default_bytes();
  const int64_t per_block_optin = std::max(space.per_block_optin_bytes(), per_block_default);
  auto with_reserve = CheckedAdd(static_bytes, reserved);
  auto total = with_reserve ? CheckedAdd(*with_reserve, dynamic_bytes) : std::nullopt;
  auto allocated = total ? CheckedRoundUp(*total, space.allocation_granularity_bytes()) : std::nullopt;
  if (!allocated) return false;
  const bool above_default = *total > per_block_default;
  const bool opt_in = graph_->launch.shared_memory_opt_in;
  const int64_t per_block_limit = (opt_in && above_default ? per_block_optin : per_block_default) + reserved;
  if (*allocated <= per_block_limit) {
    int64_t bytes_per_core;
    if (carveout_steps_.empty()) {
      bytes_per_core = space.capacity_per_core_bytes();
    } else {
      if (preferred_carveout_ < 0) return false;
      if (preferred_carveout_ >= *allocated) {
        bytes_per_core = preferred_carveout_;
      } else {
        auto it = std::lower_bound(carveout_steps_.begin(), carveout_steps_.end(), *allocated);
        if (it == carveout_steps_.end()) return false;
        bytes_per_core = *it;
      }
    }
    limit_shared = *allocated > 0 ? bytes_per_core / *allocated : kUnlimited;
  }
  const int64_t limit_blocks = limits.max_blocks_per_core();
  const int64_t result = std::min({limit_warps, limit_registers, limit_shared, limit_blocks});
  const int64_t factors[] = {limit_warps, limit_registers, limit_shared, limit_blocks};
  *factor = -1;
  for (int f = 0; f < 4; ++f) {
    if (factors[f] == result) {
      *factor = static_cast<int8_t>(f);
      break;
    }
  }
  *blocks = static_cast<int32_t>(std::min<int64_t>(result, kUnlimited));
  return true;
}

int64_t FitEvaluator::PlaceGroup(const GroupInfo& group, Scratch& scratch, bool* overflow) const {
  auto& items = scratch.items;
  items.clear();
  bool aligned_sizes = true;
  int64_t max_alignment = 1;
  for (int i = 0; i < group.num_buffers; ++i) {
    const BufferInfo& bi = buffers_[group.first_buffer + i];
    const int64_t size = scratch.bytes[bi.buffer];
    const int64_t alignment = scratch.align[bi.buffer];
    max_alignment = std::max(max_alignment, alignment);
    for (int64_t c = 0; c < scratch.copies[bi.buffer]; ++c) {
      items.push_back({size, alignment, bi.start, bi.end, 0, static_cast<int64_t>(items.size())});
    }
  }
  for (const auto& item : items) {
    if (item.size % max_alignment != 0) aligned_sizes = false;
  }
  if (group.all_interfere && aligned_sizes) {
    // Every block is live with every other and no alignment gap can open: the first-fit (and
    // best-fit) placement packs them end to end.
    int64_t sum = 0;
    for (const auto& item : items) {
      auto s = CheckedAdd(sum, item.size);
      if (!s) {
        *overflow = true;
        return 0;
      }
      sum = *s;
    }
    return sum;
  }
  // The general case: the policy's algorithm, over a conflict list kept sorted by offset.
  auto& order = scratch.order;
  order.resize(items.size());
  for (size_t i = 0; i < items.size(); ++i) order[i] = static_cast<int>(i);
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    if (items[a].size != items[b].size) return items[a].size > items[b].size;
    if (items[a].start != items[b].start) return items[a].start < items[b].start;
    return items[a].key < items[b].key;
  });
  auto& placed = scratch.placed;  // item ids by (offset, end)
  placed.clear();
  int64_t peak = 0;
  for (int id : order) {
    auto& block = items[id];
    if (block.size == 0) continue;
    GapFinder finder(block.size, block.alignment, best_fit_);
    for (int other : placed) {
      const auto& o = items[other];
      if (o.start > block.end || block.start > o.end) continue;
      if (!finder.Offer(o.offset, o.offset + o.size)) break;
    }
    int64_t best_offset;
    if (!finder.Offset(&best_offset)) {
      *overflow = true;
      return 0;
    }
    const int64_t top = finder.top();
    block.offset = best_offset;
    peak = std::max(peak, top);
    // Keep `placed` sorted by (offset, end), as the policy sorts its conflicts.
    auto pos = std::upper_bound(placed.begin(), placed.end(), id, [&](int a, int b) {
      const auto& x = items[a];
      const auto& y = items[b];
      if (x.offset != y.offset) return x.offset < y.offset;
      return x.offset + x.size < y.offset + y.size;
    });
    placed.insert(pos, id);
  }
  return peak;
}

absl::Status FitEvaluator::Evaluate(absl::Span<const int64_t> input, Scratch& scratch, FitResult* out) const {
  const CompiledGraph& graph = *graph_;
  const DeviceModel& device = *device_;
  // The device symbols (WARP_SIZE, SM_ARCH) follow the device, as in Simulate; the caller's span
  // is read-only, so bind them in a small copy.
  absl::Span<const int64_t> values = input;
  int64_t local[64];
  std::vector<int64_t> spill_copy;
  if (graph.warp_size_slot >= 0 || graph.sm_arch_slot >= 0) {
    absl::Span<int64_t> bound;
    if (input.size() <= 64) {
      std::copy(input.begin(), input.end(), local);
      bound = absl::Span<int64_t>(local, input.size());
    } else {
      spill_copy.assign(input.begin(), input.end());
      bound = absl::MakeSpan(spill_copy);
    }
    BindDeviceSymbols(graph, device, bound);
    values = bound;
  }

  *out = FitResult();
  out->peak_bytes.fill(-1);
  // Not a kernel at all: pruned as invalid, without building a message on this hot path (the
  // pruned family's example gets it).
  if (!graph.requirements.empty()) {
    out->broken_requirement = FirstBrokenRequirement(graph, values);
    if (out->broken_requirement >= 0) {
      out->limit = Limit::kInvalid;
      return absl::OkStatus();
    }
  }
  const size_t n = graph.buffers.size();
  if (scratch.bytes.size() < n) {
    scratch.bytes.resize(n);
    scratch.copies.resize(n);
    scratch.align.resize(n);
  }
  // Sizes, copies and alignment of the used buffers, in buffer order as ExpandBlocks does.
  for (int b = 0; b < static_cast<int>(n); ++b) scratch.copies[b] = 0;
  for (const BufferInfo& bi : buffers_) scratch.copies[bi.buffer] = -1;  // marks used
  for (int b = 0; b < static_cast<int>(n); ++b) {
    if (scratch.copies[b] != -1) continue;
    ASSIGN_OR_RETURN(int64_t bytes, BufferBytes(graph, b, values));
    ASSIGN_OR_RETURN(int64_t copies, BufferCopies(graph, b, values));
    scratch.bytes[b] = bytes;
    scratch.copies[b] = copies;
  }
  for (const BufferInfo& bi : buffers_) {
    int64_t alignment = bi.default_alignment;
    if (graph.buffers[bi.buffer].alignment) {
      ASSIGN_OR_RETURN(alignment, graph.buffers[bi.buffer].alignment->Evaluate(values));
      if (alignment <= 0 || (alignment & (alignment - 1)) != 0) {
        return absl::InvalidArgumentError(absl::StrCat(graph.origin, ": buffer '", graph.buffers[bi.buffer].name,
                                                       "' alignment: must be a power of two, got ", alignment));
      }
    }
    const MemorySpace& space = device.memory_spaces(groups_[bi.group].space);
    if (space.kind() == TENSOR_MEMORY) {
      const int64_t per_column = space.lanes() * space.column_bytes_per_lane();
      int64_t columns = std::max<int64_t>(CeilDiv(scratch.bytes[bi.buffer], per_column), 1);
      columns = std::max(columns, space.min_allocation_columns());
      if (space.power_of_two_allocation()) {
        int64_t p = 1;
        while (p < columns) p <<= 1;
        columns = p;
      }
      scratch.bytes[bi.buffer] = columns * per_column;
      alignment = std::max(alignment, per_column);
    }
    scratch.align[bi.buffer] = alignment;
  }

  bool fatal[kNumLimits] = {};
  int64_t required[kNumLimits] = {};
  int64_t available[kNumLimits] = {};
  auto violate = [&](Limit limit, int64_t req, int64_t avail) {
    int i = static_cast<int>(limit);
    if (!fatal[i]) {
      fatal[i] = true;
      required[i] = req;
      available[i] = avail;
    }
  };

  int64_t shared_static = 0, shared_peak = -1;
  for (const SpaceInfo& info : spaces_) {
    if (!info.reported) continue;
    const MemorySpace& space = device.memory_spaces(info.index);
    int64_t first = 0, second = 0;
    bool overflow = false;
    if (info.group[0] >= 0) first = PlaceGroup(groups_[info.group[0]], scratch, &overflow);
    if (info.group[1] >= 0) second = PlaceGroup(groups_[info.group[1]], scratch, &overflow);
    if (overflow) return absl::OutOfRangeError("placement offset overflows 64 bits");
    ASSIGN_OR_RETURN(const int64_t peak, SpaceFootprint(space, first, second, graph.origin));
    second = peak - first;  // the aligned static segment (GPU), or the program-scoped bytes (TPU)
    out->peak_bytes[info.index] = peak;
    switch (space.kind()) {
      case SHARED_MEMORY:
      case LDS: {
        shared_static = second;
        shared_peak = peak;
        int64_t limit = graph.launch.shared_memory_opt_in && space.per_block_optin_bytes() > 0
                            ? space.per_block_optin_bytes()
                            : space.per_block_default_bytes();
        if (limit <= 0) limit = space.capacity_per_core_bytes();
        if (peak > limit) violate(Limit::kSharedMemory, peak, limit);
        if (second > space.per_block_default_bytes() && space.per_block_default_bytes() > 0) {
          violate(Limit::kStaticSharedMemory, second, space.per_block_default_bytes());
        }
        break;
      }
      case TENSOR_MEMORY: {
        const int64_t per_column = space.lanes() * space.column_bytes_per_lane();
        const int64_t columns = CeilDiv(peak, per_column);
        if (columns > space.columns()) violate(Limit::kTensorMemory, columns, space.columns());
        break;
      }
      case VMEM: {
        int64_t limit = space.default_scoped_limit_bytes();
        if (graph.vmem_limit_bytes) {
          ASSIGN_OR_RETURN(limit, graph.vmem_limit_bytes->Evaluate(values));
          if (limit <= 0) return absl::InvalidArgumentError(absl::StrCat(graph.origin, ": tpu.vmem_limit_bytes must be positive"));
        } else if (graph.scoped_vmem_limit_kib) {
          ASSIGN_OR_RETURN(int64_t kib, graph.scoped_vmem_limit_kib->Evaluate(values));
          auto bytes = CheckedMul(kib, 1024);
          if (kib <= 0 || !bytes) {
            return absl::InvalidArgumentError(
                absl::StrCat(graph.origin, ": tpu.scoped_vmem_limit_kib must be positive and fit 64 bits"));
          }
          limit = *bytes;
        }
        if (first > limit) violate(Limit::kVmemScoped, first, limit);
        const int64_t capacity = space.capacity_per_core_bytes();
        const int64_t total = second + std::min(limit, capacity);
        if (second > 0 && total > capacity) violate(Limit::kVmemProgram, total, capacity);
        break;
      }
      default:
        if (peak > space.capacity_per_core_bytes()) {
          violate(Limit::kCapacity, peak, space.capacity_per_core_bytes());
        }
        break;
    }
  }

  if (execution_) {
    const ExecutionLimits& limits = device.limits();
    const CompiledLaunch& launch = graph.launch;
    int64_t num_warps = 4;
    if (launch.num_warps) {
      ASSIGN_OR_RETURN(num_warps, EvalNonNegative(graph, *launch.num_warps, "launch.num_warps", values));
    }
    if (num_warps <= 0) return absl::InvalidArgumentError(absl::StrCat(graph.origin, ": launch.num_warps must be positive"));
    int64_t warps = num_warps;
    for (const CompiledPartition& partition : launch.partitions) {
      auto w = partition.warps.Evaluate(values);
      if (!w.ok() || *w < 0) {
        return EvalNonNegative(graph, partition.warps, absl::StrCat("partition '", partition.name, "' warps"), values)
            .status();
      }
      warps += *w;
    }
    auto thread_count = CheckedMul(warps, limits.warp_size());
    if (!thread_count || *thread_count > (int64_t{1} << 30)) {
      return absl::InvalidArgumentError(absl::StrCat(graph.origin, ": launch: thread count overflows"));
    }
    out->warps = warps;
    out->threads = *thread_count;
    int64_t limit = limits.max_threads_per_block();
    if (launch.max_threads_per_block) {
      ASSIGN_OR_RETURN(int64_t declared,
                       EvalNonNegative(graph, *launch.max_threads_per_block, "launch.max_threads_per_block", values));
      if (declared > 0 && declared < limit) limit = declared;
    }
    // ThreadBudget keeps int32 fields; compare as Simulate's CheckThreads does.
    if (static_cast<int32_t>(*thread_count) > static_cast<int32_t>(limit)) {
      violate(Limit::kThreads, *thread_count, limit);
    }
    int64_t min_blocks = 1, declared_cap = 0;
    if (launch.min_blocks_per_core) {
      ASSIGN_OR_RETURN(min_blocks, EvalNonNegative(graph, *launch.min_blocks_per_core, "launch.min_blocks_per_core", values));
    }
    if (launch.max_registers_per_thread) {
      ASSIGN_OR_RETURN(declared_cap, EvalNonNegative(graph, *launch.max_registers_per_thread,
                                                     "launch.max_registers_per_thread", values));
    }
    const int64_t launch_threads = std::min<int64_t>(*thread_count, limit);
    // Without a declared thread limit ptxas does not know the block size, so only a declared
    // cap lowers the budget (as Simulate models it).
    const int32_t budget =
        ComputeRegisterBudget(device, launch.max_threads_per_block ? launch_threads : 0, min_blocks, declared_cap);
    out->register_budget = budget;
    int64_t allocated = 0;
    if (launch.registers_per_thread) {
      ASSIGN_OR_RETURN(int64_t demand, EvalNonNegative(graph, *launch.registers_per_thread,
                                                       "launch.registers_per_thread", values));
      out->register_demand = demand;
      allocated = std::min<int64_t>(demand, budget);
      out->spill_bytes_per_thread = std::max<int64_t>(demand - budget, 0) * 4;
    }
    if (*thread_count <= limit) {
      int64_t static_bytes = shared_peak >= 0 ? shared_static : 0;
      int64_t dynamic_bytes = shared_peak >= 0 ? shared_peak - shared_static : 0;
      out->has_occupancy = Occupancy(*thread_count, allocated, static_bytes, dynamic_bytes, &out->blocks_per_core,
                                     &out->occupancy_factor);
    }
  }

  out->simulate_fits = true;
  for (int i = 0; i < kNumLimits; ++i) {
    if (fatal[i]) out->simulate_fits = false;
  }
  // Not one block resident: the launch fails (Simulate counts it when nothing else is fatal).
  // Without occupancy (the device lacks the numbers) nothing is pruned for residency.
  if (out->simulate_fits && out->has_occupancy && out->blocks_per_core == 0) {
    violate(Limit::kNoResidency, out->threads, out->register_budget);
    out->simulate_fits = false;
  }
  if (prune_spills_ && out->spill_bytes_per_thread > 0) {
    violate(Limit::kRegisterSpill, out->register_demand, out->register_budget);
  }
  out->fits = true;
  for (int i = 0; i < kNumLimits; ++i) {
    if (fatal[i]) {
      out->fits = false;
      out->limit = static_cast<Limit>(i);
      out->required = required[i];
      out->available = available[i];
      break;
    }
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------------------------
// Performance expressions

absl::StatusOr<PerfExpressions> CompilePerfExpressions(const CompiledGraph& graph) {
  PerfExpressions perf;
  const KernelGraph& g = graph.graph;
  const int reuse_given = !g.grid_row_bytes().empty() + !g.grid_col_bytes().empty() + !g.tile_group_rows().empty();
  if (reuse_given != 0 && reuse_given != 3) {
    return absl::InvalidArgumentError(absl::StrCat(
        graph.origin, ": grid_row_bytes, grid_col_bytes and tile_group_rows go together (L2 reuse); ", reuse_given,
        " of 3 given"));
  }
  if (reuse_given == 3 && (g.global_bytes().empty() || graph.launch.grid.size() != 2)) {
    return absl::InvalidArgumentError(absl::StrCat(
        graph.origin, ": grid_row_bytes / grid_col_bytes / tile_group_rows need global_bytes and a two-dimensional "
                      "launch.grid"));
  }
  for (const auto& stages : graph.loop_stages) {
    if (stages) perf.stages.push_back(*stages);
  }
  for (int loop = 0; loop < static_cast<int>(graph.loop_stages.size()); ++loop) {
    if (!graph.loop_stages[loop]) continue;
    perf.pipeline_trips = graph.loop_trips[loop];
    for (int op : graph.op_order) {
      const auto& loops = graph.op_loops[op];
      if (g.ops(op).kind() != "async_copy" || std::find(loops.begin(), loops.end(), loop) == loops.end()) {
        continue;
      }
      for (int b : graph.op_writes[op]) {
        if (std::find(perf.stage_buffers.begin(), perf.stage_buffers.end(), b) == perf.stage_buffers.end()) {
          perf.stage_buffers.push_back(b);
        }
      }
    }
    break;
  }
  if (!graph.global_bytes) {
    const std::vector<LiveRange> ranges = ComputeLiveRanges(graph);
    for (int b = 0; b < static_cast<int>(graph.buffers.size()); ++b) {
      if (graph.buffers[b].role != OPERAND || !ranges[b].used()) continue;
      // The loops of the first op (in execution order) writing the tile, else the first using it.
      int chosen = -1;
      for (int pass = 0; pass < 2 && chosen < 0; ++pass) {
        for (int op : graph.op_order) {
          const auto& list = pass == 0 ? graph.op_writes[op] : graph.op_buffers[op];
          if (std::find(list.begin(), list.end(), b) != list.end()) {
            chosen = op;
            break;
          }
        }
      }
      PerfExpressions::OperandTraffic traffic{b, {}};
      if (chosen >= 0) {
        for (int loop : graph.op_loops[chosen]) {
          if (graph.loop_trips[loop]) traffic.trips.push_back(*graph.loop_trips[loop]);
        }
      }
      perf.operands.push_back(std::move(traffic));
    }
  }
  return perf;
}

namespace {

// Evaluates the model's inputs for one configuration; false when an expression fails (the
// configuration is then ranked last, which Simulate-valid configurations rarely hit).
bool EvaluatePerfInputs(const CompiledGraph& graph, const PerfExpressions& perf, absl::Span<const int64_t> values,
                        const FitEvaluator::Scratch& scratch, const FitResult& fit, PerfInputs* in) {
  if (graph.flops) {
    auto v = graph.flops->Evaluate(values);
    if (!v.ok()) return false;
    in->flops_per_block = static_cast<double>(*v);
  }
  if (graph.global_bytes) {
    auto v = graph.global_bytes->Evaluate(values);
    if (!v.ok()) return false;
    in->bytes_per_block = static_cast<double>(*v);
  } else if (!perf.operands.empty()) {
    double bytes = 0;
    for (const auto& op : perf.operands) {
      double tile = static_cast<double>(scratch.bytes[op.buffer]);
      for (const Expr& trip : op.trips) {
        auto t = trip.Evaluate(values);
        if (!t.ok()) return false;
        tile *= static_cast<double>(*t);
      }
      bytes += tile;
    }
    in->bytes_per_block = bytes;
  }
  if (graph.smem_bytes) {
    auto v = graph.smem_bytes->Evaluate(values);
    if (!v.ok()) return false;
    in->smem_bytes_per_block = static_cast<double>(*v);
  }
  int64_t grid = graph.launch.grid.empty() ? 0 : 1;
  for (const Expr& g : graph.launch.grid) {
    auto v = g.Evaluate(values);
    if (!v.ok() || *v <= 0) return false;
    auto p = CheckedMul(grid, *v);
    if (!p) return false;
    grid = *p;
  }
  in->grid_blocks = grid;
  if (graph.grid_row_bytes && graph.launch.grid.size() == 2) {
    auto rows = graph.launch.grid[0].Evaluate(values);
    auto cols = graph.launch.grid[1].Evaluate(values);
    auto row_bytes = graph.grid_row_bytes->Evaluate(values);
    auto col_bytes = graph.grid_col_bytes->Evaluate(values);
    auto group = graph.tile_group_rows->Evaluate(values);
    if (!rows.ok() || !cols.ok() || !row_bytes.ok() || !col_bytes.ok() || !group.ok()) return false;
    in->grid_rows = *rows;
    in->grid_cols = *cols;
    in->row_bytes_per_block = static_cast<double>(*row_bytes);
    in->col_bytes_per_block = static_cast<double>(*col_bytes);
    in->tile_group_rows = *group;
  }
  int64_t stages = 1;
  for (const Expr& s : perf.stages) {
    auto v = s.Evaluate(values);
    if (!v.ok()) return false;
    stages = std::max(stages, *v);
  }
  if (perf.stages.empty()) {
    for (const auto& op : perf.operands) stages = std::max(stages, scratch.copies[op.buffer]);
  }
  in->stages = stages;
  if (graph.peak_percent) {
    auto v = graph.peak_percent->Evaluate(values);
    if (!v.ok() || *v <= 0) return false;
    in->peak_fraction = std::min(static_cast<double>(*v) / 100.0, 1.0);
  }
  // The wait terms: optional counts that must not be negative.
  auto non_negative = [&](const std::optional<Expr>& expr, double* out) {
    if (!expr) return true;
    auto v = expr->Evaluate(values);
    if (!v.ok() || *v < 0) return false;
    *out = static_cast<double>(*v);
    return true;
  };
  if (!non_negative(graph.sync_cycles, &in->sync_cycles_per_block) ||
      !non_negative(graph.smem_round_trips, &in->smem_round_trips) ||
      !non_negative(graph.wait_cycles, &in->wait_cycles_per_block) ||
      !non_negative(graph.issue_slots, &in->issue_slots_per_block)) {
    return false;
  }
  if (graph.warp_stall_percent) {
    auto v = graph.warp_stall_percent->Evaluate(values);
    if (!v.ok() || *v < 0 || *v > 99) return false;
    in->warp_stall_share = static_cast<double>(*v) / 100.0;
  }
  if (perf.pipeline_trips) {
    auto v = perf.pipeline_trips->Evaluate(values);
    if (!v.ok()) return false;
    in->pipeline_trips = std::max<int64_t>(*v, 0);
  }
  in->stage_bytes_per_block = 0;
  for (int b : perf.stage_buffers) in->stage_bytes_per_block += static_cast<double>(scratch.bytes[b]);
  in->blocks_per_core = fit.has_occupancy ? std::max<int32_t>(fit.blocks_per_core, 1) : 1;
  in->warps_per_block = fit.warps;
  return true;
}

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
  uint64_t unestimated = 0;
  uint64_t counts[kNumLimits] = {};
  uint64_t first_index[kNumLimits];
  std::string first_message[kNumLimits];
  // [limit][axis value slot]
  std::vector<uint64_t> value_counts;
  std::vector<Candidate> heap;  // max-heap by "worse": top is the worst kept
  WorkerState() { std::fill(std::begin(first_index), std::end(first_index), UINT64_MAX); }
};

std::string DefaultComputeDtype(const CompiledGraph& graph) {
  if (!graph.graph.compute_dtype().empty()) return graph.graph.compute_dtype();
  // The widest element type among operand tiles, else any buffer's.
  std::string best;
  int64_t best_bits = -1;
  for (int pass = 0; pass < 2 && best.empty(); ++pass) {
    for (const CompiledBuffer& b : graph.buffers) {
      if (b.dtype.empty() || (pass == 0 && b.role != OPERAND)) continue;
      auto bits = DtypeBits(b.dtype);
      if (bits.ok() && *bits > best_bits) {
        best_bits = *bits;
        best = b.dtype;
      }
    }
  }
  return best;
}

}  // namespace

absl::StatusOr<PlanResult> Plan(const CompiledGraph& graph, const DeviceModel& device, std::vector<ParamAxis> axes,
                                std::vector<int64_t> base_values, const PlanOptions& options) {
  if (base_values.size() != graph.symbols.names().size()) {
    return absl::InvalidArgumentError("Plan: parameter values do not match the graph's parameters");
  }
  PlanResult result;
  ASSIGN_OR_RETURN(FitEvaluator evaluator, FitEvaluator::Create(graph, device, options.policy, !options.allow_spills));
  ASSIGN_OR_RETURN(PerfExpressions perf, CompilePerfExpressions(graph));
  result.compute_dtype = options.compute_dtype.empty() ? DefaultComputeDtype(graph) : options.compute_dtype;
  if (result.compute_dtype.empty()) {
    if (graph.flops) {
      return absl::InvalidArgumentError(absl::StrCat(graph.origin, ": no compute_dtype in the graph and no typed operand; "
                                                     "pass --compute-dtype (bf16, f16, f32, ...)"));
    }
    result.compute_dtype = "f32";
  }
  ASSIGN_OR_RETURN(result.model, PerfModel::Create(device, result.compute_dtype, graph.flops.has_value()));
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
    if (total > kMaxSpace / axis.values.size()) {
      return absl::InvalidArgumentError(absl::StrCat("the parameter space has more than ", kMaxSpace,
                                                     " configurations; narrow it with --param or fix parameters with --set"));
    }
    total *= axis.values.size();
  }
  result.space_size = total;
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
    FitEvaluator::Scratch scratch;
    std::vector<int64_t> values = result.base_values;
    std::vector<int> digit(num_axes, 0);
    FitResult fit;
    for (;;) {
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
        absl::Status status = evaluator.Evaluate(values, scratch, &fit);
        if (!status.ok()) {
          fit.fits = false;
          fit.limit = Limit::kInvalid;
        }
        if (fit.fits) {
          ++state.fitting;
          if (top_k > 0) {
            PerfInputs in;
            double time = std::numeric_limits<double>::infinity();
            double inflight = 0;
            if (EvaluatePerfInputs(graph, perf, values, scratch, fit, &in)) {
              const PerfEstimate e = result.model.Estimate(in);
              time = e.time_s;
              inflight = e.inflight_bytes_per_core;
            } else {
              ++state.unestimated;
            }
            Candidate c{time, inflight, index};
            if (state.heap.size() < top_k) {
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
  if (options.progress) options.progress(total, total);

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

  FitEvaluator::Scratch scratch;
  for (const Candidate& c : candidates) {
    RankedConfig ranked;
    ranked.index = c.index;
    std::vector<int64_t> all;
    decode(c.index, &ranked.values, &all);
    RETURN_IF_ERROR(evaluator.Evaluate(all, scratch, &ranked.fit));
    PerfInputs in;
    ranked.estimated = EvaluatePerfInputs(graph, perf, all, scratch, ranked.fit, &in);
    if (ranked.estimated) ranked.perf = result.model.Estimate(in);
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
    absl::Status status = evaluator.Evaluate(all, scratch, &fit);
    family.message = !status.ok()                   ? std::string(status.message())
                     : fit.broken_requirement >= 0 ? BrokenRequirementMessage(graph, fit.broken_requirement)
                                                   : first_message[l];
    family.required = fit.required;
    family.available = fit.available;
    for (int a = 0; a < num_axes; ++a) {
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
