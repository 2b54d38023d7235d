#include "sim/simulator.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "sim/checked_math.h"
#include "sim/device.h"
#include "sim/limits.h"
#include "sim/liveness.h"
#include "sim/occupancy.h"
#include "sim/status_macros.h"

namespace scratchsim {
namespace {

// Graphs name spaces the way their author thinks ("smem"); a GPU's per-block scratchpad is
// "smem" on NVIDIA and "lds" on AMD, so either name finds the other.
const MemorySpace* ResolveSpace(const DeviceModel& device, absl::string_view name) {
  if (const MemorySpace* space = FindSpace(device, name)) return space;
  if (name == "smem" || name == "shared" || name == "lds") {
    if (const MemorySpace* s = FindSpaceOfKind(device, SHARED_MEMORY)) return s;
    return FindSpaceOfKind(device, LDS);
  }
  return nullptr;
}

std::string SpaceNames(const DeviceModel& device) {
  std::vector<std::string> names;
  for (const MemorySpace& s : device.memory_spaces()) names.push_back(s.name());
  return absl::StrJoin(names, ", ");
}

// One group of blocks placed together: a memory space, and within it the static/dynamic or
// scoped/program split that real allocators keep apart.
struct Group {
  std::vector<int> blocks;  // indices into the expanded block list
  PlacementResult placement;
};

struct SpaceState {
  const MemorySpace* space = nullptr;
  Group dynamic_or_scoped;   // dynamic shared memory, or instruction-scoped VMEM
  Group static_or_program;   // static __shared__, or program-scoped VMEM
};

int64_t TmemColumns(const MemorySpace& space, int64_t bytes) {
  int64_t per_column = space.lanes() * space.column_bytes_per_lane();
  int64_t columns = std::max<int64_t>(CeilDiv(bytes, per_column), 1);
  columns = std::max(columns, space.min_allocation_columns());
  if (space.power_of_two_allocation()) {
    int64_t p = 1;
    while (p < columns) p <<= 1;
    columns = p;
  }
  return columns;
}

class Simulation {
 public:
  Simulation(const CompiledGraph& graph, const DeviceModel& device, absl::Span<const int64_t> values,
             const SimulateOptions& options)
      : graph_(graph), device_(device), bound_(values.begin(), values.end()), options_(options) {
    BindDeviceSymbols(graph, device, absl::MakeSpan(bound_));
    values_ = bound_;
  }

  absl::StatusOr<Report> Run() {
    report_.set_kernel(graph_.graph.name());
    report_.set_device(device_.name());
    if (options_.policy_override) {
      policy_ = options_.policy_override.get();
    } else {
      owned_policy_ = MakePlacementPolicy(options_.policy);
      policy_ = owned_policy_.get();
    }
    report_.set_policy(std::string(policy_->name()));
    for (size_t i = 0; i < values_.size(); ++i) {
      if (IsDeviceSymbol(graph_, static_cast<int>(i))) continue;
      ParameterValue* p = report_.add_parameters();
      p->set_name(graph_.symbols.names()[i]);
      p->set_value(values_[i]);
    }
    RETURN_IF_ERROR(CheckRequirements(graph_, values_));
    RETURN_IF_ERROR(PlaceSpaces());
    RETURN_IF_ERROR(CheckExecution());
    bool fits = std::none_of(report_.violations().begin(), report_.violations().end(),
                             [](const Violation& v) { return v.fatal(); });
    report_.set_fits(fits);
    return std::move(report_);
  }

