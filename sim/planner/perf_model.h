// Analytic performance model of one kernel configuration for the planner's ranking: a roofline
// over the device's peak throughput and bandwidth, with occupancy, wave quantization and overlap.
#ifndef SCRATCHSIM_SIM_PLANNER_PERF_MODEL_H_
#define SCRATCHSIM_SIM_PLANNER_PERF_MODEL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/device.pb.h"

namespace scratchsim {

// What one configuration does, in numbers the model needs. Negative flops/bytes: unknown.
struct PerfInputs {
  double flops_per_block = -1;   // graph.flops
  double bytes_per_block = -1;   // graph.global_bytes, or derived from the operand tiles
  double smem_bytes_per_block = -1;  // graph.smem_bytes (bank wavefronts x 128 B); <0: no term
  int64_t grid_blocks = 0;       // product of launch.grid; 0: unknown (one full wave assumed)
  int64_t blocks_per_core = 1;   // occupancy (GPU); 1 on TPU
  int64_t warps_per_block = 0;   // 0 on TPU
  int64_t stages = 1;            // software-pipelining depth of the main loop
  // L2 reuse (graph grid_row_bytes / grid_col_bytes / tile_group_rows): the grid's two
  // extents, the bytes per block shared along each, and the launch grouping. Without them (any
  // <= 0), every block's bytes_per_block comes from DRAM.
  int64_t grid_rows = 0;
  int64_t grid_cols = 0;
  double row_bytes_per_block = -1;
  double col_bytes_per_block = -1;
  int64_t tile_group_rows = 0;
  double peak_fraction = 1;          // graph peak_percent / 100
  // Graph sync_cycles: a block's own waits between its dependent steps; co-resident blocks issue
  // while it waits (PerfModel::Estimate), or, in own_wait_time_s, none does.
  double sync_cycles_per_block = 0;
  double wait_cycles_per_block = 0;  // graph wait_cycles: waits co-resident blocks fill
  // Graph smem_round_trips: times each warp waits for ld.shared results before issuing on.
  double smem_round_trips = 0;
  // Graph issue_slots: warp instructions per block, each one slot of its scheduler; 0: none.
  double issue_slots_per_block = 0;
  // Graph warp_stall_percent / 100: the share of cycles one warp alone has nothing ready.
  double warp_stall_share = 0;
  // Graph chains_per_block and chain_latency_cycles: the round's chains share the math and the
  // sync pipes, each also waiting on its own (a closed network's mean value analysis); 0
  // cycles: no chains, sync waits nobody fills.
  int64_t chains_per_block = 1;
  double chain_latency_cycles_per_block = 0;
  // The pipelined main loop: its trip count (0: unknown, no latency bound) and the bytes one
  // stage of it copies asynchronously per block (the tiles a load in flight carries).
  int64_t pipeline_trips = 0;
  double stage_bytes_per_block = 0;
  // The L1's reuse window (graph l1_window_bytes, l1_refetch_bytes; 0: none) and the L1 the
  // launch carve-out leaves a core (OccupancyFigures.l1_bytes_per_core; 0: unknown).
  double l1_window_bytes_per_block = 0;
  double l1_refetch_bytes_per_block = 0;
  int64_t l1_bytes_per_core = 0;
  // Graph synchronous_load_steps: steps per block that alternate between the L1's work and the
  // block's time away from it (0: none; the bank time then overlaps the block's other work).
  double synchronous_load_steps = 0;
};

// Distinct row and column indices of the grid, summed over the waves of `wave` consecutive
// blocks, when blocks launch in groups of `group_rows` rows taken down the rows first (Triton's
// GROUP_M order; group_rows 1 is row-major). What DRAM must deliver when each wave's strips are
// read once and no strip survives in L2 from one wave to the next.
struct WaveStrips {
  int64_t rows = 0;
  int64_t cols = 0;
};
WaveStrips CountWaveStrips(int64_t grid_rows, int64_t grid_cols, int64_t group_rows, int64_t wave);

// The estimate and the terms it is made of, so a ranking can say why.
struct PerfEstimate {
  double time_s = 0;             // estimated kernel time
  double compute_s = 0;          // math time of the busiest core's blocks at the issue efficiency
  double smem_s = 0;             // their shared-memory bank time (0 without the term)
  double memory_s = 0;           // max(dram_s, l2_s)
  double dram_s = 0;             // DRAM traffic (after L2 reuse when the graph gives it)
  double l2_s = 0;               // all global traffic over the L2 bandwidth (0 without it)
  double wait_s = 0;             // waits left uncovered: per round, one block's block-wide waits and the round trips no other warp covers
  double sync_s = 0;             // the sync waits left after co-resident blocks issue through them
  // The same estimate, and its sync waits, where every block adds its own sync waits and
  // co-resident blocks fill none: the other reading of those waits, which the autotuning
  // shortlist also covers (equal to time_s and sync_s without sync waits, or with one block a core).
  double own_wait_time_s = 0;
  double own_wait_sync_s = 0;
  double chain_s = 0;            // the chains' time per round, summed (0 without chain_latency_cycles)
  double alternation_s = 0;      // with synchronous loads: the rounds' steps at the L1 and away from it (0: none)
  double core_s = 0;             // the on-chip phase: per round max(banks, alternation, math + wait) + sync, or with chains max(banks, alternation, chains + wait)
  bool chain_bound = false;      // a chain waits on its own longer than at either pipe: more chains would fill it
  double latency_s = 0;          // the pipeline's latency bound: trips x latency / loads in flight + DRAM time
  double exposed_s = 0;          // the part of the shorter phase not hidden behind the longer
  int64_t grid_blocks = 0;
  int64_t concurrent_blocks = 0; // num_cores x blocks_per_core
  int64_t waves = 0;
  double wave_efficiency = 0;    // grid / (waves x concurrent)
  double issue_efficiency = 1;   // resident warps per scheduler in a full round (GPU)
  double ready_share = 1;        // cycles a scheduler has a ready warp in a full round (warp_stall_percent)
  double issue_to_peak = 0;      // a block's issue slots over its flops at the peak (0: either is absent);
                                 // above 1 the issue sets the math time (CUDA-core issue, a TPU's bundles)
  int64_t loads_in_flight = 0;   // max(stages - 1, blocks per core - 1)
  // Bytes a core has in flight: blocks per core x (stages - 1) x stage bytes. Between equal
  // estimates, more bytes in flight tolerate more latency; the ranking prefers them.
  double inflight_bytes_per_core = 0;
  double intensity = 0;          // flops per byte of global traffic; 0 when unknown
  bool compute_bound = false;    // the on-chip phase (core_s) is the longer one
  bool smem_bound = false;       // ... and within it shared memory outweighs the math
  bool latency_bound = false;    // the pipeline's latency bound is the longest term
  // The co-resident blocks' L1 reuse windows exceed the L1 the carve-out leaves: each block
  // fetches l1_refetch_bytes again (on the L2 side and the banks).
  bool l1_overflow = false;
  double l1_window_bytes_per_core = 0;  // resident blocks x the window (0: no window)
  // With synchronous loads (graph synchronous_load_steps): the share of the pace round's time
  // the L1 works on them, and what a block spends away from it per step (0: no such steps).
  double l1_busy_share = 0;
  double step_away_s = 0;
  // Achieved TFLOP/s when flops are known, else GB/s moved; the ranking sorts by time_s.
  double score = 0;
};

class PerfModel {
 public:
  // Reads the device's performance section for `compute_dtype` ("bf16", "f16", "f8e4m3", ...).
  // A device without bandwidth, or without a peak for that dtype when `need_peak` (the graph
  // gives flops), is an error naming the device and what is missing.
  static absl::StatusOr<PerfModel> Create(const DeviceModel& device, absl::string_view compute_dtype,
                                          bool need_peak);

