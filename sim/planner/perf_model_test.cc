#include "sim/planner/perf_model.h"

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sim/device.h"
#include "sim/graph.h"
#include "sim/planner/planner_test_util.h"
#include "sim/test_util.h"
#include "sim/planner/planner.h"

namespace scratchsim {
namespace {

using ::testing::HasSubstr;
using namespace ::scratchsim::testing;



// ---------------------------------------------------------------------------------------------
// Performance model

// A device whose figures check by hand: 10 cores of 4 warp schedulers, 1000 GB/s (1e12 B/s),
// 10 bf16 TFLOP/s (1e12 flop/s per core). Tests add the clock, banks and latencies they need.
DeviceModel ToyDevice() {
  DeviceModel device;
  device.set_name("toy");
  device.mutable_limits()->set_num_cores(10);
  device.mutable_limits()->set_register_sub_partitions(4);
  device.mutable_performance()->set_memory_bandwidth_gbps(1000);
  PeakThroughput* peak = device.mutable_performance()->add_peak();
  peak->set_dtype("bf16");
  peak->set_tflops(10);
  return device;
}

TEST(PerfModelTest, WaveQuantizationAndOverlap) {
  DeviceModel device = ToyDevice();
  auto model = PerfModel::Create(device, "bf16", true);
  ASSERT_TRUE(model.ok()) << model.status();
  PerfInputs in;
  in.flops_per_block = 1e9;  // 1 ms per block on one core
  in.bytes_per_block = 1e6;  // 1 us per block at the chip's bandwidth
  in.grid_blocks = 25;       // 3 waves of 10 at 1 block per core
  in.blocks_per_core = 1;
  in.warps_per_block = 4;
  in.stages = 1;
  PerfEstimate e = model->Estimate(in);
  EXPECT_EQ(e.waves, 3);
  EXPECT_DOUBLE_EQ(e.wave_efficiency, 25.0 / 30.0);
  EXPECT_DOUBLE_EQ(e.compute_s, 3e-3);
  EXPECT_DOUBLE_EQ(e.memory_s, 25e-6);
  EXPECT_EQ(e.loads_in_flight, 0);
  EXPECT_DOUBLE_EQ(e.time_s, 3e-3 + 25e-6);  // nothing in flight: serial
  EXPECT_TRUE(e.compute_bound);
  in.stages = 3;  // two loads in flight hide two thirds of the memory time
  e = model->Estimate(in);
  EXPECT_EQ(e.loads_in_flight, 2);
  EXPECT_DOUBLE_EQ(e.time_s, 3e-3 + 25e-6 / 3);
  in.warps_per_block = 1;  // one warp on four schedulers
  e = model->Estimate(in);
  EXPECT_DOUBLE_EQ(e.issue_efficiency, 0.25);
  EXPECT_DOUBLE_EQ(e.compute_s, 12e-3);

  EXPECT_FALSE(PerfModel::Create(device, "f8e4m3", true).ok());
  EXPECT_THAT(PerfModel::Create(device, "f8e4m3", true).status().message(), HasSubstr("no peak for compute dtype"));
  EXPECT_TRUE(PerfModel::Create(device, "f8e4m3", false).ok());
}


TEST(PerfModelTest, SharedMemoryBanksOverlapTheMathAndQuantize) {
  DeviceModel device = ToyDevice();
  device.mutable_performance()->set_clock_mhz(1000);
  device.mutable_performance()->set_smem_bytes_per_clk(100);       // 1e11 B/s per core
  auto model = PerfModel::Create(device, "bf16", true);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_DOUBLE_EQ(model->smem_bandwidth_per_core(), 1e11);
  PerfInputs in;
  in.flops_per_block = 1e9;        // 1 ms per block on one core
  in.bytes_per_block = 1e6;
  in.smem_bytes_per_block = 2e8;   // 2 ms per block in the banks of one core
  in.grid_blocks = 25;             // 3 waves of 10
  in.blocks_per_core = 1;
  in.warps_per_block = 4;
  in.stages = 1;
  PerfEstimate e = model->Estimate(in);
  EXPECT_DOUBLE_EQ(e.compute_s, 3e-3);
  EXPECT_DOUBLE_EQ(e.smem_s, 6e-3);
  // The tensor pipe and the banks run concurrently: the longer one is the on-chip time.
  EXPECT_DOUBLE_EQ(e.core_s, 6e-3);
  EXPECT_DOUBLE_EQ(e.time_s, 6e-3 + 25e-6);
  EXPECT_TRUE(e.compute_bound);
  EXPECT_TRUE(e.smem_bound);
  // Sync cycles add to it, per block and wave: 3 waves x 1e6 cycles at 1 GHz.
  in.sync_cycles_per_block = 1e6;
  e = model->Estimate(in);
  EXPECT_DOUBLE_EQ(e.sync_s, 3e-3);
  EXPECT_DOUBLE_EQ(e.core_s, 9e-3);
  in.sync_cycles_per_block = 0;
  // An instruction reaching half the peak doubles the math time.
  in.peak_fraction = 0.5;
  e = model->Estimate(in);
  EXPECT_DOUBLE_EQ(e.compute_s, 6e-3);
  EXPECT_FALSE(e.smem_bound);
  in.peak_fraction = 1;
  // Without the graph's smem_bytes the term is absent.
  in.smem_bytes_per_block = -1;
  e = model->Estimate(in);
  EXPECT_DOUBLE_EQ(e.smem_s, 0);
  EXPECT_FALSE(e.smem_bound);

  // A bandwidth without a clock, or a negative one, is bad input naming the field.
  device.mutable_performance()->set_clock_mhz(0);
  EXPECT_THAT(PerfModel::Create(device, "bf16", true).status().message(), HasSubstr("smem_bytes_per_clk"));
  device.mutable_performance()->set_clock_mhz(1000);
  device.mutable_performance()->set_smem_bytes_per_clk(-1);
  EXPECT_THAT(PerfModel::Create(device, "bf16", true).status().message(), HasSubstr("smem_bytes_per_clk"));
}


// Chains share a core as a closed queueing network: a lone chain takes its math, sync and own
// waits in series; two chains queue at the pipes and each still waits on its own; many chains run
// at the busier pipe's rate.
class PerfModelChainsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    DeviceModel device = ToyDevice();
    device.mutable_performance()->set_clock_mhz(1000);  // 1 cycle = 1 ns
    auto model = PerfModel::Create(device, "bf16", true);
    ASSERT_TRUE(model.ok()) << model.status();
    model_ = *model;
    in_.flops_per_block = 1e6;      // 1 us of math per block
    in_.bytes_per_block = 1;
    in_.grid_blocks = 10;           // one block on every core
    in_.blocks_per_core = 1;
    in_.warps_per_block = 4;
    in_.sync_cycles_per_block = 500;             // 0.5 us of softmax
    in_.chain_latency_cycles_per_block = 2000;   // 2 us of each chain's own waits
  }
  PerfModel model_;
  PerfInputs in_;
};

