// libFuzzer target: the graph loader. The input is read as a text, a JSON and a binary KernelGraph
// (sim/proto_io, with the size check LoadGraph makes first), then compiled (CompileGraph) and bound.
// Text and JSON are also parsed in pieces of one byte (ParseProtoInPieces, as ReadGraphFile reads
// large files, its buffers and ops taken to the wire): the result must be the whole parse's.
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
      KernelGraph pieces;
      std::string wire;
      const absl::Status status =
          ParseProtoInPieces(contents, format, "fuzz.graph", 1, &pieces, [&wire](google::protobuf::Message* m) {
            if (m == nullptr) {
              wire.clear();
              return;
            }
            KernelGraph lists;
            lists.mutable_buffers()->Swap(static_cast<KernelGraph*>(m)->mutable_buffers());
            lists.mutable_ops()->Swap(static_cast<KernelGraph*>(m)->mutable_ops());
            lists.AppendToString(&wire);
          });
      if (status.ok() != graph.ok()) __builtin_trap();
      if (status.ok()) {
        KernelGraph lists;
        if (!lists.ParseFromString(wire)) __builtin_trap();
        pieces.mutable_buffers()->Swap(lists.mutable_buffers());
        pieces.mutable_ops()->Swap(lists.mutable_ops());
        if (pieces.SerializeAsString() != graph->SerializeAsString()) __builtin_trap();
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
