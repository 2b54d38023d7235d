// Shared by the libFuzzer targets of tests/fuzz: shipped devices loaded once, and the invariants
// every target checks on what the engine returns (a broken one aborts, so libFuzzer keeps the input).
#ifndef SCRATCHSIM_TESTS_FUZZ_FUZZ_UTIL_H_
#define SCRATCHSIM_TESTS_FUZZ_FUZZ_UTIL_H_

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "proto/device.pb.h"
#include "sim/device.h"
#include "sim/engine.h"

namespace scratchsim::fuzz {

// Stops the run with `what`: libFuzzer reports the input as a crash.
[[noreturn]] inline void Fail(const std::string& what) {
  std::fprintf(stderr, "invariant broken: %s\n", what.c_str());
  std::abort();
}

// A shipped device model by name, loaded from the source tree once per process.
inline const DeviceModel& Device(const std::string& name) {
  static auto* devices = new std::map<std::string, DeviceModel>();
  auto it = devices->find(name);
  if (it != devices->end()) return it->second;
  auto device = LoadDevice(absl::StrCat(SCRATCHSIM_SOURCE_DIR, "/models/devices/", name, ".textproto"));
  if (!device.ok()) Fail(absl::StrCat("cannot load ", name, ": ", device.status().message()));
  return devices->emplace(name, *std::move(device)).first->second;
}

// The devices the targets rotate through: NVIDIA (Hopper, Blackwell with TMEM), AMD, TPU.
inline const std::vector<std::string>& DeviceNames() {
  static const std::vector<std::string> names = {"h100", "b200", "mi300x", "a100", "tpu_v5e", "tpu_v7x"};
  return names;
}

// Placement invariants of one evaluation made with Scratch.keep_layout: two blocks of a group
// whose live ranges meet never share an address, and the space's peak covers every block.
inline void CheckLayout(const FitEngine& engine, const FitEngine::Scratch& scratch, const FitResult& fit) {
  for (size_t g = 0; g < scratch.layout.size(); ++g) {
    const std::vector<PlacedBlock>& blocks = scratch.layout[g];
    if (blocks.size() > 2000) continue;  // quadratic check: small groups only
    const int space = engine.groups()[g].space;
    for (size_t i = 0; i < blocks.size(); ++i) {
      const PlacedBlock& a = blocks[i];
      if (a.offset < 0) Fail("negative offset");
      if (a.block.size > 0 && fit.spaces[space].peak >= 0 && a.offset + a.block.size > fit.spaces[space].peak) {
        Fail(absl::StrCat("block of buffer ", a.buffer, " ends at ", a.offset + a.block.size, " past the peak ",
                          fit.spaces[space].peak));
      }
      for (size_t j = i + 1; j < blocks.size(); ++j) {
        const PlacedBlock& b = blocks[j];
        if (a.block.size == 0 || b.block.size == 0) continue;
        const bool live_together = a.block.start <= b.block.end && b.block.start <= a.block.end;
        const bool share = a.offset < b.offset + b.block.size && b.offset < a.offset + a.block.size;
        if (live_together && share) {
          Fail(absl::StrCat("buffers ", a.buffer, " and ", b.buffer, " overlap in space ", space, " while both live"));
        }
      }
    }
  }
}

}  // namespace scratchsim::fuzz

#endif  // SCRATCHSIM_TESTS_FUZZ_FUZZ_UTIL_H_