 private:
  absl::Status PlaceSpaces() {
    ranges_ = ComputeLiveRanges(graph_);
    std::vector<int64_t> alignment(graph_.buffers.size(), 1);
    space_of_.assign(graph_.buffers.size(), -1);
    for (size_t b = 0; b < graph_.buffers.size(); ++b) {
      const MemorySpace* space = ResolveSpace(device_, graph_.buffers[b].space);
      if (space == nullptr) {
        return absl::InvalidArgumentError(absl::StrCat(
            graph_.origin, ": buffer '", graph_.buffers[b].name, "' memory_space: device '", device_.name(),
            "' has no memory space '", graph_.buffers[b].space, "' (it has: ", SpaceNames(device_), ")"));
      }
      // Repeated message fields are not contiguous: find the index by identity.
      int index = 0;
      while (&device_.memory_spaces(index) != space) ++index;
      space_of_[b] = index;
      alignment[b] = std::max<int64_t>(space->alignment_bytes(), 1);
    }
    ASSIGN_OR_RETURN(blocks_, ExpandBlocks(graph_, ranges_, values_, alignment));

    const int64_t last_position = std::max<int64_t>(static_cast<int64_t>(graph_.op_order.size()) - 1, 0);
    std::map<int, SpaceState> spaces;
    for (int i = 0; i < static_cast<int>(blocks_.size()); ++i) {
      BufferBlock& block = blocks_[i];
      const CompiledBuffer& buffer = graph_.buffers[block.buffer];
      SpaceState& state = spaces[space_of_[block.buffer]];
      state.space = &device_.memory_spaces(space_of_[block.buffer]);
      if (state.space->kind() == TENSOR_MEMORY) {
        int64_t columns = TmemColumns(*state.space, block.block.size);
        int64_t per_column = state.space->lanes() * state.space->column_bytes_per_lane();
        block.block.size = columns * per_column;
        block.block.alignment = std::max(block.block.alignment, per_column);
      }
      bool second_group = state.space->kind() == VMEM || state.space->kind() == SMEM
                              ? buffer.scope != INSTRUCTION
                              : buffer.static_allocation;
      if (second_group && state.space->kind() != VMEM && state.space->kind() != SMEM) {
        // Static __shared__ arrays are laid out by the linker for the whole kernel: no reuse.
        block.block.start = 0;
        block.block.end = last_position;
      }
      (second_group ? state.static_or_program : state.dynamic_or_scoped).blocks.push_back(i);
    }
    for (auto& [index, state] : spaces) {
      RETURN_IF_ERROR(PlaceGroup(state.dynamic_or_scoped));
      RETURN_IF_ERROR(PlaceGroup(state.static_or_program));
      RETURN_IF_ERROR(ReportSpace(state));
    }
    return absl::OkStatus();
  }

  absl::Status PlaceGroup(Group& group) {
    if (group.blocks.empty()) return absl::OkStatus();
    std::vector<Block> blocks;
    blocks.reserve(group.blocks.size());
    for (int i : group.blocks) blocks.push_back(blocks_[i].block);
    ASSIGN_OR_RETURN(group.placement, policy_->Place(blocks));
    return absl::OkStatus();
  }

  // The op position where the most bytes of `groups` are live at once.
  std::pair<int64_t, int64_t> PeakPosition(const std::vector<const Group*>& groups) const {
    int64_t positions = std::max<int64_t>(static_cast<int64_t>(graph_.op_order.size()), 1);
    std::vector<int64_t> delta(positions + 1, 0);
    for (const Group* group : groups) {
      for (int i : group->blocks) {
        delta[blocks_[i].block.start] += blocks_[i].block.size;
        delta[blocks_[i].block.end + 1] -= blocks_[i].block.size;
      }
    }
    int64_t live = 0, best = -1, best_position = 0;
    for (int64_t p = 0; p < positions; ++p) {
      live += delta[p];
      if (live > best) {
        best = live;
        best_position = p;
      }
    }
    return {best_position, std::max<int64_t>(best, 0)};
  }

