// libFuzzer target: the device loader. The input is a DeviceModel textproto; whatever
// ValidateDevice accepts must be usable by everything downstream without an error of the model's
// own: the occupancy calculator, the fit engine on a small graph, the planner's performance model.
#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"
#include "proto/device.pb.h"
#include "sim/device.h"
#include "sim/proto_io.h"
#include "tests/fuzz/fuzz_util.h"

using namespace scratchsim;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view contents(reinterpret_cast<const char*>(data), size);
  DeviceModel device;
  if (!ParseProto(contents, ProtoFormat::kText, "fuzz.textproto", &device).ok()) return 0;
  if (!ValidateDevice(device, "fuzz.textproto").ok()) return 0;
  fuzz::ExerciseDevice(device, size % 2 == 0);
  return 0;
}
