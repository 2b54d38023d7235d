#include "sim/simulator.h"

#include <algorithm>
#include <map>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "sim/checked_math.h"
#include "sim/device.h"
#include "sim/limits.h"
#include "sim/status_macros.h"
#include "sim/suggest.h"

namespace scratchsim {
namespace {

// The limits of a memory space, in Limit order: those IsMemoryLimit names.
const std::vector<Limit>& MemoryLimits() {
  static const std::vector<Limit>* const limits = [] {
    auto* out = new std::vector<Limit>;
    for (int l = 0; l < kNumLimits; ++l) {
      if (IsMemoryLimit(static_cast<Limit>(l))) out->push_back(static_cast<Limit>(l));
    }
    return out;
  }();
  return *limits;
}

// Turns the engine's result for one configuration into a Report: where each block sits, what is
// live at the peak, and every breach in the words of the toolchain that would report it. No
// rule of fit is decided here.
class Explanation {
 public:
  Explanation(const FitEngine& engine, const FitEngine::Scratch& scratch, const FitResult& fit,
              const SimulateOptions& options)
      : engine_(engine),
        graph_(engine.graph()),
        device_(engine.device()),
        scratch_(scratch),
        fit_(fit),
        options_(options) {}

  absl::StatusOr<Report> Build() {
    report_.set_kernel(graph_.graph.name());
    report_.set_device(device_.name());
    report_.set_policy(std::string(engine_.policy().name()));
    for (size_t i = 0; i < scratch_.values.size(); ++i) {
      if (IsDeviceSymbol(graph_, static_cast<int>(i))) continue;
      ParameterValue* p = report_.add_parameters();
      p->set_name(graph_.symbols.names()[i]);
      p->set_value(scratch_.values[i]);
    }
    // One note per untouched buffer, up to kMaxListedBuffers; the rest counted in one more.
    const std::vector<int>& untouched = engine_.untouched_buffers();
    for (size_t i = 0; i < untouched.size() && i < kMaxListedBuffers; ++i) {
      report_.add_notes(absl::StrCat("buffer '", graph_.buffers[untouched[i]].name,
                                     "' is touched by no op: allocated for the whole kernel, as compilers "
                                     "allocate a declared buffer"));
    }
    if (untouched.size() > kMaxListedBuffers) {
      report_.add_notes(absl::StrCat(untouched.size() - kMaxListedBuffers,
                                     " more buffers are touched by no op (not listed), allocated the same way"));
    }
    for (int s = 0; s < device_.memory_spaces_size(); ++s) {
      if (fit_.spaces[s].peak >= 0) RETURN_IF_ERROR(ExplainSpace(s));
    }
    if (options_.keep_buffers) {
      for (int op : graph_.op_order) report_.add_ops(graph_.op_names[op]);
    }
    if (engine_.has_execution_model()) ExplainExecution();
    report_.set_fits(fit_.fits);
    report_.set_verdict(fit_.verdict == FitVerdict::kFits     ? FITS
                        : fit_.verdict == FitVerdict::kAtRisk ? AT_RISK
                                                           : DOES_NOT_FIT);
    if (fit_.has_estimates) {
      for (size_t b = 0; b < graph_.buffers.size(); ++b) {
        if (!graph_.buffers[b].estimate_low() || engine_.space_of(static_cast<int>(b)) < 0) continue;
        // An estimate that is 0 bytes even at its high bound at these parameters adds nothing.
        if (BufferBytesAt(graph_, static_cast<int>(b), scratch_.values, EstimateBound::kHigh).value_or(1) == 0) continue;
        const std::string& basis = graph_.buffers[b].estimate_basis();
        report_.add_notes(absl::StrCat("buffer '", graph_.buffers[b].name, "' is an estimate",
                                       basis.empty() ? "" : absl::StrCat(" (", basis, ")"),
                                       ": the verdict holds it at its low and high bounds too"));
      }
    }
    return std::move(report_);
  }