  absl::Status ReportSpace(const SpaceState& state) {
    const MemorySpace& space = *state.space;
    SpaceReport* out = report_.add_spaces();
    out->set_space(space.name());
    out->set_kind(space.kind());
    const int64_t first = state.dynamic_or_scoped.placement.peak;
    const bool is_gpu_shared = space.kind() == SHARED_MEMORY || space.kind() == LDS;
    ASSIGN_OR_RETURN(const int64_t peak,
                     SpaceFootprint(space, first, state.static_or_program.placement.peak, graph_.origin));
    // The aligned static segment (GPU), or the program-scoped bytes (TPU).
    const int64_t second = peak - first;
    out->set_peak_bytes(peak);
    if (space.kind() == VMEM || space.kind() == SMEM) {
      out->set_instruction_scoped_bytes(first);
      out->set_program_scoped_bytes(second);
    } else {
      static_bytes_[space.name()] = second;
    }
    int64_t total = 0;
    for (const Group* group : {&state.dynamic_or_scoped, &state.static_or_program}) {
      for (int i : group->blocks) {
        auto sum = CheckedAdd(total, blocks_[i].block.size);
        if (!sum) return absl::OutOfRangeError(absl::StrCat(graph_.origin, ": total bytes overflow 64 bits"));
        total = *sum;
      }
    }
    out->set_total_bytes(total);

    auto [position, live] = PeakPosition({&state.dynamic_or_scoped, &state.static_or_program});
    out->set_peak_position(position);
    out->set_live_bytes_at_peak(live);
    if (!graph_.op_order.empty()) out->set_peak_op(graph_.graph.ops(graph_.op_order[position]).name());

    // Buffers live at the peak position, largest total first.
    std::map<int, int64_t> copies_live;
    for (const Group* group : {&state.dynamic_or_scoped, &state.static_or_program}) {
      for (int i : group->blocks) {
        const Block& b = blocks_[i].block;
        if (b.start <= position && position <= b.end && b.size > 0) ++copies_live[blocks_[i].buffer];
      }
    }
    std::vector<BufferShare> shares;
    for (const auto& [buffer, copies] : copies_live) {
      BufferShare share;
      share.set_buffer(graph_.buffers[buffer].name);
      share.set_copies(copies);
      // The block size already carries TMEM column rounding.
      int64_t bytes = 0;
      for (const BufferBlock& block : blocks_) {
        if (block.buffer == buffer) {
          bytes = block.block.size;
          break;
        }
      }
      share.set_bytes_per_copy(bytes);
      share.set_total_bytes(bytes * copies);
      share.set_share(peak > 0 ? static_cast<double>(bytes * copies) / static_cast<double>(peak) : 0.0);
      share.set_role(graph_.buffers[buffer].role);
      share.set_shape(ShapeString(graph_, buffer, values_));
      shares.push_back(std::move(share));
    }
    std::stable_sort(shares.begin(), shares.end(), [](const BufferShare& a, const BufferShare& b) {
      return a.total_bytes() > b.total_bytes();
    });
    std::vector<std::string> culprits;
    for (BufferShare& share : shares) {
      culprits.push_back(share.buffer());
      *out->add_live_at_peak() = std::move(share);
    }

    if (options_.keep_placements) {
      for (const Group* group : {&state.dynamic_or_scoped, &state.static_or_program}) {
        // CUDA lays static __shared__ arrays out first and dynamic memory after them.
        const int64_t base = group == &state.dynamic_or_scoped && is_gpu_shared ? second : 0;
        for (size_t k = 0; k < group->blocks.size(); ++k) {
          const BufferBlock& block = blocks_[group->blocks[k]];
          Placement* p = out->add_placements();
          p->set_buffer(graph_.buffers[block.buffer].name);
          p->set_copy(block.copy);
          p->set_offset(base + group->placement.offsets[k]);
          p->set_size_bytes(block.block.size);
          p->set_live_start(block.block.start);
          p->set_live_end(block.block.end);
        }
      }
    }

    std::vector<Violation> violations;
    switch (space.kind()) {
      case SHARED_MEMORY:
      case LDS: {
        out->set_limit_bytes(graph_.launch.shared_memory_opt_in && space.per_block_optin_bytes() > 0
                                 ? space.per_block_optin_bytes()
                                 : space.per_block_default_bytes());
        out->set_limit_name(graph_.launch.shared_memory_opt_in && space.per_block_optin_bytes() > 0
                                ? "per-block opt-in maximum"
                                : "per-block default (no opt-in)");
        violations = CheckSharedMemory(space, second, peak, graph_.launch.shared_memory_opt_in, culprits);
        break;
      }
      case TENSOR_MEMORY: {
        int64_t per_column = space.lanes() * space.column_bytes_per_lane();
        int64_t columns = CeilDiv(peak, per_column);
        out->set_limit_bytes(space.columns() * per_column);
        out->set_limit_name(absl::StrCat(space.columns(), " columns x ", space.lanes(), " lanes"));
        if (auto v = CheckTensorMemory(space, columns, culprits)) violations.push_back(*v);
        break;
      }
      case VMEM: {
        ASSIGN_OR_RETURN(auto limit, ScopedVmemLimit(space));
        out->set_limit_bytes(limit.first);
        out->set_limit_name(limit.second);
        violations = CheckVmem(space, first, limit.first, limit.second, second, culprits);
        break;
      }
      default: {
        out->set_limit_bytes(space.capacity_per_core_bytes());
        out->set_limit_name("capacity per core");
        if (auto v = CheckCapacity(space, peak, culprits)) violations.push_back(*v);
        break;
      }
    }
    out->set_fits(std::none_of(violations.begin(), violations.end(), [](const Violation& v) { return v.fatal(); }));
    for (Violation& v : violations) *report_.add_violations() = std::move(v);
    return absl::OkStatus();
  }

