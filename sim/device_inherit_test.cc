#include "sim/device_inherit.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "google/protobuf/text_format.h"
#include "sim/device.h"

namespace scratchsim {
namespace {

using ::testing::HasSubstr;

DeviceModel Parse(const std::string& text) {
  DeviceModel device;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &device)) << text;
  return device;
}

// A lookup over a few models written here, each "from" the file "<name>.textproto".
struct Models {
  std::map<std::string, DeviceModel> by_name;
  RawDeviceLookup lookup() const {
    return [this](absl::string_view name) {
      auto it = by_name.find(std::string(name));
      return it == by_name.end() ? RawDevice{} : RawDevice{&it->second, it->first + ".textproto"};
    };
  }
};

std::string TempFile(const std::string& name, const std::string& text) {
  const std::string path = (std::filesystem::temp_directory_path() / name).string();
  std::ofstream(path) << text;
  return path;
}

TEST(DeviceInheritTest, H200TakesH100sOnChipTerms) {
  auto h100 = LoadDevice("h100");
  auto h200 = LoadDevice("h200");
  ASSERT_TRUE(h100.ok() && h200.ok()) << h100.status() << h200.status();
  for (const char* term : {"smem_bytes_per_clk", "smem_latency_ns", "l2_bandwidth_gbps", "l2_latency_ns",
                           "dram_latency_ns", "clock_mhz"}) {
    EXPECT_GT(PerformanceTerm(*h200, term), 0) << term;
    EXPECT_EQ(PerformanceTerm(*h200, term), PerformanceTerm(*h100, term)) << term;
  }
  // Its own: the L2 size the probe read on our H200 (60 MiB against the H100's 50 MiB).
  EXPECT_EQ(PerformanceTerm(*h200, "l2_bytes"), 62914560);
  EXPECT_EQ(PerformanceTerm(*h100, "l2_bytes"), 52428800);
}

TEST(DeviceInheritTest, H200OverridesTheMemoryBandwidth) {
  auto h200 = LoadDevice("h200");
  ASSERT_TRUE(h200.ok()) << h200.status();
  EXPECT_EQ(h200->performance().memory_bandwidth_gbps(), 4800);
  EXPECT_EQ(h200->name(), "h200");
  EXPECT_EQ(h200->limits().num_cores(), 132);
  EXPECT_EQ(h200->limits().warp_size(), 32);  // inherited
}

TEST(DeviceInheritTest, AliasesAreNotInherited) {
  auto h200 = LoadDevice("h200");
  ASSERT_TRUE(h200.ok()) << h200.status();
  EXPECT_TRUE(h200->aliases().empty());
  auto h100_sxm = LoadDevice("h100_sxm");
  ASSERT_TRUE(h100_sxm.ok());
  EXPECT_EQ(h100_sxm->name(), "h100");
}

TEST(DeviceInheritTest, TermOriginsNameTheModelThatGaveEachTerm) {
  auto h200 = LoadDevice("h200");
  ASSERT_TRUE(h200.ok()) << h200.status();
  const TermOrigin* l2 = FindTermOrigin(*h200, "l2_bandwidth_gbps");
  ASSERT_NE(l2, nullptr);
  EXPECT_EQ(l2->model(), "h100");
  EXPECT_THAT(l2->file(), HasSubstr("h100.textproto"));
  const TermOrigin* bandwidth = FindTermOrigin(*h200, "memory_bandwidth_gbps");
  ASSERT_NE(bandwidth, nullptr);
  EXPECT_EQ(bandwidth->model(), "h200");
  const TermOrigin* peak = FindTermOrigin(*h200, "peak.f32");
  ASSERT_NE(peak, nullptr);
  EXPECT_EQ(peak->model(), "h200");
}

TEST(DeviceInheritTest, AModelWithoutParentOriginatesEveryTerm) {
  auto h100 = LoadDevice("h100");
  ASSERT_TRUE(h100.ok());
  const TermOrigin* clock = FindTermOrigin(*h100, "clock_mhz");
  ASSERT_NE(clock, nullptr);
  EXPECT_EQ(clock->model(), "h100");
  EXPECT_EQ(FindTermOrigin(*h100, "no_such_term"), nullptr);
}