 private:
  // The placed blocks of space `s`, both groups; `second`, when given, receives whether each
  // block is in the group the allocator keeps apart (static __shared__, program-scoped VMEM).
  std::vector<const PlacedBlock*> BlocksOf(int s, std::vector<bool>* second = nullptr) const {
    std::vector<const PlacedBlock*> blocks;
    const auto& groups = engine_.groups();
    for (size_t g = 0; g < groups.size(); ++g) {
      if (groups[g].space != s) continue;
      for (const PlacedBlock& block : scratch_.layout[g]) {
        blocks.push_back(&block);
        if (second != nullptr) second->push_back(groups[g].second);
      }
    }
    return blocks;
  }

  // One buffer's figures: `copies` of it, placed as blocks of `total` bytes together (a space's
  // allocation granule included), its shape and extents.
  BufferShare Share(int buffer, int64_t copies, int64_t total, int64_t peak) const {
    BufferShare share;
    share.set_buffer(graph_.buffers[buffer].name);
    share.set_copies(copies);
    const int64_t bytes = scratch_.bytes[buffer];  // TMEM column rounding included
    share.set_bytes_per_copy(bytes);
    share.set_total_bytes(total);
    if (total > bytes * copies) share.set_granule_padding_bytes(total - bytes * copies);
    share.set_share(peak > 0 ? static_cast<double>(total) / static_cast<double>(peak) : 0.0);
    share.set_role(graph_.buffers[buffer].role);
    if (graph_.buffers[buffer].estimate_low()) {
      share.set_estimated(true);
      // Evaluated by the engine already: these do not fail here.
      share.set_bytes_per_copy_low(BufferBytesAt(graph_, buffer, scratch_.values, EstimateBound::kLow).value_or(bytes));
      share.set_bytes_per_copy_high(BufferBytesAt(graph_, buffer, scratch_.values, EstimateBound::kHigh).value_or(bytes));
      share.set_estimate_basis(graph_.buffers[buffer].estimate_basis());
    }
    share.set_source(graph_.buffers[buffer].source());
    share.set_shape(ShapeString(graph_, buffer, scratch_.values));
    share.set_dtype(graph_.buffers[buffer].dtype);
    // The sizes evaluated, so the extents are too (a report never fails for them).
    if (auto dims = EvaluateBufferDims(graph_, buffer, scratch_.values); dims.ok()) {
      for (int64_t d : dims->dims) share.add_dims(d);
      for (int64_t d : dims->padded) share.add_padded_dims(d);
      for (int64_t d : dims->array) share.add_array_dims(d);
    }
    return share;
  }

