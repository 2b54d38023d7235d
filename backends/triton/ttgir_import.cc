// The import of a TTGIR module and its plan as a KernelGraph (docs/graph-format.md): names
// made safe for the graph, intervals as write/read op positions.
#include "backends/triton/ttgir_import.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "backends/triton/triton_mma.h"
#include "sim/dtype.h"
#include "sim/status_macros.h"

namespace scratchsim::triton {
namespace {

// "3x64x32xf16" -> {3, 64, 32} and "f16"; nullopt for anything else.
std::optional<std::pair<std::vector<int64_t>, std::string>> SplitShape(std::string_view shape) {
  std::vector<absl::string_view> parts = absl::StrSplit(absl::string_view(shape.data(), shape.size()), 'x');
  if (parts.size() < 2) return std::nullopt;
  std::vector<int64_t> dims;
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    int64_t v = 0;
    if (!absl::SimpleAtoi(parts[i], &v) || v <= 0) return std::nullopt;
    dims.push_back(v);
  }
  return std::make_pair(std::move(dims), std::string(parts.back()));
}

// Bytes as the graph states them: shape x dtype where that is Triton's size exactly (the slots
// as the pipeline parameter's expression for a ring), else raw bytes.
void SetSize(const SharedBuffer& b, const PipelinedBuffers* ring, Buffer* buf) {
  const auto shape = SplitShape(b.shape);
  // The memdesc element in the graph format's names (sim/dtype: "f8E4M3FN" is f8e4m3fn).
  const absl::StatusOr<std::string> dtype =
      shape ? CanonicalDtype(shape->second) : absl::InvalidArgumentError("no shape");
  const absl::StatusOr<int64_t> bits = dtype.ok() ? DtypeBits(*dtype) : dtype.status();
  if (bits.ok() && *bits % 8 == 0) {
    int64_t elements = 1;
    for (int64_t d : shape->first) elements *= d;
    if (elements * (*bits / 8) == b.buffer.size) {
      for (size_t d = 0; d < shape->first.size(); ++d) {
        buf->add_shape(d == 0 && ring ? ring->slots : absl::StrCat(shape->first[d]));
      }
      buf->set_dtype(*dtype);
      return;
    }
  }
  if (ring) {
    buf->set_size_bytes(absl::StrCat(ring->slots, " * ", b.buffer.size / ring->depth));
  } else {
    buf->set_size_bytes(absl::StrCat(b.buffer.size));
  }
}

}  // namespace

PipelinedBuffers FindPipelinedBuffers(const TtgirModule& module, const SharedMemoryPlan& plan) {
  PipelinedBuffers out;
  out.index.assign(plan.buffers.size(), false);
  // Results of local_allocs made empty (": () ->") that a ttg.memdesc_index takes apart: the
  // pipeliner's rings, one slot per stage in flight.
  std::set<int> indexed;
  TritonMma mma = TritonMma::kMmaV2;
  for (const TtgirOp& op : module.ops) {
    if (op.name == "ttg.memdesc_index" && !op.uses.empty()) indexed.insert(op.uses[0]);
    if (op.name == "ttng.warp_group_dot") mma = TritonMma::kWgmma;
    if (op.name == "ttng.tc_gen5_mma" || op.name == "ttng.tc_gen5_mma_scaled") mma = TritonMma::kTcgen05;
  }
  std::vector<int64_t> leading(plan.buffers.size(), 0);
  for (size_t b = 0; b < plan.buffers.size(); ++b) {
    const SharedBuffer& buffer = plan.buffers[b];
    if (buffer.kind != SharedBufferKind::kExplicit || buffer.op != "ttg.local_alloc" || buffer.op_index < 0) continue;
    const TtgirOp& op = module.ops[buffer.op_index];
    if (op.results.empty() || !indexed.contains(op.results[0]) || op.text.find(": () ->") == std::string_view::npos) continue;
    const auto shape = SplitShape(buffer.shape);
    if (!shape || shape->first.size() < 2 || shape->first[0] < 2 || buffer.buffer.size % shape->first[0] != 0) continue;
    leading[b] = shape->first[0];
    // Barrier rings (Nx1xi64) follow the data rings they guard; the depth is the data's.
    if (shape->second != "i64") out.depth = std::max(out.depth, shape->first[0]);
  }
  for (size_t b = 0; b < plan.buffers.size(); ++b) out.index[b] = out.depth > 1 && leading[b] == out.depth;
  const bool nvidia = module.target.starts_with("cuda:");
  // Triton's pipeliner keeps PipelineRingSlots(mma) slots per ring.
  if (nvidia) {
    const RingSlots rule = PipelineRingSlots(mma);
    out.parameter = "NUM_STAGES";
    out.slots = rule.Expression(out.parameter);
    out.default_value = rule.Stages(out.depth);
    out.doc = absl::StrCat("num_stages as the TTGIR's pipelined buffers tell: ", out.depth, " slots per pipelined load, ",
                           rule.lag == 0 ? "one per stage (wgmma/tcgen05 loop)" : "one fewer than the stages (cp.async loop)");
  } else {
    out.parameter = "PIPELINE_BUFFERS";
    out.slots = "PIPELINE_BUFFERS";
    out.default_value = out.depth;
    out.doc = "slots per pipelined load, as the TTGIR allocates them (num_stages lowers them; the AMD pipeliner's "
              "exact relation to num_stages is not modelled)";
  }
  return out;
}