TEST_F(PerfModelChainsTest, ALoneChainTakesItsMathSyncAndWaitsInSeries) {
  PerfEstimate e = model_.Estimate(in_);
  EXPECT_DOUBLE_EQ(e.core_s, 1e-6 + 0.5e-6 + 2e-6);
  EXPECT_DOUBLE_EQ(e.chain_s, 3.5e-6);
  EXPECT_TRUE(e.chain_bound);
}

TEST_F(PerfModelChainsTest, TwoChainsQueueAtThePipesAndEachWaitsOnItsOwn) {
  in_.chains_per_block = 2;  // each: 0.5 us of math, 0.25 us of sync, 2 us of waits
  PerfEstimate e = model_.Estimate(in_);
  // Mean value analysis: the second chain finds the first at each pipe for its share of a cycle
  // (2/11 and 1/11), so it resides 0.5 x 13/11 and 0.25 x 12/11 us there; two chains per
  // 2 + 9.5/11 us.
  EXPECT_NEAR(e.core_s, 31.5 / 11 * 1e-6, 1e-15);
  EXPECT_TRUE(e.chain_bound);
}

TEST_F(PerfModelChainsTest, ManyChainsRunAtTheBusierPipesRate) {
  in_.chains_per_block = 2;
  in_.grid_blocks = 300;  // 30 co-resident blocks: 60 chains, 30 us of math, 15 us of sync
  in_.blocks_per_core = 30;
  PerfEstimate e = model_.Estimate(in_);
  EXPECT_NEAR(e.core_s, 30e-6, 1e-9);
  EXPECT_FALSE(e.chain_bound);
  // Three blocks overlap one chain's softmax with another's math: faster than in series.
  in_.grid_blocks = 30;
  in_.blocks_per_core = 3;
  e = model_.Estimate(in_);
  EXPECT_GT(e.core_s, 3e-6);
  EXPECT_LT(e.core_s, 4.5e-6);
}

