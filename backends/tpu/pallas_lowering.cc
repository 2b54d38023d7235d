#include "backends/tpu/pallas_lowering.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/algorithm/container.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "backends/tpu/spill_model.h"
#include "backends/tpu/vector_cost.h"
#include "backends/tpu/vreg_replay.h"
#include "backends/tpu/tpu_tiling.h"
#include "sim/checked_math.h"
#include "sim/device.h"
#include "sim/dtype.h"
#include "sim/expr.h"
#include "sim/graph.h"
#include "sim/pipeline.h"
#include "sim/simulator.h"
#include "sim/status_macros.h"
#include "absl/strings/match.h"

namespace scratchsim {
namespace {

// What the lowering knows about each buffer it adds, beyond the Buffer message.
struct LoweredInfo {
  std::string kind;
  // HBM bytes this block moves per grid step, on average (an expression; in/out blocks only).
  std::string step_bytes;
};

struct Lowering {
  KernelGraph graph;
  std::map<std::string, LoweredInfo> info;  // by buffer name
  int64_t semaphores = 0;
  std::vector<std::string> notes;
};

class Evaluator {
 public:
  Evaluator(const KernelGraph& graph, absl::Span<const int64_t> values) {
    for (const Parameter& p : graph.parameters()) {
      symbols_.Add(p.name());
      values_.push_back(p.default_value());
    }
    for (size_t i = 0; i < values.size() && i < values_.size(); ++i) values_[i] = values[i];
    prefix_ = graph.name().empty() ? "graph" : graph.name();
  }

  absl::StatusOr<int64_t> Eval(absl::string_view text, absl::string_view field) const {
    absl::StatusOr<Expr> expr = Expr::Parse(text, symbols_);
    if (!expr.ok()) return Error(field, expr.status().message());
    absl::StatusOr<int64_t> value = expr->Evaluate(values_);
    if (!value.ok()) return Error(field, value.status().message());
    return *value;
  }

  absl::Status Error(absl::string_view field, absl::string_view problem) const {
    return absl::InvalidArgumentError(absl::StrCat(prefix_, ": ", field, ": ", problem));
  }

