#include "sim/occupancy.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sim/checked_math.h"
#include "sim/device.h"

#ifdef SCRATCHSIM_CUDA_OCCUPANCY_H
#include SCRATCHSIM_CUDA_OCCUPANCY_H
#endif

namespace scratchsim {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Every NVIDIA model the project ships; the differential test covers each of them.
const char* const kNvidiaDevices[] = {"v100", "t4",   "a100", "a10", "rtx3090", "a6000", "l40s",
                                      "rtx4090", "l4", "h100", "h200", "b200", "rtx5090"};

DeviceModel Device(const std::string& name) {
  absl::StatusOr<DeviceModel> device =
      LoadDevice(absl::StrCat(SCRATCHSIM_SOURCE_DIR, "/models/devices/", name, ".textproto"));
  EXPECT_TRUE(device.ok()) << device.status();
  return device.ok() ? *device : DeviceModel();
}

Occupancy Compute(const DeviceModel& device, const OccupancyInput& input) {
  absl::StatusOr<Occupancy> occupancy = ComputeOccupancy(device, input);
  EXPECT_TRUE(occupancy.ok()) << occupancy.status();
  return occupancy.ok() ? *occupancy : Occupancy();
}

OccupancyInput Input(int64_t threads, int64_t registers, int64_t dynamic_bytes) {
  OccupancyInput input;
  input.threads_per_block = threads;
  input.registers_per_thread = registers;
  input.dynamic_shared_bytes = dynamic_bytes;
  return input;
}

// H100, 256 threads, 128 registers, 115712 B dynamic shared memory. By cuda_occupancy.h's
// rules: 8 warps of 4096 registers = 32768 per block, 16384 per sub-partition = 4 warps each,
// so 16 warps = 2 blocks; shared memory 115712 + 1024 reserved = 116736 (a multiple of 128),
// 233472 per SM / 116736 = 2 blocks. Registers and shared memory tie at 2.
TEST(OccupancyTest, H100RegistersAndSharedMemoryTie) {
  Occupancy occupancy = Compute(Device("h100"), Input(256, 128, 115712));
  EXPECT_EQ(occupancy.blocks_per_core(), 2);
  EXPECT_EQ(occupancy.limiting_factor(), "registers");
  EXPECT_THAT(occupancy.limiting_factors(), ElementsAre("registers", "shared memory"));
  EXPECT_EQ(occupancy.limit_warps(), 8);
  EXPECT_EQ(occupancy.limit_registers(), 2);
  EXPECT_EQ(occupancy.limit_shared_memory(), 2);
  EXPECT_EQ(occupancy.limit_blocks(), 32);
  EXPECT_FALSE(occupancy.has_limit_barriers());  // no limit: absent
  EXPECT_EQ(occupancy.allocated_shared_bytes_per_block(), 116736);
  EXPECT_EQ(occupancy.allocated_registers_per_block(), 32768);
  EXPECT_EQ(occupancy.shared_bytes_per_core(), 233472);
  EXPECT_EQ(occupancy.active_warps(), 16);
  EXPECT_EQ(occupancy.max_warps(), 64);
  EXPECT_DOUBLE_EQ(occupancy.occupancy(), 0.25);
  EXPECT_TRUE(occupancy.reason().empty());
}

// One byte more rounds the block up to 116864 B, and only one fits in 233472.
TEST(OccupancyTest, H100OneByteMoreHalvesOccupancy) {
  Occupancy occupancy = Compute(Device("h100"), Input(256, 128, 115713));
  EXPECT_EQ(occupancy.blocks_per_core(), 1);
  EXPECT_EQ(occupancy.limiting_factor(), "shared memory");
  EXPECT_EQ(occupancy.allocated_shared_bytes_per_block(), 116864);
}

// Seed 002: Triton's "OutOfResources: shared memory, Required: 526336, Hardware limit: 232448".
TEST(OccupancyTest, TritonSeedOverOptInMaximumCannotLaunch) {
  Occupancy occupancy = Compute(Device("h100"), Input(256, 128, 526336));
  EXPECT_EQ(occupancy.blocks_per_core(), 0);
  EXPECT_EQ(occupancy.limiting_factor(), "shared memory");
  EXPECT_EQ(occupancy.limit_shared_memory(), 0);
  EXPECT_THAT(occupancy.reason(), HasSubstr("opt-in maximum of 232448 B"));
  EXPECT_THAT(occupancy.reason(), HasSubstr("527360 B"));
}

// The whole opt-in maximum fits exactly once: 232448 + 1024 reserved = 233472 per SM.
TEST(OccupancyTest, H100ExactlyOptInMaximumFitsOnce) {
  Occupancy occupancy = Compute(Device("h100"), Input(128, 32, 232448));
  EXPECT_EQ(occupancy.blocks_per_core(), 1);
  EXPECT_EQ(occupancy.limiting_factor(), "shared memory");
  Occupancy over = Compute(Device("h100"), Input(128, 32, 232449));
  EXPECT_EQ(over.blocks_per_core(), 0);
}

TEST(OccupancyTest, WithoutOptInTheDefaultCeilingApplies) {
  OccupancyInput input = Input(128, 32, 49152);
  input.shared_memory_opt_in = false;
  Occupancy fits = Compute(Device("h100"), input);
  // 49152 + 1024 = 50176 B per block; 233472 / 50176 = 4.
  EXPECT_EQ(fits.blocks_per_core(), 4);
  EXPECT_EQ(fits.limiting_factor(), "shared memory");

  input.dynamic_shared_bytes = 49153;
  Occupancy over = Compute(Device("h100"), input);
  EXPECT_EQ(over.blocks_per_core(), 0);
  EXPECT_THAT(over.reason(), HasSubstr("does not opt in"));

  // Static and dynamic shared memory share the same ceiling.
  input.static_shared_bytes = 40000;
  input.dynamic_shared_bytes = 9153;
  EXPECT_EQ(Compute(Device("h100"), input).blocks_per_core(), 0);
}

// A carveout preference below one block's need is raised to the smallest step that holds it;
// one that holds blocks caps how many fit.
TEST(OccupancyTest, CarveoutPreference) {
  OccupancyInput input = Input(256, 32, 16384);  // 17408 B per block with the reservation
  input.carveout_percent = 0;
  Occupancy none = Compute(Device("h100"), input);
  EXPECT_EQ(none.shared_bytes_per_core(), 32 * 1024);
  EXPECT_EQ(none.blocks_per_core(), 1);
  EXPECT_EQ(none.limiting_factor(), "shared memory");

  input.carveout_percent = 50;  // 116736 B, raised to the 132 KiB step
  Occupancy half = Compute(Device("h100"), input);
  EXPECT_EQ(half.shared_bytes_per_core(), 132 * 1024);
  EXPECT_EQ(half.blocks_per_core(), 7);

  input.carveout_percent = -1;  // default: the whole 228 KiB
  Occupancy all = Compute(Device("h100"), input);
  EXPECT_EQ(all.shared_bytes_per_core(), 228 * 1024);
  EXPECT_EQ(all.blocks_per_core(), 8);
  EXPECT_THAT(all.limiting_factors(), ElementsAre("warps", "registers"));
}

// Turing's smallest carveout step is 32 KiB, and there is no reservation: a kernel without
// shared memory is not limited by it at all.
TEST(OccupancyTest, T4WithoutSharedMemoryIsLimitedByWarps) {
  Occupancy occupancy = Compute(Device("t4"), Input(1024, 0, 0));
  EXPECT_EQ(occupancy.blocks_per_core(), 1);
  EXPECT_EQ(occupancy.limiting_factor(), "warps");
  EXPECT_FALSE(occupancy.has_limit_registers());  // no limit: absent
  EXPECT_FALSE(occupancy.has_limit_shared_memory());  // no limit: absent
  EXPECT_EQ(occupancy.allocated_shared_bytes_per_block(), 0);
  EXPECT_DOUBLE_EQ(occupancy.occupancy(), 1.0);
}

TEST(OccupancyTest, SmallBlocksAreLimitedByTheBlockSlots) {
  Occupancy occupancy = Compute(Device("a10"), Input(32, 16, 0));
  // A10 (sm_86): 16 blocks per SM; 1024 B reserved per block is 100 blocks of shared memory.
  EXPECT_EQ(occupancy.blocks_per_core(), 16);
  EXPECT_EQ(occupancy.limiting_factor(), "blocks");
  EXPECT_EQ(occupancy.limit_shared_memory(), 100);
}

// The hardware check rounds warps up to the 4 sub-partitions: 1 warp of 255 registers is
// 8192 per warp (255 x 32 rounded to 256) x 4 = 32768 assumed, within 65536.
TEST(OccupancyTest, RegisterHeavyBlocks) {
  Occupancy one_warp = Compute(Device("h100"), Input(32, 255, 0));
  EXPECT_EQ(one_warp.allocated_registers_per_block(), 8192);
  EXPECT_EQ(one_warp.limit_registers(), 8);  // 2 warps per sub-partition x 4 / 1
  // 1024 threads x 255 registers: 32 warps x 8192 = 262144 > 65536 per block.
  Occupancy too_many = Compute(Device("h100"), Input(1024, 255, 0));
  EXPECT_EQ(too_many.blocks_per_core(), 0);
  EXPECT_EQ(too_many.limiting_factor(), "registers");
  EXPECT_THAT(too_many.reason(), HasSubstr("but a block may have 65536"));
  // 1024 threads x 64 registers fits exactly.
  EXPECT_EQ(Compute(Device("h100"), Input(1024, 64, 0)).blocks_per_core(), 1);
}

TEST(OccupancyTest, RegistersAboveTheDeviceMaximumCannotLaunch) {
  Occupancy occupancy = Compute(Device("h100"), Input(128, 256, 0));
  EXPECT_EQ(occupancy.blocks_per_core(), 0);
  EXPECT_EQ(occupancy.limiting_factor(), "registers");
  EXPECT_THAT(occupancy.reason(), HasSubstr("exceeds the device maximum of 255"));
}

TEST(OccupancyTest, BarrierLimitOnHopper) {
  DeviceModel device = Device("h100");
  ASSERT_GT(device.limits().block_barriers_per_core(), 0)
      << "models/devices/h100.textproto lacks limits.block_barriers_per_core";
  OccupancyInput input = Input(64, 32, 0);
  input.block_barriers = 16;
  Occupancy occupancy = Compute(device, input);
  // cuda_occupancy.h: 2 x 32 block slots = 64 barriers; 64 / 16 = 4 blocks.
  EXPECT_EQ(occupancy.limit_barriers(), 4);
  EXPECT_EQ(occupancy.blocks_per_core(), 4);
  EXPECT_THAT(occupancy.limiting_factors(), ElementsAre("barriers"));
  // Pre-Hopper models apply no barrier limit.
  EXPECT_FALSE(Compute(Device("a100"), input).has_limit_barriers());  // no limit: absent
}

TEST(OccupancyTest, AmdLdsUsesTheSameStructure) {
  DeviceModel device = Device("mi300x");
  // 256 threads = 4 waves of 64; 128 VGPRs = 8192 per wave; 32768 per SIMD / 8192 = 4 waves
  // per SIMD, 16 per CU = 4 workgroups. LDS: 20000 B rounded to 512 = 20480; 65536 / 20480 = 3.
  Occupancy occupancy = Compute(device, Input(256, 128, 20000));
  EXPECT_EQ(occupancy.limit_registers(), 4);
  EXPECT_EQ(occupancy.allocated_shared_bytes_per_block(), 20480);
  EXPECT_EQ(occupancy.limit_shared_memory(), 3);
  EXPECT_EQ(occupancy.shared_bytes_per_core(), 65536);
  EXPECT_EQ(occupancy.blocks_per_core(), 3);
  EXPECT_EQ(occupancy.limiting_factor(), "shared memory");
  EXPECT_EQ(occupancy.max_warps(), 32);
  // No opt-in step on AMD: the full 64 KiB is the per-workgroup limit either way.
  OccupancyInput no_opt_in = Input(256, 128, 65536);
  no_opt_in.shared_memory_opt_in = false;
  EXPECT_EQ(Compute(device, no_opt_in).blocks_per_core(), 1);
  EXPECT_EQ(Compute(device, Input(256, 128, 65537)).blocks_per_core(), 0);
}

TEST(OccupancyTest, InvalidInputNamesTheField) {
  DeviceModel device = Device("h100");
  struct Case {
    OccupancyInput input;
    std::string field;
  };
  std::vector<Case> cases;
  cases.push_back({Input(0, 32, 0), "threads_per_block"});
  cases.push_back({Input(-32, 32, 0), "threads_per_block"});
  cases.push_back({Input(1025, 32, 0), "threads_per_block 1025 exceeds"});
  cases.push_back({Input(128, -1, 0), "registers_per_thread"});
  cases.push_back({Input(128, 32, -1), "dynamic_shared_bytes"});
  cases.push_back({Input(128, 32, INT64_MAX), "overflows"});
  Case negative_static{Input(128, 32, 0), "static_shared_bytes"};
  negative_static.input.static_shared_bytes = -5;
  cases.push_back(negative_static);
  for (int carveout : {-2, 101}) {
    Case bad_carveout{Input(128, 32, 0), "carveout_percent"};
    bad_carveout.input.carveout_percent = carveout;
    cases.push_back(bad_carveout);
  }
  Case negative_barriers{Input(128, 32, 0), "block_barriers"};
  negative_barriers.input.block_barriers = -1;
  cases.push_back(negative_barriers);
  for (const Case& test_case : cases) {
    absl::StatusOr<Occupancy> occupancy = ComputeOccupancy(device, test_case.input);
    ASSERT_FALSE(occupancy.ok()) << test_case.field;
    EXPECT_EQ(occupancy.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(occupancy.status().message(), HasSubstr(test_case.field));
  }
}

TEST(OccupancyTest, DeviceWithoutTheNeededNumbersIsRejected) {
  DeviceModel device = Device("h100");
  DeviceModel no_sub_partitions = device;
  no_sub_partitions.mutable_limits()->set_register_sub_partitions(0);
  absl::StatusOr<Occupancy> occupancy = ComputeOccupancy(no_sub_partitions, Input(128, 32, 0));
  ASSERT_FALSE(occupancy.ok());
  EXPECT_THAT(occupancy.status().message(), HasSubstr("limits.register_sub_partitions"));
  EXPECT_THAT(occupancy.status().message(), HasSubstr("'h100'"));

  DeviceModel no_shared = device;
  no_shared.clear_memory_spaces();
  occupancy = ComputeOccupancy(no_shared, Input(128, 32, 0));
  ASSERT_FALSE(occupancy.ok());
  EXPECT_THAT(occupancy.status().message(), HasSubstr("no SHARED_MEMORY or LDS space"));

  DeviceModel no_granularity = device;
  no_granularity.mutable_memory_spaces(0)->set_allocation_granularity_bytes(0);
  occupancy = ComputeOccupancy(no_granularity, Input(128, 32, 0));
  ASSERT_FALSE(occupancy.ok());
  EXPECT_THAT(occupancy.status().message(), HasSubstr("allocation_granularity_bytes"));

  // A carveout table that cannot hold the per-SM capacity is an inconsistent model.
  DeviceModel short_carveouts = device;
  short_carveouts.mutable_memory_spaces(0)->clear_carveout_kib();
  short_carveouts.mutable_memory_spaces(0)->add_carveout_kib(64);
  occupancy = ComputeOccupancy(short_carveouts, Input(128, 32, 0));
  ASSERT_FALSE(occupancy.ok());
  EXPECT_THAT(occupancy.status().message(), HasSubstr("carveout_kib"));
}

// Every shipped GPU model carries the numbers occupancy needs, and a modest kernel fits.
TEST(OccupancyTest, EveryShippedGpuModelComputes) {
  absl::StatusOr<std::vector<DeviceModel>> devices = LoadShippedDevices();
  ASSERT_TRUE(devices.ok()) << devices.status();
  int gpus = 0;
  for (const DeviceModel& device : *devices) {
    if (device.vendor() != "nvidia" && device.vendor() != "amd") continue;
    ++gpus;
    absl::StatusOr<Occupancy> occupancy = ComputeOccupancy(device, Input(256, 32, 16384));
    ASSERT_TRUE(occupancy.ok()) << device.name() << ": " << occupancy.status();
    EXPECT_GT(occupancy->blocks_per_core(), 0) << device.name();
    EXPECT_LE(occupancy->occupancy(), 1.0) << device.name();
  }
  EXPECT_GE(gpus, static_cast<int>(std::size(kNvidiaDevices)) + 1);
}

// Launches measured on an H200 with Nsight Compute (tests/data/occupancy/README.md): what each
// asked for and the carve-out (launch__shared_mem_config_size) and block limits the driver
// reported, one row per launch.
struct MeasuredLaunch {
  std::string source;
  OccupancyInput input;
  int64_t config_bytes = 0;
  int64_t limit_registers = 0;
  int64_t limit_warps = 0;
  int64_t limit_blocks = 0;
  int64_t limit_shared = 0;
};

std::vector<MeasuredLaunch> ReadMeasuredLaunches(const std::string& path) {
  std::ifstream file(path);
  EXPECT_TRUE(file.good()) << "missing committed test data " << path;
  std::vector<MeasuredLaunch> launches;
  std::string line;
  std::getline(file, line);
  EXPECT_EQ(line,
            "source,threads,registers,static_bytes,dynamic_bytes,grid,cache,carveout_percent,config_bytes,"
            "limit_registers,limit_warps,limit_blocks,limit_shared");
  while (std::getline(file, line)) {
    std::vector<std::string> cells = absl::StrSplit(line, ',');
    if (cells.size() != 13) {
      ADD_FAILURE() << path << ": row has " << cells.size() << " cells: " << line;
      continue;
    }
    auto number = [&](int column) {
      int64_t value = 0;
      EXPECT_TRUE(absl::SimpleAtoi(cells[column], &value)) << path << ": " << line;
      return value;
    };
    MeasuredLaunch launch;
    launch.source = cells[0];
    launch.input = Input(number(1), number(2), number(4));
    launch.input.static_shared_bytes = number(3);
    // The probe's preferences in the runtime's words; "triton": what Triton's launcher sets.
    const std::string& cache = cells[6];
    launch.input.cache_preference =
        cache == "triton" ? TritonLauncherPreference(launch.input.static_shared_bytes + launch.input.dynamic_shared_bytes)
        : cache == "shared" ? CachePreference::kPreferShared
        : cache == "l1"     ? CachePreference::kPreferL1
        : cache == "equal"  ? CachePreference::kPreferEqual
                            : CachePreference::kDefault;
    EXPECT_THAT(cache, ::testing::AnyOf("none", "shared", "l1", "equal", "triton")) << line;
    launch.input.carveout_percent = number(7);
    launch.config_bytes = number(8);
    launch.limit_registers = number(9);
    launch.limit_warps = number(10);
    launch.limit_blocks = number(11);
    launch.limit_shared = number(12);
    launches.push_back(launch);
  }
  return launches;
}

class MeasuredLaunchesTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    launches_ = new std::vector<MeasuredLaunch>(
        ReadMeasuredLaunches(absl::StrCat(SCRATCHSIM_SOURCE_DIR, "/tests/data/occupancy/h200_carveout.csv")));
  }
  static void TearDownTestSuite() { delete launches_; }