TEST(DeviceInheritTest, PeaksMergeByDtype) {
  DeviceModel parent = Parse(R"pb(name: "p" performance { peak { dtype: "f16" tflops: 100 } peak { dtype: "f32" tflops: 10 } })pb");
  DeviceModel child = Parse(R"pb(name: "c" performance { peak { dtype: "f16" tflops: 200 } peak { dtype: "f8" tflops: 400 } })pb");
  const DeviceModel merged = MergeDeviceModels(parent, child);
  EXPECT_EQ(PerformanceTerm(merged, "peak.f16"), 200);
  EXPECT_EQ(PerformanceTerm(merged, "peak.f32"), 10);
  EXPECT_EQ(PerformanceTerm(merged, "peak.f8"), 400);
  EXPECT_EQ(merged.performance().peak_size(), 3);
}

TEST(DeviceInheritTest, MemorySpacesMergeByName) {
  DeviceModel parent = Parse(R"pb(name: "p" memory_spaces { name: "smem" kind: SHARED_MEMORY capacity_per_core_bytes: 1000
                                                            per_block_default_bytes: 500 carveout_kib: 1 carveout_kib: 2 })pb");
  DeviceModel child = Parse(R"pb(name: "c" memory_spaces { name: "smem" per_block_default_bytes: 400 }
                                           memory_spaces { name: "tmem" kind: TENSOR_MEMORY capacity_per_core_bytes: 64 })pb");
  const DeviceModel merged = MergeDeviceModels(parent, child);
  ASSERT_EQ(merged.memory_spaces_size(), 2);
  EXPECT_EQ(merged.memory_spaces(0).capacity_per_core_bytes(), 1000);
  EXPECT_EQ(merged.memory_spaces(0).per_block_default_bytes(), 400);
  EXPECT_EQ(merged.memory_spaces(0).carveout_kib_size(), 2);  // the child gave none: the parent's stay
  EXPECT_EQ(merged.memory_spaces(1).name(), "tmem");
}

TEST(DeviceInheritTest, AChildsCarveoutListReplacesTheParents) {
  DeviceModel parent = Parse(R"pb(name: "p" memory_spaces { name: "smem" carveout_kib: 1 carveout_kib: 2 })pb");
  DeviceModel child = Parse(R"pb(name: "c" memory_spaces { name: "smem" carveout_kib: 8 })pb");
  const DeviceModel merged = MergeDeviceModels(parent, child);
  ASSERT_EQ(merged.memory_spaces(0).carveout_kib_size(), 1);
  EXPECT_EQ(merged.memory_spaces(0).carveout_kib(0), 8);
}

TEST(DeviceInheritTest, SourcesSayWhatIsInherited) {
  DeviceModel parent = Parse(R"pb(name: "p" sources: "parent datasheet")pb");
  DeviceModel child = Parse(R"pb(name: "c" sources: "child datasheet")pb");
  const DeviceModel merged = MergeDeviceModels(parent, child);
  ASSERT_EQ(merged.sources_size(), 2);
  EXPECT_EQ(merged.sources(0), "child datasheet");
  EXPECT_EQ(merged.sources(1), "inherited from p: parent datasheet");
}

TEST(DeviceInheritTest, AChainResolvesFromTheRootDown) {
  Models models;
  models.by_name["a"] = Parse(R"pb(name: "a" performance { clock_mhz: 1000 memory_bandwidth_gbps: 10 })pb");
  models.by_name["b"] = Parse(R"pb(name: "b" inherits: "a" performance { clock_mhz: 2000 })pb");
  DeviceModel c = Parse(R"pb(name: "c" inherits: "b" performance { memory_bandwidth_gbps: 30 })pb");
  auto resolved = ResolveInherits(c, "c.textproto", models.lookup());
  ASSERT_TRUE(resolved.ok()) << resolved.status();
  EXPECT_EQ(resolved->performance().clock_mhz(), 2000);
  EXPECT_EQ(resolved->performance().memory_bandwidth_gbps(), 30);
  EXPECT_EQ(FindTermOrigin(*resolved, "clock_mhz")->model(), "b");
  EXPECT_EQ(FindTermOrigin(*resolved, "memory_bandwidth_gbps")->file(), "c.textproto");
}

