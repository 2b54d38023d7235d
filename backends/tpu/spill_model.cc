#include "backends/tpu/spill_model.h"

#include <algorithm>
#include <cstdio>

#include "absl/strings/str_cat.h"

namespace scratchsim {
namespace {

// Spill slots = multiple x figure, per class and generation, in 1/1000: low, central slope and
// offset (central = slope x figure - offset, kept within [low, high]), high. Fitted by
// bench/tpu/fit_spill_model.py --pooled --margin 0.10 on the half of the oracle corpus
// (tests/data/tpu/corpus.jsonl.gz, libtpu 0.0.42.1, 2026-11-26) whose kernels hash even; the
// other half judges it (docs/tpu.md). Low and high are the extremes of the fit half over all
// generations (high with a 10% margin); central is per generation.
struct Coefficients {
  BodyClass body_class;
  const char* generation;
  int64_t low, slope, offset, high;
};

constexpr Coefficients kTable[] = {
    {BodyClass::kReduction, "v4", 460, 1093, 357402, 1157},
    {BodyClass::kReduction, "v5e", 460, 1044, 406490, 1157},
    {BodyClass::kReduction, "v5p", 460, 1043, 359054, 1157},
    {BodyClass::kReduction, "v6e", 460, 1031, 214716, 1157},
    {BodyClass::kReduction, "v7x", 460, 1031, 248846, 1157},
    {BodyClass::kAttention, "v4", 0, 598, 387755, 959},
    {BodyClass::kAttention, "v5e", 0, 848, 1600547, 959},
    {BodyClass::kAttention, "v5p", 0, 853, 1617603, 959},
    {BodyClass::kAttention, "v6e", 0, 607, 704071, 959},
    {BodyClass::kAttention, "v7x", 0, 655, 0, 959},
    {BodyClass::kLooped, "v4", 0, 1135, 21172, 1097},
    {BodyClass::kLooped, "v5e", 0, 63, 1176, 1097},
    {BodyClass::kLooped, "v5p", 0, 63, 1176, 1097},
    {BodyClass::kLooped, "v6e", 0, 0, 0, 1097},
    {BodyClass::kLooped, "v7x", 0, 0, 0, 1097},
    {BodyClass::kDot, "v4", 0, 45, 0, 744},
    {BodyClass::kDot, "v5e", 0, 113, 0, 744},
    {BodyClass::kDot, "v5p", 0, 84, 0, 744},
    {BodyClass::kDot, "v6e", 0, 178, 3695, 744},
    {BodyClass::kDot, "v7x", 0, 98, 0, 744},
    {BodyClass::kDot32, "v4", 0, 0, 0, 137},
    {BodyClass::kDot32, "v5e", 0, 10, 0, 137},
    {BodyClass::kDot32, "v5p", 0, 10, 0, 137},
    {BodyClass::kDot32, "v6e", 0, 25, 0, 137},
    {BodyClass::kDot32, "v7x", 0, 35, 150027, 137},
    {BodyClass::kTranspose, "v4", 0, 92, 0, 172},
    {BodyClass::kTranspose, "v5e", 0, 121, 131072, 172},
    {BodyClass::kTranspose, "v5p", 0, 121, 131072, 172},
    {BodyClass::kTranspose, "v6e", 0, 105, 131072, 172},
    {BodyClass::kTranspose, "v7x", 0, 105, 131072, 172},
};

bool Given(const std::string& figure) { return !figure.empty() && figure != "0"; }

// "v5e" for tpu_v5e (and its aliases' canonical name); empty for another device.
std::string Generation(const DeviceModel& device) {
  for (const char* g : {"v4", "v5e", "v5p", "v6e", "v7x"}) {
    if (device.name() == absl::StrCat("tpu_", g)) return g;
  }
  return "";
}

std::string Permille(int64_t value) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.3f", static_cast<double>(value) / 1000.0);
  return buf;
}

}  // namespace

absl::string_view BodyClassName(BodyClass c) {
  switch (c) {
    case BodyClass::kStreaming: return "streaming";
    case BodyClass::kReduction: return "reduction";
    case BodyClass::kAttention: return "attention";
    case BodyClass::kLooped: return "looped attention";
    case BodyClass::kDot: return "dot";
    case BodyClass::kDot32: return "32-bit dot";
    case BodyClass::kTranspose: return "transpose";
  }
  return "?";
}