TEST_F(PerfModelChainsTest, WithoutChainWaitsTheBlocksShareTheSyncAsOneNetwork) {
  in_.chain_latency_cycles_per_block = 0;
  in_.grid_blocks = 30;
  in_.blocks_per_core = 3;
  PerfEstimate e = model_.Estimate(in_);
  // Three blocks, each 1 us at the pipes and 0.5 us of its own sync wait: mean value analysis
  // gives queues of 2/3 and 20/13 blocks at one and two customers, so the third resides 33/13 us
  // at the pipes and waits 0.5 us: a round of 33/13 + 0.5 us for three.
  EXPECT_NEAR(e.core_s, (33.0 / 13 + 0.5) * 1e-6, 1e-15);
  EXPECT_DOUBLE_EQ(e.chain_s, 0);
  EXPECT_FALSE(e.chain_bound);
  // Where every block adds its own wait the round takes 3 x 1.5 us: a slower estimate.
  EXPECT_GT(e.own_wait_time_s, e.time_s);
}

TEST(PerfModelTest, CoResidentBlocksFillWaitsAndATailRoundCostsLess) {
  DeviceModel device = ToyDevice();
  device.mutable_performance()->set_clock_mhz(1000);            // 1 cycle = 1 ns
  device.mutable_performance()->set_smem_bytes_per_clk(100);    // 1e11 B/s per core
  device.mutable_performance()->set_dram_latency_ns(1000);
  auto model = PerfModel::Create(device, "bf16", true);
  ASSERT_TRUE(model.ok()) << model.status();
  PerfInputs in;
  in.flops_per_block = 1e6;        // 1 us of math per block
  in.bytes_per_block = 1;
  in.grid_blocks = 20;             // 2 blocks on every core
  in.blocks_per_core = 1;
  in.warps_per_block = 4;
  in.stages = 2;
  in.wait_cycles_per_block = 500;  // 0.5 us of barriers and cp.async waits
  // Alone, each block pays its waits: 2 x (1 + 0.5) us.
  PerfEstimate e = model->Estimate(in);
  EXPECT_DOUBLE_EQ(e.core_s, 3e-6);
  // Together, the other block's math fills them: 2 x 1 + 0.5 us.
  in.blocks_per_core = 2;
  e = model->Estimate(in);
  EXPECT_DOUBLE_EQ(e.core_s, 2.5e-6);
  EXPECT_DOUBLE_EQ(e.wait_s, 0.5e-6);
  // Sync cycles are each block's own wait, which the other block's pipe time fills: two
  // customers of 1.25 us at the round's pipes and 0.1 us of their own (mean value analysis: the
  // second finds 1.25 / 1.35 of a block queued), against 2.7 us where every block adds its wait.
  in.sync_cycles_per_block = 100;
  e = model->Estimate(in);
  const double shared = 1.25e-6 * (1 + 1.25 / 1.35) + 0.1e-6;
  EXPECT_NEAR(e.core_s, shared, 1e-15);
  EXPECT_NEAR(e.sync_s, shared - 2.5e-6, 1e-15);
  EXPECT_NEAR(e.own_wait_sync_s, 0.2e-6, 1e-15);
  EXPECT_NEAR(e.own_wait_time_s - e.time_s, 2.7e-6 - shared, 1e-15);
  in.sync_cycles_per_block = 0;
  // Three blocks per core at two per round: a full round and a tail of one block.
  in.grid_blocks = 30;
  e = model->Estimate(in);
  EXPECT_DOUBLE_EQ(e.core_s, 2.5e-6 + 1.5e-6);
  in.grid_blocks = 20;
  // Shared-memory round trips: each warp waits the ld.shared latency; the other warps on its
  // scheduler issue meanwhile. Alone (one warp per scheduler), a block pays them after its math.
  device.mutable_performance()->set_smem_latency_ns(25);
  model = PerfModel::Create(device, "bf16", true);
  ASSERT_TRUE(model.ok()) << model.status();
  in.smem_round_trips = 10;  // 0.25 us per warp
  in.blocks_per_core = 1;
  e = model->Estimate(in);
  EXPECT_DOUBLE_EQ(e.wait_s, 2 * (0.5e-6 + 0.25e-6));
  EXPECT_DOUBLE_EQ(e.core_s, 2 * (1e-6 + 0.75e-6));
  // Two blocks, two warps per scheduler: a warp's 1 us of issue plus 0.25 us of round trips
  // fits in the round's 2 us of math; only the block-wide waits remain.
  in.blocks_per_core = 2;
  e = model->Estimate(in);
  EXPECT_DOUBLE_EQ(e.wait_s, 0.5e-6);
  EXPECT_DOUBLE_EQ(e.core_s, 2.5e-6);
  // 1.25 us of round trips: the chain of 2.25 us outlasts the round's math by 0.25 us.
  in.smem_round_trips = 50;
  e = model->Estimate(in);
  EXPECT_NEAR(e.wait_s, 0.5e-6 + 0.25e-6, 1e-15);
  EXPECT_NEAR(e.core_s, 2.75e-6, 1e-15);
  // The same block as eight warps: four per scheduler, 0.5 us of issue each; covered.
  in.warps_per_block = 8;
  e = model->Estimate(in);
  EXPECT_DOUBLE_EQ(e.core_s, 2.5e-6);
  in.warps_per_block = 4;
  in.smem_round_trips = 0;
  // Issue slots: 8,000 warp instructions on 4 schedulers at 1 GHz take 2 us, longer than the
  // 1 us the flops take at the peak, so they are the block's math.
  in.issue_slots_per_block = 8000;
  e = model->Estimate(in);
  EXPECT_DOUBLE_EQ(e.compute_s, 4e-6);
  EXPECT_DOUBLE_EQ(e.core_s, 4.5e-6);
  // Fewer slots than the flops need: the peak bounds the math.
  in.issue_slots_per_block = 2000;
  e = model->Estimate(in);
  EXPECT_DOUBLE_EQ(e.compute_s, 2e-6);
  // A warp alone stalls half its cycles: n warps per scheduler find one ready on 1 - 0.5^n of
  // them, and the 8,000 slots (2 us per block) stretch by the inverse; either way each core runs
  // two blocks. The flops at the peak are not stretched.
  in.issue_slots_per_block = 8000;
  in.warp_stall_share = 0.5;
  struct StallCase {
    int64_t warps_per_block, blocks_per_core;
    double ready_share, issue_efficiency;
  };
  for (const StallCase& t : {StallCase{4, 2, 0.75, 1},        // two warps per scheduler
                             StallCase{8, 2, 1 - 0.0625, 1},  // four
                             StallCase{4, 1, 0.5, 1},         // one
                             StallCase{2, 1, 0.5, 0.5}}) {    // half the schedulers idle
    in.warps_per_block = t.warps_per_block;
    in.blocks_per_core = t.blocks_per_core;
    e = model->Estimate(in);
    EXPECT_DOUBLE_EQ(e.ready_share, t.ready_share) << t.warps_per_block << " warps, " << t.blocks_per_core << " blocks";
    EXPECT_DOUBLE_EQ(e.issue_efficiency, t.issue_efficiency);
    EXPECT_DOUBLE_EQ(e.compute_s, 2 * 2e-6 / t.ready_share / t.issue_efficiency);
  }
  in.issue_slots_per_block = 2000;  // below the flops' 1 us at any share: the peak bounds it
  e = model->Estimate(in);
  EXPECT_DOUBLE_EQ(e.compute_s, 2 * 1e-6 / 0.5);
  in.warps_per_block = 4;
  in.blocks_per_core = 2;
  in.warp_stall_share = 0;
  in.issue_slots_per_block = 0;
  // When the banks take longer than the math and the waits, they set the pace.
  in.smem_bytes_per_block = 2e5;   // 2 us per block in the banks, 4 us for the pair
  e = model->Estimate(in);
  EXPECT_DOUBLE_EQ(e.core_s, 4e-6);
  EXPECT_TRUE(e.smem_bound);
  in.smem_bytes_per_block = -1;
  // One stage: every K step waits the load latency, once per round.
  in.stages = 1;
  in.pipeline_trips = 3;
  e = model->Estimate(in);
  EXPECT_DOUBLE_EQ(e.wait_s, 0.5e-6 + 3e-6);
  EXPECT_DOUBLE_EQ(e.core_s, 2e-6 + 3.5e-6);
}