TEST(DeviceInheritTest, AnAssumedTermIsMarkedThroughTheChain) {
  Models models;
  models.by_name["a"] = Parse(R"pb(name: "a" performance { clock_mhz: 1000 memory_bandwidth_gbps: 10 }
                                   assumed_terms: "clock_mhz")pb");
  DeviceModel b = Parse(R"pb(name: "b" inherits: "a" performance { memory_bandwidth_gbps: 30 })pb");
  auto resolved = ResolveInherits(b, "b.textproto", models.lookup());
  ASSERT_TRUE(resolved.ok()) << resolved.status();
  EXPECT_TRUE(FindTermOrigin(*resolved, "clock_mhz")->assumed());
  EXPECT_FALSE(FindTermOrigin(*resolved, "memory_bandwidth_gbps")->assumed());
}

TEST(DeviceInheritTest, AnAssumedTermTheFileDoesNotGiveIsRefused) {
  Models models;
  DeviceModel a = Parse(R"pb(name: "a" performance { clock_mhz: 1000 } assumed_terms: "clock_mzh")pb");
  auto resolved = ResolveInherits(a, "a.textproto", models.lookup());
  EXPECT_EQ(resolved.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(resolved.status().message(), HasSubstr("a.textproto: field 'assumed_terms': 'clock_mzh'"));
}

TEST(DeviceInheritTest, TheShippedTpuClocksAreAssumed) {
  for (const char* name : {"tpu_v6e", "tpu_v7x"}) {
    auto device = LoadDevice(name);
    ASSERT_TRUE(device.ok()) << device.status();
    EXPECT_TRUE(FindTermOrigin(*device, "clock_mhz")->assumed()) << name;
  }
  auto v4 = LoadDevice("tpu_v4");
  ASSERT_TRUE(v4.ok());
  EXPECT_FALSE(FindTermOrigin(*v4, "clock_mhz")->assumed());  // cited: the TPU v4 paper
}

TEST(DeviceInheritTest, AnUnknownParentNamesTheFileAndTheField) {
  Models models;
  DeviceModel orphan = Parse(R"pb(name: "x" inherits: "h900")pb");
  auto resolved = ResolveInherits(orphan, "x.textproto", models.lookup());
  ASSERT_FALSE(resolved.ok());
  EXPECT_THAT(resolved.status().message(), HasSubstr("x.textproto: field 'inherits' names 'h900'"));
}

TEST(DeviceInheritTest, ACycleIsRefused) {
  Models models;
  models.by_name["a"] = Parse(R"pb(name: "a" inherits: "b")pb");
  models.by_name["b"] = Parse(R"pb(name: "b" inherits: "a")pb");
  auto resolved = ResolveInherits(models.by_name["a"], "a.textproto", models.lookup());
  ASSERT_FALSE(resolved.ok());
  EXPECT_THAT(resolved.status().message(), HasSubstr("cycle: a -> b -> a"));
}

TEST(DeviceInheritTest, AFileOfOnesOwnInheritsAShippedModel) {
  const std::string path = TempFile("device_inherit_test_mine.textproto",
                                    "name: \"my_h100\"\ninherits: \"h100\"\nperformance { clock_mhz: 1600 }\n");
  auto mine = LoadDevice(path);
  ASSERT_TRUE(mine.ok()) << mine.status();
  EXPECT_EQ(mine->performance().clock_mhz(), 1600);
  EXPECT_EQ(mine->limits().num_cores(), 132);
  EXPECT_EQ(FindTermOrigin(*mine, "clock_mhz")->file(), path);
  EXPECT_EQ(FindTermOrigin(*mine, "smem_latency_ns")->model(), "h100");
}

TEST(DeviceInheritTest, AnInheritedModelIsStillValidated) {
  const std::string path = TempFile("device_inherit_test_bad.textproto",
                                    "name: \"bad\"\ninherits: \"h100\"\nlimits { num_cores: -1 }\n");
  auto bad = LoadDevice(path);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr(path));
  EXPECT_THAT(bad.status().message(), HasSubstr("limits.num_cores"));
}

