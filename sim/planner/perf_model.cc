#include "sim/planner/perf_model.h"

#include <algorithm>
#include <cstdint>
#include <cmath>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "sim/checked_math.h"
#include "sim/dtype.h"

namespace scratchsim {

// The device's peak table is kept per class: fp8 variants share "f8", u8 shares "i8".
std::string PeakDtypeName(absl::string_view dtype) {
  const std::string name = CanonicalDtype(dtype).value_or(std::string(dtype));
  if (absl::StartsWith(name, "f8")) return "f8";
  if (name == "u8") return "i8";
  return name;
}

WaveStrips CountWaveStrips(int64_t grid_rows, int64_t grid_cols, int64_t group_rows, int64_t wave) {
  WaveStrips out;
  if (grid_rows <= 0 || grid_cols <= 0 || wave <= 0) return out;
  const int64_t group = std::clamp<int64_t>(group_rows, 1, grid_rows);
  const std::optional<int64_t> total = CheckedMul(grid_rows, grid_cols);
  const std::optional<int64_t> group_blocks = CheckedMul(group, grid_cols);
  if (!total || !group_blocks) return out;
  // Past kMaxCountedWaves waves only the first ones are walked and the counts scaled to all of
  // them: a grid of 2^40 blocks took hours per configuration (issue 17).
  constexpr int64_t kMaxCountedWaves = 4096;
  const int64_t waves = *total / wave + (*total % wave != 0);
  const int64_t counted_end = waves > kMaxCountedWaves ? kMaxCountedWaves * wave : *total;
  for (int64_t lo = 0; lo < counted_end; lo += wave) {
    const int64_t hi = std::min(*total, lo + wave);
    // Walk the groups this wave touches. Rows never repeat across groups; columns do, and any
    // group fully inside the wave covers them all.
    int64_t groups = 0, first_col = 0, last_col = 0, cols = 0;
    for (int64_t pid = lo; pid < hi;) {
      const int64_t g = pid / *group_blocks;
      const int64_t start = g * *group_blocks;
      const int64_t height = std::min(grid_rows - g * group, group);
      const int64_t end = start + height * grid_cols;
      const int64_t a = pid - start;
      const int64_t b = std::min(hi, end) - start;
      out.rows += std::min(b - a, height);
      if (groups == 0) first_col = a / height;
      last_col = (b - 1) / height;
      if (groups == 0) cols = last_col - first_col + 1;
      ++groups;
      pid = start + b;
    }
    if (groups == 2) {
      // The first group's tail [first_col, grid_cols) and the second's head [0, last_col].
      cols = last_col + 1 >= first_col ? grid_cols : (grid_cols - first_col) + (last_col + 1);
    } else if (groups > 2) {
      cols = grid_cols;
    }
    out.cols += cols;
  }
  if (waves > kMaxCountedWaves) {
    const double scale = static_cast<double>(waves) / kMaxCountedWaves;
    const double max = 9.2e18;  // below 2^63, so the cast back is defined
    out.rows = static_cast<int64_t>(std::min(out.rows * scale, max));
    out.cols = static_cast<int64_t>(std::min(out.cols * scale, max));
  }
  return out;
}

absl::StatusOr<PerfModel> PerfModel::Create(const DeviceModel& device, absl::string_view compute_dtype,
                                            bool need_peak) {
  PerfModel model;
  const Performance& perf = device.performance();
  model.peak_dtype_ = PeakDtypeName(compute_dtype);
  std::vector<std::string> known;
  for (const PeakThroughput& peak : perf.peak()) {
    known.push_back(peak.dtype());
    if (peak.dtype() == model.peak_dtype_) model.peak_flops_ = peak.tflops() * 1e12;
  }
  if (model.peak_flops_ <= 0 && need_peak) {
    return absl::InvalidArgumentError(absl::StrCat(
        "device '", device.name(), "': performance has no peak for compute dtype '", compute_dtype, "' (it has: ",
        known.empty() ? "none" : absl::StrJoin(known, ", "), "); pass --compute-dtype or set graph compute_dtype"));
  }
  if (!(perf.memory_bandwidth_gbps() > 0)) {  // NaN too
    return absl::InvalidArgumentError(
        absl::StrCat("device '", device.name(), "': performance.memory_bandwidth_gbps is missing"));
  }
  model.bandwidth_ = perf.memory_bandwidth_gbps() * 1e9;
  if (perf.smem_bytes_per_clk() < 0 || (perf.smem_bytes_per_clk() > 0 && perf.clock_mhz() <= 0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "device '", device.name(), "': performance.smem_bytes_per_clk needs a positive value and clock_mhz"));
  }
  model.smem_bandwidth_per_core_ = perf.smem_bytes_per_clk() * perf.clock_mhz() * 1e6;
  if (perf.l2_bandwidth_gbps() < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("device '", device.name(), "': performance.l2_bandwidth_gbps is negative"));
  }
  model.l2_bandwidth_ = perf.l2_bandwidth_gbps() * 1e9;
  if (perf.dram_latency_ns() < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("device '", device.name(), "': performance.dram_latency_ns is negative"));
  }
  model.load_latency_ = perf.dram_latency_ns() * 1e-9;
  if (perf.smem_latency_ns() < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("device '", device.name(), "': performance.smem_latency_ns is negative"));
  }
  model.smem_latency_ = perf.smem_latency_ns() * 1e-9;
  model.clock_hz_ = perf.clock_mhz() * 1e6;
  model.num_cores_ = std::max<int64_t>(device.limits().num_cores(), 1);
  model.schedulers_ = std::max<int64_t>(device.limits().register_sub_partitions(), 1);
  return model;
}

