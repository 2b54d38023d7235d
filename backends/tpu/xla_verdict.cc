#include "backends/tpu/xla_verdict.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "backends/tpu/tpu_tiling.h"
#include "sim/device.h"
#include "sim/dtype.h"
#include "sim/expr.h"
#include "sim/status_macros.h"

namespace scratchsim {
namespace {

std::string Fixed(double value, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", decimals, value);
  return buf;
}

std::string DimsString(const std::vector<int64_t>& dims) { return absl::StrJoin(dims, ","); }

SymbolTable Symbols(const KernelGraph& graph) {
  SymbolTable symbols;
  for (const Parameter& p : graph.parameters()) symbols.Add(p.name());
  return symbols;
}

std::vector<int64_t> Defaults(const KernelGraph& graph) {
  std::vector<int64_t> values;
  for (const Parameter& p : graph.parameters()) values.push_back(p.default_value());
  return values;
}

// Evaluates an expression list (a shape) with `values`; nullopt on any error.
std::optional<std::vector<int64_t>> EvalDims(const google::protobuf::RepeatedPtrField<std::string>& dims,
                                             const SymbolTable& symbols,
                                             const std::vector<int64_t>& values) {
  std::vector<int64_t> out;
  for (const std::string& d : dims) {
    absl::StatusOr<Expr> e = Expr::Parse(d, symbols);
    if (!e.ok()) return std::nullopt;
    absl::StatusOr<int64_t> v = e->Evaluate(values);
    if (!v.ok()) return std::nullopt;
    out.push_back(*v);
  }
  return out;
}

std::string ArrayString(const PallasBlockSpec& spec, const DeviceModel& device,
                        const SymbolTable& symbols, const std::vector<int64_t>& values) {
  const auto& dims_field = spec.array_shape().empty() ? spec.block_shape() : spec.array_shape();
  std::optional<std::vector<int64_t>> dims = EvalDims(dims_field, symbols, values);
  absl::StatusOr<std::string> dtype = NormalizeTpuDtype(spec.dtype());
  std::string name = dtype.ok() ? *dtype : spec.dtype();
  if (!dims) return absl::StrCat(name, "[?]");
  absl::StatusOr<int64_t> bits = DtypeBits(name);
  std::string layout = bits.ok() ? XlaLayoutString(device, *dims, *bits) : "";
  return absl::StrCat(name, "[", DimsString(*dims), "]", layout);
}

// Pallas requires the last two block dims to be multiples of (8, 128) or the full array dims.
bool BlocksLegal(const KernelGraph& graph, const SymbolTable& symbols,
                 const std::vector<int64_t>& values) {
  auto check = [&](const PallasBlockSpec& spec) {
    if (spec.memory_space() == "any" || spec.memory_space() == "hbm" ||
        spec.memory_space() == "ANY" || spec.memory_space() == "HBM") {
      return true;
    }
    std::optional<std::vector<int64_t>> block = EvalDims(spec.block_shape(), symbols, values);
    if (!block || block->empty()) return false;
    std::optional<std::vector<int64_t>> array = EvalDims(spec.array_shape(), symbols, values);
    size_t n = block->size();
    for (int64_t v : *block) {
      if (v <= 0) return false;
    }
    auto full = [&](size_t i) { return array && array->size() == n && (*array)[i] == (*block)[i]; };
    if ((*block)[n - 1] % 128 != 0 && !full(n - 1)) return false;
    if (n >= 2 && (*block)[n - 2] % 8 != 0 && !full(n - 2)) return false;
    return true;
  };
  for (const PallasBlockSpec& s : graph.pallas().in_specs()) {
    if (!check(s)) return false;
  }
  for (const PallasBlockSpec& s : graph.pallas().out_specs()) {
    if (!check(s)) return false;
  }
  return true;
}

// Parameters that appear in block shapes or scratch shapes: what a user tunes.
std::vector<int> BlockParameters(const KernelGraph& graph, const SymbolTable& symbols) {
  std::set<int> slots;
  auto scan = [&](const google::protobuf::RepeatedPtrField<std::string>& dims) {
    for (const std::string& d : dims) {
      absl::StatusOr<Expr> e = Expr::Parse(d, symbols);
      if (!e.ok()) continue;
      for (int slot : e->Parameters()) slots.insert(slot);
    }
  };
  for (const PallasBlockSpec& s : graph.pallas().in_specs()) scan(s.block_shape());
  for (const PallasBlockSpec& s : graph.pallas().out_specs()) scan(s.block_shape());
  for (const PallasScratch& s : graph.pallas().scratch_shapes()) scan(s.shape());
  return std::vector<int>(slots.begin(), slots.end());
}

}  // namespace

std::string XlaBytes(int64_t bytes) {
  constexpr double kKiB = 1024.0, kMiB = kKiB * 1024.0, kGiB = kMiB * 1024.0;
  double b = static_cast<double>(bytes);
  if (b >= kGiB) return Fixed(b / kGiB, 2) + "G";
  if (b >= kMiB) return Fixed(b / kMiB, 2) + "M";
  if (b >= kKiB) return Fixed(b / kKiB, 1) + "K";
  return absl::StrCat(bytes, "B");
}

std::string XlaCustomCallString(const KernelGraph& graph, const DeviceModel& device) {
  const PallasCall& call = graph.pallas();
  SymbolTable symbols = Symbols(graph);
  std::vector<int64_t> values = Defaults(graph);
  std::string name = !call.name().empty() ? call.name() : (!graph.name().empty() ? graph.name() : "pallas_call");
  std::vector<std::string> outs;
  for (const PallasBlockSpec& s : call.out_specs()) outs.push_back(ArrayString(s, device, symbols, values));
  std::string result = outs.size() == 1 ? outs[0] : absl::StrCat("(", absl::StrJoin(outs, ", "), ")");
  std::vector<std::string> operands;
  for (int i = 0; i < call.scalar_prefetch_size(); ++i) {
    operands.push_back(call.scalar_prefetch(i).name().empty() ? absl::StrCat("prefetch", i) : call.scalar_prefetch(i).name());
  }
  for (int i = 0; i < call.in_specs_size(); ++i) {
    operands.push_back(call.in_specs(i).name().empty() ? absl::StrCat("in", i) : call.in_specs(i).name());
  }
  return absl::StrCat("%", name, " = ", result, " custom-call(", absl::StrJoin(operands, ", "),
                      "), custom_call_target=\"tpu_custom_call\"");
}

std::string XlaVmemVerdict(const KernelGraph& graph, const DeviceModel& device,
                           const PallasFootprint& fp) {
  if (fp.scoped_vmem_bytes <= fp.scoped_limit_bytes) return "";
  return absl::StrCat(
      "RESOURCE_EXHAUSTED: Ran out of memory in memory space vmem while allocating on stack for ",
      XlaCustomCallString(graph, device), ". Scoped allocation with size ",
      XlaBytes(fp.scoped_vmem_bytes), " and limit ", XlaBytes(fp.scoped_limit_bytes),
      " exceeded scoped vmem limit by ", XlaBytes(fp.scoped_vmem_bytes - fp.scoped_limit_bytes), ".");
}

std::string XlaVmemCapacityVerdict(const PallasFootprint& fp) {
  int64_t used = fp.program_vmem_bytes + fp.scoped_vmem_bytes;
  if (used <= fp.vmem_capacity_bytes) return "";
  return absl::StrCat("RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Ran out of memory in "
                      "memory space vmem. Used ", XlaBytes(used), " of ", XlaBytes(fp.vmem_capacity_bytes),
                      " vmem. Exceeded vmem capacity by ", XlaBytes(used - fp.vmem_capacity_bytes), ".");
}

std::vector<std::string> FootprintBreakdown(const PallasFootprint& fp) {
  std::vector<std::string> lines;
  for (const PallasAllocation& a : fp.allocations) {
    std::string shape;
    if (!a.shape.empty()) {
      shape = absl::StrCat(" ", a.dtype, "[", DimsString(a.shape), "]");
      if (a.padded_shape != a.shape) absl::StrAppend(&shape, " padded to [", DimsString(a.padded_shape), "]");
    }
    lines.push_back(absl::StrCat(a.name, " (", a.kind, ", ", a.space,
                                 a.scope == INSTRUCTION ? ", scoped" : ", program", "): ", a.copies,
                                 " x ", XlaBytes(a.bytes_per_copy), " = ", XlaBytes(a.total_bytes), shape));
  }
  return lines;
}

absl::StatusOr<VmemFix> SuggestVmemFix(const KernelGraph& graph, const DeviceModel& device) {
  ASSIGN_OR_RETURN(PallasFootprint fp, ComputePallasFootprint(graph, device));
  const MemorySpace* vmem = FindSpace(device, kVmemSpace);
  VmemFix fix;
  fix.smallest_vmem_limit_bytes = fp.scoped_vmem_bytes;
  int64_t max_limit = vmem->max_scoped_limit_bytes() > 0 ? vmem->max_scoped_limit_bytes() : vmem->capacity_per_core_bytes();
  fix.limit_allowed = fp.scoped_vmem_bytes <= max_limit &&
                      fp.scoped_vmem_bytes + fp.program_vmem_bytes <= vmem->capacity_per_core_bytes();

  const int64_t target = vmem->default_scoped_limit_bytes();
  SymbolTable symbols = Symbols(graph);
  std::vector<int64_t> values = Defaults(graph);
  std::vector<int> tunable = BlockParameters(graph, symbols);
  int64_t current = fp.scoped_vmem_bytes;
  // Greedy halving: each step halves the block parameter that saves the most, keeping blocks
  // legal for Pallas, until the scoped footprint fits the generation's default limit.
  for (int step = 0; step < 64 && current > target; ++step) {
    int best_slot = -1;
    int64_t best_bytes = current;
    for (int slot : tunable) {
      const Parameter& p = graph.parameters(slot);
      int64_t v = values[slot];
      if (v < 2 || v % 2 != 0 || v / 2 < std::max<int64_t>(1, p.min())) continue;
      std::vector<int64_t> trial = values;
      trial[slot] = v / 2;
      if (!BlocksLegal(graph, symbols, trial)) continue;
      absl::StatusOr<PallasFootprint> t = ComputePallasFootprint(graph, device, trial);
      if (!t.ok()) continue;
      if (t->scoped_vmem_bytes < best_bytes) {
        best_bytes = t->scoped_vmem_bytes;
        best_slot = slot;
      }
    }
    if (best_slot < 0) break;
    values[best_slot] /= 2;
    current = best_bytes;
  }
  fix.resulting_scoped_bytes = current;
  fix.blocks_fit_default = current <= target && current < fp.scoped_vmem_bytes;
  if (fix.blocks_fit_default) {
    for (int slot : tunable) {
      if (values[slot] == graph.parameters(slot).default_value()) continue;
      ParameterValue pv;
      pv.set_name(graph.parameters(slot).name());
      pv.set_value(values[slot]);
      fix.parameters.push_back(pv);
    }
    ASSIGN_OR_RETURN(PallasFootprint fitted, ComputePallasFootprint(graph, device, values));
    for (const PallasAllocation& a : fitted.allocations) {
      if (a.kind != "input" && a.kind != "output" && a.kind != "scratch") continue;
      fix.block_shapes.push_back(absl::StrCat(a.name, ": ", a.dtype, "[", DimsString(a.shape), "] x", a.copies));
    }
  }
  return fix;
}

absl::Status AnnotateTpuReport(const KernelGraph& original, const DeviceModel& device,
                               Report* report) {
  if (!original.has_pallas()) return absl::OkStatus();
  // Evaluate with the parameter values the report was simulated with.
  std::vector<int64_t> values = Defaults(original);
  for (const ParameterValue& pv : report->parameters()) {
    for (int i = 0; i < original.parameters_size(); ++i) {
      if (original.parameters(i).name() == pv.name()) values[i] = pv.value();
    }
  }
  ASSIGN_OR_RETURN(PallasFootprint fp, ComputePallasFootprint(original, device, values));
  std::string name = !original.pallas().name().empty() ? original.pallas().name() : original.name();
  report->add_notes(absl::StrCat("pallas_call ", name, ": instruction-scoped VMEM ", XlaBytes(fp.scoped_vmem_bytes),
                                 " (", fp.scoped_vmem_bytes, " B) against the scoped limit ",
                                 XlaBytes(fp.scoped_limit_bytes), " (", fp.scoped_limit_source, ")",
                                 fp.program_vmem_bytes > 0 ? absl::StrCat("; program-scoped ", XlaBytes(fp.program_vmem_bytes)) : "",
                                 fp.smem_bytes > 0 ? absl::StrCat("; SMEM ", XlaBytes(fp.smem_bytes)) : ""));
  for (const std::string& line : FootprintBreakdown(fp)) report->add_notes(absl::StrCat("  ", line));
  for (const std::string& note : fp.notes) report->add_notes(note);
  report->add_notes("not derivable without the TPU compiler: register spills and Mosaic internal "
                    "scratch (set pallas.spill_bytes_estimate / internal_scratch_bytes); see docs/tpu.md");

  std::string verdict = XlaVmemVerdict(original, device, fp);
  std::vector<std::string> culprits;
  for (const PallasAllocation& a : fp.allocations) {
    if (a.space == kVmemSpace && a.scope == INSTRUCTION) culprits.push_back(a.name);
  }
  if (!verdict.empty()) {
    Violation* target = nullptr;
    for (Violation& v : *report->mutable_violations()) {
      if (v.resource() == "vmem" || v.space() == kVmemSpace) {
        target = &v;
        break;
      }
    }
    if (target == nullptr) {
      target = report->add_violations();
      target->set_resource("vmem");
      target->set_space(kVmemSpace);
      target->set_fatal(true);
      target->set_required(fp.scoped_vmem_bytes);
      target->set_available(fp.scoped_limit_bytes);
      for (const std::string& c : culprits) target->add_culprits(c);
    } else if (target->required() != fp.scoped_vmem_bytes) {
      report->add_notes(absl::StrCat("simulator placement peak ", target->required(),
                                     " B vs the pallas_call sum ", fp.scoped_vmem_bytes,
                                     " B (alignment and placement differ)"));
    }
    target->set_message(verdict);
    report->set_fits(false);

    ASSIGN_OR_RETURN(VmemFix fix, SuggestVmemFix(original, device));
    const MemorySpace* vmem = FindSpace(device, kVmemSpace);
    // These fixes speak in Pallas terms (CompilerParams, block shapes) and replace the
    // simulator's generic ones for the same limit.
    report->clear_suggestions();
    Suggestion* s = report->add_suggestions();
    if (fix.limit_allowed) {
      s->set_text(absl::StrCat("pltpu.CompilerParams(vmem_limit_bytes=", fix.smallest_vmem_limit_bytes,
                               ") (", XlaBytes(fix.smallest_vmem_limit_bytes), ") is the smallest limit "
                               "that holds the modelled allocations; the hardware allows up to ",
                               XlaBytes(vmem->max_scoped_limit_bytes()), " on ", device.name(),
                               ". Leave headroom for spills and internal scratch."));
    } else {
      s->set_text(absl::StrCat("no vmem_limit_bytes helps: ", XlaBytes(fix.smallest_vmem_limit_bytes),
                               " exceeds the ", XlaBytes(vmem->max_scoped_limit_bytes()),
                               " of VMEM one TensorCore of ", device.name(), " has"));
    }
    s->set_resulting_bytes(fix.smallest_vmem_limit_bytes);
    if (fix.blocks_fit_default) {
      Suggestion* b = report->add_suggestions();
      std::vector<std::string> params;
      for (const ParameterValue& pv : fix.parameters) {
        params.push_back(absl::StrCat(pv.name(), "=", pv.value()));
        *b->add_parameters() = pv;
      }
      b->set_text(absl::StrCat("blocks that fit the default scoped limit ",
                               XlaBytes(vmem->default_scoped_limit_bytes()), ": ", absl::StrJoin(params, ", "),
                               " (", XlaBytes(fix.resulting_scoped_bytes), "; ",
                               absl::StrJoin(fix.block_shapes, "; "), ")"));
      b->set_resulting_bytes(fix.resulting_scoped_bytes);
    }
  }
  std::string capacity = XlaVmemCapacityVerdict(fp);
  if (!capacity.empty()) {
    Violation* v = report->add_violations();
    v->set_resource("vmem");
    v->set_space(kVmemSpace);
    v->set_fatal(true);
    v->set_message(capacity);
    v->set_required(fp.program_vmem_bytes + fp.scoped_vmem_bytes);
    v->set_available(fp.vmem_capacity_bytes);
    report->set_fits(false);
  }
  if (fp.smem_bytes > fp.smem_capacity_bytes) {
    Violation* v = report->add_violations();
    v->set_resource("smem");
    v->set_space(kTpuSmemSpace);
    v->set_fatal(true);
    v->set_required(fp.smem_bytes);
    v->set_available(fp.smem_capacity_bytes);
    v->set_message(absl::StrCat("RESOURCE_EXHAUSTED: Ran out of memory in memory space smem. Used ",
                                XlaBytes(fp.smem_bytes), " of ", XlaBytes(fp.smem_capacity_bytes), " smem."));
    report->set_fits(false);
  }
  return absl::OkStatus();
}

}  // namespace scratchsim
