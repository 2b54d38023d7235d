#include "sim/device.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
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

// An alias never stands for a part with other figures: the RTX 4090 has the L40S's SM but 128
// SMs, not 142, so it is not an alias of l40s.
TEST(DeviceTest, NoAliasStandsForADifferentPart) {
  EXPECT_EQ(LoadDevice("rtx4090").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(LoadDevice("rtx3090").status().code(), absl::StatusCode::kNotFound);
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

// The shipped H100 model must agree with what we measured on our GPU
// (tests/data/reference/h100_device_attributes.json, cudaDeviceProp read with CuPy, 2026-11-25).
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