  OccupancyFigures Figures(const MeasuredLaunch& launch) const {
    OccupancyFigures figures;
    EXPECT_TRUE(calculator_.Compute(launch.input, &figures).ok()) << launch.source;
    return figures;
  }

  static std::vector<MeasuredLaunch>* launches_;
  DeviceModel device_ = Device("h200");
  OccupancyCalculator calculator_ = *OccupancyCalculator::Create(device_);
};
std::vector<MeasuredLaunch>* MeasuredLaunchesTest::launches_ = nullptr;

TEST_F(MeasuredLaunchesTest, TheFixtureHoldsEverySet) {
  std::map<std::string, int> per_source;
  for (const MeasuredLaunch& launch : *launches_) ++per_source[launch.source];
  EXPECT_EQ(per_source["probe_fit"], 620);
  EXPECT_EQ(per_source["probe_heldout"], 344);
  EXPECT_EQ(per_source["probe_heldout2"], 283);
  EXPECT_EQ(per_source["probe_large_blocks"], 40);
  EXPECT_EQ(per_source["triton_decode_fit"] + per_source["triton_decode_unaligned_l1"] +
                per_source["triton_decode_wide"] + per_source["triton_earlier"] + per_source["triton_window"],
            268);
}

// The register, warp and block limits are the occupancy model's own; Nsight Compute reports
// the driver's.
TEST_F(MeasuredLaunchesTest, OtherLimitsAgreeWithNsightCompute) {
  for (const MeasuredLaunch& launch : *launches_) {
    const OccupancyFigures figures = Figures(launch);
    EXPECT_EQ(figures.limits[static_cast<int>(OccupancyFactor::kRegisters)], launch.limit_registers) << launch.source;
    EXPECT_EQ(figures.limits[static_cast<int>(OccupancyFactor::kWarps)], launch.limit_warps) << launch.source;
    EXPECT_EQ(figures.limits[static_cast<int>(OccupancyFactor::kBlocks)], launch.limit_blocks) << launch.source;
  }
}