namespace {

// Bandwidth is a chip-wide pool: no quantization. Every block's global traffic crosses L2.
// DRAM delivers, when the graph says which bytes blocks share and the device gives its L2
// bandwidth, each wave's distinct row and column strips once (within a wave the strips are read
// in lockstep down K, so the live set is a few K steps of them, far below any L2; across waves no
// reuse is assumed), plus the blocks' private bytes; otherwise every block's bytes, as if L2 kept
// nothing. Reuse is claimed only where the device also bounds the L2 side (has_l2_bandwidth):
// without it, small tiles would look free.
double DramBytes(const PerfInputs& in, const PerfEstimate& e, double bytes, bool has_l2_bandwidth) {
  const double grid = static_cast<double>(e.grid_blocks);
  if (has_l2_bandwidth && in.grid_rows > 0 && in.grid_cols > 0 && in.row_bytes_per_block >= 0 &&
      in.col_bytes_per_block >= 0 && in.tile_group_rows > 0 &&
      CheckedMul(in.grid_rows, in.grid_cols) == std::optional<int64_t>(e.grid_blocks)) {
    const WaveStrips strips = CountWaveStrips(in.grid_rows, in.grid_cols, in.tile_group_rows, e.concurrent_blocks);
    const double own = std::max(bytes - in.row_bytes_per_block - in.col_bytes_per_block, 0.0);
    return static_cast<double>(strips.rows) * in.row_bytes_per_block +
           static_cast<double>(strips.cols) * in.col_bytes_per_block + grid * own;
  }
  return grid * bytes;
}

struct ClosedNetwork {
  double throughput = 0;           // customer cycles per unit of time
  std::vector<double> residence;   // per station: a customer's time there per cycle, queueing included
};

// Exact mean value analysis of a closed queueing network (Reiser and Lavenberg, "Mean-Value
// Analysis of Closed Multichain Queuing Networks", J. ACM 27(2), 1980): `customers` each cycle
// through `demands` (service time per cycle at each of the shared stations, queueing behind one
// another there) and `delay`, time each customer spends on its own that no other one holds up.
// Customer k arriving at a station finds the queue the network held with k - 1 customers.
ClosedNetwork SolveClosedNetwork(int64_t customers, const std::vector<double>& demands, double delay) {
  ClosedNetwork out;
  std::vector<double> queue(demands.size(), 0.0);
  out.residence.assign(demands.size(), 0.0);
  for (int64_t k = 1; k <= customers; ++k) {
    double cycle = delay;
    for (size_t i = 0; i < demands.size(); ++i) {
      out.residence[i] = demands[i] * (1.0 + queue[i]);
      cycle += out.residence[i];
    }
    if (!(cycle > 0)) return out;
    out.throughput = static_cast<double>(k) / cycle;
    for (size_t i = 0; i < demands.size(); ++i) queue[i] = out.throughput * out.residence[i];
  }
  return out;
}

// A round's chains share the core: each cycles through its share of the block's math on the
// tensor pipe, its share of the sync work on the pipes that run it (a flash-attention softmax:
// exp2 and fp32), queueing behind the other chains at both, and its own waits, which no other
// chain holds up. A lone chain takes the sum; many chains approach the busier pipe; in between,
// the closed network's mean value analysis (docs/planner.md, "Attention: chains"). The chain's
// own waits set the pace when they outlast its time at either pipe.
struct ChainRound {
  double time = 0;
  bool bound = false;
};
ChainRound RunChains(int64_t chains, double chain_math, double chain_sync, double chain_waits) {
  const ClosedNetwork net = SolveClosedNetwork(chains, {chain_math, chain_sync}, chain_waits);
  ChainRound out;
  out.time = net.throughput > 0 ? static_cast<double>(chains) / net.throughput : 0;
  out.bound = chain_waits > *std::max_element(net.residence.begin(), net.residence.end());
  return out;
}

// The L1's reuse window: where the blocks of a round need more lines within a loop step than
// the L1 the launch carve-out leaves, lines are evicted before their last use and each block
// fetches l1_refetch_bytes again from L2; every 32-byte sector filled takes one 128-byte
// wavefront of the L1's data stage, which the banks' term stands for (Nsight Compute on the
// H200: 0.79-0.97 more data-stage wavefronts per extra L2 sector on the thrashing unaligned
// launches; docs/validation/planner-h200-workloads.md, "The refetched lines' time").
struct L1Refetch {
  static constexpr double kWavefrontBytesPerSectorByte = 128.0 / 32.0;
  L1Refetch(const PerfInputs& in, double smem_bandwidth_per_core)
      : window(std::max(in.l1_window_bytes_per_block, 0.0)),
        l1(in.l1_bytes_per_core),
        bytes(std::max(in.l1_refetch_bytes_per_block, 0.0)),
        smem_s(smem_bandwidth_per_core > 0 ? bytes * kWavefrontBytesPerSectorByte / smem_bandwidth_per_core : 0) {}
  bool Overflows(int64_t blocks) const {
    return window > 0 && l1 > 0 && static_cast<double>(blocks) * window > static_cast<double>(l1);
  }
  double window;   // bytes a block's round reuses
  int64_t l1;      // bytes of L1 a core has beside the carve-out (0: unknown)
  double bytes;    // refetched per block on overflow
  double smem_s;   // their fills' bank time per block
};

// Synchronous loads (graph synchronous_load_steps): such a step's loads land in registers and
// its math waits on their results, so within a block the L1's work on the step and the block's
// time away from the L1 (the last load's latency from DRAM, the step's math and waits) follow
// one another, and only co-resident blocks fill each other's time away. Each block cycles, per
// step, through the L1 (its bank time a step, queueing behind the other blocks) and its time
// away: a closed network's mean value analysis. One block adds the two; many approach c x the
// bank time (Nsight Compute on the H200: the L1 busy 43-64% of the time with one block a core,
// 69-86% with two to five; docs/validation/planner-h200-workloads.md, "Synchronous steps").
struct SynchronousRound {
  double time = 0;       // the round's time at the L1 and away from it, every block's steps
  double busy_share = 0; // the share of it the L1 works
  double away = 0;       // one block's time away from the L1 a step
};
SynchronousRound RunSynchronousSteps(int64_t blocks, double steps, double block_banks, double block_away,
                                     double load_latency) {
  SynchronousRound out;
  const double step_banks = block_banks / steps;
  out.away = load_latency + block_away / steps;
  const ClosedNetwork net = SolveClosedNetwork(blocks, {step_banks}, out.away);
  if (!(net.throughput > 0)) return out;
  out.time = steps * static_cast<double>(blocks) / net.throughput;
  out.busy_share = net.throughput * step_banks;
  return out;
}

// What bounds the estimate and its score, once the phases are known.
void Classify(double flops, double bytes, PerfEstimate* e) {
  e->compute_bound = !e->latency_bound && e->core_s >= e->memory_s;
  // The L1's alternation with synchronous loads is the banks' bound too.
  const double banks = std::max(e->smem_s, e->alternation_s);
  e->smem_bound = e->compute_bound && banks > 0 && banks > e->compute_s + e->wait_s;
  e->intensity = bytes > 0 && flops > 0 ? flops / bytes : 0;
  if (e->time_s > 0) {
    e->score = flops > 0 ? static_cast<double>(e->grid_blocks) * flops / e->time_s / 1e12
                         : static_cast<double>(e->grid_blocks) * bytes / e->time_s / 1e9;
  }
}

// The memory phase against the on-chip one: loads in flight, the latency bound and what stays
// exposed. `resident`: the blocks a core runs at once, only those the grid gives it (a grid
// smaller than the resident capacity leaves the rest of the occupancy empty); `rounds`: the
// rounds the busiest core runs.
void OverlapPhases(const PerfInputs& in, int64_t resident, int64_t rounds, double load_latency, PerfEstimate* e) {
  // Loads in flight per core: a block's pipeline keeps stages - 1 tiles coming while it
  // consumes one; co-resident blocks, launched together, hide each other's loads instead. The
  // deeper of the two counts, not their product (blocks x stages over-credits resident blocks:
  // docs/validation/planner-h100.md). With none in flight compute and memory serialize; each
  // further load in flight hides a larger share of the shorter phase (n / (n + 1)).
  // A block cannot have more loads in flight than its loop has K steps: the prologue of a
  // pipeline deeper than the loop issues every load at once and the further slots stay empty.
  const int64_t trips = std::max<int64_t>(in.pipeline_trips, 0);
  const int64_t block_ahead = trips > 0 ? std::min<int64_t>(std::max<int64_t>(in.stages, 1) - 1, trips)
                                        : std::max<int64_t>(in.stages, 1) - 1;
  e->loads_in_flight = std::max<int64_t>(block_ahead, resident - 1);
  e->inflight_bytes_per_core = static_cast<double>(resident) * static_cast<double>(std::max<int64_t>(in.stages - 1, 0)) *
                              std::max(in.stage_bytes_per_block, 0.0);
  // Latency: a block with block_ahead loads in flight, each taking the load latency, completes at
  // most block_ahead K steps per latency, whatever the bandwidth (Little's law per block). A load
  // also waits behind the bytes the DRAM delivers ahead of it: along such a chain the idle
  // latencies and the DRAM's transfer time add, they do not overlap (the decode-shaped rows of
  // the workload suite, docs/planner.md "Latency bound and overlap").
  if (load_latency > 0 && in.pipeline_trips > 0) {
    e->latency_s = static_cast<double>(rounds) * static_cast<double>(in.pipeline_trips) * load_latency /
                      static_cast<double>(std::max<int64_t>(block_ahead, 1)) +
                  e->dram_s;
  }
  const double longer = std::max(e->core_s, e->memory_s);
  const double shorter = std::min(e->core_s, e->memory_s);
  e->exposed_s = shorter / static_cast<double>(1 + e->loads_in_flight);
  e->time_s = std::max(longer, e->latency_s) + e->exposed_s;
  e->latency_bound = e->latency_s > longer;
}

}  // namespace

