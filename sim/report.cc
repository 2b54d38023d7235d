#include "sim/report.h"

#include "sim/occupancy.h"

#include <algorithm>

#include "absl/algorithm/container.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "sim/json_text.h"
#include "sim/occupancy.h"

namespace scratchsim {
namespace {

std::string Parameters(const Report& report) {
  std::vector<std::string> parts;
  for (const ParameterValue& p : report.parameters()) parts.push_back(absl::StrCat(p.name(), "=", p.value()));
  return absl::StrJoin(parts, " ");
}

// "= 2 x (x_tile 1024 + gate_tile 131072 + up_tile 131072)" when all live buffers share a
// copy count, else a plain sum of copies x bytes.
std::string Breakdown(const SpaceReport& space) {
  if (space.live_at_peak().empty()) return "";
  int64_t copies = space.live_at_peak(0).copies();
  bool same = std::all_of(space.live_at_peak().begin(), space.live_at_peak().end(),
                          [&](const BufferShare& s) { return s.copies() == copies; });
  std::vector<std::string> terms;
  for (const BufferShare& s : space.live_at_peak()) {
    if (same || s.copies() == 1) {
      terms.push_back(absl::StrCat(s.buffer(), " ", s.bytes_per_copy()));
    } else {
      terms.push_back(absl::StrCat(s.buffer(), " ", s.copies(), " copies x ", s.bytes_per_copy()));
    }
  }
  std::string sum = absl::StrJoin(terms, " + ");
  if (same && copies > 1) sum = absl::StrCat(copies, " copies x (", sum, ")");
  // A report lists the largest buffers only (sim/simulator.h kMaxListedBuffers).
  int64_t listed = 0;
  for (const BufferShare& s : space.live_at_peak()) listed += s.total_bytes();
  if (listed < space.live_bytes_at_peak()) {
    absl::StrAppend(&sum, " + ", space.live_bytes_at_peak() - listed, " in buffers not listed");
  }
  return sum;
}

}  // namespace

std::string FormatBytesShort(int64_t bytes) {
  if (bytes >= (int64_t{1} << 20)) return absl::StrFormat("%.1f MiB", bytes / 1048576.0);
  if (bytes >= 1024) return absl::StrFormat("%.1f KiB", bytes / 1024.0);
  return absl::StrFormat("%d B", bytes);
}

std::string FormatBytes(int64_t bytes) {
  if (bytes < 1024) return FormatBytesShort(bytes);
  return absl::StrFormat("%d B (%s)", bytes, FormatBytesShort(bytes));
}

void ApplyConfirmation(CompilerConfirmation confirmation, Report* report) {
  confirmation.set_model_verdict(report->verdict());
  if (confirmation.error().empty()) {
    report->set_verdict(confirmation.confirmed_verdict() == "FITS" ? FITS : DOES_NOT_FIT);
    report->set_fits(report->verdict() == FITS);
  }
  *report->mutable_confirmation() = std::move(confirmation);
}

namespace {

std::string VerdictWords(Verdict verdict) {
  switch (verdict) {
    case FITS: return "FITS";
    case AT_RISK: return "AT RISK";
    case DOES_NOT_FIT: return "DOES NOT FIT";
    default: return "none";
  }
}

// "libtpu 0.0.42.1 (jax 0.10.2) compiled it for v5e:2x2 in 4.1 s: ..." and the compiler's
// message, a line each.
std::string ConfirmationLines(const CompilerConfirmation& c) {
  std::string compiler = "the compiler";
  if (auto it = c.versions().find("libtpu"); it != c.versions().end()) {
    compiler = absl::StrCat("libtpu ", it->second);
    if (auto jax = c.versions().find("jax"); jax != c.versions().end()) absl::StrAppend(&compiler, " (jax ", jax->second, ")");
  }
  std::string out = absl::StrFormat("%s compiled it for %s in %.1f s: ", compiler, c.topology(), c.compile_s());
  if (c.confirmed_verdict() == "FITS") {
    absl::StrAppend(&out, "it fits", c.scoped_vmem_bytes() > 0 ? absl::StrCat(", ", FormatBytes(c.scoped_vmem_bytes()),
                                                                             " of scoped VMEM")
                                                              : "");
  } else if (c.confirmed_verdict() == "DOES_NOT_FIT") {
    // libtpu's own rounded words where it gave no exact figure.
    const std::string size = c.size_bytes() > 0 ? FormatBytes(c.size_bytes()) : c.size_text();
    const std::string limit = c.limit_bytes() > 0 ? FormatBytes(c.limit_bytes()) : c.limit_text();
    absl::StrAppend(&out, "out of VMEM (", c.outcome(), ")", size.empty() ? "" : absl::StrCat(", ", size),
                    limit.empty() ? "" : absl::StrCat(" against ", limit));
    if (c.requirement_bytes() > 0) {
      absl::StrAppend(&out, "; with its limit raised to the whole ", FormatBytes(c.capacity_bytes()),
                      " it compiles, in ", FormatBytes(c.requirement_bytes()), " of scoped VMEM: what it needs");
    } else if (c.exceeds_capacity()) {
      absl::StrAppend(&out, "; it does not fit even with its limit at the whole ", FormatBytes(c.capacity_bytes()));
    } else if (!c.requirement_error().empty()) {
      absl::StrAppend(&out, "; what it needs ", c.requirement_error());
    }
  } else {
    absl::StrAppend(&out, "it refused the kernel");
  }
  absl::StrAppend(&out, "\n");
  if (!c.message().empty()) {
    absl::string_view first = c.message();
    first = first.substr(0, std::min(first.find('\n'), size_t{300}));
    absl::StrAppend(&out, "  compiler: ", first, "\n");
  }
  return out;
}

}  // namespace

std::string RenderText(const Report& report, const DeviceModel& device) {
  std::string out;
  absl::StrAppend(&out, "kernel   ", report.kernel(), "\n");
  absl::StrAppend(&out, "device   ", device.display_name().empty() ? device.name() : device.display_name(), " (",
                  device.name(), device.arch() != device.name() ? absl::StrCat(", ", device.arch()) : "", ")\n");
  if (!report.parameters().empty()) absl::StrAppend(&out, "params   ", Parameters(report), "\n");
  absl::StrAppend(&out, "policy   ", report.policy(), "\n\n");

  std::vector<const Violation*> fatal;
  for (const Violation& v : report.violations()) {
    if (v.fatal()) fatal.push_back(&v);
  }
  const CompilerConfirmation& confirmation = report.confirmation();
  const bool confirmed = report.has_confirmation() && confirmation.error().empty();
  if (confirmed) {
    // The compiler settled it: its verdict first, then the model's for comparison.
    absl::StrAppend(&out, "verdict  ", VerdictWords(report.verdict()), ", confirmed: ", ConfirmationLines(confirmation));
    absl::StrAppend(&out, "model    ", VerdictWords(confirmation.model_verdict()), "\n");
    for (const Violation* v : fatal) absl::StrAppend(&out, "  ", v->message(), "\n");
  } else if (report.verdict() == AT_RISK) {
    // Only an estimate's high bound breaks a limit (or the central figure does and its low
    // bound does not): not a FITS a tool may act on.
    absl::StrAppend(&out, "verdict  AT RISK (fits only if the estimated allocations stay below their high bound)\n");
    // A breach at the central estimate keeps the toolchain's words (the JSON's message), printed
    // as the prediction it is: nothing was compiled.
    for (const Violation* v : fatal) {
      absl::StrAppend(&out, "  ", v->at_risk() ? "" : "if the central estimate holds, the compiler would say: ", v->message(), "\n");
    }
  } else if (fatal.empty() && !report.unsettled().empty()) {
    // A FITS the model cannot vouch for: said on the verdict's line, with why.
    absl::StrAppend(&out, "verdict  FITS, unsettled: ", report.unsettled(), "\n");
  } else if (fatal.empty()) {
    absl::StrAppend(&out, "verdict  FITS\n");
  } else {
    absl::StrAppend(&out, "verdict  DOES NOT FIT\n");
    for (const Violation* v : fatal) absl::StrAppend(&out, "  ", v->message(), "\n");
  }
  if (report.has_confirmation() && !confirmation.error().empty()) {
    absl::StrAppend(&out, "confirm  not compiled, the model's verdict stands: ", confirmation.error(), "\n");
  }
  for (const Violation& v : report.violations()) {
    if (!v.fatal()) absl::StrAppend(&out, "warning  ", v.message(), "\n");
  }

  for (const SpaceReport& space : report.spaces()) {
    absl::StrAppend(&out, "\n", space.space(), ": peak ", FormatBytes(space.peak_bytes()), ", limit ",
                    FormatBytes(space.limit_bytes()), " (", space.limit_name(), ")");
    if (space.peak_bytes() > space.limit_bytes()) {
      absl::StrAppendFormat(&out, " -- OVER by %d B (%.2fx the limit)\n", space.peak_bytes() - space.limit_bytes(),
                            static_cast<double>(space.peak_bytes()) / std::max<int64_t>(space.limit_bytes(), 1));
    } else {
      absl::StrAppendFormat(&out, " -- ok, %d B to spare\n", space.limit_bytes() - space.peak_bytes());
    }
    if (space.has_estimates()) {
      // The range the estimates allow, held against the same limit.
      const bool scoped = space.instruction_scoped_bytes_high() > 0;
      const int64_t low = scoped ? space.instruction_scoped_bytes_low() : space.peak_bytes_low();
      const int64_t high = scoped ? space.instruction_scoped_bytes_high() : space.peak_bytes_high();
      absl::StrAppend(&out, "  estimated: ", FormatBytes(space.estimated_bytes()), " of the peak; with the estimates at "
                      "their bounds ", low, " to ", high, " B", scoped ? " scoped" : "", " against the limit ",
                      space.limit_bytes(), " B (",
                      high <= space.limit_bytes()  ? absl::StrCat(space.limit_bytes() - high, " B to spare at the high bound")
                      : low > space.limit_bytes() ? absl::StrCat("over even at the low bound, by ", low - space.limit_bytes(), " B")
                                                  : "at risk: the limit lies within the estimate's range",
                      ")\n");
    }
    if (space.instruction_scoped_bytes() > 0 || space.program_scoped_bytes() > 0) {
      absl::StrAppend(&out, "  instruction-scoped ", FormatBytes(space.instruction_scoped_bytes()),
                      ", program-scoped ", FormatBytes(space.program_scoped_bytes()), "\n");
    }
    if (space.live_at_peak().empty()) continue;
    absl::StrAppend(&out, "  = ", Breakdown(space), "\n");
    absl::StrAppend(&out, "  live at op '", space.peak_op(), "' (position ", space.peak_position(),
                    "); total without reuse ", FormatBytes(space.total_bytes()), "\n");
    // A source column only where an importer located the buffers in the kernel's source.
    const bool sourced = absl::c_any_of(space.live_at_peak(), [](const BufferShare& s) { return !s.source().empty(); });
    absl::StrAppendFormat(&out, "    %-20s %-18s %6s %12s %12s %6s%s\n", "buffer", "shape", "copies", "bytes/copy",
                          "total", "share", sourced ? "  source" : "");
    for (const BufferShare& s : space.live_at_peak()) {
      absl::StrAppendFormat(&out, "    %-20s %-18s %6d %12d %12d %5.1f%%%s\n", s.buffer(), s.shape(), s.copies(),
                            s.bytes_per_copy(), s.total_bytes(), 100.0 * s.share(),
                            s.source().empty() ? "" : absl::StrCat("  ", s.source()));
      if (s.granule_padding_bytes() > 0) {
        absl::StrAppend(&out, "      (the copies rounded up to the space's allocation granule: +", s.granule_padding_bytes(),
                        " B)\n");
      }
      if (s.estimated()) {
        absl::StrAppend(&out, "      (estimated: ", s.bytes_per_copy_low(), " to ", s.bytes_per_copy_high(), " B per copy",
                        s.estimate_basis().empty() ? "" : absl::StrCat("; ", s.estimate_basis()), ")\n");
      }
    }
  }

  if (report.has_threads() && report.threads().required_threads() > 0) {
    const ThreadBudget& t = report.threads();
    std::vector<std::string> parts;
    for (const ParameterValue& p : t.partition_warps()) parts.push_back(absl::StrCat(p.name(), " ", p.value()));
    absl::StrAppend(&out, "\nthreads: ", t.required_threads(), " of ", t.limit_threads(), " (", t.limit_name(),
                    "); warps by partition: ", absl::StrJoin(parts, " + "), "\n");
  }
  if (report.has_registers()) {
    const RegisterBudget& r = report.registers();
    absl::StrAppend(&out, "registers: ", r.demand_per_thread(), " needed per thread, budget ", r.budget_per_thread());
    if (r.spill_bytes_per_thread() > 0) {
      absl::StrAppend(&out, ", spills ", r.spill_bytes_per_thread(), " B per thread (", r.spill_bytes_per_block(),
                      " B per block) to local memory");
    }
    absl::StrAppend(&out, "\n");
  }
  if (report.has_occupancy()) {
    const Occupancy& o = report.occupancy();
    if (o.blocks_per_core() == 0) {
      absl::StrAppend(&out, "occupancy: cannot launch (", o.limiting_factor(), ")\n");
    } else {
      absl::StrAppendFormat(&out, "occupancy: %d blocks per SM, %d of %d warps (%.0f%%), limited by %s\n",
                            o.blocks_per_core(), o.active_warps(), o.max_warps(), 100.0 * o.occupancy(),
                            o.limiting_factor());
      // Where the driver's choice is measured: the L1 a kernel runs with depends on it.
      if (o.l1_bytes_per_core() > 0) absl::StrAppend(&out, LaunchCarveoutLine(o));
    }
  }
  if (!report.suggestions().empty()) {
    absl::StrAppend(&out, "\nto fit:\n");
    for (const Suggestion& s : report.suggestions()) absl::StrAppend(&out, "  - ", s.text(), "\n");
  }
  if (!report.notes().empty()) {
    absl::StrAppend(&out, "\nnotes:\n");
    for (const std::string& n : report.notes()) absl::StrAppend(&out, "  - ", n, "\n");
  }
  return out;
}

std::string LaunchCarveoutLine(const Occupancy& o) {
  if (o.blocks_per_core() == 0 || o.launch_carveout_bytes() == 0 ||
      o.launch_carveout_basis() == CarveoutBasisText(CarveoutBasis::kFixedCapacity)) {
    return "";
  }
  const std::string l1 =
      o.l1_bytes_per_core() > 0 ? absl::StrFormat(", leaving %d KiB of L1", o.l1_bytes_per_core() / 1024) : "";
  const int64_t room = o.allocated_shared_bytes_per_block() > 0
                           ? o.launch_carveout_bytes() / o.allocated_shared_bytes_per_block()
                           : 0;
  const std::string blocks = room > 0 ? absl::StrFormat(", room for %d blocks", room) : "";
  return absl::StrFormat("carve-out at launch: %d KiB of shared memory per SM%s%s (%s)\n",
                         o.launch_carveout_bytes() / 1024, blocks, l1, o.launch_carveout_basis());
}

std::string RenderJson(const Report& report) { return MessageToJson(report); }

}  // namespace scratchsim
