#include "sim/planner/perf_inputs.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "sim/checked_math.h"
#include "sim/dtype.h"
#include "sim/liveness.h"

namespace scratchsim {

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
      if (graph.op_kinds[op] != "async_copy" || std::find(loops.begin(), loops.end(), loop) == loops.end()) {
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

bool EvaluatePerfInputs(const CompiledGraph& graph, const PerfExpressions& perf, absl::Span<const int64_t> values,
                        const FitEngine::Scratch& scratch, const FitResult& fit, PerfInputs* in) {
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
      !non_negative(graph.issue_slots, &in->issue_slots_per_block) ||
      !non_negative(graph.chain_latency_cycles, &in->chain_latency_cycles_per_block) ||
      !non_negative(graph.l1_window_bytes, &in->l1_window_bytes_per_block) ||
      !non_negative(graph.l1_refetch_bytes, &in->l1_refetch_bytes_per_block) ||
      !non_negative(graph.synchronous_load_steps, &in->synchronous_load_steps)) {
    return false;
  }
  if (graph.chains_per_block) {
    auto v = graph.chains_per_block->Evaluate(values);
    if (!v.ok() || *v < 1) return false;
    in->chains_per_block = *v;
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
  in->blocks_per_core = fit.has_occupancy ? std::max<int32_t>(fit.blocks_per_core(), 1) : 1;
  in->warps_per_block = fit.warps;
  in->l1_bytes_per_core = fit.has_occupancy ? fit.occupancy.l1_bytes_per_core : 0;
  return true;
}

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

std::string PlanComputeDtype(const CompiledGraph& graph, const std::string& requested) {
  return requested.empty() ? DefaultComputeDtype(graph) : requested;
}

}  // namespace scratchsim