  absl::Status ExplainSpace(int s) {
    const MemorySpace& space = device_.memory_spaces(s);
    const SpaceFigures& fig = fit_.spaces[s];
    SpaceReport* out = report_.add_spaces();
    out->set_space(space.name());
    out->set_kind(space.kind());
    out->set_peak_bytes(fig.peak);
    if (space.kind() == VMEM || space.kind() == SMEM) {
      out->set_instruction_scoped_bytes(fig.first);
      out->set_program_scoped_bytes(fig.second);
    }
    out->set_limit_bytes(fig.limit);
    out->set_limit_name(space.kind() == TENSOR_MEMORY
                            ? absl::StrCat(space.columns(), " columns x ", space.lanes(), " lanes")
                            : std::string(LimitSourceName(fig.limit_source)));
    // A scoped limit the kernel sets above the VMEM raises nothing past the VMEM itself: say so,
    // since the engine judges every byte against the VMEM as well (engine.cc, VMEM).
    if (space.kind() == VMEM && fig.limit_source != LimitSource::kDefaultScoped && fig.limit > UsableBytesPerCore(space)) {
      report_.add_notes(absl::StrCat(space.name(), ": the scoped limit, ", fig.limit, " B (",
                                     LimitSourceName(fig.limit_source), "), is above what one program may use of this ",
                                     "TPU's VMEM, ", UsableBytesPerCore(space),
                                     " B; every allocation is judged against the VMEM too, and what libtpu does with ",
                                     "such a limit is not modelled: set it at most ", UsableBytesPerCore(space), " B"));
    }

    std::vector<bool> second;
    const std::vector<const PlacedBlock*> blocks = BlocksOf(s, &second);
    int64_t total = 0;
    for (const PlacedBlock* b : blocks) {
      auto sum = CheckedAdd(total, b->block.size);
      if (!sum) return absl::OutOfRangeError(absl::StrCat(graph_.origin, ": total bytes overflow 64 bits"));
      total = *sum;
    }
    out->set_total_bytes(total);

    // The op position where the most bytes are live at once.
    const int64_t positions = std::max<int64_t>(static_cast<int64_t>(graph_.op_order.size()), 1);
    std::vector<int64_t> delta(positions + 1, 0);
    for (const PlacedBlock* b : blocks) {
      delta[b->block.start] += b->block.size;
      delta[b->block.end + 1] -= b->block.size;
    }
    int64_t live = 0, best = -1, position = 0;
    for (int64_t p = 0; p < positions; ++p) {
      live += delta[p];
      if (live > best) {
        best = live;
        position = p;
      }
    }
    out->set_peak_position(position);
    out->set_live_bytes_at_peak(std::max<int64_t>(best, 0));
    if (!graph_.op_order.empty()) out->set_peak_op(graph_.op_names[graph_.op_order[position]]);

    // Buffers live at the peak position, largest total first.
    std::map<int, std::pair<int64_t, int64_t>> live_copies_and_bytes;
    for (const PlacedBlock* b : blocks) {
      if (b->block.start <= position && position <= b->block.end && b->block.size > 0) {
        auto& [copies, bytes] = live_copies_and_bytes[b->buffer];
        ++copies;
        bytes += b->block.size;
      }
    }
    std::vector<BufferShare> shares;
    for (const auto& [buffer, live] : live_copies_and_bytes) shares.push_back(Share(buffer, live.first, live.second, fig.peak));
    std::stable_sort(shares.begin(), shares.end(),
                     [](const BufferShare& a, const BufferShare& b) { return a.total_bytes() > b.total_bytes(); });
    // The largest kMaxListedBuffers are listed (and named as culprits); a report stays small
    // whatever the graph.
    if (shares.size() > kMaxListedBuffers) {
      report_.add_notes(absl::StrCat(out->space(), ": ", shares.size(), " buffers are live at the peak; the ",
                                     kMaxListedBuffers, " largest are listed"));
      shares.resize(kMaxListedBuffers);
    }
    std::vector<std::string> culprits;
    for (BufferShare& share : shares) {
      culprits.push_back(share.buffer());
      *out->add_live_at_peak() = std::move(share);
    }

    if (options_.keep_placements) {
      const char* second_region = space.kind() == VMEM || space.kind() == SMEM ? "program" : "static";
      for (size_t i = 0; i < blocks.size(); ++i) {
        const PlacedBlock* b = blocks[i];
        Placement* p = out->add_placements();
        p->set_buffer(graph_.buffers[b->buffer].name);
        p->set_copy(b->copy);
        p->set_offset(b->offset);
        p->set_size_bytes(b->block.size);
        p->set_live_start(b->block.start);
        p->set_live_end(b->block.end);
        if (second[i]) p->set_region(second_region);
      }
    }
    if (options_.keep_buffers) {
      // Every buffer of the space once, in the graph's order, with all its copies.
      std::map<int, int64_t> placed_bytes;
      for (const PlacedBlock* b : blocks) placed_bytes[b->buffer] += b->block.size;
      for (const FitEngine::Group& group : engine_.groups()) {
        if (group.space != s) continue;
        for (int b : group.buffers) *out->add_buffers() = Share(b, scratch_.copies[b], placed_bytes[b], fig.peak);
      }
    }

    bool fits = true;
    for (Limit limit : MemoryLimits()) {
      const Breach& breach = fit_.breaches[static_cast<int>(limit)];
      if (!breach.breached || breach.space != s) continue;
      fits = false;
      *report_.add_violations() = DescribeSpaceBreach(limit, breach, space, fig, culprits);
    }
    if (fit_.has_estimates) ExplainEstimates(s, space, culprits, out, &fits);
    out->set_fits(fits);
    return absl::OkStatus();
  }