BodyClass ClassifyBody(const PallasBody& body) {
  const bool dot = Given(body.dot_bytes()) || Given(body.packed_dot_bytes());
  if (Given(body.reduction_live_bytes())) {
    if (!dot) return BodyClass::kReduction;
    return body.rolled_loops() > 0 ? BodyClass::kLooped : BodyClass::kAttention;
  }
  if (Given(body.packed_dot_bytes())) return BodyClass::kDot;
  if (dot) return BodyClass::kDot32;
  if (Given(body.packed_transpose_bytes())) return BodyClass::kTranspose;
  return BodyClass::kStreaming;
}

SpillEstimate EstimateSpills(const PallasBody& body, const DeviceModel& device) {
  SpillEstimate out;
  out.body_class = ClassifyBody(body);
  switch (out.body_class) {
    case BodyClass::kStreaming:
      out.low = out.central = out.high = "0";
      out.basis = "streaming body (nothing kept whole across a reduction, a dot or a transpose): no spill slots";
      return out;
    case BodyClass::kReduction:
      out.figure = absl::StrCat("(", body.reduction_live_bytes(), ")");
      break;
    case BodyClass::kAttention:
    case BodyClass::kLooped:
      out.figure = Given(body.reduction_input_bytes())
                       ? absl::StrCat("max(", body.reduction_live_bytes(), ", (", body.reduction_input_bytes(), ") / 2)")
                       : absl::StrCat("(", body.reduction_live_bytes(), ")");
      break;
    case BodyClass::kDot:
      out.figure = absl::StrCat("(", body.packed_dot_bytes(), ")");
      break;
    case BodyClass::kDot32:
      out.figure = absl::StrCat("(", body.dot_bytes(), ")");
      break;
    case BodyClass::kTranspose:
      out.figure = absl::StrCat("(", body.packed_transpose_bytes(), ")");
      break;
  }
  const std::string generation = Generation(device);
  Coefficients c{out.body_class, "", 0, 0, 0, 0};
  bool found = false;
  for (const Coefficients& row : kTable) {
    if (row.body_class == out.body_class && row.generation == generation) {
      c = row;
      found = true;
    }
  }
  if (!found) {
    // Another TPU: the widest band of the five generations, the largest central slope.
    bool first = true;
    for (const Coefficients& row : kTable) {
      if (row.body_class != out.body_class) continue;
      c.low = first ? row.low : std::min(c.low, row.low);
      c.high = first ? row.high : std::max(c.high, row.high);
      c.slope = first ? row.slope : std::max(c.slope, row.slope);
      first = false;
    }
  }
  // Spill slots are whole vector registers (4 KiB: 8 sublanes x 128 lanes x 32 bit; every SPILL
  // allocation of the corpus is a multiple of 4096 B): the bounds are rounded to them.
  const std::string& f = out.figure;
  const std::string low = absl::StrCat(f, " * ", c.low, " / 1000");
  const std::string high = absl::StrCat("cdiv(", f, " * ", c.high, ", 1000)");
  out.low = absl::StrCat("round_up(", low, ", 4096)");
  out.high = absl::StrCat("round_up(", high, ", 4096)");
  out.central = absl::StrCat("round_up(min(max(", f, " * ", c.slope, " / 1000 - ", c.offset, ", ", low, "), ", high,
                             "), 4096)");
  const char* figure_name = out.body_class == BodyClass::kReduction  ? "reduction_live_bytes"
                            : out.body_class == BodyClass::kDot       ? "packed_dot_bytes"
                            : out.body_class == BodyClass::kDot32     ? "dot_bytes"
                            : out.body_class == BodyClass::kTranspose ? "packed_transpose_bytes"
                                                                      : "max(reduction_live_bytes, reduction_input_bytes / 2)";
  out.basis = absl::StrCat("register spills, ", BodyClassName(out.body_class), " body: ", Permille(c.low), " to ",
                           Permille(c.high), " x ", figure_name, ", central ", Permille(c.slope), " x",
                           c.offset > 0 ? absl::StrCat(" - ", c.offset, " B") : "",
                           found ? absl::StrCat(" (libtpu 0.0.42.1 corpus fit, ", generation, ")")
                                 : " (libtpu 0.0.42.1 corpus fit: the widest band of v4-v7x, this TPU is not in the corpus)");
  return out;
}

}  // namespace scratchsim