// The blocks resident are the driver's: the smaller of the other limits and the blocks the
// configured carve-out holds, which the default preference never lowers below what the
// largest step would allow.
TEST_F(MeasuredLaunchesTest, BlocksAgreeWithTheDriversLimits) {
  for (const MeasuredLaunch& launch : *launches_) {
    const OccupancyFigures figures = Figures(launch);
    const int64_t driver_blocks =
        std::min({launch.limit_registers, launch.limit_warps, launch.limit_blocks, launch.limit_shared});
    EXPECT_EQ(figures.blocks, driver_blocks) << launch.source << " threads " << launch.input.threads_per_block
                                             << " dynamic " << launch.input.dynamic_shared_bytes;
  }
}

// The launch carve-out rule against the driver, every launch with shared memory. The one class
// it misses is blocks of 30 to 32 warps, two per SM: the driver sizes for the two blocks alone,
// without the headroom it gives blocks of 28 warps and fewer (docs/validation/carveout.md).
TEST_F(MeasuredLaunchesTest, LaunchCarveoutMatchesTheDriver) {
  int compared = 0;
  int missed_large_blocks = 0;
  for (const MeasuredLaunch& launch : *launches_) {
    const OccupancyFigures figures = Figures(launch);
    if (launch.input.static_shared_bytes + launch.input.dynamic_shared_bytes == 0) {
      EXPECT_EQ(figures.launch_carveout_basis, CarveoutBasis::kNoSharedMemory);
      continue;
    }
    ++compared;
    EXPECT_EQ(figures.launch_carveout_basis, CarveoutBasis::kMeasuredRule);
    EXPECT_EQ(figures.l1_bytes_per_core, 262144 - figures.launch_carveout_bytes);
    if (figures.launch_carveout_bytes == launch.config_bytes) continue;
    if (launch.input.threads_per_block >= 960 && launch.limit_warps == 2) {
      ++missed_large_blocks;
      continue;
    }
    ADD_FAILURE() << launch.source << " threads " << launch.input.threads_per_block << " registers "
                  << launch.input.registers_per_thread << " static " << launch.input.static_shared_bytes << " dynamic "
                  << launch.input.dynamic_shared_bytes << " cache "
                  << CachePreferenceName(launch.input.cache_preference) << " percent "
                  << launch.input.carveout_percent << ": ours " << figures.launch_carveout_bytes << ", driver "
                  << launch.config_bytes;
  }
  EXPECT_EQ(compared, 1539);
  EXPECT_EQ(missed_large_blocks, 29);
}