TEST(PerfModelTest, LatencyBoundsAShallowPipelineAndInflightBytesAreCounted) {
  DeviceModel device = ToyDevice();
  device.mutable_performance()->set_clock_mhz(1000);
  device.mutable_performance()->set_dram_latency_ns(1000);  // 1 us
  auto model = PerfModel::Create(device, "bf16", true);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_DOUBLE_EQ(model->load_latency(), 1e-6);
  PerfInputs in;
  in.flops_per_block = 1e6;  // 1 us of math per block
  in.bytes_per_block = 1e3;
  in.grid_blocks = 20;       // one wave: two blocks on each of the 10 cores
  in.blocks_per_core = 2;
  in.warps_per_block = 4;
  in.stages = 3;
  in.pipeline_trips = 100;   // 100 K steps, 2 loads in flight: 50 latencies
  in.stage_bytes_per_block = 4096;
  PerfEstimate e = model->Estimate(in);
  // 50 idle latencies plus the queueing behind the DRAM's transfers (all of them, 20 us).
  EXPECT_DOUBLE_EQ(e.dram_s, 20 * 1e3 / 1e12);
  EXPECT_DOUBLE_EQ(e.latency_s, 50e-6 + e.dram_s);
  EXPECT_TRUE(e.latency_bound);
  EXPECT_FALSE(e.compute_bound);
  EXPECT_GE(e.time_s, e.latency_s);
  EXPECT_DOUBLE_EQ(e.inflight_bytes_per_core, 2 * 2 * 4096);
  // A deeper pipeline hides the latencies; the transfers stay.
  in.stages = 51;
  e = model->Estimate(in);
  EXPECT_DOUBLE_EQ(e.latency_s, 2e-6 + e.dram_s);
  // Deeper than the loop, the prologue issues all 100 loads at once: one latency, not half of one.
  in.stages = 201;
  e = model->Estimate(in);
  EXPECT_DOUBLE_EQ(e.latency_s, 1e-6 + e.dram_s);
  EXPECT_EQ(e.loads_in_flight, 100);
  EXPECT_FALSE(e.latency_bound);
  // Negative latency is bad input naming the field.
  device.mutable_performance()->set_dram_latency_ns(-1);
  EXPECT_THAT(PerfModel::Create(device, "bf16", true).status().message(), HasSubstr("dram_latency_ns"));
  device.mutable_performance()->set_dram_latency_ns(1000);
  device.mutable_performance()->set_smem_latency_ns(-1);
  EXPECT_THAT(PerfModel::Create(device, "bf16", true).status().message(), HasSubstr("smem_latency_ns"));
}

