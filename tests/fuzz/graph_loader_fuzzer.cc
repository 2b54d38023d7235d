// libFuzzer target: the graph loader. The input is read as a text, a JSON and a binary KernelGraph
// (sim/proto_io, with the size check LoadGraph makes first), then compiled (CompileGraph) and bound.
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "proto/graph.pb.h"
#include "sim/graph.h"
#include "sim/proto_io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace scratchsim;
  const absl::string_view contents(reinterpret_cast<const char*>(data), size);
  for (ProtoFormat format : {ProtoFormat::kText, ProtoFormat::kJson, ProtoFormat::kBinary}) {
    absl::StatusOr<KernelGraph> graph = ParseGraph(contents, format, "fuzz.graph");
    if (!graph.ok()) continue;
    absl::StatusOr<CompiledGraph> compiled = CompileGraph(*std::move(graph), "fuzz.graph");
    if (!compiled.ok()) continue;
    absl::StatusOr<std::vector<int64_t>> values = BindParameters(*compiled, {});
    if (!values.ok()) continue;
    for (int b = 0; b < static_cast<int>(compiled->buffers.size()) && b < 64; ++b) {
      (void)BufferBytes(*compiled, b, *values);
      (void)BufferCopies(*compiled, b, *values);
      (void)ShapeString(*compiled, b, *values);
      (void)EvaluateBufferDims(*compiled, b, *values);
    }
    (void)CheckRequirements(*compiled, *values);
  }
  return 0;
}