// A device without a measured rule reports the preference's step, labelled assumed.
TEST(LaunchCarveoutTest, WithoutARuleTheCarveoutIsAssumed) {
  absl::StatusOr<Occupancy> occupancy = ComputeOccupancy(Device("a100"), Input(128, 32, 2048));
  ASSERT_TRUE(occupancy.ok()) << occupancy.status();
  EXPECT_EQ(occupancy->launch_carveout_bytes(), 164 * 1024);
  EXPECT_EQ(occupancy->l1_bytes_per_core(), 0);
  EXPECT_THAT(occupancy->launch_carveout_basis(), HasSubstr("assumed"));
}

// PREFER_L1 asks for a small carve-out; like a carve-out percent it bounds the blocks.
TEST(LaunchCarveoutTest, PreferL1LowersTheBlocksSharedMemoryAllows) {
  OccupancyInput input = Input(128, 56, 8 * 1024);
  input.cache_preference = CachePreference::kPreferL1;
  absl::StatusOr<Occupancy> occupancy = ComputeOccupancy(Device("h200"), input);
  ASSERT_TRUE(occupancy.ok()) << occupancy.status();
  EXPECT_EQ(occupancy->launch_carveout_bytes(), 32 * 1024);
  EXPECT_EQ(occupancy->blocks_per_core(), 3);
  EXPECT_EQ(occupancy->limiting_factor(), "shared memory");
}