absl::StatusOr<KernelGraph> ImportTtgir(const TtgirModule& module, const SharedMemoryPlan& plan,
                                        const TtgirSourceMap* sources) {
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
  const PipelinedBuffers pipelined = FindPipelinedBuffers(module, plan);
  if (pipelined.depth > 1) {
    Parameter* p = g.add_parameters();
    p->set_name(pipelined.parameter);
    p->set_default_value(pipelined.default_value);
    p->set_min(1);
    p->set_max(pipelined.default_value);
    p->set_doc(pipelined.doc);
  }
  // Positions: ops named after their number and, where the TTGIR locates it, the source line.
  std::set<uint64_t> points;
  for (const SharedBuffer& b : plan.buffers) {
    points.insert(b.buffer.start);
    if (b.buffer.end != std::numeric_limits<uint64_t>::max()) points.insert(b.buffer.end - 1);
  }
  uint64_t last_point = points.empty() ? 0 : *points.rbegin();
  std::map<uint64_t, Op*> ops;
  for (uint64_t p : points) {
    Op* op = g.add_ops();
    std::string name = absl::StrCat("op", p);
    if (p < plan.position_ops.size()) {
      const TtgirOp& at = module.ops[plan.position_ops[p]];
      op->set_kind(std::string(at.name));
      absl::StrAppend(&name, " ", at.name);
      if (sources) {
        if (std::optional<SourceLocation> where = sources->At(at.line)) absl::StrAppend(&name, " (", where->Describe(), ")");
      }
    }
    op->set_name(name);
    ops[p] = op;
  }
  int n = 0;
  for (const SharedBuffer& b : plan.buffers) {
    Buffer* buf = g.add_buffers();
    std::string name = absl::StrCat("b", n++, "_", b.kind == SharedBufferKind::kExplicit ? b.name.substr(1) : b.op);
    for (char& c : name) if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') c = '_';
    buf->set_name(name);
    SetSize(b, pipelined.index[&b - plan.buffers.data()] ? &pipelined : nullptr, buf);
    buf->set_alignment(absl::StrCat(b.buffer.alignment));
    buf->set_memory_space("smem");
    buf->set_role(b.kind == SharedBufferKind::kExplicit ? OPERAND : SCRATCH);
    buf->set_doc(absl::StrCat(b.name, b.shape.empty() ? "" : " " + b.shape, b.line ? absl::StrCat(" (line ", b.line, ")") : ""));
    if (sources && b.line > 0) {
      if (std::optional<SourceLocation> where = sources->At(b.line)) buf->set_source(where->Describe());
    }
    uint64_t end = b.buffer.end == std::numeric_limits<uint64_t>::max() ? last_point : b.buffer.end - 1;
    ops[b.buffer.start]->add_writes(name);
    ops[end]->add_reads(name);
  }
  return g;
}

absl::StatusOr<KernelGraph> ImportTtgir(std::string_view text, std::string_view origin) {
  ASSIGN_OR_RETURN(TtgirModule module, ParseTtgir(text, origin));
  ASSIGN_OR_RETURN(SharedMemoryPlan plan, PlanSharedMemory(module));
  const TtgirSourceMap sources = TtgirSourceMap::Read(text);
  return ImportTtgir(module, plan, &sources);
}

absl::StatusOr<KernelGraph> LoadTtgirFile(std::string_view path) {
  ASSIGN_OR_RETURN(const std::string text, ReadTtgirFile(path));
  return ImportTtgir(text, path);
}

}  // namespace scratchsim::triton
