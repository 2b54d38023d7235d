// libFuzzer target: the TTGIR front end on a buffer. The input is a .ttgir text: parsed
// (ParseTtgir), planned with Triton's allocation (PlanSharedMemory), imported as a graph
// (ImportTtgir), compiled and simulated on the module's target device.
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "backends/triton/ttgir_allocation.h"
#include "backends/triton/ttgir_import.h"
#include "backends/triton/ttgir_parser.h"
#include "sim/engine.h"
#include "sim/graph.h"
#include "sim/simulator.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace scratchsim;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<triton::TtgirModule> module = triton::ParseTtgir(text, "fuzz.ttgir");
  if (!module.ok()) return 0;
  absl::StatusOr<triton::SharedMemoryPlan> plan = triton::PlanSharedMemory(*module);
  if (!plan.ok()) return 0;
  absl::StatusOr<KernelGraph> graph = triton::ImportTtgir(*module, *plan);
  if (!graph.ok()) return 0;
  absl::StatusOr<CompiledGraph> compiled = CompileGraph(*std::move(graph), "fuzz.ttgir");
  if (!compiled.ok()) return 0;
  const char* device_name = absl::StrContains(module->target, "hip") ? "mi300x"
                            : absl::StrContains(module->target, "100") ? "b200"
                                                                       : "h100";
  SimulateOptions options;
  options.suggest = false;
  (void)SimulateOnce(*compiled, fuzz::Device(device_name), compiled->defaults, options);
  return 0;
}