// No block fits: no carve-out is configured.
TEST(LaunchCarveoutTest, NoCarveoutWhenNoBlockFits) {
  absl::StatusOr<Occupancy> occupancy = ComputeOccupancy(Device("h200"), Input(128, 32, 300 * 1024));
  ASSERT_TRUE(occupancy.ok()) << occupancy.status();
  EXPECT_EQ(occupancy->blocks_per_core(), 0);
  EXPECT_EQ(occupancy->launch_carveout_bytes(), 0);
  EXPECT_THAT(occupancy->launch_carveout_basis(), HasSubstr("no block fits"));
}

#ifdef SCRATCHSIM_CUDA_OCCUPANCY_H

cudaOccDeviceProp OracleProperties(const DeviceModel& device) {
  const MemorySpace* smem = FindSpaceOfKind(device, SHARED_MEMORY);
  cudaOccDeviceProp properties;
  properties.computeMajor = device.limits().compute_major();
  properties.computeMinor = device.limits().compute_minor();
  properties.maxThreadsPerBlock = device.limits().max_threads_per_block();
  properties.maxThreadsPerMultiprocessor = device.limits().max_threads_per_core();
  properties.regsPerBlock = static_cast<int>(device.limits().registers_per_block());
  properties.regsPerMultiprocessor = static_cast<int>(device.limits().registers_per_core());
  properties.warpSize = device.limits().warp_size();
  properties.sharedMemPerBlock = smem->per_block_default_bytes();
  properties.sharedMemPerMultiprocessor = smem->capacity_per_core_bytes();
  properties.numSms = device.limits().num_cores();
  properties.sharedMemPerBlockOptin = smem->per_block_optin_bytes();
  properties.reservedSharedMemPerBlock = smem->reserved_per_block_bytes();
  return properties;
}