  PerfEstimate Estimate(const PerfInputs& in) const;

  double peak_flops() const { return peak_flops_; }      // flop/s
  double bandwidth() const { return bandwidth_; }        // bytes/s
  // Shared-memory bandwidth of one core in bytes/s; 0 when the device does not give it.
  double smem_bandwidth_per_core() const { return smem_bandwidth_per_core_; }
  // L2-to-cores bandwidth in bytes/s; 0 when the device does not give it.
  double l2_bandwidth() const { return l2_bandwidth_; }
  // Load-to-use latency of a global load that misses L2, in seconds; 0 when unknown.
  double load_latency() const { return load_latency_; }
  int64_t num_cores() const { return num_cores_; }
  const std::string& peak_dtype() const { return peak_dtype_; }
  // flops per byte where compute time equals memory time.
  double ridge() const { return bandwidth_ > 0 ? peak_flops_ / bandwidth_ : 0; }

 private:
  double peak_flops_ = 0;
  double bandwidth_ = 0;
  double smem_bandwidth_per_core_ = 0;
  double l2_bandwidth_ = 0;
  double load_latency_ = 0;
  double smem_latency_ = 0;
  double clock_hz_ = 0;
  int64_t num_cores_ = 1;
  int64_t schedulers_ = 1;  // warp schedulers (register sub-partitions) per core
  std::string peak_dtype_;
};

// The name under which device models list the peak for `dtype`: f8e4m3/f8e5m2 -> f8, i8 -> i8,
// f16/bf16/tf32/f32/f64 unchanged.
std::string PeakDtypeName(absl::string_view dtype);

}  // namespace scratchsim

#endif  // SCRATCHSIM_SIM_PLANNER_PERF_MODEL_H_
