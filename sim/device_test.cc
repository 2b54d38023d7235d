#include "sim/device.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "absl/strings/str_cat.h"
#include "sim/proto_io.h"

namespace scratchsim {
namespace {

using ::testing::HasSubstr;

std::string Source(const std::string& relative) { return std::string(SCRATCHSIM_SOURCE_DIR) + "/" + relative; }

TEST(DeviceTest, EveryShippedModelLoadsAndValidates) {
  auto devices = LoadShippedDevices();
  ASSERT_TRUE(devices.ok()) << devices.status();
  std::vector<std::string> names;
  for (const DeviceModel& d : *devices) names.push_back(d.name());
  for (const char* expected : {"v100", "t4", "a100", "a10", "l40s", "h100", "b200", "rtx5090", "mi300x", "mi355x",
                               "tpu_v4", "tpu_v5e", "tpu_v5p", "tpu_v6e", "tpu_v7x"}) {
    EXPECT_THAT(names, ::testing::Contains(expected));
  }
}

TEST(DeviceTest, NamesAliasesAndPaths) {
  EXPECT_TRUE(LoadDevice("h100").ok());
  auto alias = LoadDevice("trillium");
  ASSERT_TRUE(alias.ok()) << alias.status();
  EXPECT_EQ(alias->name(), "tpu_v6e");
  EXPECT_TRUE(LoadDevice(Source("models/devices/a100.textproto")).ok());
  auto unknown = LoadDevice("h900");
  EXPECT_THAT(unknown.status().message(), HasSubstr("unknown device 'h900'"));
  EXPECT_THAT(unknown.status().message(), HasSubstr("h100"));
}

TEST(DeviceTest, NamesAndAliasesAreCaseInsensitive) {
  auto upper = LoadDevice("H100");
  ASSERT_TRUE(upper.ok()) << upper.status();
  EXPECT_EQ(upper->name(), "h100");
  auto alias = LoadDevice("Ironwood");
  ASSERT_TRUE(alias.ok()) << alias.status();
  EXPECT_EQ(alias->name(), "tpu_v7x");
}

// A part of a known architecture is a model of its own that inherits the architecture's SM
// limits: the RTX 4090 has the L40S's sm_89 SM (99 KiB per block opt-in) but 128 SMs, not 142.
TEST(DeviceTest, ConsumerPartInheritsItsArchitecturesSmLimits) {
  auto rtx4090 = LoadDevice("rtx4090");
  auto l40s = LoadDevice("l40s");
  ASSERT_TRUE(rtx4090.ok()) << rtx4090.status();
  ASSERT_TRUE(l40s.ok()) << l40s.status();
  EXPECT_EQ(rtx4090->arch(), "sm_89");
  EXPECT_EQ(rtx4090->limits().num_cores(), 128);
  EXPECT_EQ(rtx4090->memory_spaces(0).per_block_optin_bytes(), 101376);
  EXPECT_EQ(rtx4090->memory_spaces(0).capacity_per_core_bytes(), 102400);
  EXPECT_EQ(rtx4090->limits().max_threads_per_core(), l40s->limits().max_threads_per_core());
  EXPECT_EQ(rtx4090->limits().max_blocks_per_core(), l40s->limits().max_blocks_per_core());
}

// None of the datacenter parent's performance leaks into the part: every term is its own.
TEST(DeviceTest, ConsumerPartSetsEveryPerformanceTermItself) {
  for (const char* name : {"rtx4090", "rtx3090", "a6000", "l4"}) {
    auto device = LoadDevice(name);
    ASSERT_TRUE(device.ok()) << name << ": " << device.status();
    ASSERT_FALSE(device->term_origins().empty()) << name;
    for (const TermOrigin& origin : device->term_origins()) {
      EXPECT_EQ(origin.model(), name) << name << ": " << origin.term() << " inherited from " << origin.model();
    }
  }
}

// The sm_86 parts: the RTX 3090 (82 SMs) and the RTX A6000 (84, also as rtx_a6000) inherit the
// A10's SM limits; the L4 (58 SMs) the L40S's.
TEST(DeviceTest, AmpereAndAdaPartsCarryTheirOwnSmCounts) {
  const std::pair<const char*, int> parts[] = {{"rtx3090", 82}, {"rtx_a6000", 84}, {"l4", 58}};
  for (const auto& [name, cores] : parts) {
    auto device = LoadDevice(name);
    ASSERT_TRUE(device.ok()) << name << ": " << device.status();
    EXPECT_EQ(device->limits().num_cores(), cores) << name;
    EXPECT_EQ(device->memory_spaces(0).per_block_optin_bytes(), 101376) << name;
  }
}

// SCRATCHSIM_MODELS adds a directory of one's own to the shipped models; its models win.
TEST(DeviceTest, ModelsDirectoryAddsToTheShippedOnes) {
  const std::string dir = ::testing::TempDir() + "/own_models";
  std::filesystem::create_directories(dir);
  DeviceModel mine;
  ASSERT_TRUE(LoadProtoFile(Source("models/devices/h100.textproto"), &mine).ok());
  mine.set_name("my_h100");
  mine.clear_aliases();
  std::ofstream(dir + "/my_h100.textproto") << mine.DebugString();
  setenv("SCRATCHSIM_MODELS", dir.c_str(), 1);
  auto own = LoadDevice("my_h100");
  auto shipped = LoadDevice("a100");
  unsetenv("SCRATCHSIM_MODELS");
  ASSERT_TRUE(own.ok()) << own.status();
  EXPECT_TRUE(shipped.ok()) << shipped.status();
}

TEST(DeviceTest, ValidationNamesTheField) {
  DeviceModel device;
  ASSERT_TRUE(LoadProtoFile(Source("models/devices/h100.textproto"), &device).ok());
  device.mutable_memory_spaces(0)->set_per_block_optin_bytes(device.memory_spaces(0).capacity_per_core_bytes() + 1);
  EXPECT_THAT(ValidateDevice(device, "x.textproto").message(),
              HasSubstr("x.textproto: field 'memory_spaces[smem].per_block_optin_bytes' exceeds capacity_per_core_bytes"));
  device.mutable_memory_spaces(0)->set_capacity_per_core_bytes(-5);
  EXPECT_FALSE(ValidateDevice(device, "x.textproto").ok());
  device.clear_memory_spaces();
  EXPECT_THAT(ValidateDevice(device, "x.textproto").message(), HasSubstr("memory_spaces"));
}

// What ValidateDevice says of the shipped H100 model after `change` (issue 17: fields used
// although zero, negative, NaN or not a power of two).
template <typename Change>
std::string H100ErrorAfter(Change change) {
  DeviceModel device;
  EXPECT_TRUE(LoadProtoFile(Source("models/devices/h100.textproto"), &device).ok());
  change(device);
  const absl::Status status = ValidateDevice(device, "x.textproto");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  return std::string(status.message());
}

// Reproducer of issue 17 (shared/reliability/device_carveout_overflow.textproto): a carveout step
// of 2^63-1 KiB overflowed the step's bytes and the graph simulated with exit 0.
TEST(DeviceTest, ACarveoutStepPastTheLimitNamesFileAndField) {
  const std::string path = Source("tests/data/reliability/device_carveout_overflow.textproto");
  auto device = LoadDevice(path);
  ASSERT_FALSE(device.ok());
  EXPECT_THAT(device.status().message(), HasSubstr(path + ": field 'memory_spaces[smem].carveout_kib' must be 0.."));
}

TEST(DeviceTest, ALaunchCarveoutWithoutHeadroomIsRefused) {
  EXPECT_THAT(H100ErrorAfter([](DeviceModel& d) {
                d.mutable_memory_spaces(0)->mutable_launch_carveout()->set_headroom_factor(0);
              }),
              HasSubstr("field 'memory_spaces[smem].launch_carveout.headroom_factor' must be 1..64, got 0"));
}

TEST(DeviceTest, ALaunchCarveoutBelowTheLargestStepIsRefused) {
  EXPECT_THAT(H100ErrorAfter([](DeviceModel& d) {
                d.mutable_memory_spaces(0)->mutable_launch_carveout()->set_unified_bytes_per_core(233472);
                d.mutable_memory_spaces(0)->add_carveout_kib(240);
              }),
              HasSubstr("field 'memory_spaces[smem].launch_carveout.unified_bytes_per_core' is below the carve-out "
                        "step of 240 KiB"));
}

TEST(DeviceTest, ALaunchCarveoutWithoutStepsIsRefused) {
  EXPECT_THAT(H100ErrorAfter([](DeviceModel& d) { d.mutable_memory_spaces(0)->clear_carveout_kib(); }),
              HasSubstr("field 'memory_spaces[smem].launch_carveout' is set but the space has no carveout_kib steps"));
}

TEST(DeviceTest, RegisterAllocationUnitOfZeroIsRefused) {
  EXPECT_THAT(H100ErrorAfter([](DeviceModel& d) { d.mutable_limits()->set_register_allocation_unit(0); }),
              HasSubstr("x.textproto: field 'limits.register_allocation_unit' must be a power of two"));
}

TEST(DeviceTest, RegisterAllocationUnitThatIsNoPowerOfTwoIsRefused) {
  EXPECT_THAT(H100ErrorAfter([](DeviceModel& d) { d.mutable_limits()->set_register_allocation_unit(250); }),
              HasSubstr("field 'limits.register_allocation_unit' must be a power of two from 1 to 65536, got 250"));
}

TEST(DeviceTest, RegisterSubPartitionsOfZeroAreRefused) {
  EXPECT_THAT(H100ErrorAfter([](DeviceModel& d) { d.mutable_limits()->set_register_sub_partitions(0); }),
              HasSubstr("field 'limits.register_sub_partitions' must be a power of two"));
}

TEST(DeviceTest, NegativeRegistersPerBlockAreRefused) {
  EXPECT_THAT(H100ErrorAfter([](DeviceModel& d) { d.mutable_limits()->set_registers_per_block(-1); }),
              HasSubstr("field 'limits.registers_per_block' must be 1..65536, got -1"));
}

TEST(DeviceTest, AnAlignmentThatIsNoPowerOfTwoIsRefused) {
  EXPECT_THAT(H100ErrorAfter([](DeviceModel& d) { d.mutable_memory_spaces(0)->set_alignment_bytes(24); }),
              HasSubstr("field 'memory_spaces[smem].alignment_bytes' must be a power of two"));
}

TEST(DeviceTest, AnAllocationGranuleThatIsNoPowerOfTwoIsRefused) {
  EXPECT_THAT(H100ErrorAfter([](DeviceModel& d) { d.mutable_memory_spaces(0)->set_buffer_granule_bytes(1000); }),
              HasSubstr("field 'memory_spaces[smem].buffer_granule_bytes' must be a power of two"));
}

TEST(DeviceTest, UsableBytesAboveTheCapacityAreRefused) {
  EXPECT_THAT(H100ErrorAfter([](DeviceModel& d) {
                d.mutable_memory_spaces(0)->set_usable_per_core_bytes(d.memory_spaces(0).capacity_per_core_bytes() + 1);
              }),
              HasSubstr("field 'memory_spaces[smem].usable_per_core_bytes' must lie in [0, capacity_per_core_bytes"));
}

TEST(DeviceTest, NegativeUsableBytesAreRefused) {
  EXPECT_THAT(H100ErrorAfter([](DeviceModel& d) { d.mutable_memory_spaces(0)->set_usable_per_core_bytes(-4096); }),
              HasSubstr("field 'memory_spaces[smem].usable_per_core_bytes' must lie in [0, capacity_per_core_bytes"));
}

TEST(DeviceTest, UsableBytesDefaultToTheCapacity) {
  absl::StatusOr<DeviceModel> v5p = LoadDevice("tpu_v5p");
  ASSERT_TRUE(v5p.ok()) << v5p.status();
  EXPECT_EQ(UsableBytesPerCore(*FindSpace(*v5p, "vmem")), (64 << 20) - (64 << 10));  // measured with libtpu
  MemorySpace whole;
  whole.set_capacity_per_core_bytes(1 << 20);
  EXPECT_EQ(UsableBytesPerCore(whole), 1 << 20);
}

// Found by the device_loader fuzz target: a space name of raw bytes passed
// validation, and no graph could name it.
TEST(DeviceTest, AMemorySpaceNameOfRawBytesIsRefused) {
  EXPECT_THAT(H100ErrorAfter([](DeviceModel& d) { d.mutable_memory_spaces(0)->set_name("\xff\xfevmem"); }),
              HasSubstr("field 'memory_spaces.name' '\\xff\\xfevmem' is not 1 to 64 letters"));
}

TEST(DeviceTest, ADeviceNameWithSpacesIsRefused) {
  EXPECT_THAT(H100ErrorAfter([](DeviceModel& d) { d.set_name("my h100"); }),
              HasSubstr("field 'name' 'my h100' is not 1 to 64 letters"));
}

TEST(DeviceTest, ANaNBandwidthIsRefused) {
  EXPECT_THAT(H100ErrorAfter([](DeviceModel& d) { d.mutable_performance()->set_memory_bandwidth_gbps(std::nan("")); }),
              HasSubstr("field 'performance.memory_bandwidth_gbps' must be a finite number"));
}

TEST(DeviceTest, AnInfiniteClockIsRefused) {
  EXPECT_THAT(H100ErrorAfter([](DeviceModel& d) { d.mutable_performance()->set_clock_mhz(INFINITY); }),
              HasSubstr("field 'performance.clock_mhz' must be a finite number"));
}

TEST(DeviceTest, AZeroPeakIsRefused) {
  EXPECT_THAT(H100ErrorAfter([](DeviceModel& d) {
                for (PeakThroughput& peak : *d.mutable_performance()->mutable_peak()) peak.set_tflops(0);
              }),
              HasSubstr("tflops' must be positive"));
}

TEST(DeviceTest, AnAbsurdComputeCapabilityIsRefused) {
  // SM_ARCH = major x 10 + minor is bound into every expression: 2^31-1 overflowed it.
  EXPECT_THAT(H100ErrorAfter([](DeviceModel& d) { d.mutable_limits()->set_compute_major(INT32_MAX); }),
              HasSubstr("field 'limits.compute_major' must be 0..1000"));
}

TEST(DeviceTest, TensorMemoryWithoutColumnsIsRefused) {
  DeviceModel device;
  ASSERT_TRUE(LoadProtoFile(Source("models/devices/b200.textproto"), &device).ok());
  for (MemorySpace& space : *device.mutable_memory_spaces()) {
    if (space.kind() == TENSOR_MEMORY) space.set_columns(0);
  }
  EXPECT_THAT(ValidateDevice(device, "b.textproto").message(), HasSubstr("b.textproto: field 'memory_spaces[tmem].columns'"));
}

TEST(DeviceTest, MoreMemorySpacesThanTheEngineHoldsAreRefused) {
  EXPECT_THAT(H100ErrorAfter([](DeviceModel& d) {
                for (int i = 0; i < kMaxDeviceMemorySpaces; ++i) {
                  MemorySpace* extra = d.add_memory_spaces();
                  *extra = d.memory_spaces(0);
                  extra->set_name(absl::StrCat("extra", i));
                }
              }),
              HasSubstr("field 'memory_spaces' has"));
}

// The shipped H100 model must agree with the device's own attributes
// (tests/data/reference/h100_device_attributes.json: cudaDeviceProp, see its README).
TEST(DeviceTest, H100ModelAgreesWithTheMeasuredDevice) {
  auto json = ReadFileToString(Source("tests/data/reference/h100_device_attributes.json"));
  ASSERT_TRUE(json.ok()) << json.status();
  google::protobuf::Struct root;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = true;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(*json, &root, options).ok());
  const auto& props = root.fields().at("props").struct_value().fields();
  auto prop = [&](const std::string& name) { return static_cast<int64_t>(std::llround(props.at(name).number_value())); };