  // The space's figures with every estimate at its bounds, and the limits only the high bound
  // breaks (AT RISK).
  void ExplainEstimates(int s, const MemorySpace& space, const std::vector<std::string>& culprits, SpaceReport* out,
                        bool* fits) {
    bool any = false;
    for (const FitEngine::Group& group : engine_.groups()) {
      if (group.space != s) continue;
      for (int b : group.buffers) any = any || static_cast<bool>(graph_.buffers[b].estimate_low());
    }
    if (!any) return;
    const SpaceFigures& low = fit_.spaces_low[s];
    const SpaceFigures& high = fit_.spaces_high[s];
    out->set_has_estimates(true);
    out->set_peak_bytes_low(low.peak);
    out->set_peak_bytes_high(high.peak);
    if (space.kind() == VMEM || space.kind() == SMEM) {
      out->set_instruction_scoped_bytes_low(low.first);
      out->set_instruction_scoped_bytes_high(high.first);
    }
    int64_t estimated = 0;
    for (const BufferShare& share : out->live_at_peak()) {
      if (share.estimated()) estimated += share.total_bytes();
    }
    out->set_estimated_bytes(estimated);
    for (Limit limit : MemoryLimits()) {
      const Breach& at_high = fit_.breaches_high[static_cast<int>(limit)];
      if (!at_high.breached || at_high.space != s || fit_.breaches[static_cast<int>(limit)].breached) continue;
      *fits = false;
      Violation v = DescribeSpaceBreach(limit, at_high, space, high, culprits);
      v.set_at_risk(true);
      v.set_message(absl::StrCat("AT RISK: with the estimates at their high bound, ", v.message()));
      *report_.add_violations() = std::move(v);
    }
  }

  void ExplainExecution() {
    const CompiledLaunch& launch = graph_.launch;
    if (!launch.num_warps) report_.add_notes("launch.num_warps not given: assumed 4 (Triton's default)");
    ThreadBudget* threads = report_.mutable_threads();
    ParameterValue* default_partition = threads->add_partition_warps();
    default_partition->set_name("default");
    int64_t partition_total = 0;
    for (int64_t w : scratch_.partition_warps) partition_total += w;
    default_partition->set_value(fit_.warps - partition_total);
    for (size_t i = 0; i < launch.partitions.size(); ++i) {
      ParameterValue* p = threads->add_partition_warps();
      p->set_name(launch.partitions[i].name);
      p->set_value(scratch_.partition_warps[i]);
    }
    threads->set_required_threads(static_cast<int32_t>(fit_.threads));
    threads->set_limit_threads(static_cast<int32_t>(fit_.thread_limit));
    threads->set_limit_name(fit_.thread_limit_declared ? "the kernel's declared maximum: maxntid / launch bounds"
                                                       : "hardware maximum per block");
    const Breach& thread_breach = fit_.breaches[static_cast<int>(Limit::kThreads)];
    if (thread_breach.breached) *report_.add_violations() = DescribeThreadBreach(thread_breach, *threads);

    if (launch.registers_per_thread) {
      RegisterBudget* registers = report_.mutable_registers();
      registers->set_demand_per_thread(static_cast<int32_t>(std::min<int64_t>(fit_.register_demand, 1 << 20)));
      registers->set_budget_per_thread(static_cast<int32_t>(fit_.register_budget));
      registers->set_allocated_per_thread(static_cast<int32_t>(fit_.registers_allocated));
      registers->set_spill_bytes_per_thread(fit_.spill_bytes_per_thread);
      registers->set_spill_bytes_per_block(fit_.spill_bytes_per_block);
      if (fit_.breaches[static_cast<int>(Limit::kRegisterSpill)].breached) {
        *report_.add_violations() = DescribeSpills(*registers);
      }
    }

    if (!fit_.has_occupancy) {
      // The device model lacks a number occupancy needs, or the input was out of its range.
      absl::StatusOr<OccupancyCalculator> calculator = OccupancyCalculator::Create(device_);
      OccupancyFigures ignored;
      absl::Status why = calculator.ok() ? calculator->Compute(fit_.occupancy_input, &ignored) : calculator.status();
      if (!why.ok()) report_.add_notes(absl::StrCat("occupancy not computed: ", why.message()));
      return;
    }
    if (fit_.occupancy.blocks == 0 && fit_.cannot_launch != Limit::kNoResidency) {
      // A per-block limit is breached: no block launches, for the reason the verdict gives.
      Occupancy* occupancy = report_.mutable_occupancy();
      occupancy->set_blocks_per_core(0);
      occupancy->set_limiting_factor(std::string(LimitName(fit_.cannot_launch)));
      occupancy->add_limiting_factors(occupancy->limiting_factor());
      for (const Violation& v : report_.violations()) {
        if (v.resource() == occupancy->limiting_factor()) occupancy->set_reason(v.message());
      }
      return;
    }
    absl::StatusOr<OccupancyCalculator> calculator = OccupancyCalculator::Create(device_);
    if (!calculator.ok()) return;  // has_occupancy says it was created before
    *report_.mutable_occupancy() = calculator->Describe(fit_.occupancy_input, fit_.occupancy);
    if (fit_.cannot_launch == Limit::kNoResidency) {
      *report_.add_violations() = DescribeNoResidency(fit_, report_.occupancy());
    }
  }

