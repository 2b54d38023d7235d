// libFuzzer target: the planner's parameter handling. Each input line is a --param spec
// ("NAME=LO..HI:pow2"), or "set NAME=V" for a --set; the first byte picks a shipped graph. Specs
// are parsed (ParseParamSpec, BuildParamSpace), and spaces of at most 512 configurations are
// planned twice: the results must be the same.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "sim/graph.h"
#include "sim/planner/param_space.h"
#include "sim/planner/planner.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

using namespace scratchsim;

const CompiledGraph& Graph(int which) {
  static const std::vector<CompiledGraph>* graphs = [] {
    auto* out = new std::vector<CompiledGraph>();
    for (const char* file : {"gemm.pbtxt", "mlp.pbtxt", "ws_producer_consumer.pbtxt"}) {
      const std::string path = absl::StrCat(SCRATCHSIM_SOURCE_DIR, "/models/graphs/", file);
      auto graph = LoadGraph(path);
      if (!graph.ok()) fuzz::Fail(std::string(graph.status().message()));
      auto compiled = CompileGraph(*std::move(graph), path);
      if (!compiled.ok()) fuzz::Fail(std::string(compiled.status().message()));
      out->push_back(*std::move(compiled));
    }
    return out;
  }();
  return (*graphs)[which % graphs->size()];
}

void SameResult(const PlanResult& a, const PlanResult& b) {
  if (a.fitting != b.fitting || a.top.size() != b.top.size() || a.pruned.size() != b.pruned.size()) {
    fuzz::Fail("plan differs between two runs");
  }
  for (size_t i = 0; i < a.top.size(); ++i) {
    if (a.top[i].index != b.top[i].index) fuzz::Fail("ranking differs between two runs");
  }
  for (size_t i = 0; i < a.pruned.size(); ++i) {
    if (a.pruned[i].limit != b.pruned[i].limit || a.pruned[i].count != b.pruned[i].count) {
      fuzz::Fail("pruning differs between two runs");
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const CompiledGraph& graph = Graph(data[0]);
  const absl::string_view input(reinterpret_cast<const char*>(data + 1), size - 1);
  std::vector<std::string> params, sets;
  for (absl::string_view line : absl::StrSplit(input, '\n', absl::SkipEmpty())) {
    if (absl::ConsumePrefix(&line, "set ")) {
      sets.emplace_back(line);
    } else {
      params.emplace_back(line);
      (void)ParseParamSpec(line, graph);
    }
    if (params.size() + sets.size() > 16) break;
  }
  absl::StatusOr<std::vector<int64_t>> values = BindParameters(graph, sets);
  if (!values.ok()) return 0;
  absl::StatusOr<std::vector<ParamAxis>> axes = BuildParamSpace(graph, params, sets);
  if (!axes.ok()) return 0;
  uint64_t space = 1;
  for (const ParamAxis& axis : *axes) {
    space *= axis.values.size();
    if (space > 512) return 0;
  }
  const DeviceModel& device = fuzz::Device(fuzz::DeviceNames()[data[0] / 3 % 4]);
  PlanOptions options;
  options.top_k = 5;
  options.threads = 1;
  absl::StatusOr<PlanResult> one = Plan(graph, device, *axes, *values, options);
  absl::StatusOr<PlanResult> two = Plan(graph, device, *axes, *values, options);
  if (one.ok() != two.ok()) fuzz::Fail("Plan succeeds only once");
  if (one.ok()) SameResult(*one, *two);
  return 0;
}