 private:
  SymbolTable symbols_;
  std::vector<int64_t> values_;
  std::string prefix_;
};

std::string Product(const std::vector<std::string>& factors) {
  if (factors.empty()) return "1";
  std::vector<std::string> wrapped;
  for (const std::string& f : factors) wrapped.push_back(absl::StrCat("(", f, ")"));
  return absl::StrJoin(wrapped, "*");
}

// Release numbers compared field by field ("0.10.2" < "0.10.10"); a field that is not a number
// (a "dev" suffix) counts as 0.
bool ReleaseBefore(absl::string_view a, absl::string_view b) {
  const std::vector<absl::string_view> x = absl::StrSplit(a, '.'), y = absl::StrSplit(b, '.');
  for (size_t i = 0; i < std::max(x.size(), y.size()); ++i) {
    int64_t u = 0, v = 0;
    if (i >= x.size() || !absl::SimpleAtoi(x[i], &u)) u = 0;
    if (i >= y.size() || !absl::SimpleAtoi(y[i], &v)) v = 0;
    if (u != v) return u < v;
  }
  return false;
}

// Whether the JAX a kernel was traced with may pipeline a block with Buffered(n > 2): jax 0.10.2
// refuses it (the libtpu oracle corpus), and so is taken to a JAX unknown; a later one is judged
// by its own rule.
bool PipelinesDeeperThanTwo(const PallasToolchain& traced_with) {
  return !traced_with.jax().empty() && ReleaseBefore(kSpillModelJax, traced_with.jax());
}

enum class SpaceChoice { kVmem, kSmem, kHbm, kSemaphore };

absl::StatusOr<SpaceChoice> ParseSpace(absl::string_view space, bool allow_semaphore) {
  if (space.empty() || space == "vmem" || space == "VMEM") return SpaceChoice::kVmem;
  if (space == "smem" || space == "SMEM" || space == "tpu_smem") return SpaceChoice::kSmem;
  if (space == "any" || space == "ANY" || space == "hbm" || space == "HBM") return SpaceChoice::kHbm;
  if (allow_semaphore && (space == "semaphore" || space == "SEMAPHORE" || space == "dma_semaphore" ||
                          space == "barrier_semaphore")) {
    return SpaceChoice::kSemaphore;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown memory_space '", space, "' (known: vmem, smem, any, hbm",
      allow_semaphore ? ", semaphore)" : ")"));
}

absl::Status AddName(std::set<std::string>* names, const std::string& name, const Evaluator& eval,
                     absl::string_view field) {
  if (!names->insert(name).second) return eval.Error(field, absl::StrCat("name '", name, "' is used twice"));
  return absl::OkStatus();
}

// Builds the buffer of one BlockSpec (or scalar-prefetch operand); returns false when the
// operand stays in HBM and gets no on-chip buffer.
// `steps_per_core` (an expression; empty where the grid is not split across TensorCores) caps a
// moving window's copies: a core that runs one grid step pipelines nothing.
absl::StatusOr<bool> LowerSpec(const PallasBlockSpec& spec, absl::string_view kind,
                               absl::string_view field, std::string name,
                               const std::vector<std::string>& grid, const std::string& steps_per_core,
                               bool is_prefetch, const DeviceModel& device, const PallasToolchain& traced_with,
                               const Evaluator& eval, Lowering* out) {
  absl::StatusOr<SpaceChoice> space = ParseSpace(spec.memory_space(), /*allow_semaphore=*/false);
  if (!space.ok()) return eval.Error(absl::StrCat(field, ".memory_space"), space.status().message());
  if (is_prefetch) space = SpaceChoice::kSmem;
  if (*space == SpaceChoice::kHbm) {
    out->notes.push_back(absl::StrCat(kind, " '", name, "' stays in HBM (memory_space ",
                                      spec.memory_space(), "): no VMEM block; copies the kernel "
                                      "makes by hand must be given as scratch_shapes"));
    return false;
  }
  if (spec.dtype().empty()) return eval.Error(absl::StrCat(field, ".dtype"), "is missing");
  absl::StatusOr<std::string> dtype = NormalizeTpuDtype(spec.dtype());
  if (!dtype.ok()) return eval.Error(absl::StrCat(field, ".dtype"), dtype.status().message());
  ASSIGN_OR_RETURN(int64_t bits, DtypeBits(*dtype));

  // Scalar prefetch operands are whole arrays; blocks are block_shape.
  const auto& dims = (is_prefetch && !spec.array_shape().empty()) ? spec.array_shape() : spec.block_shape();
  std::string dims_field = absl::StrCat(field, (is_prefetch && !spec.array_shape().empty()) ? ".array_shape" : ".block_shape");
  if (dims.empty() && !is_prefetch) {
    return eval.Error(dims_field, "is empty; Pallas TPU supports only blocks of rank >= 1");
  }
  for (int i = 0; i < dims.size(); ++i) {
    ASSIGN_OR_RETURN(int64_t extent, eval.Eval(dims[i], absl::StrCat(dims_field, "[", i, "]")));
    if (extent <= 0) {
      return eval.Error(absl::StrCat(dims_field, "[", i, "]"),
                        absl::StrCat("'", dims[i], "' is ", extent, "; block dimensions must be positive"));
    }
  }

  Buffer* buffer = out->graph.add_buffers();
  buffer->set_name(name);
  for (const std::string& d : dims) buffer->add_shape(d);
  for (const std::string& d : spec.array_shape()) buffer->add_array_shape(d);
  buffer->set_scope(INSTRUCTION);
  buffer->set_role(OPERAND);
  if (dims.empty()) {
    // A rank-0 scalar in SMEM occupies one 32-bit word.
    buffer->set_size_bytes(absl::StrCat(std::max<int64_t>(4, bits / 8)));
    buffer->clear_shape();
  } else {
    buffer->set_dtype(*dtype);
  }

  // Copies: Buffered(n) wins; otherwise Mosaic double-buffers unless the window never moves.
  std::string copies = "1";
  if (spec.has_buffer_count()) {
    if (spec.buffer_count() < 1) {
      return eval.Error(absl::StrCat(field, ".buffer_count"),
                        absl::StrCat("pipeline_mode Buffered(", spec.buffer_count(),
                                     "): the buffer count must be at least 1"));
    }
    copies = absl::StrCat(spec.buffer_count());
    if (spec.buffer_count() > 2 && !PipelinesDeeperThanTwo(traced_with)) {
      // jax 0.10.2's Pallas TPU lowering: "Only single (1) and double (2) buffering are
      // supported. Got 3." (LoweringException; libtpu oracle corpus). A later JAX is judged by
      // its own rule: n copies.
      Requirement* r = out->graph.add_requirements();
      r->set_expr(absl::StrCat(spec.buffer_count(), " <= 2"));
      r->set_doc(absl::StrCat("Pallas TPU (jax 0.10.2) pipelines a block with Buffered(1) or Buffered(2) only; '", name,
                              "' asks for Buffered(", spec.buffer_count(), ")"));
    }
  } else if (!is_prefetch && !grid.empty() && !spec.constant_index_map()) {
    std::vector<std::string> moving;
    if (spec.index_map_axes().empty()) {
      moving = grid;
    } else {
      for (int axis : spec.index_map_axes()) {
        if (axis < 0 || axis >= static_cast<int>(grid.size())) {
          return eval.Error(absl::StrCat(field, ".index_map_axes"),
                            absl::StrCat("axis ", axis, " is outside the grid of rank ", grid.size()));
        }
        moving.push_back(grid[axis]);
      }
    }
    copies = steps_per_core.empty() ? absl::StrCat("min(2, ", Product(moving), ")")
                                    : absl::StrCat("min(2, min(", Product(moving), ", ", steps_per_core, "))");
    ASSIGN_OR_RETURN(int64_t n, eval.Eval(copies, absl::StrCat(field, " (copies)")));
    (void)n;
  }
  buffer->set_copies(copies);

  if (*space == SpaceChoice::kVmem) {
    buffer->set_memory_space(kVmemSpace);
    // Pallas TPU takes a block whose last two dims are multiples of (8, 128), or the whole
    // array's: a requirement, so that no configuration the tools propose breaks it.
    if (!is_prefetch && spec.array_shape_size() == dims.size()) {
      const int rank = dims.size();
      for (int i = std::max(0, rank - 2); i < rank; ++i) {
        // Second-minor: 8 rows, 32 for 8-bit and 64 for 4-bit types (Mosaic E2002
        // CompileTimeMosaicMisalignedBlockAndTiling for a 16-row int8 block; 8-row bf16 blocks
        // compile on every generation, v7x included: libtpu oracle corpus).
        const int64_t multiple = i == rank - 1 ? 128 : bits <= 8 ? 8 * 32 / bits : 8;
        Requirement* r = out->graph.add_requirements();
        r->set_expr(absl::StrCat("(", dims[i], ") % ", multiple, " == 0 || (", dims[i], ") == (", spec.array_shape(i), ")"));
        r->set_doc(absl::StrCat("Pallas TPU: block '", name, "' dim ", i, " must be a multiple of ", multiple,
                                " or the whole array dim"));
      }
    }
    ASSIGN_OR_RETURN(std::vector<std::string> round_up,
                     RoundUpExprs(device, bits, dims.size(),
                                  dims.size() >= 2 ? dims[dims.size() - 2] : std::string("1")));
    for (const std::string& r : round_up) buffer->add_round_up(r);
    if (!is_prefetch && kind != "scratch") {
      // HBM traffic per grid step: the (tiled) block is copied when its index changes. The
      // grid runs its last axis fastest, so a block whose index map reads axes up to the
      // a-th changes prod(grid[0..a]) times in the whole grid: per step, its bytes divided
      // by the extents of the axes after a (all of them for a constant index map).
      std::vector<std::string> padded;
      const int rank = dims.size();
      for (int i = 0; i < rank; ++i) {
        const int r = i - (rank - static_cast<int>(round_up.size()));
        padded.push_back(r >= 0 ? absl::StrCat("round_up(", dims[i], ", ", round_up[r], ")") : dims[i]);
      }
      std::string bytes = absl::StrCat("(", Product(padded), ") * ", bits, " / 8");
      int last = static_cast<int>(grid.size()) - 1;  // an index map reading every axis
      if (spec.constant_index_map()) {
        last = -1;
      } else if (!spec.index_map_axes().empty()) {
        last = *std::max_element(spec.index_map_axes().begin(), spec.index_map_axes().end());
      }
      std::vector<std::string> after(grid.begin() + std::min<int>(last + 1, grid.size()), grid.end());
      out->info[name].step_bytes = after.empty() ? bytes : absl::StrCat("(", bytes, ") / (", Product(after), ")");
    }
  } else {
    buffer->set_memory_space(kTpuSmemSpace);
  }
  buffer->set_doc(absl::StrCat("pallas_call ", kind, " '", name, "'",
                               is_prefetch ? " (scalar prefetch, whole array in SMEM)" : " block"));
  out->info[name].kind = std::string(kind);
  return true;
}

// Lowers one graph's pallas_call to plain buffers, one op and the grid's loop, phase by phase:
// the grid, the BlockSpecs, the scratch shapes, what Mosaic adds for the body (its figures
// checked, spill slots, what it cannot compile, counted scratch, libtpu's SMEM), the planner's
// figures per grid step, then the op.
class PallasCallLowerer {
 public:
  PallasCallLowerer(const KernelGraph& graph, const DeviceModel& device, absl::Span<const int64_t> values)
      : graph_(graph), device_(device), call_(graph.pallas()), eval_(graph, values) {}

