// Checks the shipped model of the live device against what the runtime reports. Skips where
// no CUDA device is present or no shipped model covers the device.
#include <string>

#include "backends/cuda/measure.h"
#include "backends/cuda/probe.h"
#include "gtest/gtest.h"
#include "sim/device.h"

namespace scratchsim::cuda {
namespace {

TEST(ProbeTest, ShippedModelAgreesWithLiveDevice) {
  if (!DevicePresent()) GTEST_SKIP() << "no CUDA device";
  auto probed = ProbeDevice(0);
  ASSERT_TRUE(probed.ok()) << probed.status();
  std::string shipped_name;
  if (probed->display_name().find("H100") != std::string::npos) shipped_name = "h100";
  if (probed->display_name().find("H200") != std::string::npos) shipped_name = "h200";
  if (shipped_name.empty()) GTEST_SKIP() << "no shipped model for " << probed->display_name();
  auto shipped = LoadDevice(shipped_name);
  ASSERT_TRUE(shipped.ok()) << shipped.status();
  for (const std::string& diff : DiffAgainstProbe(*probed, *shipped)) ADD_FAILURE() << diff;
}

TEST(ProbeTest, DiffNamesEachDisagreement) {
  DeviceModel a, b;
  a.set_arch("sm_90");
  b.set_arch("sm_90");
  a.mutable_limits()->set_num_cores(132);
  b.mutable_limits()->set_num_cores(114);
  a.mutable_performance()->set_clock_mhz(1980);
  b.mutable_performance()->set_clock_mhz(1985);  // within 0.5%
  MemorySpace* s = a.add_memory_spaces();
  s->set_name("smem");
  s->set_per_block_optin_bytes(232448);
  auto diffs = DiffAgainstProbe(a, b);
  ASSERT_EQ(diffs.size(), 2u);
  EXPECT_EQ(diffs[0], "memory space 'smem': missing in the shipped model");
  EXPECT_EQ(diffs[1], "limits.num_cores: probed 132, shipped 114");
}

}  // namespace
}  // namespace scratchsim::cuda