TEST(PerfModelTest, LatencyBoundChainAddsTheDramTimeOfALatencyBoundLoop) {
  // A decode-like loop: few blocks, a short pipeline, memory the limit. Its K steps wait the
  // idle latency each (s - 1) steps and, behind the other blocks' transfers, the DRAM time:
  // the two add (docs/planner.md, "Latency bound and overlap").
  DeviceModel device = ToyDevice();
  device.mutable_performance()->set_dram_latency_ns(500);
  auto model = PerfModel::Create(device, "bf16", true);
  ASSERT_TRUE(model.ok()) << model.status();
  PerfInputs in;
  in.flops_per_block = 1e3;
  in.bytes_per_block = 1e6;  // 10 blocks x 1 MB at 1 TB/s: 10 us
  in.grid_blocks = 10;
  in.blocks_per_core = 1;
  in.warps_per_block = 4;
  in.stages = 2;
  in.pipeline_trips = 40;    // 40 steps, one load in flight: 20 us of latency
  PerfEstimate e = model->Estimate(in);
  EXPECT_DOUBLE_EQ(e.memory_s, 10e-6);
  EXPECT_DOUBLE_EQ(e.latency_s, 20e-6 + 10e-6);
  EXPECT_TRUE(e.latency_bound);
  in.stages = 5;             // four loads in flight: 5 us of latency
  EXPECT_DOUBLE_EQ(model->Estimate(in).latency_s, 5e-6 + 10e-6);
}

TEST(PerfModelTest, LoadsInFlightCountOnlyTheBlocksTheGridGivesACore) {
  DeviceModel device = ToyDevice();
  auto model = PerfModel::Create(device, "bf16", true);
  ASSERT_TRUE(model.ok()) << model.status();
  PerfInputs in;
  in.flops_per_block = 1e6;
  in.bytes_per_block = 1e3;
  in.blocks_per_core = 6;    // occupancy allows six
  in.warps_per_block = 4;
  in.stages = 2;
  in.stage_bytes_per_block = 1000;
  in.grid_blocks = 10;       // but each of the 10 cores gets one
  PerfEstimate e = model->Estimate(in);
  EXPECT_EQ(e.loads_in_flight, 1);
  EXPECT_DOUBLE_EQ(e.inflight_bytes_per_core, 1000);
  in.grid_blocks = 60;       // six each: co-resident blocks hide each other's loads
  e = model->Estimate(in);
  EXPECT_EQ(e.loads_in_flight, 5);
  EXPECT_DOUBLE_EQ(e.inflight_bytes_per_core, 6 * 1000);
}