namespace {

// One round of co-resident blocks on a core: its terms and its time.
struct Round {
  double math = 0, smem = 0, wait = 0, sync = 0, chain = 0, time = 0, issue_efficiency = 1, ready_share = 1;
  double alternation = 0, l1_busy_share = 0, step_away = 0;
  bool chain_bound = false;
};

// How a round's blocks spend their sync cycles (graph sync_cycles: the waits of a block's own
// dependent steps, Triton's mma.sync loop): each block waits out its own, and the round's other
// blocks issue meanwhile (kShared), or the blocks wait one after the other (kOwn).
enum class SyncWaits { kShared, kOwn };

// The busiest core's on-chip terms: `full_rounds` rounds like `full` and a last one, `tail`.
void AddRounds(const Round& full, int64_t full_rounds, const Round& tail, PerfEstimate* e) {
  const double n_full = static_cast<double>(full_rounds);
  e->issue_efficiency = full_rounds > 0 ? full.issue_efficiency : tail.issue_efficiency;
  e->ready_share = full_rounds > 0 ? full.ready_share : tail.ready_share;
  e->compute_s = n_full * full.math + tail.math;
  e->smem_s = n_full * full.smem + tail.smem;
  e->wait_s = n_full * full.wait + tail.wait;
  e->sync_s = n_full * full.sync + tail.sync;
  e->chain_s = n_full * full.chain + tail.chain;
  e->alternation_s = n_full * full.alternation + tail.alternation;
  e->chain_bound = full_rounds > 0 ? full.chain_bound : tail.chain_bound;
  e->core_s = n_full * full.time + tail.time;
}

}  // namespace