struct OracleAnswer {
  cudaOccResult result;
  unsigned int factors;  // limiting factors as this module defines them
};

OracleAnswer AskOracle(const cudaOccDeviceProp& properties, const OccupancyInput& input) {
  cudaOccFuncAttributes attributes;
  attributes.maxThreadsPerBlock = properties.maxThreadsPerBlock;
  attributes.numRegs = static_cast<int>(input.registers_per_thread);
  attributes.sharedSizeBytes = input.static_shared_bytes;
  attributes.partitionedGCConfig = PARTITIONED_GC_OFF;
  attributes.shmemLimitConfig = input.shared_memory_opt_in ? FUNC_SHMEM_LIMIT_OPTIN : FUNC_SHMEM_LIMIT_DEFAULT;
  attributes.maxDynamicSharedSizeBytes = input.shared_memory_opt_in ? input.dynamic_shared_bytes : 0;
  attributes.numBlockBarriers = static_cast<int>(input.block_barriers);
  attributes.virtualResourceCount = 0;
  cudaOccDeviceState state;
  state.carveoutConfig = input.carveout_percent;
  OracleAnswer answer{};
  cudaOccError error = cudaOccMaxActiveBlocksPerMultiprocessor(
      &answer.result, &properties, &attributes, &state, static_cast<int>(input.threads_per_block),
      static_cast<size_t>(input.dynamic_shared_bytes));
  EXPECT_EQ(error, CUDA_OCC_SUCCESS);
  answer.factors = answer.result.limitingFactors;
  EXPECT_EQ(answer.factors & OCC_LIMIT_VIRTUAL_RESOURCES, 0u);
  // cuda_occupancy.h sets the other bits before the barrier limit may lower the minimum
  // further; this module names only the factors equal to the final limit.
  if ((answer.factors & OCC_LIMIT_BARRIERS) &&
      answer.result.blockLimitBarriers < std::min({answer.result.blockLimitWarps, answer.result.blockLimitRegs,
                                                   answer.result.blockLimitSharedMem,
                                                   answer.result.blockLimitBlocks})) {
    answer.factors = OCC_LIMIT_BARRIERS;
  }
  return answer;
}