  auto h100 = LoadDevice("h100");
  ASSERT_TRUE(h100.ok()) << h100.status();
  const MemorySpace* smem = FindSpace(*h100, "smem");
  ASSERT_NE(smem, nullptr);
  EXPECT_EQ(smem->per_block_default_bytes(), prop("sharedMemPerBlock"));
  EXPECT_EQ(smem->per_block_optin_bytes(), prop("sharedMemPerBlockOptin"));
  EXPECT_EQ(smem->capacity_per_core_bytes(), prop("sharedMemPerMultiprocessor"));
  EXPECT_EQ(smem->reserved_per_block_bytes(), prop("reservedSharedMemPerBlock"));
  const ExecutionLimits& limits = h100->limits();
  EXPECT_EQ(limits.warp_size(), prop("warpSize"));
  EXPECT_EQ(limits.max_threads_per_block(), prop("maxThreadsPerBlock"));
  EXPECT_EQ(limits.max_threads_per_core(), prop("maxThreadsPerMultiProcessor"));
  EXPECT_EQ(limits.max_blocks_per_core(), prop("maxBlocksPerMultiProcessor"));
  EXPECT_EQ(limits.registers_per_core(), prop("regsPerMultiprocessor"));
  EXPECT_EQ(limits.registers_per_block(), prop("regsPerBlock"));
  EXPECT_EQ(limits.num_cores(), prop("multiProcessorCount"));
  EXPECT_EQ(limits.compute_major(), prop("major"));
  EXPECT_EQ(limits.compute_minor(), prop("minor"));
  EXPECT_EQ(h100->performance().l2_bytes(), prop("l2CacheSize"));
  EXPECT_EQ(static_cast<int64_t>(h100->performance().clock_mhz()), prop("clockRate") / 1000);
}

}  // namespace
}  // namespace scratchsim