  absl::StatusOr<Lowering> Run() {
    if (!graph_.has_pallas()) return eval_.Error("pallas", "is missing");
    if (FindSpace(device_, kVmemSpace) == nullptr || FindSpace(device_, kTpuSmemSpace) == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          "device '", device_.name(), "' has no 'vmem' and 'tpu_smem' memory spaces; a pallas_call "
          "needs a TPU device model (tpu_v4, tpu_v5e, tpu_v5p, tpu_v6e, tpu_v7x)"));
    }
    out_.graph = graph_;
    out_.graph.clear_pallas();
    for (const Buffer& b : graph_.buffers()) names_.insert(b.name());
    op_name_ = !call_.name().empty() ? call_.name() : (!graph_.name().empty() ? graph_.name() : "pallas_call");

    RETURN_IF_ERROR(LowerGrid());
    RETURN_IF_ERROR(LowerSpecs(call_.scalar_prefetch(), "scalar_prefetch", "scalar prefetch", "prefetch", true, reads_));
    RETURN_IF_ERROR(LowerSpecs(call_.in_specs(), "in_specs", "input", "in", false, reads_));
    RETURN_IF_ERROR(LowerSpecs(call_.out_specs(), "out_specs", "output", "out", false, writes_));
    for (int i = 0; i < call_.scratch_shapes_size(); ++i) RETURN_IF_ERROR(LowerScratchShape(i));
    RETURN_IF_ERROR(AddRawBuffer(call_.spill_bytes_estimate(), "pallas.spill_bytes_estimate", "spills", SPILL, "spill",
                                 "register spills (user estimate; only the TPU compiler knows them)"));
    if (call_.has_body()) RETURN_IF_ERROR(CheckBodyFigures(call_.body()));
    if (call_.spill_bytes_estimate().empty() && call_.has_body()) {
      RETURN_IF_ERROR(AddSpillEstimate(call_.body()));
      AddUncompilableRequirements(call_.body());
    }
    RETURN_IF_ERROR(AddMosaicScratch());
    RETURN_IF_ERROR(AddRawBuffer(call_.internal_scratch_bytes(), "pallas.internal_scratch_bytes", "internal_scratch",
                                 SCRATCH, "internal scratch",
                                 "Mosaic internal scratch (CompilerParams.internal_scratch_in_bytes)"));
    const std::string mxu_flops = AddStepTrafficAndFlops();
    RETURN_IF_ERROR(AddIssueSlots(mxu_flops));
    AddOp();
    return std::move(out_);
  }

 private:
  absl::Status LowerGrid() {
    for (int i = 0; i < call_.grid_size(); ++i) {
      std::string field = absl::StrCat("pallas.grid[", i, "]");
      ASSIGN_OR_RETURN(int64_t extent, eval_.Eval(call_.grid(i), field));
      if (extent <= 0) {
        return eval_.Error(field, absl::StrCat("'", call_.grid(i), "' is ", extent, "; grid extents must be positive"));
      }
      grid_.push_back(call_.grid(i));
    }
    return SplitGridAcrossCores();
  }

