// libFuzzer target: the graph loader. The input is read as a text, a JSON and a binary KernelGraph
// (sim/proto_io, with the size check LoadGraph makes first), then compiled (CompileGraph) and bound.
// Text and JSON are also parsed in pieces of one byte as ReadGraphFile parses large files
// (ParseGraphToWire, the buffers and ops on the wire): decoded, the result must be the whole parse's.
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
    if (format != ProtoFormat::kBinary) {
      absl::StatusOr<GraphFile> pieces = ParseGraphToWire(contents, format, "fuzz.graph", 1);
      if (pieces.ok() != graph.ok()) __builtin_trap();
      if (pieces.ok()) {
        if (!DecodeGraphWire(&*pieces, "fuzz.graph").ok()) __builtin_trap();
        if (pieces->graph.SerializeAsString() != graph->SerializeAsString()) __builtin_trap();
      }
    }
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
