// The import of a TTGIR module and its plan as a KernelGraph (docs/graph-format.md): names
// made safe for the graph, intervals as write/read op positions.
#include "backends/triton/ttgir_import.h"

#include <cctype>
#include <limits>
#include <map>
#include <set>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "sim/status_macros.h"

namespace scratchsim::triton {

absl::StatusOr<KernelGraph> ImportTtgir(const TtgirModule& module, const SharedMemoryPlan& plan) {
  if (plan.kernel != module.function) {
    return absl::InvalidArgumentError(absl::StrCat(module.origin, ": plan of kernel '", plan.kernel,
                                                   "' given for module of kernel '", module.function, "'"));
  }
  const std::string& origin = module.origin;
  KernelGraph g;
  g.set_name(plan.kernel);
  g.set_doc(absl::StrCat("Imported from ", origin, " (Triton TTGIR, target ", plan.target,
                         "). Triton's allocator places these buffers in ",
                         plan.allocation.shared, " bytes (metadata.shared). Allocation rules of Triton ",
                         plan.release == TritonRelease::kUnknown ? "3.6 and 3.9" : TritonReleaseName(plan.release),
                         " (", plan.release_source, ")."));
  g.mutable_launch()->set_num_warps(absl::StrCat(plan.num_warps));
  if (plan.total_warps > plan.num_warps) {
    Partition* p = g.mutable_launch()->add_partitions();
    p->set_name("warp_specialize partitions");
    p->set_warps(absl::StrCat(plan.total_warps - plan.num_warps));
  }
  // Positions: ops named p<N>, in order, so intervals map onto op positions.
  std::set<uint64_t> points;
  for (const SharedBuffer& b : plan.buffers) {
    points.insert(b.buffer.start);
    if (b.buffer.end != std::numeric_limits<uint64_t>::max()) points.insert(b.buffer.end - 1);
  }
  uint64_t last_point = points.empty() ? 0 : *points.rbegin();
  std::map<uint64_t, Op*> ops;
  for (uint64_t p : points) {
    Op* op = g.add_ops();
    op->set_name(absl::StrCat("op", p));
    ops[p] = op;
  }
  int n = 0;
  for (const SharedBuffer& b : plan.buffers) {
    Buffer* buf = g.add_buffers();
    std::string name = absl::StrCat("b", n++, "_", b.kind == SharedBufferKind::kExplicit ? b.name.substr(1) : b.op);
    for (char& c : name) if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') c = '_';
    buf->set_name(name);
    buf->set_size_bytes(absl::StrCat(b.buffer.size));
    buf->set_alignment(absl::StrCat(b.buffer.alignment));
    buf->set_memory_space("smem");
    buf->set_role(b.kind == SharedBufferKind::kExplicit ? OPERAND : SCRATCH);
    buf->set_doc(absl::StrCat(b.name, b.shape.empty() ? "" : " " + b.shape, b.line ? absl::StrCat(" (line ", b.line, ")") : ""));
    uint64_t end = b.buffer.end == std::numeric_limits<uint64_t>::max() ? last_point : b.buffer.end - 1;
    ops[b.buffer.start]->add_writes(name);
    ops[end]->add_reads(name);
  }
  return g;
}

absl::StatusOr<KernelGraph> ImportTtgir(std::string_view text, std::string_view origin) {
  ASSIGN_OR_RETURN(TtgirModule module, ParseTtgir(text, origin));
  ASSIGN_OR_RETURN(SharedMemoryPlan plan, PlanSharedMemory(module));
  return ImportTtgir(module, plan);
}

absl::StatusOr<KernelGraph> LoadTtgirFile(std::string_view path) {
  ASSIGN_OR_RETURN(const std::string text, ReadTtgirFile(path));
  return ImportTtgir(text, path);
}

}  // namespace scratchsim::triton