  // Where libtpu splits the "parallel" grid axes across the chip's TensorCores
  // (TpuInfo.splits_parallel_grid_across_cores; tests/data/tpu/megacore_buffering_probe.txt), a
  // core runs cdiv(P, 2) x R steps, P the parallel axes' extents and R the others'.
  absl::Status SplitGridAcrossCores() {
    const auto& semantics = call_.dimension_semantics();
    if (semantics.empty()) {
      // Two steps could be one a core: say that the figure may count the windows twice.
      if (device_.tpu().splits_parallel_grid_across_cores() && !grid_.empty()) {
        ASSIGN_OR_RETURN(int64_t steps, eval_.Eval(Product(grid_), "pallas.grid (steps)"));
        if (steps == 2) {
          out_.notes.push_back("the grid's dimension_semantics are not recorded: its windows are counted double-buffered, "
                               "as libtpu buffers them unless a \"parallel\" axis leaves each TensorCore one of the two "
                               "grid steps, when it takes them single (trace the kernel again with scratchsim.pallas to "
                               "judge it exactly)");
        }
      }
      return absl::OkStatus();
    }
    if (semantics.size() != static_cast<int>(grid_.size())) {
      return eval_.Error("pallas.dimension_semantics", absl::StrCat("has ", semantics.size(), " entries for a grid of rank ",
                                                                    grid_.size()));
    }
    std::vector<std::string> parallel, rest;
    for (int i = 0; i < semantics.size(); ++i) {
      if (semantics[i] == "parallel") {
        parallel.push_back(grid_[i]);
      } else if (semantics[i] == "arbitrary") {
        rest.push_back(grid_[i]);
      } else if (semantics[i] == "core_parallel" || semantics[i] == "subcore_parallel") {
        // Not probed: counted as one core's axis, which keeps the windows' double buffering.
        rest.push_back(grid_[i]);
        out_.notes.push_back(absl::StrCat("grid axis ", i, " is ", semantics[i],
                                          ": how libtpu buffers windows over it is not modelled (counted double-buffered)"));
      } else {
        return eval_.Error(absl::StrCat("pallas.dimension_semantics[", i, "]"),
                           absl::StrCat("'", semantics[i],
                                        "' is not a dimension semantics (parallel, arbitrary, core_parallel, "
                                        "subcore_parallel)"));
      }
    }
    if (device_.tpu().splits_parallel_grid_across_cores() && !parallel.empty()) {
      steps_per_core_ = absl::StrCat("cdiv(", Product(parallel), ", 2)*", Product(rest));
    }
    return absl::OkStatus();
  }

  // One list of BlockSpecs (or scalar-prefetch operands); the names of those given an on-chip
  // buffer go `into` the op's reads or writes.
  absl::Status LowerSpecs(const google::protobuf::RepeatedPtrField<PallasBlockSpec>& specs, absl::string_view list,
                          absl::string_view kind, absl::string_view fallback, bool is_prefetch,
                          std::vector<std::string>& into) {
    for (int i = 0; i < specs.size(); ++i) {
      const PallasBlockSpec& spec = specs[i];
      std::string name = spec.name().empty() ? absl::StrCat(fallback, i) : spec.name();
      std::string field = absl::StrCat("pallas.", list, "[", i, "] '", name, "'");
      RETURN_IF_ERROR(AddName(&names_, name, eval_, field));
      ASSIGN_OR_RETURN(bool placed, LowerSpec(spec, kind, field, name, grid_, steps_per_core_, is_prefetch, device_,
                                              graph_.pallas().traced_with(), eval_, &out_));
      if (placed) into.push_back(name);
    }
    return absl::OkStatus();
  }

  // Scratch shape i: semaphores counted, a temporary of one grid step noted, the rest a block.
  absl::Status LowerScratchShape(int i) {
    const PallasScratch& s = call_.scratch_shapes(i);
    std::string name = s.name().empty() ? absl::StrCat("scratch", i) : s.name();
    std::string field = absl::StrCat("pallas.scratch_shapes[", i, "] '", name, "'");
    absl::StatusOr<SpaceChoice> space = ParseSpace(s.memory_space(), /*allow_semaphore=*/true);
    if (!space.ok()) return eval_.Error(absl::StrCat(field, ".memory_space"), space.status().message());
    if (*space == SpaceChoice::kHbm) {
      return eval_.Error(absl::StrCat(field, ".memory_space"), "scratch must be vmem, smem or semaphore");
    }
    int64_t elements = 1;
    for (int d = 0; d < s.shape_size(); ++d) {
      ASSIGN_OR_RETURN(int64_t extent, eval_.Eval(s.shape(d), absl::StrCat(field, ".shape[", d, "]")));
      if (extent <= 0) {
        return eval_.Error(absl::StrCat(field, ".shape[", d, "]"),
                           absl::StrCat("'", s.shape(d), "' is ", extent, "; scratch dimensions must be positive"));
      }
      elements = CheckedMul(elements, extent).value_or(-1);
      if (elements < 0) return eval_.Error(field, "element count overflows int64");
    }
    if (*space == SpaceChoice::kSemaphore) {
      // Semaphores live in their own memory, not VMEM or SMEM: counted, not placed.
      out_.semaphores += elements;
      return absl::OkStatus();
    }
    if (absl::c_linear_search(call_.body().temporary_scratch(), name)) {
      // Written whole and read back within one grid step: Mosaic forwards the value and
      // allocates nothing (the gather_prefetch kernels of the libtpu oracle corpus).
      out_.notes.push_back(absl::StrCat("scratch '", name, "' is a temporary of one grid step (pallas.body.temporary_scratch): "
                                        "Mosaic allocates no VMEM for it"));
      return absl::OkStatus();
    }
    RETURN_IF_ERROR(AddName(&names_, name, eval_, field));
    PallasBlockSpec as_spec;
    as_spec.set_dtype(s.dtype());
    for (const std::string& d : s.shape()) as_spec.add_block_shape(d);
    as_spec.set_memory_space(s.memory_space());
    as_spec.set_buffer_count(1);
    ASSIGN_OR_RETURN(bool placed, LowerSpec(as_spec, "scratch", field, name, grid_, "", false, device_,
                                            graph_.pallas().traced_with(), eval_, &out_));
    if (placed) {
      Buffer& b = out_.graph.mutable_buffers()->at(out_.graph.buffers_size() - 1);
      b.set_role(SCRATCH);
      b.set_doc(absl::StrCat("pallas_call scratch_shapes '", name, "'"));
      scratch_.push_back(name);
    }
    return absl::OkStatus();
  }