TEST(PerfModelTest, CountWaveStripsMatchesTheLaunchOrder) {
  // Against the Triton GROUP_M pid mapping, block by block.
  for (int64_t rows : {1, 3, 8, 13, 24}) {
    for (int64_t cols : {1, 2, 7, 16}) {
      for (int64_t group : {1, 4, 8}) {
        for (int64_t wave : {1, 5, 16, 132, 1000}) {
          WaveStrips expect;
          const int64_t total = rows * cols;
          for (int64_t lo = 0; lo < total; lo += wave) {
            std::vector<bool> seen_row(rows), seen_col(cols);
            for (int64_t pid = lo; pid < std::min(total, lo + wave); ++pid) {
              const int64_t g = std::min(group, rows);
              const int64_t first = pid / (g * cols) * g;
              const int64_t height = std::min(rows - first, g);
              seen_row[first + pid % height] = true;
              seen_col[(pid % (g * cols)) / height] = true;
            }
            for (bool b : seen_row) expect.rows += b;
            for (bool b : seen_col) expect.cols += b;
          }
          const WaveStrips got = CountWaveStrips(rows, cols, group, wave);
          EXPECT_EQ(got.rows, expect.rows) << rows << "x" << cols << " group " << group << " wave " << wave;
          EXPECT_EQ(got.cols, expect.cols) << rows << "x" << cols << " group " << group << " wave " << wave;
        }
      }
    }
  }
  EXPECT_EQ(CountWaveStrips(0, 4, 8, 10).rows, 0);
}


TEST(PerfModelTest, L2ReuseCutsDramTrafficAndL2BandwidthBoundsIt) {
  DeviceModel device;
  device.set_name("toy");
  device.mutable_limits()->set_num_cores(4);
  device.mutable_performance()->set_memory_bandwidth_gbps(1000);  // 1e12 B/s
  device.mutable_performance()->set_l2_bandwidth_gbps(4000);      // 4e12 B/s
  PeakThroughput* peak = device.mutable_performance()->add_peak();
  peak->set_dtype("bf16");
  peak->set_tflops(1);
  auto model = PerfModel::Create(device, "bf16", true);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_DOUBLE_EQ(model->l2_bandwidth(), 4e12);
  PerfInputs in;
  in.flops_per_block = 1;
  in.bytes_per_block = 1e6 + 1e6 + 1e5;  // A strip, B strip, own C tile
  in.grid_blocks = 16;                   // 4 x 4, waves of 4
  PerfEstimate e = model->Estimate(in);
  EXPECT_DOUBLE_EQ(e.dram_s, 16 * 2.1e6 / 1e12);  // no reuse without the strips
  EXPECT_DOUBLE_EQ(e.l2_s, 16 * 2.1e6 / 4e12);
  EXPECT_DOUBLE_EQ(e.memory_s, e.dram_s);
  in.grid_rows = 4;
  in.grid_cols = 4;
  in.row_bytes_per_block = 1e6;
  in.col_bytes_per_block = 1e6;
  in.tile_group_rows = 4;  // each wave of 4 is one grid column: 4 A strips, 1 B strip
  e = model->Estimate(in);
  EXPECT_DOUBLE_EQ(e.dram_s, (4 * (4 + 1) * 1e6 + 16 * 1e5) / 1e12);
  EXPECT_DOUBLE_EQ(e.memory_s, std::max(e.dram_s, e.l2_s));
  // Inconsistent grid extents: no reuse is claimed.
  in.grid_cols = 5;
  EXPECT_DOUBLE_EQ(model->Estimate(in).dram_s, 16 * 2.1e6 / 1e12);
  // Nor without the device's L2 bandwidth.
  in.grid_cols = 4;
  device.mutable_performance()->set_l2_bandwidth_gbps(0);
  auto no_l2 = PerfModel::Create(device, "bf16", true);
  ASSERT_TRUE(no_l2.ok());
  EXPECT_DOUBLE_EQ(no_l2->Estimate(in).dram_s, 16 * 2.1e6 / 1e12);
  EXPECT_DOUBLE_EQ(no_l2->Estimate(in).l2_s, 0);

  device.mutable_performance()->set_l2_bandwidth_gbps(-1);
  EXPECT_THAT(PerfModel::Create(device, "bf16", true).status().message(), HasSubstr("l2_bandwidth_gbps"));
}