// cuda_occupancy.h writes INT_MAX where the report leaves a limit absent.
int32_t LimitOr(bool has, int32_t value) { return has ? value : INT32_MAX; }

unsigned int FactorBits(const Occupancy& occupancy) {
  unsigned int bits = 0;
  for (const std::string& factor : occupancy.limiting_factors()) {
    if (factor == "warps") bits |= OCC_LIMIT_WARPS;
    if (factor == "registers") bits |= OCC_LIMIT_REGISTERS;
    if (factor == "shared memory") bits |= OCC_LIMIT_SHARED_MEMORY;
    if (factor == "blocks") bits |= OCC_LIMIT_BLOCKS;
    if (factor == "barriers") bits |= OCC_LIMIT_BARRIERS;
  }
  return bits;
}

std::string Describe(const std::string& device, const OccupancyInput& input) {
  return absl::StrCat(device, " threads=", input.threads_per_block, " regs=", input.registers_per_thread,
                      " static=", input.static_shared_bytes, " dynamic=", input.dynamic_shared_bytes,
                      " opt_in=", input.shared_memory_opt_in, " carveout=", input.carveout_percent,
                      " barriers=", input.block_barriers);
}

OccupancyInput RandomInput(std::mt19937_64& rng, const MemorySpace& smem) {
  auto uniform = [&](int64_t low, int64_t high) { return std::uniform_int_distribution<int64_t>(low, high)(rng); };
  OccupancyInput input;
  // Half the blocks are whole warps, as real kernels nearly always are.
  input.threads_per_block = uniform(0, 1) ? 32 * uniform(1, 32) : uniform(1, 1024);
  // Mostly register counts a block of this size can hold (64 K registers), sometimes any.
  const int64_t fitting_registers = std::min<int64_t>(255, 65536 / (32 * CeilDiv(input.threads_per_block, 32)));
  input.registers_per_thread = uniform(0, 3) ? uniform(0, fitting_registers) : uniform(0, 255);
  input.static_shared_bytes = uniform(0, 1) ? 0 : uniform(0, smem.per_block_default_bytes());
  const int64_t optin = smem.per_block_optin_bytes();
  switch (uniform(0, 4)) {
    case 0: input.dynamic_shared_bytes = 0; break;
    case 1: input.dynamic_shared_bytes = uniform(0, smem.per_block_default_bytes()); break;
    case 2: input.dynamic_shared_bytes = uniform(0, optin); break;
    // Around the ceiling, where rounding and the reservation decide.
    case 3: input.dynamic_shared_bytes = std::max<int64_t>(0, optin - input.static_shared_bytes + uniform(-1024, 1024)); break;
    default: input.dynamic_shared_bytes = uniform(0, 2 * optin); break;
  }
  input.shared_memory_opt_in = uniform(0, 3) != 0;
  input.carveout_percent = uniform(0, 2) ? -1 : static_cast<int>(uniform(0, 100));
  input.block_barriers = uniform(0, 1) ? 0 : uniform(1, 16);
  return input;
}