  // A VMEM buffer of `text` bytes the graph gives itself (nothing where it is empty or 0).
  absl::Status AddRawBuffer(absl::string_view text, absl::string_view field, absl::string_view suffix, BufferRole role,
                            absl::string_view kind, absl::string_view doc) {
    if (text.empty()) return absl::OkStatus();
    ASSIGN_OR_RETURN(int64_t bytes, eval_.Eval(text, field));
    if (bytes < 0) return eval_.Error(field, absl::StrCat("'", text, "' is ", bytes, "; must be >= 0"));
    if (bytes == 0) return absl::OkStatus();
    std::string name = absl::StrCat(op_name_, ".", suffix);
    RETURN_IF_ERROR(AddName(&names_, name, eval_, field));
    Buffer* b = out_.graph.add_buffers();
    b->set_name(name);
    b->set_size_bytes(std::string(text));
    b->set_memory_space(kVmemSpace);
    b->set_scope(INSTRUCTION);
    b->set_role(role);
    b->set_doc(std::string(doc));
    out_.info[name] = LoweredInfo{std::string(kind), ""};
    scratch_.push_back(name);
    return absl::OkStatus();
  }

  // A body figure, where given, must evaluate to a count of at least 0.
  absl::Status CheckFigure(const std::string& figure, const std::string& field) const {
    if (figure.empty()) return absl::OkStatus();
    ASSIGN_OR_RETURN(int64_t value, eval_.Eval(figure, absl::StrCat("pallas.body.", field)));
    if (value < 0) {
      return eval_.Error(absl::StrCat("pallas.body.", field), absl::StrCat("'", figure, "' is ", value, "; must be >= 0"));
    }
    return absl::OkStatus();
  }

  // A dot's m, n, k and a transpose's rows and cols are its shape: required.
  absl::Status CheckDim(const std::string& figure, const std::string& field) const {
    if (figure.empty()) return eval_.Error(absl::StrCat("pallas.body.", field), "missing (an expression, the dimension)");
    return CheckFigure(figure, field);
  }

  // Values by their shape (a transpose's operand, a narrow load): rows and cols required, a TPU dtype.
  absl::Status CheckValues(const google::protobuf::RepeatedPtrField<PallasValue>& values, const char* field) const {
    for (int i = 0; i < values.size(); ++i) {
      const PallasValue& v = values[i];
      const std::string at = absl::StrCat(field, "[", i, "]");
      for (const auto& [figure, name] :
           {std::pair<const std::string&, const char*>{v.rows(), "rows"}, {v.cols(), "cols"}}) {
        RETURN_IF_ERROR(CheckDim(figure, absl::StrCat(at, ".", name)));
      }
      RETURN_IF_ERROR(CheckFigure(v.count(), absl::StrCat(at, ".count")));
      if (!NormalizeTpuDtype(v.dtype()).ok()) {
        return eval_.Error(absl::StrCat("pallas.body.", at, ".dtype"),
                           absl::StrCat("'", v.dtype(), "' is not a TPU dtype (bf16, f16, int8, fp8, int4, ...)"));
      }
    }
    return absl::OkStatus();
  }

  // The body's figures feed the spill estimate and the counted scratch: each is checked here, so
  // that a bad one is named as the graph spells it, whatever uses it.
  absl::Status CheckBodyFigures(const PallasBody& body) const {
    for (const auto& [figure, field] :
         {std::pair<const std::string&, const char*>{body.reduction_live_bytes(), "reduction_live_bytes"},
          {body.reduction_input_bytes(), "reduction_input_bytes"},
          {body.reduction_output_bytes(), "reduction_output_bytes"},
          {body.dot_bytes(), "dot_bytes"},
          {body.packed_dot_bytes(), "packed_dot_bytes"},
          {body.transpose_bytes(), "transpose_bytes"},
          {body.packed_transpose_bytes(), "packed_transpose_bytes"},
          {body.row_broadcast_bytes(), "row_broadcast_bytes"}}) {
      RETURN_IF_ERROR(CheckFigure(figure, field));
    }
    for (int i = 0; i < body.dots_size(); ++i) {
      const PallasDot& d = body.dots(i);
      for (const auto& [figure, name] :
           {std::pair<const std::string&, const char*>{d.m(), "m"}, {d.n(), "n"}, {d.k(), "k"}}) {
        RETURN_IF_ERROR(CheckDim(figure, absl::StrCat("dots[", i, "].", name)));
      }
      RETURN_IF_ERROR(CheckFigure(d.count(), absl::StrCat("dots[", i, "].count")));  // empty: 1
    }
    RETURN_IF_ERROR(CheckValues(body.transposes(), "transposes"));
    return CheckValues(body.unaligned_narrow_loads(), "unaligned_narrow_loads");
  }