// The toy device with 100 B/clk of banks a core at 1 GHz (1e11 B/s), for the L1's terms.
DeviceModel ToyDeviceWithBanks() {
  DeviceModel device = ToyDevice();
  device.mutable_performance()->set_clock_mhz(1000);
  device.mutable_performance()->set_smem_bytes_per_clk(100);
  return device;
}

// The L1's reuse window (graph l1_window_bytes, l1_refetch_bytes): 10 cores of 100 B/clk banks at
// 1 GHz (1e11 B/s a core) and 1e13 B/s of L2; a block moves 1e6 bytes through the banks and
// refetches 1e6 bytes where its round's windows overflow the L1 the carve-out leaves.
class PerfModelL1WindowTest : public ::testing::Test {
 protected:
  void SetUp() override {
    DeviceModel device = ToyDeviceWithBanks();
    device.mutable_performance()->set_l2_bandwidth_gbps(10000);
    auto model = PerfModel::Create(device, "bf16", true);
    ASSERT_TRUE(model.ok()) << model.status();
    model_ = *model;
    in_.flops_per_block = 1;
    in_.bytes_per_block = 1e6;
    in_.smem_bytes_per_block = 1e6;  // 10 us a block in the banks
    in_.grid_blocks = 20;            // one full round of 2 blocks a core
    in_.blocks_per_core = 2;
    in_.warps_per_block = 4;
    in_.stages = 2;
    in_.l1_window_bytes_per_block = 40 * 1024;
    in_.l1_refetch_bytes_per_block = 1e6;
  }
  PerfModel model_;
  PerfInputs in_;
};

TEST_F(PerfModelL1WindowTest, AWindowTheL1HoldsCostsNothing) {
  in_.l1_bytes_per_core = 92 * 1024;  // two windows of 40 KiB fit
  const PerfEstimate e = model_.Estimate(in_);
  EXPECT_FALSE(e.l1_overflow);
  EXPECT_DOUBLE_EQ(e.l1_window_bytes_per_core, 80 * 1024);
  EXPECT_DOUBLE_EQ(e.smem_s, 2 * 10e-6);
  EXPECT_DOUBLE_EQ(e.l2_s, 20 * 1e6 / 1e13);
}

TEST_F(PerfModelL1WindowTest, AnOverflowingWindowFillsEachRefetchedSectorThroughTheBanks) {
  in_.l1_bytes_per_core = 28 * 1024;
  const PerfEstimate e = model_.Estimate(in_);
  EXPECT_TRUE(e.l1_overflow);
  // 1e6 refetched bytes are 31,250 sectors, each one 128-byte wavefront: 4e6 bank bytes, 40 us.
  EXPECT_DOUBLE_EQ(e.smem_s, 2 * (10e-6 + 40e-6));
  // And they cross the L2 again.
  EXPECT_DOUBLE_EQ(e.l2_s, 20 * 2e6 / 1e13);
}

TEST_F(PerfModelL1WindowTest, OneBlockAloneKeepsItsLinesWhereTwoOverflow) {
  in_.l1_bytes_per_core = 60 * 1024;
  in_.blocks_per_core = 1;
  EXPECT_FALSE(model_.Estimate(in_).l1_overflow);
  in_.blocks_per_core = 2;
  EXPECT_TRUE(model_.Estimate(in_).l1_overflow);
  // A grid that gives a core one block keeps it alone whatever the occupancy allows.
  in_.grid_blocks = 10;
  EXPECT_FALSE(model_.Estimate(in_).l1_overflow);
}

TEST_F(PerfModelL1WindowTest, WithoutTheL1FigureOrTheWindowNothingIsRefetched) {
  in_.l1_bytes_per_core = 0;  // unknown: no carve-out model
  EXPECT_FALSE(model_.Estimate(in_).l1_overflow);
  in_.l1_bytes_per_core = 28 * 1024;
  in_.l1_window_bytes_per_block = 0;
  const PerfEstimate e = model_.Estimate(in_);
  EXPECT_FALSE(e.l1_overflow);
  EXPECT_DOUBLE_EQ(e.smem_s, 2 * 10e-6);
}