TEST(OccupancyDifferentialTest, HandCasesAgreeWithCudaOccupancy) {
  DeviceModel device = Device("h100");
  cudaOccDeviceProp properties = OracleProperties(device);
  for (int64_t dynamic : {115712, 115713, 232448, 232449, 526336}) {
    OccupancyInput input = Input(256, 128, dynamic);
    OracleAnswer oracle = AskOracle(properties, input);
    EXPECT_EQ(Compute(device, input).blocks_per_core(), oracle.result.activeBlocksPerMultiprocessor) << dynamic;
  }
  OracleAnswer tie = AskOracle(properties, Input(256, 128, 115712));
  EXPECT_EQ(tie.result.activeBlocksPerMultiprocessor, 2);
  EXPECT_EQ(tie.factors, static_cast<unsigned>(OCC_LIMIT_REGISTERS | OCC_LIMIT_SHARED_MEMORY));
}

// Random configurations on every shipped NVIDIA model, cuda_occupancy.h as the oracle. The
// oracle keeps its per-architecture tables (granularity, carveout steps, block slots, barrier
// counts) to itself, so this also checks the numbers in models/devices/.
TEST(OccupancyDifferentialTest, RandomInputsAgreeWithCudaOccupancy) {
  constexpr int kInputsPerDevice = 20000;
  std::mt19937_64 rng(20261125);
  for (const char* name : kNvidiaDevices) {
    DeviceModel device = Device(name);
    ASSERT_EQ(device.name(), name);
    const MemorySpace* smem = FindSpaceOfKind(device, SHARED_MEMORY);
    ASSERT_NE(smem, nullptr) << name;
    cudaOccDeviceProp properties = OracleProperties(device);
    int mismatches = 0;
    int cannot_launch = 0;
    for (int i = 0; i < kInputsPerDevice; ++i) {
      OccupancyInput input = RandomInput(rng, *smem);
      OracleAnswer oracle = AskOracle(properties, input);
      absl::StatusOr<Occupancy> ours = ComputeOccupancy(device, input);
      ASSERT_TRUE(ours.ok()) << Describe(name, input) << ": " << ours.status();
      const cudaOccResult& want = oracle.result;
      bool same = ours->blocks_per_core() == want.activeBlocksPerMultiprocessor &&
                  FactorBits(*ours) == oracle.factors && LimitOr(ours->has_limit_warps(), ours->limit_warps()) == want.blockLimitWarps &&
                  LimitOr(ours->has_limit_registers(), ours->limit_registers()) == want.blockLimitRegs &&
                  LimitOr(ours->has_limit_shared_memory(), ours->limit_shared_memory()) == want.blockLimitSharedMem &&
                  LimitOr(ours->has_limit_blocks(), ours->limit_blocks()) == want.blockLimitBlocks &&
                  LimitOr(ours->has_limit_barriers(), ours->limit_barriers()) == want.blockLimitBarriers &&
                  ours->allocated_shared_bytes_per_block() == static_cast<int64_t>(want.allocatedSharedMemPerBlock) &&
                  ours->allocated_registers_per_block() == want.allocatedRegistersPerBlock;
      if (want.activeBlocksPerMultiprocessor == 0) ++cannot_launch;
      if (!same && ++mismatches <= 5) {
        ADD_FAILURE() << Describe(name, input) << "\n  ours:   blocks " << ours->blocks_per_core() << " factors "
                      << FactorBits(*ours) << " warps " << LimitOr(ours->has_limit_warps(), ours->limit_warps()) << " regs " << LimitOr(ours->has_limit_registers(), ours->limit_registers())
                      << " smem " << LimitOr(ours->has_limit_shared_memory(), ours->limit_shared_memory()) << " blocks " << LimitOr(ours->has_limit_blocks(), ours->limit_blocks()) << " bars "
                      << LimitOr(ours->has_limit_barriers(), ours->limit_barriers()) << " alloc smem " << ours->allocated_shared_bytes_per_block()
                      << " regs " << ours->allocated_registers_per_block() << "\n  oracle: blocks "
                      << want.activeBlocksPerMultiprocessor << " factors " << oracle.factors << " warps "
                      << want.blockLimitWarps << " regs " << want.blockLimitRegs << " smem " << want.blockLimitSharedMem
                      << " blocks " << want.blockLimitBlocks << " bars " << want.blockLimitBarriers << " alloc smem "
                      << want.allocatedSharedMemPerBlock << " regs " << want.allocatedRegistersPerBlock;
      }
    }
    EXPECT_EQ(mismatches, 0) << name;
    // The generator must exercise both sides of the launch boundary.
    EXPECT_GT(cannot_launch, kInputsPerDevice / 20) << name;
    EXPECT_LT(cannot_launch, kInputsPerDevice / 2) << name;
  }
}

#endif  // SCRATCHSIM_CUDA_OCCUPANCY_H

}  // namespace
}  // namespace scratchsim