  // A buffer Mosaic adds for the body (spill slots, counted scratch): an estimate (Buffer.estimate,
  // judged at its central size and both bounds) unless its bounds are the same expression.
  absl::Status AddBodyBuffer(const std::string& suffix, const std::string& central, const std::string& low,
                             const std::string& high, BufferRole role, const std::string& basis, const std::string& doc,
                             const char* space) {
    std::string name = absl::StrCat(op_name_, ".", suffix);
    RETURN_IF_ERROR(AddName(&names_, name, eval_, "pallas.body"));
    Buffer* b = out_.graph.add_buffers();
    b->set_name(name);
    b->set_size_bytes(central);
    b->set_memory_space(space);
    b->set_scope(INSTRUCTION);
    b->set_role(role);
    if (low != high) {
      b->mutable_estimate()->set_low_bytes(low);
      b->mutable_estimate()->set_high_bytes(high);
      b->mutable_estimate()->set_basis(basis);
    }
    b->set_doc(doc);
    out_.info[name] = LoweredInfo{PallasAllocationKind(graph_, name), ""};
    scratch_.push_back(name);
    return absl::OkStatus();
  }

  // Mosaic's register spill slots, estimated from what the body keeps in vector registers: an
  // estimated buffer, judged by the engine at its central size and at both bounds.
  absl::Status AddSpillEstimate(const PallasBody& body) {
    // The body's program is replayed once: a malformed one is refused here, by field.
    const absl::StatusOr<VregReplay> replay = ReplayVregs(body, device_);
    if (!replay.ok()) return eval_.Error("pallas.body", replay.status().message());
    const SpillEstimate spills = EstimateSpills(body, device_, &*replay);
    if (!spills.unvalidated.empty()) {
      out_.notes.push_back(absl::StrCat("register spills: the ", BodyClassName(spills.body_class),
                                        " band is not validated for this body (", spills.unvalidated,
                                        "), so it is widened to what the vreg replay proves; a verdict it leaves "
                                        "uncertain is AT RISK"));
    }
    if (spills.high == "0") {
      out_.notes.push_back(absl::StrCat("register spills: none estimated (", spills.basis, ")"));
      return absl::OkStatus();
    }
    return AddBodyBuffer("spills", spills.central, spills.low, spills.high, SPILL, spills.basis,
                         absl::StrCat("Mosaic register allocator spill slots (estimated: ", spills.basis, ")"), kVmemSpace);
  }

  // What Mosaic (jax 0.10.2) cannot compile, whatever the block sizes: requirements, so that
  // simulate refuses the kernel (exit 2) and the planner prunes it as invalid.
  void AddUncompilableRequirements(const PallasBody& body) {
    for (const std::string& dtype : body.arithmetic_dtypes()) {
      absl::StatusOr<std::string> canonical = NormalizeTpuDtype(dtype);
      absl::StatusOr<int64_t> bits = canonical.ok() ? DtypeBits(*canonical) : absl::StatusOr<int64_t>(32);
      if (bits.ok() && *bits < 16 && *canonical != "i1") {  // i1: masks (bool), not 8-bit arithmetic
        Requirement* r = out_.graph.add_requirements();
        r->set_expr(absl::StrCat(*bits, " >= 16"));
        r->set_doc(absl::StrCat("Mosaic (jax 0.10.2) has no vector arithmetic on ", *bits, "-bit values (the body computes in ",
                                dtype, "): 'Only vector<i16> and vector<i32> are supported'; cast to a 16- or 32-bit type"));
        break;
      }
    }
    const int generation = device_.tpu().generation();
    for (const std::string& dtype : body.dot_dtypes()) {
      absl::StatusOr<std::string> canonical = NormalizeTpuDtype(dtype);
      if (canonical.ok() && (*canonical == "i8" || *canonical == "u8" || *canonical == "i4") && generation > 0 &&
          generation < 5) {
        Requirement* r = out_.graph.add_requirements();
        r->set_expr(absl::StrCat(generation, " >= 5"));
        r->set_doc(absl::StrCat("the MXU of TPU v", generation, " has no integer matmul (Mosaic E2001 "
                                "CompileTimeMosaicUnsupportedRhsType for ", dtype, " operands); v5e and later have one"));
        break;
      }
    }
  }

  // What else Mosaic allocates for the body that the scoped limit counts (spill_model.h), and
  // libtpu's own SMEM.
  absl::Status AddMosaicScratch() {
    if (call_.has_body()) {
      for (const CountedScratch& c : CountedMosaicScratch(call_.body(), device_, !call_.internal_scratch_bytes().empty())) {
        RETURN_IF_ERROR(AddBodyBuffer(c.suffix, c.central, c.low, c.high, SCRATCH, c.doc, c.doc, kVmemSpace));
      }
    }
    // libtpu keeps some SMEM of its own beside the kernel's (grid and DMA state;
    // tests/data/tpu/usable_vmem_probe.txt). Where the kernel puts anything in SMEM (scalar
    // prefetch, SMEM scratch) it is an estimate beside them, so that a kernel within 2 KiB of the
    // SMEM is AT RISK rather than FITS; a kernel without SMEM buffers cannot come near.
    if (absl::c_any_of(out_.graph.buffers(), [](const Buffer& b) { return b.memory_space() == kTpuSmemSpace; })) {
      const std::string basis =
          "libtpu's own SMEM: 144 B to 1.9 KiB in tests/data/tpu/usable_vmem_probe.txt, central its median";
      RETURN_IF_ERROR(AddBodyBuffer("libtpu_smem", "1126", "144", "2048", SCRATCH, basis, basis, kTpuSmemSpace));
    }
    return absl::OkStatus();
  }

