#include "backends/tpu/xla_verdict.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "absl/algorithm/container.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "backends/tpu/spill_model.h"
#include "backends/tpu/tpu_tiling.h"
#include "sim/device.h"
#include "sim/dtype.h"
#include "sim/limits.h"
#include "sim/status_macros.h"

namespace scratchsim {
namespace {

std::string Fixed(double value, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", decimals, value);
  return buf;
}

std::string DimsString(const std::vector<int64_t>& dims) { return absl::StrJoin(dims, ","); }

const BufferShare* FindShare(const Report& report, absl::string_view name) {
  for (const SpaceReport& space : report.spaces()) {
    for (const BufferShare& share : space.live_at_peak()) {
      if (share.buffer() == name) return &share;
    }
  }
  return nullptr;
}

// "bf16[2048,4096]{1,0:T(8,128)(2,1)}" for an output, from the extents the engine evaluated.
std::string ArrayString(const PallasBlockSpec& spec, absl::string_view name, const Report& report,
                        const DeviceModel& device) {
  absl::StatusOr<std::string> dtype = NormalizeTpuDtype(spec.dtype());
  const std::string type = dtype.ok() ? *dtype : spec.dtype();
  const BufferShare* share = FindShare(report, name);
  if (share == nullptr) return absl::StrCat(type, "[]");  // left in HBM: no block to read extents from
  std::vector<int64_t> dims(share->array_dims().begin(), share->array_dims().end());
  if (dims.empty()) dims.assign(share->dims().begin(), share->dims().end());
  absl::StatusOr<int64_t> bits = DtypeBits(type);
  return absl::StrCat(type, "[", DimsString(dims), "]", bits.ok() ? XlaLayoutString(device, dims, *bits) : "");
}

// The largest allocation known exactly (not an estimate) that alone exceeds the VMEM one program
// may use; fp.allocations is largest first, so it is the first such one.
const PallasAllocation* AllocationOverCapacity(const PallasFootprint& fp) {
  if (fp.vmem_capacity_bytes <= 0) return nullptr;
  for (const PallasAllocation& a : fp.allocations) {
    if (!a.estimated && a.space == kVmemSpace && a.total_bytes > fp.vmem_capacity_bytes) return &a;
  }
  return nullptr;
}

std::string SpecName(const PallasBlockSpec& spec, absl::string_view fallback, int i) {
  return spec.name().empty() ? absl::StrCat(fallback, i) : spec.name();
}

}  // namespace

int64_t MaxScopedVmemLimit(const DeviceModel& device) {
  const MemorySpace* vmem = FindSpace(device, kVmemSpace);
  if (vmem == nullptr) return 0;
  return vmem->max_scoped_limit_bytes() > 0 ? vmem->max_scoped_limit_bytes() : vmem->capacity_per_core_bytes();
}

std::string XlaBytes(int64_t bytes) {
  constexpr double kKiB = 1024.0, kMiB = kKiB * 1024.0, kGiB = kMiB * 1024.0;
  double b = static_cast<double>(bytes);
  if (b >= kGiB) return Fixed(b / kGiB, 2) + "G";
  if (b >= kMiB) return Fixed(b / kMiB, 2) + "M";
  if (b >= kKiB) return Fixed(b / kKiB, 1) + "K";
  return absl::StrCat(bytes, "B");
}

std::string XlaCustomCallString(const KernelGraph& source, const Report& report, const DeviceModel& device) {
  const PallasCall& call = source.pallas();
  std::string name = !call.name().empty() ? call.name() : (!source.name().empty() ? source.name() : "pallas_call");
  std::vector<std::string> outs;
  for (int i = 0; i < call.out_specs_size(); ++i) {
    outs.push_back(ArrayString(call.out_specs(i), SpecName(call.out_specs(i), "out", i), report, device));
  }
  std::string result = outs.size() == 1 ? outs[0] : absl::StrCat("(", absl::StrJoin(outs, ", "), ")");
  std::vector<std::string> operands;
  for (int i = 0; i < call.scalar_prefetch_size(); ++i) operands.push_back(SpecName(call.scalar_prefetch(i), "prefetch", i));
  for (int i = 0; i < call.in_specs_size(); ++i) operands.push_back(SpecName(call.in_specs(i), "in", i));
  return absl::StrCat("%", name, " = ", result, " custom-call(", absl::StrJoin(operands, ", "),
                      "), custom_call_target=\"tpu_custom_call\"");
}

std::string XlaScopedVmemVerdict(absl::string_view custom_call, int64_t required, int64_t limit) {
  return absl::StrCat("RESOURCE_EXHAUSTED: Ran out of memory in memory space vmem while allocating on stack for ",
                      custom_call, ". Scoped allocation with size ", XlaBytes(required), " and limit ", XlaBytes(limit),
                      " exceeded scoped vmem limit by ", XlaBytes(required - limit), ".");
}

std::string XlaVmemCapacityVerdict(int64_t used, int64_t capacity) {
  return absl::StrCat("RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Ran out of memory in "
                      "memory space vmem. Used ", XlaBytes(used), " of ", XlaBytes(capacity),
                      " vmem. Exceeded vmem capacity by ", XlaBytes(used - capacity), ".");
}

std::string XlaAllocationVerdict(const PallasAllocation& allocation, int64_t capacity) {
  return absl::StrCat("RESOURCE_EXHAUSTED: Allocation (size=", allocation.total_bytes, ") would exceed memory (size=",
                      capacity, ") :: ", allocation.name, " (", allocation.kind, ", ", allocation.copies,
                      allocation.copies == 1 ? " buffer" : " buffers", " of ", XlaBytes(allocation.bytes_per_copy),
                      ")");
}

std::vector<std::string> FootprintBreakdown(const PallasFootprint& fp) {
  std::vector<std::string> lines;
  for (const PallasAllocation& a : fp.allocations) {
    std::string shape;
    if (!a.shape.empty()) {
      shape = absl::StrCat(" ", a.dtype, "[", DimsString(a.shape), "]");
      if (a.padded_shape != a.shape) absl::StrAppend(&shape, " padded to [", DimsString(a.padded_shape), "]");
    }
    lines.push_back(absl::StrCat(a.name, " (", a.kind, ", ", a.space, "): ", a.copies, " x ", XlaBytes(a.bytes_per_copy),
                                 " = ", XlaBytes(a.total_bytes), shape,
                                 a.granule_padding_bytes > 0
                                     ? absl::StrCat(" (", XlaBytes(a.granule_padding_bytes), " of it the allocation granule)")
                                     : "",
                                 a.estimated ? absl::StrCat(" (estimated: ", XlaBytes(a.bytes_per_copy_low), " to ",
                                                            XlaBytes(a.bytes_per_copy_high), ")")
                                             : ""));
  }
  return lines;
}

absl::Status WordTpuReport(const KernelGraph& source, const PallasLowering& lowering, const DeviceModel& device,
                           Report* report) {
  if (!source.has_pallas()) return absl::OkStatus();
  const PallasFootprint fp = FootprintOf(source, *report, lowering.notes, lowering.semaphores, device);
  const std::string name = !source.pallas().name().empty() ? source.pallas().name() : source.name();
  report->add_notes(absl::StrCat("pallas_call ", name, ": instruction-scoped VMEM ", XlaBytes(fp.scoped_vmem_bytes), " (",
                                 fp.scoped_vmem_bytes, " B) against the scoped limit ", XlaBytes(fp.scoped_limit_bytes),
                                 " (", fp.scoped_limit_source, ")",
                                 fp.program_vmem_bytes > 0 ? absl::StrCat("; program-scoped ", XlaBytes(fp.program_vmem_bytes)) : "",
                                 fp.smem_bytes > 0 ? absl::StrCat("; SMEM ", XlaBytes(fp.smem_bytes)) : ""));
  for (const std::string& line : FootprintBreakdown(fp)) report->add_notes(absl::StrCat("  ", line));
  for (const std::string& note : fp.notes) report->add_notes(note);
  const PallasCall& call = source.pallas();
  // What the scoped figure is made of: the allocations known exactly, and the estimate on top.
  const int64_t exact = fp.scoped_vmem_bytes - fp.estimated_bytes;
  if (fp.has_estimates) {
    report->add_notes(absl::StrCat("scoped VMEM ", XlaBytes(fp.scoped_vmem_bytes), " = ", XlaBytes(exact),
                                   " known exactly (windows, scratch) + ", XlaBytes(fp.estimated_bytes),
                                   " of estimated register spills; with the estimate at its bounds ",
                                   XlaBytes(fp.scoped_vmem_bytes_low), " to ", XlaBytes(fp.scoped_vmem_bytes_high),
                                   " against the limit ", XlaBytes(fp.scoped_limit_bytes)));
  } else if (call.spill_bytes_estimate().empty() && !call.has_body()) {
    report->add_notes("register spills are not estimated: the graph has no pallas.body (what the kernel body keeps in "
                      "vector registers; scratchsim.pallas reads it from the traced kernel), so the figure "
                      "is a lower bound; see docs/tpu.md");
  }
  // A FITS whose high bound is closer to the limit than libtpu has spilled beyond a band at
  // unseen shapes, or whose kernel was traced beside a libtpu the spill model was not fitted on:
  // still FITS by the model, but unsettled, with what settles it.
  const int64_t spare_at_high = fp.scoped_limit_bytes - fp.scoped_vmem_bytes_high;
  const std::string settle = call.jax_export().empty() ? "scratchsim.pallas.check(..., confirm=\"at_risk\")"
                                                       : "--confirm at-risk (Python: confirm=\"at_risk\")";
  const std::string& libtpu = call.traced_with().libtpu();
  if (fp.has_estimates) {
    report->add_notes(absl::StrCat("the register-spill model was fitted on libtpu ", kSpillModelLibtpu, " (jax ",
                                   kSpillModelJax, ")",
                                   libtpu.empty() ? "" : absl::StrCat("; this kernel was traced with libtpu ", libtpu,
                                                                      " installed")));
  }
  if (report->verdict() == FITS && fp.has_estimates && !libtpu.empty() && libtpu != kSpillModelLibtpu) {
    report->set_unsettled(absl::StrCat("traced with libtpu ", libtpu, ", and the register-spill model was fitted on ",
                                       kSpillModelLibtpu, " (other releases spill differently); ", settle,
                                       " has libtpu ", libtpu, " check it"));
  } else if (report->verdict() == FITS && fp.has_estimates && spare_at_high >= 0 &&
             spare_at_high < kNearLimitSpareBytes) {
    report->set_unsettled(absl::StrCat(
        "near the limit: ", spare_at_high, " B to spare with the spills at their high estimate, less than the ",
        kNearLimitSpareBytes, " B libtpu spilled beyond the estimate's band at shapes it was not fitted on; ", settle,
        " has libtpu check it"));
  }
  if (!report->unsettled().empty()) report->add_notes(report->unsettled());
  report->add_notes("Mosaic's default internal scratch (36 KiB on v4-v5p, 72 KiB on v6e-v7x) is not counted: the "
                    "scoped limit does not count it. What Mosaic adds for some bodies and the limit counts (v4: "
                    "sublane-replication temporaries and a packing temporary for 8- and 4-bit converts; v4-v5p: internal "
                    "scratch for dots of 2-4 rows) is among the "
                    "buffers above; see docs/tpu.md");

  const int64_t capacity = fp.vmem_capacity_bytes;
  bool capacity_worded = false;  // a scoped breach worded as XLA's capacity error (v4)
  // Where the scoped region is the whole VMEM (v4's default limit, or a limit raised to it), XLA
  // places each window and scratch buffer in it before register allocation: one larger than the
  // whole VMEM fails there, by name (the corpus's 16 such errors, all v4). Otherwise the capacity
  // error gives the total (v5p's 64 MiB windows under its 16 MiB default limit: "Used 64.00M of
  // 63.94M vmem").
  const PallasAllocation* alone = fp.scoped_limit_bytes >= capacity ? AllocationOverCapacity(fp) : nullptr;
  auto capacity_message = [&](int64_t used, int64_t available) {
    if (alone != nullptr) return XlaAllocationVerdict(*alone, available);
    return absl::StrCat(XlaVmemCapacityVerdict(used, available),
                        fp.has_estimates ? absl::StrCat(" [scratchsim: includes ", XlaBytes(fp.estimated_bytes),
                                                        " of estimated register spills; the windows and scratch "
                                                        "alone are ", XlaBytes(exact), "]")
                                         : "");
  };
  const absl::string_view scoped_vmem = LimitName(Limit::kVmemScoped);
  const absl::string_view program_vmem = LimitName(Limit::kVmemProgram);
  for (Violation& v : *report->mutable_violations()) {
    if (v.limit() == scoped_vmem && v.at_risk()) {
      v.set_message(absl::StrCat(
          "AT RISK: with the register spills at their high estimate the scoped allocation is ", XlaBytes(v.required()),
          " against the limit ", XlaBytes(v.available()), " (", XlaBytes(exact), " known exactly + spills estimated at ",
          XlaBytes(fp.estimated_bytes), ", between ", XlaBytes(fp.scoped_vmem_bytes_low - exact), " and ",
          XlaBytes(fp.scoped_vmem_bytes_high - exact), "): it compiles only if Mosaic spills at most ",
          XlaBytes(std::max<int64_t>(v.available() - exact, 0)), "; XLA would then say RESOURCE_EXHAUSTED ... Scoped "
          "allocation with size ", XlaBytes(v.required()), " and limit ", XlaBytes(v.available())));
    } else if (v.limit() == scoped_vmem && capacity > 0 && v.available() >= capacity) {
      // A scoped limit of the whole VMEM (v4's default): XLA's capacity check comes first.
      v.set_message(capacity_message(v.required(), capacity));
      capacity_worded = true;
    } else if (v.limit() == scoped_vmem) {
      // XLA checks the windows and scratch before register allocation: when they alone exceed
      // the limit, its figure is theirs, without spills.
      const bool before_spills = fp.has_estimates && exact > v.available();
      v.set_message(absl::StrCat(
          XlaScopedVmemVerdict(XlaCustomCallString(source, *report, device), before_spills ? exact : v.required(),
                               v.available()),
          !fp.has_estimates ? ""
          : before_spills
              ? absl::StrCat(" [scratchsim: the windows and scratch alone exceed the limit; estimated register spills of ",
                             XlaBytes(fp.estimated_bytes), " come on top]")
              : absl::StrCat(" [scratchsim: includes ", XlaBytes(fp.estimated_bytes),
                             " of estimated register spills; the windows and scratch alone are ", XlaBytes(exact), "]")));
    } else if (v.limit() == program_vmem) {
      v.set_message(capacity_message(v.required(), v.available()));
    } else if (v.space() == kTpuSmemSpace) {
      // libtpu's words (tests/data/tpu/usable_vmem_probe.txt).
      const std::string xla = absl::StrCat(
          "RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Ran out of memory in memory space smem. Used ",
          XlaBytes(v.required()), " of ", XlaBytes(v.available()), " smem. Exceeded smem capacity by ",
          XlaBytes(v.required() - v.available()), ".");
      v.set_message(v.at_risk() ? absl::StrCat("AT RISK: with libtpu's own SMEM at its high estimate the SMEM use is ",
                                               XlaBytes(v.required()), " against ", XlaBytes(v.available()),
                                               "; XLA would then say ", xla)
                                : xla);
    }
  }
  // XLA prints one VMEM error. Where the scoped limit is the whole VMEM (v4) the scoped breach was
  // worded as the capacity error, and the program-VMEM breach of the same total says nothing more.
  // Elsewhere XLA checks the whole VMEM first: a program that does not fit it gets the capacity
  // error alone, whatever the scoped limit (the corpus: all 19 such failures on v5e-v7x).
  const bool over_capacity = absl::c_any_of(report->violations(), [&](const Violation& v) {
    return v.limit() == program_vmem && !v.at_risk();
  });
  const absl::string_view said_by_the_other = capacity_worded ? program_vmem : over_capacity ? scoped_vmem : "";
  if (!said_by_the_other.empty()) {
    auto* violations = report->mutable_violations();
    for (int i = violations->size() - 1; i >= 0; --i) {
      if (violations->Get(i).limit() == said_by_the_other) violations->DeleteSubrange(i, 1);
    }
  }
  const int64_t allowed = MaxScopedVmemLimit(device);
  for (Suggestion& s : *report->mutable_suggestions()) {
    if (s.raise_limit_bytes() <= 0 || allowed == 0) continue;
    s.set_text(absl::StrCat("pltpu.CompilerParams(vmem_limit_bytes=", s.raise_limit_bytes(), ") (",
                            XlaBytes(s.raise_limit_bytes()),
                            ") is the smallest limit that holds the modelled allocations",
                            fp.has_estimates ? " with the register spills at their high estimate" : "",
                            "; the hardware allows up to ", XlaBytes(allowed), " on ", device.name(),
                            fp.has_estimates || !call.spill_bytes_estimate().empty() || call.has_body()
                                ? "."
                                : ". Spills are not estimated (no pallas.body): leave headroom for them."));
  }
  return absl::OkStatus();
}

}  // namespace scratchsim
