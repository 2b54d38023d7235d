// Shared by the libFuzzer targets of tests/fuzz: shipped devices loaded once, and the invariants
// every target checks on what the engine returns (a broken one aborts, so libFuzzer keeps the input).
// Each target has its own files; everything here is inline so a target links only what it uses.
#ifndef SCRATCHSIM_TESTS_FUZZ_FUZZ_UTIL_H_
#define SCRATCHSIM_TESTS_FUZZ_FUZZ_UTIL_H_

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "google/protobuf/text_format.h"
#include "proto/device.pb.h"
#include "sim/device.h"
#include "sim/engine.h"
#include "sim/graph.h"
#include "sim/occupancy.h"
#include "sim/simulator.h"

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

// A small graph for `device`: one buffer in each memory space, another pipelined, two ops each.
inline const CompiledGraph& GraphFor(const DeviceModel& device) {
  static auto* graphs = new std::map<std::string, CompiledGraph>();
  std::string text;
  for (int s = 0; s < device.memory_spaces_size(); ++s) {
    const std::string space = device.memory_spaces(s).name();
    absl::StrAppend(&text, "buffers { name: \"a", s, "\" shape: \"BM\" shape: \"64\" dtype: \"f16\" memory_space: \"",
                    space, "\" copies: \"S\" }\n");
    absl::StrAppend(&text, "buffers { name: \"b", s, "\" size_bytes: \"1000\" memory_space: \"", space,
                    "\" alignment: \"128\" }\n");
    absl::StrAppend(&text, "ops { name: \"load", s, "\" writes: \"a", s, "\" writes: \"b", s, "\" }\n");
    absl::StrAppend(&text, "ops { name: \"use", s, "\" reads: \"a", s, "\" reads: \"b", s, "\" }\n");
  }
  absl::StrAppend(&text, "parameters { name: \"BM\" default_value: 64 }\nparameters { name: \"S\" default_value: 2 }\n"
                         "launch { num_warps: \"4\" registers_per_thread: \"128\" }\n");
  auto it = graphs->find(text);
  if (it != graphs->end()) return it->second;
  KernelGraph graph;
  if (!google::protobuf::TextFormat::ParseFromString(text, &graph)) Fail("test graph does not parse");
  auto compiled = CompileGraph(graph, "fuzz.pbtxt");
  if (!compiled.ok()) Fail(std::string(compiled.status().message()));
  if (graphs->size() > 64) graphs->clear();
  return graphs->emplace(text, *std::move(compiled)).first->second;
}

// What ValidateDevice accepted must be usable by everything downstream without an error of the
// model's own: the occupancy calculator (a GPU model), the fit engine and Simulate on GraphFor's
// graph (with suggestions when `suggest`).
inline void ExerciseDevice(const DeviceModel& device, bool suggest) {
  const bool gpu = device.vendor() != "google";
  if (gpu && (FindSpaceOfKind(device, SHARED_MEMORY) != nullptr || FindSpaceOfKind(device, LDS) != nullptr)) {
    auto calculator = OccupancyCalculator::Create(device);
    if (!calculator.ok()) Fail(absl::StrCat("validated device refused by occupancy: ", calculator.status().message()));
    for (int64_t threads : {int64_t{1}, int64_t{128}, int64_t{device.limits().max_threads_per_block()}}) {
      OccupancyInput input;
      input.threads_per_block = threads;
      input.registers_per_thread = 64;
      input.dynamic_shared_bytes = 4096;
      OccupancyFigures figures;
      if (calculator->Compute(input, &figures).ok()) (void)calculator->Describe(input, figures);
    }
  }
  const CompiledGraph& graph = GraphFor(device);
  auto engine = FitEngine::Create(graph, device);
  if (!engine.ok()) Fail(absl::StrCat("validated device refused by the engine: ", engine.status().message()));
  FitEngine::Scratch scratch;
  scratch.keep_layout = true;
  FitResult fit;
  if (engine->Evaluate(graph.defaults, scratch, &fit).ok()) CheckLayout(*engine, scratch, fit);
  SimulateOptions options;
  options.suggest = suggest;
  (void)Simulate(graph, device, graph.defaults, options);
}

}  // namespace scratchsim::fuzz

#endif  // SCRATCHSIM_TESTS_FUZZ_FUZZ_UTIL_H_