  // The planner's figures per grid step (each step is a "block" of the launch grid), unless the
  // graph gives its own: the HBM traffic of the blocks whose index changes, and the body's dots:
  // their flops, and how much of the MXU they use (the systolic array holds a K x N tile of the
  // right operand, mxu_size x mxu_size per generation: a K or N below a multiple of it wastes
  // the rest; the left operand's rows stream). Returns the dots' flops padded to the MXU's edge.
  std::string AddStepTrafficAndFlops() {
    std::vector<std::string> traffic;
    for (const auto& names : {reads_, writes_}) {
      for (const std::string& n : names) {
        auto it = out_.info.find(n);
        if (it != out_.info.end() && !it->second.step_bytes.empty()) {
          traffic.push_back(absl::StrCat("(", it->second.step_bytes, ")"));
        }
      }
    }
    if (graph_.global_bytes().empty() && !traffic.empty()) out_.graph.set_global_bytes(absl::StrJoin(traffic, " + "));
    if (call_.body().dots_size() == 0) return "";
    const int64_t mxu = MxuEdge(device_);
    std::vector<std::string> flops, padded;
    for (const PallasDot& d : call_.body().dots()) {
      const std::string count = d.count().empty() ? "1" : d.count();
      flops.push_back(absl::StrCat("2 * (", d.m(), ") * (", d.n(), ") * (", d.k(), ") * (", count, ")"));
      padded.push_back(absl::StrCat("2 * (", d.m(), ") * round_up(", d.n(), ", ", mxu, ") * round_up(", d.k(), ", ", mxu,
                                    ") * (", count, ")"));
    }
    const std::string mxu_flops = absl::StrJoin(padded, " + ");
    if (graph_.flops().empty()) {
      const std::string f = absl::StrJoin(flops, " + ");
      out_.graph.set_flops(f);
      if (graph_.peak_percent().empty()) {
        out_.graph.set_peak_percent(absl::StrCat("max(1, 100 * (", f, ") / (", mxu_flops, "))"));
      }
    }
    if (out_.graph.compute_dtype().empty()) {
      // The MXU's rate: int8 where every dot is int8 and the generation lists an int8 peak, else
      // bf16 (the device models list no f32 peak; f32 dots are ranked at the bf16 rate).
      bool all_i8 = call_.body().dot_dtypes_size() > 0;
      for (const std::string& t : call_.body().dot_dtypes()) all_i8 = all_i8 && (t == "i8" || t == "int8");
      bool i8_peak = false;
      for (const PeakThroughput& peak : device_.performance().peak()) i8_peak = i8_peak || peak.dtype() == "i8";
      out_.graph.set_compute_dtype(all_i8 && i8_peak ? "i8" : "bf16");
    }
    return mxu_flops;
  }

  // What a grid step issues, in VLIW bundles (graph issue_slots, one a cycle: the planner takes
  // the longer of them at the clock and the flops at the peak), where the body counts its vector
  // work: its vector bundles and its dots' MXU cycles (vector_cost.h).
  absl::Status AddIssueSlots(const std::string& mxu_flops) {
    for (const VectorFigure& f : VectorFigures()) {
      RETURN_IF_ERROR(CheckFigure((call_.body().vector().*f.figure)(), absl::StrCat("vector.", f.field)));
    }
    if (graph_.issue_slots().empty() && call_.body().has_vector()) {
      const StepBundles step = EstimateStepBundles(call_.body().vector(), mxu_flops, out_.graph.compute_dtype(), device_);
      out_.graph.set_issue_slots(step.bundles);
      out_.notes.push_back(absl::StrCat("grid step compute: VLIW bundles estimated from ", step.basis));
    }
    return absl::OkStatus();
  }

  // The pallas_call op over every buffer lowered, and the grid as its loop and the launch.
  void AddOp() {
    Op* op = out_.graph.add_ops();
    op->set_name(op_name_);
    op->set_kind("pallas_call");
    for (const std::string& r : reads_) op->add_reads(r);
    for (const std::string& w : writes_) op->add_writes(w);
    for (const std::string& s : scratch_) op->add_scratch(s);
    if (!grid_.empty()) {
      // The grid is the launch: the planner counts its steps.
      if (out_.graph.launch().grid().empty()) {
        for (const std::string& g : grid_) out_.graph.mutable_launch()->add_grid(g);
      }
      Loop* loop = out_.graph.add_loops();
      loop->set_name(absl::StrCat(op_name_, ".grid"));
      loop->set_trip_count(Product(grid_));
      // Mosaic's pipeline fetches step i + 1's blocks while step i computes (double buffering):
      // the planner overlaps the traffic with the math.
      loop->set_num_stages(absl::StrCat("min(2, ", Product(grid_), ")"));
      op->set_loop(loop->name());
    }
    if (out_.semaphores > 0) {
      out_.notes.push_back(absl::StrCat(out_.semaphores, " semaphore(s) in scratch_shapes: semaphore "
                                        "memory is separate from VMEM/SMEM and not placed"));
    }
  }

  const KernelGraph& graph_;
  const DeviceModel& device_;
  const PallasCall& call_;
  const Evaluator eval_;
  Lowering out_;
  std::set<std::string> names_;  // every buffer name, the graph's and those lowered
  std::vector<std::string> grid_;
  std::string steps_per_core_;  // a TensorCore's grid steps where libtpu splits the grid; empty: not split
  std::vector<std::string> reads_, writes_, scratch_;  // the op's buffers
  std::string op_name_;
};

