// Upstream: third_party/amd/lib/TritonAMDGPUToLLVM/OptimizeLDSUsage.cpp (tryFitCvtIntoLDS) and
// OptimizeLDSUtility.cpp (factorizePowerOf2, createTmpLayout, estimateResourcesForReplacement).
#include "backends/triton/amd_lds_usage.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "sim/status_macros.h"

namespace scratchsim::triton {
namespace {

// Every way to split `warps` (a power of two) over `rank` dimensions as powers of two, the first
// dimension's share growing slowest (factorizePowerOf2's order).
void WarpSplits(int rank, int twos, std::vector<int64_t>& cur, std::vector<std::vector<int64_t>>& out) {
  const int dim = static_cast<int>(cur.size());
  if (dim == rank) {
    if (twos == 0) out.push_back(cur);
    return;
  }
  for (int i = 0; i <= twos; ++i) {
    cur.push_back(int64_t{1} << i);
    WarpSplits(rank, twos - i, cur, out);
    cur.pop_back();
  }
}

std::string ListText(const std::vector<int64_t>& v) { return absl::StrCat("[", absl::StrJoin(v, ", "), "]"); }

// `enc` with its warpsPerCTA list replaced; empty when it has none.
std::string WithWarps(absl::string_view enc, const std::vector<int64_t>& warps) {
  const size_t at = enc.find("warpsPerCTA = [");
  if (at == absl::string_view::npos) return "";
  const size_t open = at + std::string_view("warpsPerCTA = ").size();
  const size_t close = enc.find(']', open);
  if (close == absl::string_view::npos) return "";
  return absl::StrCat(enc.substr(0, open), ListText(warps), enc.substr(close + 1));
}

absl::string_view Resolved(const LayoutContext& ctx, absl::string_view enc) {
  const auto it = ctx.aliases.find(std::string(enc));
  return it == ctx.aliases.end() ? enc : absl::string_view(it->second);
}

// createTmpLayout: the layout with the warps split as `warps`; a dot operand's parent takes the
// split, a slice keeps its parent's warps (so it is the layout itself); anything else (linear
// layouts) gives none.
std::string TmpLayout(const LayoutContext& ctx, absl::string_view enc_in, const std::vector<int64_t>& warps) {
  const absl::string_view enc = Resolved(ctx, enc_in);
  if (absl::StartsWith(enc, "#ttg.blocked<") || absl::StartsWith(enc, "#ttg.amd_mfma<") ||
      absl::StartsWith(enc, "#ttg.amd_wmma<")) {
    return WithWarps(enc, warps);
  }
  if (absl::StartsWith(enc, "#ttg.slice<")) return std::string(enc);
  if (absl::StartsWith(enc, "#ttg.dot_op<")) {
    // Printed parents are aliases ("parent = #mma"): the parent with the new warps in its place.
    const size_t at = enc.find("parent = ");
    if (at == absl::string_view::npos) return "";
    const size_t from = at + std::string_view("parent = ").size();
    const size_t to = enc.find_first_of(",}", from);
    if (to == absl::string_view::npos) return "";
    const std::string parent = TmpLayout(ctx, enc.substr(from, to - from), warps);
    if (parent.empty()) return "";
    return absl::StrCat(enc.substr(0, from), parent, enc.substr(to));
  }
  return "";
}

std::string TensorText(const TensorType& t, absl::string_view alias) {
  return absl::StrCat("tensor<", absl::StrJoin(t.shape, "x"), "x", t.element, ", ", alias, ">");
}

}  // namespace

int64_t AmdLdsBytes(absl::string_view target) { return target == "hip:gfx950" ? 160 * 1024 : 64 * 1024; }

absl::StatusOr<std::optional<int64_t>> SplitConversionLds(const TtgirOp& op, const LayoutContext& ctx,
                                                          int64_t target_bytes, absl::string_view origin) {
  const std::vector<TensorType> types = TensorTypes(op.text);
  if (types.size() != 2) return std::optional<int64_t>();
  const TensorType& src = types[0];
  const TensorType& dst = types[1];
  const int rank = static_cast<int>(src.shape.size());
  int twos = 0;
  while ((int64_t{1} << twos) < ctx.num_warps) ++twos;
  if (rank < 1 || (int64_t{1} << twos) != ctx.num_warps) return std::optional<int64_t>();
  std::vector<std::vector<int64_t>> splits;
  std::vector<int64_t> cur;
  WarpSplits(rank, twos, cur, splits);
  // The plain blocked layout: one element per thread, the lanes over the two fastest
  // dimensions (8 along the last), in the source's order.
  ASSIGN_OR_RETURN(const std::vector<int> order, RegisterOrderOf(ctx, src));
  std::vector<int64_t> ones(rank, 1), lanes(rank, 1);
  if (rank == 1) {
    lanes[0] = ctx.threads_per_warp;
  } else {
    lanes[rank - 1] = ctx.threads_per_warp / 8;
    lanes[rank - 2] = ctx.threads_per_warp / lanes[rank - 1];
  }
  const std::string fallback = absl::StrCat("#ttg.blocked<{sizePerThread = ", ListText(ones), ", threadsPerWarp = ",
                                            ListText(lanes), ", warpsPerCTA = ", ListText(ones), ", order = [",
                                            absl::StrJoin(order, ", "), "]}>");
  std::vector<std::string> tmps;
  for (const std::vector<int64_t>& w : splits) {
    for (absl::string_view enc : {absl::string_view(src.encoding), absl::string_view(dst.encoding),
                                  absl::string_view(fallback)}) {
      std::string t = TmpLayout(ctx, enc, w);
      if (!t.empty()) tmps.push_back(std::move(t));
    }
  }
  // estimateResourcesForReplacement: the scratch of src -> tmp and of tmp -> dst, by 3.6's
  // allocator (the release that runs the pass on the module after its TTGIR).
  std::map<std::string, std::string> aliases(ctx.aliases.begin(), ctx.aliases.end());
  aliases["#lds_src"] = std::string(Resolved(ctx, src.encoding));
  aliases["#lds_dst"] = std::string(Resolved(ctx, dst.encoding));
  std::optional<int64_t> best_swizzled, best_padded;
  for (const std::string& t : tmps) {
    aliases["#lds_tmp"] = t;
    LayoutContext c{aliases, ctx.num_warps, ctx.threads_per_warp, ctx.compute_capability, ctx.num_banks,
                    ctx.amd_arch, TritonRelease::k3_6};
    // Both halves swizzled (the allocator's default), or both padded.
    int64_t padded = 0, swizzled = 0;
    for (auto [from, to] : {std::pair{"#lds_src", "#lds_tmp"}, std::pair{"#lds_tmp", "#lds_dst"}}) {
      for (const bool pad : {true, false}) {
        const std::string text = absl::StrCat("%1 = ttg.convert_layout %0 ", pad ? "{amdg.use_padded_scratch_shmem} " : "",
                                              ": ", TensorText(src, from), " -> ", TensorText(dst, to));
        TtgirOp half;
        half.line = op.line;
        half.kind = TtgirOpKind::kConvertLayout;
        half.name = "ttg.convert_layout";
        half.text = text;
        ASSIGN_OR_RETURN(const ScratchNeed need, ScratchFor(half, c, true, origin));
        int64_t& lds = pad ? padded : swizzled;
        lds = std::max(lds, need.bytes);
      }
    }
    if (!best_swizzled || swizzled < *best_swizzled) best_swizzled = swizzled;
    if (!best_padded || padded < *best_padded) best_padded = padded;
  }
  // The cheapest swizzled split when it is below the target, else the cheapest padded one below
  // it (its two conversions then marked amdg.use_padded_scratch_shmem), else none.
  if (best_swizzled && *best_swizzled < target_bytes) return best_swizzled;
  if (best_padded && *best_padded < target_bytes) return best_padded;
  return std::optional<int64_t>();
}

}  // namespace scratchsim::triton
