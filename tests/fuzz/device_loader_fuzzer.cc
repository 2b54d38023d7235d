// libFuzzer target: the device loader. The input is a DeviceModel textproto; whatever
// ValidateDevice accepts must be usable by everything downstream without an error of the model's
// own: the occupancy calculator, the fit engine on a small graph, the planner's performance model.
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/text_format.h"
#include "proto/device.pb.h"
#include "sim/device.h"
#include "sim/engine.h"
#include "sim/graph.h"
#include "sim/occupancy.h"
#include "sim/proto_io.h"
#include "sim/simulator.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

using namespace scratchsim;

// One buffer in the device's first space, another pipelined in each space, two ops.
const CompiledGraph& GraphFor(const DeviceModel& device, std::string* storage_key) {
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
  *storage_key = text;
  auto it = graphs->find(text);
  if (it != graphs->end()) return it->second;
  KernelGraph graph;
  if (!google::protobuf::TextFormat::ParseFromString(text, &graph)) fuzz::Fail("test graph does not parse");
  auto compiled = CompileGraph(graph, "fuzz.pbtxt");
  if (!compiled.ok()) fuzz::Fail(std::string(compiled.status().message()));
  if (graphs->size() > 64) graphs->clear();
  return graphs->emplace(text, *std::move(compiled)).first->second;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view contents(reinterpret_cast<const char*>(data), size);
  DeviceModel device;
  if (!ParseProto(contents, ProtoFormat::kText, "fuzz.textproto", &device).ok()) return 0;
  if (!ValidateDevice(device, "fuzz.textproto").ok()) return 0;
  const bool gpu = device.vendor() != "google";
  if (gpu && (FindSpaceOfKind(device, SHARED_MEMORY) != nullptr || FindSpaceOfKind(device, LDS) != nullptr)) {
    // A validated GPU model always has an occupancy calculator.
    auto calculator = OccupancyCalculator::Create(device);
    if (!calculator.ok()) fuzz::Fail(absl::StrCat("validated device refused by occupancy: ", calculator.status().message()));
    for (int64_t threads : {int64_t{1}, int64_t{128}, int64_t{device.limits().max_threads_per_block()}}) {
      OccupancyInput input;
      input.threads_per_block = threads;
      input.registers_per_thread = 64;
      input.dynamic_shared_bytes = 4096;
      OccupancyFigures figures;
      if (calculator->Compute(input, &figures).ok()) (void)calculator->Describe(input, figures);
    }
  }
  std::string key;
  const CompiledGraph& graph = GraphFor(device, &key);
  auto engine = FitEngine::Create(graph, device);
  if (!engine.ok()) fuzz::Fail(absl::StrCat("validated device refused by the engine: ", engine.status().message()));
  FitEngine::Scratch scratch;
  scratch.keep_layout = true;
  FitResult fit;
  if (engine->Evaluate(graph.defaults, scratch, &fit).ok()) fuzz::CheckLayout(*engine, scratch, fit);
  SimulateOptions options;
  options.suggest = size % 2 == 0;
  (void)Simulate(graph, device, graph.defaults, options);
  return 0;
}