absl::StatusOr<Lowering> Lower(const KernelGraph& graph, const DeviceModel& device, absl::Span<const int64_t> values) {
  return PallasCallLowerer(graph, device, values).Run();
}

}  // namespace

absl::StatusOr<PallasLowering> LowerPallas(const KernelGraph& graph, const DeviceModel& device) {
  ASSIGN_OR_RETURN(Lowering lowering, Lower(graph, device, {}));
  PallasLowering out;
  out.graph = std::move(lowering.graph);
  out.notes = std::move(lowering.notes);
  out.semaphores = lowering.semaphores;
  return out;
}

absl::StatusOr<KernelGraph> LowerPallasCall(const KernelGraph& graph, const DeviceModel& device) {
  ASSIGN_OR_RETURN(PallasLowering lowering, LowerPallas(graph, device));
  return std::move(lowering.graph);
}

std::string PallasAllocationKind(const KernelGraph& source, absl::string_view name) {
  const PallasCall& call = source.pallas();
  auto named = [&](const auto& list, absl::string_view fallback) {
    for (int i = 0; i < list.size(); ++i) {
      if ((list[i].name().empty() ? absl::StrCat(fallback, i) : list[i].name()) == name) return true;
    }
    return false;
  };
  if (named(call.in_specs(), "in")) return "input";
  if (named(call.out_specs(), "out")) return "output";
  if (named(call.scalar_prefetch(), "prefetch")) return "scalar prefetch";
  if (named(call.scratch_shapes(), "scratch")) return "scratch";
  if (absl::EndsWith(name, ".spills")) return "spill";
  if (absl::EndsWith(name, ".internal_scratch")) return "internal scratch";
  if (absl::EndsWith(name, ".sublane_replication")) return "sublane replication";
  if (absl::EndsWith(name, ".pack_temporary")) return "packing temporary";
  if (absl::EndsWith(name, ".libtpu_smem")) return "libtpu SMEM";
  return "graph buffer";
}

absl::StatusOr<PallasFootprint> ComputePallasFootprint(const KernelGraph& graph, const DeviceModel& device,
                                                       absl::Span<const int64_t> values) {
  ASSIGN_OR_RETURN(PallasLowering lowering, LowerPallas(graph, device));
  ASSIGN_OR_RETURN(CompiledKernel kernel, CompileGraphKernel(std::move(lowering.graph), graph.name()));
  const CompiledGraph& compiled = kernel.compiled;
  std::vector<int64_t> bound = kernel.values;
  for (size_t i = 0; i < values.size() && i < bound.size(); ++i) bound[i] = values[i];
  SimulateOptions options;
  options.suggest = false;
  options.keep_placements = false;
  ASSIGN_OR_RETURN(FitEngine engine, FitEngine::Create(compiled, device));
  ASSIGN_OR_RETURN(Report report, Explain(engine, bound, options));
  return FootprintOf(graph, report, lowering.notes, lowering.semaphores, device);
}

PallasFootprint FootprintOf(const KernelGraph& source, const Report& report, const std::vector<std::string>& notes,
                            int64_t semaphores, const DeviceModel& device) {
  PallasFootprint fp;
  fp.notes = notes;
  fp.semaphores = semaphores;
  if (const MemorySpace* vmem = FindSpace(device, kVmemSpace)) fp.vmem_capacity_bytes = UsableBytesPerCore(*vmem);
  if (const MemorySpace* smem = FindSpace(device, kTpuSmemSpace)) fp.smem_capacity_bytes = smem->capacity_per_core_bytes();
  if (const MemorySpace* vmem = FindSpace(device, kVmemSpace)) fp.scoped_limit_bytes = vmem->default_scoped_limit_bytes();
  fp.scoped_limit_source = "default scoped limit";
  for (const SpaceReport& space : report.spaces()) {
    const bool vmem = space.space() == kVmemSpace;
    if (vmem) {
      fp.scoped_vmem_bytes = space.instruction_scoped_bytes();
      fp.program_vmem_bytes = space.program_scoped_bytes();
      fp.scoped_limit_bytes = space.limit_bytes();
      fp.scoped_limit_source = space.limit_name();
      if (space.has_estimates()) {
        fp.has_estimates = true;
        fp.scoped_vmem_bytes_low = space.instruction_scoped_bytes_low();
        fp.scoped_vmem_bytes_high = space.instruction_scoped_bytes_high();
        fp.estimated_bytes = space.estimated_bytes();
      }
    } else if (space.space() == kTpuSmemSpace) {
      fp.smem_bytes = space.peak_bytes();
    } else {
      continue;
    }
    for (const BufferShare& share : space.live_at_peak()) {
      PallasAllocation a;
      a.name = share.buffer();
      a.kind = PallasAllocationKind(source, share.buffer());
      a.space = space.space();
      a.dtype = share.dtype();
      a.shape.assign(share.dims().begin(), share.dims().end());
      a.padded_shape.assign(share.padded_dims().begin(), share.padded_dims().end());
      a.copies = share.copies();
      a.bytes_per_copy = share.bytes_per_copy();
      a.total_bytes = share.total_bytes();
      a.granule_padding_bytes = share.granule_padding_bytes();
      a.estimated = share.estimated();
      a.bytes_per_copy_low = share.bytes_per_copy_low();
      a.bytes_per_copy_high = share.bytes_per_copy_high();
      a.basis = share.estimate_basis();
      fp.allocations.push_back(std::move(a));
    }
  }
  return fp;
}

}  // namespace scratchsim
