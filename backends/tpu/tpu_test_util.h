// Test helpers for backends/tpu: load shipped TPU models and example graphs from the source tree.
// Only *_test.cc files include this.
#ifndef SCRATCHSIM_BACKENDS_TPU_TPU_TEST_UTIL_H_
#define SCRATCHSIM_BACKENDS_TPU_TPU_TEST_UTIL_H_

#include <string>

#include "gtest/gtest.h"
#include "proto/device.pb.h"
#include "proto/graph.pb.h"
#include "sim/device.h"
#include "sim/proto_io.h"

namespace scratchsim {

inline DeviceModel TpuDevice(const std::string& name) {
  DeviceModel device;
  absl::StatusOr<DeviceModel> loaded =
      LoadDevice(std::string(SCRATCHSIM_SOURCE_DIR) + "/models/devices/" + name + ".textproto");
  EXPECT_TRUE(loaded.ok()) << loaded.status();
  if (loaded.ok()) device = *loaded;
  return device;
}

inline KernelGraph ExampleGraph(const std::string& file) {
  KernelGraph graph;
  absl::Status status = LoadProtoFile(std::string(SCRATCHSIM_SOURCE_DIR) + "/models/graphs/" + file, &graph);
  EXPECT_TRUE(status.ok()) << status;
  return graph;
}

}  // namespace scratchsim

#endif  // SCRATCHSIM_BACKENDS_TPU_TPU_TEST_UTIL_H_