  // The scoped VMEM limit and where it comes from: vmem_limit_bytes, else the flag, else the
  // generation's default.
  absl::StatusOr<std::pair<int64_t, std::string>> ScopedVmemLimit(const MemorySpace& space) const {
    if (graph_.vmem_limit_bytes) {
      ASSIGN_OR_RETURN(int64_t bytes, graph_.vmem_limit_bytes->Evaluate(values_));
      if (bytes <= 0) return absl::InvalidArgumentError(absl::StrCat(graph_.origin, ": tpu.vmem_limit_bytes must be positive"));
      return std::make_pair(bytes, std::string("vmem_limit_bytes"));
    }
    if (graph_.scoped_vmem_limit_kib) {
      ASSIGN_OR_RETURN(int64_t kib, graph_.scoped_vmem_limit_kib->Evaluate(values_));
      auto bytes = CheckedMul(kib, 1024);
      if (kib <= 0 || !bytes) {
        return absl::InvalidArgumentError(absl::StrCat(graph_.origin, ": tpu.scoped_vmem_limit_kib must be positive and fit 64 bits"));
      }
      return std::make_pair(*bytes, std::string("--xla_tpu_scoped_vmem_limit_kib"));
    }
    return std::make_pair(space.default_scoped_limit_bytes(), std::string("default scoped limit"));
  }

  absl::StatusOr<int64_t> EvaluateOr(const std::optional<Expr>& expr, int64_t fallback, absl::string_view field) const {
    if (!expr) return fallback;
    auto value = expr->Evaluate(values_);
    if (!value.ok()) return absl::InvalidArgumentError(absl::StrCat(graph_.origin, ": ", field, ": ", value.status().message()));
    if (*value < 0) return absl::InvalidArgumentError(absl::StrCat(graph_.origin, ": ", field, ": must not be negative, got ", *value));
    return *value;
  }