  const FitEngine& engine_;
  const CompiledGraph& graph_;
  const DeviceModel& device_;
  const FitEngine::Scratch& scratch_;
  const FitResult& fit_;
  const SimulateOptions& options_;
  Report report_;
};

EngineOptions EngineOptionsFor(const SimulateOptions& options) {
  EngineOptions engine;
  engine.policy = options.policy;
  engine.policy_override = options.policy_override;
  engine.spills_fatal = false;  // spills are a warning in a report
  return engine;
}

}  // namespace

absl::StatusOr<Report> Explain(const FitEngine& engine, absl::Span<const int64_t> values,
                               const SimulateOptions& options, FitResult* fit_out) {
  FitEngine::Scratch scratch;
  scratch.keep_layout = true;
  FitResult fit;
  RETURN_IF_ERROR(engine.Evaluate(values, scratch, &fit));
  if (fit.broken_requirement >= 0) return CheckRequirements(engine.graph(), scratch.values);
  if (fit_out != nullptr) *fit_out = fit;
  return Explanation(engine, scratch, fit, options).Build();
}

absl::StatusOr<Report> SimulateOnce(const CompiledGraph& graph, const DeviceModel& device,
                                    absl::Span<const int64_t> values, const SimulateOptions& options) {
  ASSIGN_OR_RETURN(FitEngine engine, FitEngine::Create(graph, device, EngineOptionsFor(options)));
  return Explain(engine, values, options, nullptr);
}

absl::StatusOr<Report> Simulate(const CompiledGraph& graph, const DeviceModel& device,
                                absl::Span<const int64_t> values, const SimulateOptions& options) {
  ASSIGN_OR_RETURN(FitEngine engine, FitEngine::Create(graph, device, EngineOptionsFor(options)));
  FitResult fit;
  ASSIGN_OR_RETURN(Report report, Explain(engine, values, options, &fit));
  if (options.suggest && !report.fits()) {
    ASSIGN_OR_RETURN(std::vector<Suggestion> suggestions, SuggestFixes(engine, values, fit));
    for (Suggestion& s : suggestions) *report.add_suggestions() = std::move(s);
  }
  return report;
}

}  // namespace scratchsim