// Synchronous loads: each block alternates per step between the L1 (1 us of banks a step) and its
// time away from it (the 1 us load latency; its math is negligible), ten steps a block.
class PerfModelSynchronousStepsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    DeviceModel device = ToyDeviceWithBanks();
    device.mutable_performance()->set_dram_latency_ns(1000);
    auto model = PerfModel::Create(device, "bf16", true);
    ASSERT_TRUE(model.ok()) << model.status();
    model_ = *model;
    in_.flops_per_block = 1;
    in_.bytes_per_block = 1e3;
    in_.smem_bytes_per_block = 1e6;  // 10 us a block in the banks
    in_.warps_per_block = 4;
    in_.stages = 2;
    in_.synchronous_load_steps = 10;
  }
  PerfEstimate Run(int64_t blocks_per_core) {
    in_.blocks_per_core = blocks_per_core;
    in_.grid_blocks = 10 * blocks_per_core;  // one full round on each core
    return model_.Estimate(in_);
  }
  PerfModel model_;
  PerfInputs in_;
};

TEST_F(PerfModelSynchronousStepsTest, OneBlockAddsItsTimeAwayToItsBankTime) {
  const PerfEstimate e = Run(1);
  EXPECT_NEAR(e.alternation_s, 10 * (1e-6 + 1e-6), 1e-10);
  EXPECT_DOUBLE_EQ(e.smem_s, 10e-6);  // the banks alone, as without synchronous steps
  EXPECT_NEAR(e.core_s, e.alternation_s, 1e-12);
  EXPECT_NEAR(e.l1_busy_share, 0.5, 1e-6);
  EXPECT_NEAR(e.step_away_s, 1e-6, 1e-12);
}

TEST_F(PerfModelSynchronousStepsTest, TwoBlocksFillEachOthersTimeAwayAsTheClosedNetworkSays) {
  // Mean value analysis: one block cycles in 2 us (queue 0.5 at the L1); the second finds it
  // there, 1.5 us at the L1, 2.5 us a cycle for two steps: 25 us for the round's 20 steps.
  const PerfEstimate e = Run(2);
  EXPECT_NEAR(e.alternation_s, 25e-6, 1e-10);
  EXPECT_NEAR(e.l1_busy_share, 0.8, 1e-6);
}

TEST_F(PerfModelSynchronousStepsTest, ManyBlocksApproachTheBanksAlone) {
  const PerfEstimate e = Run(8);
  EXPECT_GT(e.alternation_s, 8 * 10e-6);
  EXPECT_LT(e.alternation_s, 8 * 10e-6 * 1.01);
  EXPECT_GT(e.l1_busy_share, 0.99);
}

TEST_F(PerfModelSynchronousStepsTest, WithoutSynchronousStepsTheBanksOverlapTheRest) {
  in_.synchronous_load_steps = 0;
  const PerfEstimate e = Run(1);
  EXPECT_DOUBLE_EQ(e.smem_s, 10e-6);
  EXPECT_EQ(e.alternation_s, 0);
  EXPECT_EQ(e.l1_busy_share, 0);
  EXPECT_EQ(e.step_away_s, 0);
}

// Issue 17: the L2 strips were counted wave by wave, so a grid of 2^48 blocks (gemm.pbtxt with
// M = N = 2^31) took hours per configuration. Past 4,096 waves the count is scaled.
TEST(PerfModelTest, CountWaveStripsOfAHugeGridReturnsAtOnce) {
  const int64_t side = int64_t{1} << 24;
  const WaveStrips strips = CountWaveStrips(side, side, 8, 264);
  EXPECT_GT(strips.rows, 0);
  EXPECT_GT(strips.cols, 0);
  // Every row strip is read at least once.
  EXPECT_GE(strips.rows, side);
}

TEST(PerfModelTest, CountWaveStripsScalesAtMostByTheWavesItSkips) {
  // 8,192 waves of 16: the first 4,096 are counted and doubled; the grid repeats every group.
  const WaveStrips scaled = CountWaveStrips(4096, 32, 8, 16);
  const WaveStrips half = CountWaveStrips(2048, 32, 8, 16);
  EXPECT_EQ(scaled.rows, 2 * half.rows);
  EXPECT_EQ(scaled.cols, 2 * half.cols);
}

}  // namespace
}  // namespace scratchsim