  absl::Status CheckExecution() {
    const ExecutionLimits& limits = device_.limits();
    if (device_.vendor() == "google" || limits.warp_size() <= 0) return absl::OkStatus();
    const CompiledLaunch& launch = graph_.launch;
    if (!launch.num_warps) report_.add_notes("launch.num_warps not given: assumed 4 (Triton's default)");
    ASSIGN_OR_RETURN(int64_t num_warps, EvaluateOr(launch.num_warps, 4, "launch.num_warps"));
    if (num_warps <= 0) return absl::InvalidArgumentError(absl::StrCat(graph_.origin, ": launch.num_warps must be positive"));
    ThreadBudget* threads = report_.mutable_threads();
    int64_t warps = num_warps;
    ParameterValue* default_partition = threads->add_partition_warps();
    default_partition->set_name("default");
    default_partition->set_value(num_warps);
    for (const CompiledPartition& partition : launch.partitions) {
      ASSIGN_OR_RETURN(int64_t w, EvaluateOr(partition.warps, 0, absl::StrCat("partition '", partition.name, "' warps")));
      ParameterValue* p = threads->add_partition_warps();
      p->set_name(partition.name);
      p->set_value(w);
      warps += w;
    }
    auto thread_count = CheckedMul(warps, limits.warp_size());
    if (!thread_count || *thread_count > (int64_t{1} << 30)) {
      return absl::InvalidArgumentError(absl::StrCat(graph_.origin, ": launch: thread count overflows"));
    }
    threads->set_required_threads(static_cast<int32_t>(*thread_count));
    int64_t limit = limits.max_threads_per_block();
    threads->set_limit_name("hardware maximum per block");
    if (launch.max_threads_per_block) {
      ASSIGN_OR_RETURN(int64_t declared, EvaluateOr(launch.max_threads_per_block, 0, "launch.max_threads_per_block"));
      if (declared > 0 && declared < limit) {
        limit = declared;
        threads->set_limit_name("the kernel's declared maximum: maxntid / launch bounds");
      }
    }
    threads->set_limit_threads(static_cast<int32_t>(limit));
    if (auto v = CheckThreads(*threads)) *report_.add_violations() = *v;

    // Registers: the compiler fits demand into the budget that lets a block launch; the rest spills.
    ASSIGN_OR_RETURN(int64_t min_blocks, EvaluateOr(launch.min_blocks_per_core, 1, "launch.min_blocks_per_core"));
    ASSIGN_OR_RETURN(int64_t declared_cap, EvaluateOr(launch.max_registers_per_thread, 0, "launch.max_registers_per_thread"));
    int64_t launch_threads = std::min<int64_t>(*thread_count, limit);
    // Without a declared thread limit (CUDA without __launch_bounds__) ptxas does not know the
    // block size, so registers do not shrink to fit it; only a declared cap applies
    // (measured on the GPU, docs/validation/h100.md).
    int32_t budget = ComputeRegisterBudget(device_, launch.max_threads_per_block ? launch_threads : 0,
                                           min_blocks, declared_cap);
    int64_t allocated = 0;
    if (launch.registers_per_thread) {
      ASSIGN_OR_RETURN(int64_t demand, EvaluateOr(launch.registers_per_thread, 0, "launch.registers_per_thread"));
      RegisterBudget* registers = report_.mutable_registers();
      registers->set_demand_per_thread(static_cast<int32_t>(std::min<int64_t>(demand, 1 << 20)));
      registers->set_budget_per_thread(budget);
      allocated = std::min<int64_t>(demand, budget);
      registers->set_allocated_per_thread(static_cast<int32_t>(allocated));
      int64_t spill = std::max<int64_t>(demand - budget, 0) * 4;
      registers->set_spill_bytes_per_thread(spill);
      registers->set_spill_bytes_per_block(spill * launch_threads);
      if (auto v = CheckRegisters(*registers)) *report_.add_violations() = *v;
    }

    // Occupancy for the launchable shape; shared memory from the per-block scratchpad.
    if (*thread_count > limit) return absl::OkStatus();
    OccupancyInput input;
    input.threads_per_block = *thread_count;
    input.registers_per_thread = allocated;
    input.shared_memory_opt_in = launch.shared_memory_opt_in;
    for (const SpaceReport& space : report_.spaces()) {
      if (space.kind() != SHARED_MEMORY && space.kind() != LDS) continue;
      int64_t static_bytes = static_bytes_[space.space()];
      input.static_shared_bytes = static_bytes;
      input.dynamic_shared_bytes = space.peak_bytes() - static_bytes;
    }
    auto occupancy = ComputeOccupancy(device_, input);
    if (!occupancy.ok()) {
      report_.add_notes(absl::StrCat("occupancy not computed: ", occupancy.status().message()));
      return absl::OkStatus();
    }
    *report_.mutable_occupancy() = *occupancy;
    const bool already_fatal = std::any_of(report_.violations().begin(), report_.violations().end(),
                                           [](const Violation& v) { return v.fatal(); });
    if (occupancy->blocks_per_core() == 0 && !already_fatal) {
      // Not even one block can be resident: the launch fails (cudaErrorLaunchOutOfResources,
      // "too many resources requested for launch", when registers are the cause).
      Violation* v = report_.add_violations();
      v->set_resource(occupancy->limiting_factor());
      v->set_message(absl::StrCat("too many resources requested for launch: ", *thread_count, " threads x ",
                                  allocated, " registers do not fit one SM (",
                                  occupancy->limiting_factor(), ")"));
      v->set_required(allocated);
      v->set_available(report_.registers().budget_per_thread());
      v->set_fatal(true);
    }
    return absl::OkStatus();
  }

  const CompiledGraph& graph_;
  const DeviceModel& device_;
  std::vector<int64_t> bound_;
  absl::Span<const int64_t> values_;
  const SimulateOptions& options_;
  std::unique_ptr<PlacementPolicy> owned_policy_;
  const PlacementPolicy* policy_ = nullptr;
  std::vector<LiveRange> ranges_;
  std::vector<int> space_of_;
  std::vector<BufferBlock> blocks_;
  std::map<std::string, int64_t> static_bytes_;
  Report report_;
};

}  // namespace

absl::StatusOr<Report> SimulateOnce(const CompiledGraph& graph, const DeviceModel& device,
                                    absl::Span<const int64_t> values, const SimulateOptions& options) {
  if (values.size() != graph.symbols.names().size()) {
    return absl::InvalidArgumentError("Simulate: parameter values do not match the graph's parameters");
  }
  return Simulation(graph, device, values, options).Run();
}

}  // namespace scratchsim