PerfEstimate PerfModel::Estimate(const PerfInputs& in) const {
  PerfEstimate e;
  const int64_t per_core = std::max<int64_t>(in.blocks_per_core, 1);
  e.concurrent_blocks = num_cores_ * per_core;
  // Without a grid the kernel is assumed to fill exactly one wave, so waves do not rank.
  e.grid_blocks = in.grid_blocks > 0 ? in.grid_blocks : e.concurrent_blocks;
  // Rounded up without grid + concurrent - 1, which overflows for a grid near 2^63.
  e.waves = e.grid_blocks / e.concurrent_blocks + (e.grid_blocks % e.concurrent_blocks != 0);
  e.wave_efficiency = static_cast<double>(e.grid_blocks) /
                      (static_cast<double>(e.waves) * static_cast<double>(e.concurrent_blocks));
  // The on-chip phase, per core. The grid spreads over the cores; the busiest one runs
  // ceil(grid / cores) blocks, in rounds of up to `per_core` co-resident blocks (a last, partial
  // round runs fewer and costs less). A block's math is its flops at the peak, or, where the
  // graph counts them, its issue slots at one warp instruction per scheduler and clock,
  // whichever is longer. Its waits are of three kinds. Waits the whole block spends with nothing
  // to issue (graph wait_cycles: barriers, cp.async waits; a load the pipeline did not issue
  // early) are filled by co-resident blocks with their math: c blocks take c x math plus one
  // block's such waits. Issue slots take only the cycles a scheduler has a ready warp: with a
  // share q of its cycles stalled per warp (graph warp_stall_percent), 1 - q^n of them for n warps
  // per scheduler. A warp's own ld.shared round trips (smem_round_trips x the ld.shared
  // latency) are filled by any other warp on its scheduler: they show only where one warp's
  // issue plus its round trips outlasts the round's math. sync_cycles are a block's own waits
  // between its dependent steps: alone, a block adds them to its pipe time; c co-resident
  // blocks are the customers of a closed network whose one shared station is the round's pipe
  // time per block and whose delay is each block's wait, solved by mean value analysis (Nsight
  // Compute on the H200: three co-resident 32-row mma.sync blocks run at the L2's delivery rate,
  // the wait hidden; docs/planner.md, "Co-resident blocks and the mma.sync wait"). The estimate
  // where every block adds its wait is kept beside it (own_wait_time_s). Where the graph gives
  // the block's dependent chains (chains_per_block, chain_latency_cycles: a flash-attention
  // block's warpgroups), the round's chains share the math and the sync pipes as a closed
  // queueing network instead, each also waiting on its own (docs/planner.md, "Attention:
  // chains"). The banks bound the round too: c x the bank time when that is longer
  // (docs/planner.md, "Ranking"; validated on the H100 with the CUDA backend's GEMM at 1-9
  // blocks per SM, docs/validation/planner-h100.md).
  const double per_core_peak = peak_flops_ / static_cast<double>(num_cores_) * std::clamp(in.peak_fraction, 1e-3, 1.0);
  const double flops = std::max(in.flops_per_block, 0.0);
  const double bytes = std::max(in.bytes_per_block, 0.0);
  const double issue_s = clock_hz_ > 0 ? std::max(in.issue_slots_per_block, 0.0) /
                                             (static_cast<double>(schedulers_) * clock_hz_)
                                       : 0;
  const double flops_s = per_core_peak > 0 ? flops / per_core_peak : 0;
  const double block_math = std::max(flops_s, issue_s);
  e.issue_to_peak = flops_s > 0 && issue_s > 0 ? issue_s / flops_s : 0;
  const double stall_share = std::clamp(in.warp_stall_share, 0.0, 0.99);
  // One warp's share of the block's issue, on its own scheduler.
  const double warp_math =
      block_math * static_cast<double>(schedulers_) / static_cast<double>(std::max<int64_t>(in.warps_per_block, 1));
  const double block_smem =
      smem_bandwidth_per_core_ > 0 ? std::max(in.smem_bytes_per_block, 0.0) / smem_bandwidth_per_core_ : 0;
  const double block_sync = clock_hz_ > 0 ? std::max(in.sync_cycles_per_block, 0.0) / clock_hz_ : 0;
  const double block_wait = clock_hz_ > 0 ? std::max(in.wait_cycles_per_block, 0.0) / clock_hz_ : 0;
  const double chain_latency = clock_hz_ > 0 ? std::max(in.chain_latency_cycles_per_block, 0.0) / clock_hz_ : 0;
  const double chains = static_cast<double>(std::max<int64_t>(in.chains_per_block, 1));
  const double warp_round_trips = std::max(in.smem_round_trips, 0.0) * smem_latency_;
  const int64_t trips = std::max<int64_t>(in.pipeline_trips, 0);
  const int64_t ahead = std::max<int64_t>(in.stages, 1) - 1;  // loads issued ahead of their use
  const L1Refetch refetch(in, smem_bandwidth_per_core_);
  auto run_round = [&](int64_t blocks, SyncWaits sync_waits) {
    Round r;
    const double c = static_cast<double>(blocks);
    double round_math = block_math;
    if (in.warps_per_block > 0) {
      // Tensor cores and FMA pipes issue from every scheduler of a core; fewer resident warps
      // than schedulers leave some idle.
      const double warps_per_scheduler =
          static_cast<double>(in.warps_per_block * blocks) / static_cast<double>(schedulers_);
      r.issue_efficiency = std::min(1.0, warps_per_scheduler);
      if (stall_share > 0) {
        r.ready_share = 1.0 - std::pow(stall_share, std::max(warps_per_scheduler, 1.0));
        round_math = std::max(flops_s, issue_s / r.ready_share);
      }
    }
    r.math = c * round_math / r.issue_efficiency;
    const double block_banks = block_smem + (refetch.Overflows(blocks) ? refetch.smem_s : 0);
    r.smem = c * block_banks;
    // The round trips other warps do not cover, then the block-wide waits.
    r.wait = std::max(0.0, warp_math + warp_round_trips - r.math) + block_wait;
    if (in.synchronous_load_steps > 0 && block_banks > 0) {
      const SynchronousRound steps = RunSynchronousSteps(blocks, in.synchronous_load_steps, block_banks,
                                                         round_math + block_wait, load_latency_);
      r.alternation = steps.time;
      r.l1_busy_share = steps.busy_share;
      r.step_away = steps.away;
    }
    r.sync = c * block_sync;
    // Without loads issued ahead (one stage) every K step waits the load latency after its
    // math; co-resident blocks fill that wait like the others. With loads ahead, the latency
    // bounds the rate instead (latency_s below).
    if (ahead == 0 && load_latency_ > 0) r.wait += static_cast<double>(trips) * load_latency_;
    r.time = std::max({r.smem, r.alternation, r.math + r.wait}) + r.sync;
    if (block_sync > 0 && chain_latency <= 0 && sync_waits == SyncWaits::kShared) {
      const double pipes = r.time - r.sync;
      const ClosedNetwork net = SolveClosedNetwork(blocks, {pipes / c}, block_sync);
      if (net.throughput > 0) {
        r.time = c / net.throughput;
        r.sync = r.time - pipes;
      }
    }
    if (chain_latency > 0) {  // bank time and unfilled waits bound or add as above
      const ChainRound chained = RunChains(blocks * std::max<int64_t>(in.chains_per_block, 1),
                                           round_math / r.issue_efficiency / chains, block_sync / chains, chain_latency);
      r.chain = chained.time;
      r.chain_bound = chained.bound;
      r.time = std::max({r.smem, r.alternation, r.chain + r.wait});
    }
    return r;
  };
  const int64_t blocks_on_core = (e.grid_blocks + num_cores_ - 1) / num_cores_;
  const int64_t full_rounds = blocks_on_core / per_core;
  const int64_t tail_blocks = blocks_on_core % per_core;
  const Round full = run_round(per_core, SyncWaits::kShared);
  const Round tail = tail_blocks > 0 ? run_round(tail_blocks, SyncWaits::kShared) : Round{};
  AddRounds(full, full_rounds, tail, &e);
  const double grid = static_cast<double>(e.grid_blocks);
  const double dram_bytes = DramBytes(in, e, bytes, l2_bandwidth_ > 0);
  e.dram_s = dram_bytes / bandwidth_;
  // The round that sets the pace decides whether the lines are fetched again (from L2, not DRAM).
  const int64_t pace_blocks = full_rounds > 0 ? per_core : tail_blocks;
  e.l1_window_bytes_per_core = static_cast<double>(pace_blocks) * refetch.window;
  e.l1_overflow = refetch.Overflows(pace_blocks);
  const Round& pace = full_rounds > 0 ? full : tail;
  e.l1_busy_share = pace.l1_busy_share;
  e.step_away_s = pace.step_away;
  const double l2_bytes = bytes + (e.l1_overflow ? refetch.bytes : 0);
  e.l2_s = l2_bandwidth_ > 0 ? grid * l2_bytes / l2_bandwidth_ : 0;
  e.memory_s = std::max(e.dram_s, e.l2_s);
  const int64_t rounds = full_rounds + (tail_blocks > 0 ? 1 : 0);
  const int64_t resident = std::max<int64_t>(std::min(per_core, blocks_on_core), 1);
  OverlapPhases(in, resident, rounds, load_latency_, &e);
  e.own_wait_time_s = e.time_s;
  e.own_wait_sync_s = e.sync_s;
  if (block_sync > 0 && chain_latency <= 0 && resident > 1) {
    PerfEstimate own = e;
    AddRounds(run_round(per_core, SyncWaits::kOwn), full_rounds,
              tail_blocks > 0 ? run_round(tail_blocks, SyncWaits::kOwn) : Round{}, &own);
    OverlapPhases(in, resident, rounds, load_latency_, &own);
    e.own_wait_time_s = own.time_s;
    e.own_wait_sync_s = own.sync_s;
  }
  Classify(flops, bytes, &e);
  return e;
}


}  // namespace scratchsim