TEST(DeviceInheritTest, SetPerformanceTermWritesFiguresAndPeaks) {
  DeviceModel device = Parse(R"pb(name: "d")pb");
  EXPECT_TRUE(SetPerformanceTerm(&device, "l2_bandwidth_gbps", 123));
  EXPECT_TRUE(SetPerformanceTerm(&device, "peak.tf32", 45));
  EXPECT_TRUE(SetPerformanceTerm(&device, "l2_bytes", 1024));
  EXPECT_FALSE(SetPerformanceTerm(&device, "peak", 1));
  EXPECT_FALSE(SetPerformanceTerm(&device, "no_such_term", 1));
  EXPECT_EQ(PerformanceTerm(device, "l2_bandwidth_gbps"), 123);
  EXPECT_EQ(PerformanceTerm(device, "peak.tf32"), 45);
  EXPECT_EQ(device.performance().l2_bytes(), 1024);
}

TEST(DeviceInheritTest, ACalibrationReplacesTheTermsOfTheDeviceItWasMadeFor) {
  auto h100 = LoadDevice("h100");
  ASSERT_TRUE(h100.ok());
  DeviceModel calibration = Parse(R"pb(name: "h100_calibrated" inherits: "h100" performance { l2_bandwidth_gbps: 15000 })pb");
  auto calibrated = ApplyCalibration(*h100, calibration, "cal.textproto", LoadDevice, nullptr);
  ASSERT_TRUE(calibrated.ok()) << calibrated.status();
  EXPECT_EQ(calibrated->performance().l2_bandwidth_gbps(), 15000);
  EXPECT_EQ(calibrated->name(), "h100");
  EXPECT_EQ(FindTermOrigin(*calibrated, "l2_bandwidth_gbps")->model(), "h100_calibrated");
  EXPECT_EQ(FindTermOrigin(*calibrated, "l2_bandwidth_gbps")->file(), "cal.textproto");
  EXPECT_EQ(FindTermOrigin(*calibrated, "clock_mhz")->model(), "h100");
}

TEST(DeviceInheritTest, ACalibrationOfAnAncestorKeepsWhatTheDeviceSetsItself) {
  auto h200 = LoadDevice("h200");
  ASSERT_TRUE(h200.ok());
  DeviceModel calibration = Parse(R"pb(name: "h100_calibrated" inherits: "h100"
                                       performance { l2_bandwidth_gbps: 15000 memory_bandwidth_gbps: 3000 })pb");
  std::vector<std::string> kept;
  auto calibrated = ApplyCalibration(*h200, calibration, "cal.textproto", LoadDevice, &kept);
  ASSERT_TRUE(calibrated.ok()) << calibrated.status();
  EXPECT_EQ(calibrated->performance().l2_bandwidth_gbps(), 15000);  // h200 inherits it from h100
  EXPECT_EQ(calibrated->performance().memory_bandwidth_gbps(), 4800);  // h200's own
  EXPECT_THAT(kept, ::testing::ElementsAre("memory_bandwidth_gbps"));
}

TEST(DeviceInheritTest, ACalibrationForAnotherDeviceIsRefused) {
  auto a100 = LoadDevice("a100");
  ASSERT_TRUE(a100.ok());
  DeviceModel calibration = Parse(R"pb(name: "h100_calibrated" inherits: "h100" performance { clock_mhz: 1500 })pb");
  auto calibrated = ApplyCalibration(*a100, calibration, "cal.textproto", LoadDevice, nullptr);
  ASSERT_FALSE(calibrated.ok());
  EXPECT_THAT(calibrated.status().message(), HasSubstr("cal.textproto: field 'inherits'"));
  EXPECT_THAT(calibrated.status().message(), HasSubstr("made for 'h100'"));
}

TEST(DeviceInheritTest, ACalibrationWithoutInheritsIsRefused) {
  auto h100 = LoadDevice("h100");
  ASSERT_TRUE(h100.ok());
  auto calibrated = ApplyCalibration(*h100, Parse(R"pb(name: "c")pb"), "cal.textproto", LoadDevice, nullptr);
  ASSERT_FALSE(calibrated.ok());
  EXPECT_THAT(calibrated.status().message(), HasSubstr("field 'inherits' is missing"));
}

}  // namespace
}  // namespace scratchsim
