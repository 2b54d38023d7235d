#include "backends/tpu/spill_model.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "backends/tpu/tpu_tiling.h"
#include "backends/tpu/vreg_replay.h"
#include "sim/checked_math.h"
#include "sim/dtype.h"
#include "sim/expr.h"

namespace scratchsim {
namespace {

// Spill slots = multiple x figure, per class and generation, in 1/1000: low and its offset
// (low = low x figure - low_offset, at least 0), central slope and offset (central = slope x
// figure - offset, kept within [low, high]), high and its offset (high x figure + high_offset).
// The matmul and transpose classes' low is additive (what the body holds less the most the vector
// registers absorb of it), or 0 on generations where large blocks spill less than half of it; the
// 16- and 32-bit matmuls' high takes its multiple from blocks of 1 MiB or more and what small
// blocks spill beyond it as the offset; the 32-bit central is what the body holds less the median
// the registers keep. Blocks of at most small_rows rows whose dot holds nothing still spill a few
// registers: their high bound adds small_offset. Low and high are the extremes of the fit data
// over all generations (high with a 10% margin), per generation for the matmul classes (the MXU's
// shape differs); central is per generation. A TPU other than the five takes the widest band.
// Fitted by bench/tpu/fit_spill_model.py on half of the libtpu oracle corpus and the spill sweeps
// (tests/data/tpu/README.md lists them); the fit, its data and the other half's judgement:
// docs/tpu.md, "The coefficients".
struct Coefficients {
  BodyClass body_class;
  const char* generation;
  int64_t low, low_offset, slope, offset, high, high_offset;
  int64_t small_offset = 0;  // the matmul classes: added to the high bound for blocks of at most
  int64_t small_rows = 0;    // small_rows rows (a dot's m), which spill a few registers anyway
};

constexpr Coefficients kTable[] = {
    {BodyClass::kReduction, "v4", 0, 0, 1000, 440320, 1001, 196084, 0, 0},
    {BodyClass::kReduction, "v5e", 0, 0, 1000, 534528, 1001, 0, 0, 0},
    {BodyClass::kReduction, "v5p", 0, 0, 1000, 507904, 1001, 0, 0, 0},
    {BodyClass::kReduction, "v6e", 0, 0, 1000, 581632, 1001, 0, 0, 0},
    {BodyClass::kReduction, "v7x", 0, 0, 1000, 585728, 1001, 0, 0, 0},
    {BodyClass::kAttention, "v4", 0, 0, 592, 729269, 1136, 0, 0, 0},
    {BodyClass::kAttention, "v5e", 0, 0, 633, 742110, 902, 0, 0, 0},
    {BodyClass::kAttention, "v5p", 0, 0, 642, 782735, 902, 0, 0, 0},
    {BodyClass::kAttention, "v6e", 0, 0, 464, 161299, 918, 0, 0, 0},
    {BodyClass::kAttention, "v7x", 0, 0, 576, 0, 959, 0, 0, 0},
    {BodyClass::kLooped, "v4", 0, 0, 623, 0, 1385, 0, 0, 0},
    {BodyClass::kLooped, "v5e", 0, 0, 1009, 0, 1385, 0, 0, 0},
    {BodyClass::kLooped, "v5p", 0, 0, 1025, 0, 1385, 0, 0, 0},
    {BodyClass::kLooped, "v6e", 0, 0, 901, 0, 1385, 0, 0, 0},
    {BodyClass::kLooped, "v7x", 0, 0, 864, 0, 1385, 0, 0, 0},
    {BodyClass::kMatmul, "v4", 1000, 527155, 973, 5975, 1101, 246907, 112641, 512},
    {BodyClass::kMatmul, "v5e", 1000, 590234, 969, 126343, 1064, 76280, 112641, 512},
    {BodyClass::kMatmul, "v5p", 1000, 590234, 953, 98946, 1057, 80041, 112641, 512},
    {BodyClass::kMatmul, "v6e", 0, 0, 980, 433437, 1228, 0, 112641, 512},
    {BodyClass::kMatmul, "v7x", 0, 0, 351, 0, 1304, 0, 112641, 512},
    {BodyClass::kMatmul8, "v4", 0, 0, 301, 0, 1977, 0, 117146, 512},
    {BodyClass::kMatmul8, "v5e", 0, 0, 188, 0, 1376, 0, 117146, 512},
    {BodyClass::kMatmul8, "v5p", 0, 0, 197, 100570, 1376, 0, 117146, 512},
    {BodyClass::kMatmul8, "v6e", 0, 0, 404, 0, 1977, 0, 117146, 512},
    {BodyClass::kMatmul8, "v7x", 0, 0, 1744, 1637581, 1585, 0, 117146, 512},
    {BodyClass::kMatmul32, "v4", 1000, 67584, 1000, 49152, 1001, -7371, 306381, 256},
    {BodyClass::kMatmul32, "v5e", 1000, 220774, 1000, 192512, 1001, 662324, 306381, 256},
    {BodyClass::kMatmul32, "v5p", 1000, 220774, 1000, 184320, 1001, 662324, 306381, 256},
    {BodyClass::kMatmul32, "v6e", 0, 0, 1000, 176128, 1001, 446055, 306381, 256},
    {BodyClass::kMatmul32, "v7x", 0, 0, 1000, 387072, 1001, 671335, 306381, 256},
    {BodyClass::kDot, "v4", 0, 0, 1359, 268009, 1884, 0, 0, 0},
    {BodyClass::kDot, "v5e", 0, 0, 953, 0, 1871, 0, 0, 0},
    {BodyClass::kDot, "v5p", 0, 0, 955, 0, 1829, 0, 0, 0},
    {BodyClass::kDot, "v6e", 0, 0, 1286, 547923, 2531, 0, 0, 0},
    {BodyClass::kDot, "v7x", 0, 0, 836, 0, 2572, 0, 0, 0},
    {BodyClass::kDot32, "v4", 0, 0, 1359, 268009, 1884, 0, 0, 0},
    {BodyClass::kDot32, "v5e", 0, 0, 953, 0, 1871, 0, 0, 0},
    {BodyClass::kDot32, "v5p", 0, 0, 955, 0, 1829, 0, 0, 0},
    {BodyClass::kDot32, "v6e", 0, 0, 1286, 547923, 2531, 0, 0, 0},
    {BodyClass::kDot32, "v7x", 0, 0, 836, 0, 2572, 0, 0, 0},
    {BodyClass::kTranspose, "v4", 1000, 112640, 1000, 45056, 1001, -28310, 0, 0},
    {BodyClass::kTranspose, "v5e", 1000, 279347, 1000, 147456, 1001, -125336, 0, 0},
    {BodyClass::kTranspose, "v5p", 1000, 279347, 1000, 147456, 1001, -125336, 0, 0},
    {BodyClass::kTranspose, "v6e", 1000, 270336, 1000, 204800, 1001, -184319, 0, 0},
    {BodyClass::kTranspose, "v7x", 1000, 270336, 1000, 204800, 1001, -184319, 0, 0},
};

// The ops and the most whole-operand ops one region has of the bodies each class's band was fitted
// on or checked against (backends/tpu/testdata/validated_bodies.pbtxt.gz, written by
// bench/tpu/validated_bodies.py). VregReplayTest.ValidatedSignaturesAreTheFitBodies keeps this
// table equal to what those bodies replay to; SCRATCHSIM_UPDATE_GOLDEN=1 prints it.
struct ValidatedSignature {
  BodyClass body_class;
  int max_barriers;
  const char* ops;  // space-separated primitives
};
constexpr ValidatedSignature kValidated[] = {
#include "backends/tpu/validated_signatures.inc"
};

// The shapes each band was drawn from (backends/tpu/spill_coverage.inc, written by
// bench/tpu/spill_coverage.py from the compiles the band was fitted on or is tested to contain;
// tests/python/test_tpu_spill_coverage.py keeps it equal to them): per class, generation and
// regime (a figure of 0 is the MXU rule's claim that the dot holds nothing, seen only on the
// blocks it was seen on), the range of the figure and, for the one-dot matmul classes, of the
// dot's m, k and n, its left operand m x k and its result m x n: the blocks the vreg replay holds
// across the dot. [0, 0]: the class has no such dimension.
struct ShapeCoverage {
  BodyClass body_class;
  const char* generation;
  bool figure_zero;
  int64_t figure[2], m[2], k[2], n[2], mk[2], mn[2];
};
constexpr ShapeCoverage kCoverage[] = {
#include "backends/tpu/spill_coverage.inc"
};

// Generations whose Mosaic re-reads a 16-bit left operand from VMEM for each MXU column while k
// fits the MXUs at once, instead of keeping it in vector registers (no 16-bit block with k <= 512
// of tests/data/tpu/corpus.jsonl.gz spills its left operand there).
constexpr const char* kRereadsLeftOperand[] = {"v6e", "v7x"};
// Generations on which a dot whose result is merged under a mask (PallasDot.masked_merge) does not
// keep a second column of f32 partials (Megablox gmm in the corpus). A TPU other than the five
// counts it twice, the larger figure.
constexpr const char* kMaskedMergeCountsOneColumn[] = {"v6e", "v7x"};

// Generations whose Mosaic turns an 8-bit (or 4-bit) transpose without widening its operand to 16
// bits and holding it whole (tests/data/tpu/transpose_spill_sweep.jsonl.gz). A TPU other than the
// five is taken to widen, the larger figure.
constexpr const char* kTurnsEightBitTransposeUnwidened[] = {"v5e", "v5p", "v6e", "v7x"};

// What the vector registers keep of a widened load when it spills: the median over the unaligned8
// sweep's spilling blocks, in bytes of 4 KiB vregs.
constexpr int64_t kWidenedLoadKeptBytes = 23 * 4096;

bool Given(const std::string& figure) { return !figure.empty() && figure != "0"; }


// The width of `dtype` in bits; 32 where it is not a TPU dtype (the lowering refuses those).
int64_t WidthBits(const std::string& dtype) {
  absl::StatusOr<std::string> canonical = NormalizeTpuDtype(dtype);
  absl::StatusOr<int64_t> bits = canonical.ok() ? DtypeBits(*canonical) : absl::StatusOr<int64_t>(32);
  return bits.ok() ? *bits : 32;
}

// The widest dot operand of the body in bytes (its dot_dtypes; 4 where none is readable), the
// width its left operand takes in vector registers.
int64_t OperandBytes(const PallasBody& body) {
  int64_t widest = 0;
  for (const std::string& dtype : body.dot_dtypes()) {
    widest = std::max(widest, std::max<int64_t>(1, WidthBits(dtype) / 8));
  }
  return widest > 0 ? widest : 4;
}

// Rows of one vector register tile for operands `operand_bytes` wide: 8 sublanes of 32 bits, so
// 16-bit rows pack two to a sublane and 8-bit rows four.
int64_t PackedRowTile(int64_t operand_bytes) { return 8 * std::max<int64_t>(1, 4 / operand_bytes); }

// The largest of `per_item` over `items` (a body's dots or transposes), as an expression; "0"
// without items.
template <typename Items, typename PerItem>
std::string MaxOver(const Items& items, PerItem per_item) {
  std::string most;
  for (const auto& item : items) {
    const std::string one = per_item(item);
    most = most.empty() ? one : absl::StrCat("max(", most, ", ", one, ")");
  }
  return most.empty() ? "0" : most;
}

// The class's band alone (EstimateSpills adds the widened loads).
SpillEstimate EstimateClassSpills(const PallasBody& body, const DeviceModel& device);

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
    // Named by what the body holds, not by the kernel: RMSNorm + matmul and decode attention
    // are of these classes too.
    case BodyClass::kAttention: return "reduction-and-dot";
    case BodyClass::kLooped: return "looped reduction-and-dot";
    case BodyClass::kMatmul: return "matmul";
    case BodyClass::kMatmul8: return "8-bit matmul";
    case BodyClass::kMatmul32: return "32-bit matmul";
    case BodyClass::kDot: return "dot";
    case BodyClass::kDot32: return "32-bit dot";
    case BodyClass::kTranspose: return "transpose";
  }
  return "?";
}

absl::string_view BodyClassEnumerator(BodyClass c) {
  switch (c) {
    case BodyClass::kStreaming: return "kStreaming";
    case BodyClass::kReduction: return "kReduction";
    case BodyClass::kAttention: return "kAttention";
    case BodyClass::kLooped: return "kLooped";
    case BodyClass::kMatmul: return "kMatmul";
    case BodyClass::kMatmul8: return "kMatmul8";
    case BodyClass::kMatmul32: return "kMatmul32";
    case BodyClass::kDot: return "kDot";
    case BodyClass::kDot32: return "kDot32";
    case BodyClass::kTranspose: return "kTranspose";
  }
  return "?";
}

BodyClass ClassifyBody(const PallasBody& body) {
  const bool dot = Given(body.dot_bytes()) || Given(body.packed_dot_bytes());
  if (Given(body.reduction_live_bytes())) {
    if (!dot) return BodyClass::kReduction;
    return body.rolled_loops() > 0 ? BodyClass::kLooped : BodyClass::kAttention;
  }
  const bool one_dot = body.dots_size() == 1 && (body.dots(0).count().empty() || body.dots(0).count() == "1");
  if (Given(body.packed_dot_bytes())) {
    if (!one_dot) return BodyClass::kDot;
    return OperandBytes(body) == 1 ? BodyClass::kMatmul8 : BodyClass::kMatmul;
  }
  if (dot) return one_dot ? BodyClass::kMatmul32 : BodyClass::kDot32;
  if (Given(body.packed_transpose_bytes())) return BodyClass::kTranspose;
  return BodyClass::kStreaming;
}

std::string DotHeldBytes(const PallasDot& dot, int64_t operand_bytes, const DeviceModel& device) {
  // MXU geometry: JAX tpu_info.py via models/devices/tpu_*.textproto.
  const int64_t edge = MxuEdge(device);
  const int64_t mxus = MxuCount(device);
  const int64_t row_tile = PackedRowTile(operand_bytes);
  const std::string k_tiles = absl::StrCat("cdiv(", dot.k(), ", ", edge, ")");
  const std::string n_tiles = absl::StrCat("cdiv(", dot.n(), ", ", edge, ")");
  // 32-bit operands go through the MXU in several 16-bit passes, each read from VMEM: nothing of
  // the left operand stays in registers, and the partials' column is as wide as n where n is
  // narrower than the MXU (the f32 corpus: 16-bit blocks of n = 128 on v6e's 256-wide MXUs have
  // not been seen to differ).
  const bool wide = operand_bytes >= 4;
  const std::string lhs =
      wide ? "0" : absl::StrCat("round_up(", dot.m(), ", ", row_tile, ") * round_up(", dot.k(), ", 128) * ", operand_bytes);
  const std::string column = wide ? absl::StrCat("min(", edge, ", round_up(", dot.n(), ", 128))") : absl::StrCat(edge);
  const std::string partials = absl::StrCat("round_up(", dot.m(), ", 8) * ", column, " * 4");
  // 0/1 conditions written with min/max: more weight tiles than MXUs; more than one MXU column
  // of tiles (and, where Mosaic re-reads the left operand while k fits, more k passes than MXUs);
  // more k passes than MXUs.
  const std::string more_k_passes = absl::StrCat("min(1, max(0, ", k_tiles, " - ", mxus, "))");
  // The partials' column is kept where k's passes do not fill the MXUs evenly: more passes than
  // MXUs, fewer that do not divide them, or several whose last is partial (the odd-block matmul
  // sweep: k = 384 spills held + about one column on v4-v5p, 3 passes of four 128-edge MXUs, and
  // up to 0.8 of one on v6e and v7x, 1.5 passes of two 256-edge MXUs).
  const std::string uneven_k_passes =
      absl::StrCat("min(1, max(0, ", k_tiles, " - ", mxus, ") + ", mxus, " % ", k_tiles, " + min(1, max(0, ",
                   k_tiles, " - 1)) * min(1, (", dot.k(), ") % ", edge, "))");
  const std::string several_n_tiles = RightOperandSpansSeveralMxuTilesExpr(dot.n(), device);
  const std::string lhs_reused = absl::c_linear_search(kRereadsLeftOperand, TpuGeneration(device))
                                     ? absl::StrCat(several_n_tiles, " * ", more_k_passes)
                                     : several_n_tiles;
  const int columns =
      dot.masked_merge() && !absl::c_linear_search(kMaskedMergeCountsOneColumn, TpuGeneration(device)) ? 2 : 1;
  return absl::StrCat("min(1, max(0, ", k_tiles, " * ", n_tiles, " - ", mxus, ")) * (", lhs, " * ", lhs_reused, " + ",
                      columns, " * ", partials, " * ", uneven_k_passes, ")");
}

std::string LargestDotBytes(const PallasBody& body, const DeviceModel& device) {
  const int64_t operand_bytes = OperandBytes(body);
  const int64_t row_tile = PackedRowTile(operand_bytes);  // the right operand's rows (k) pack as the left's
  return MaxOver(body.dots(), [&](const PallasDot& dot) {
    // The f32 result (rows to the 8-sublane tile, columns to 128 lanes), what the dot holds, and
    // its right operand (k x n, the MXU's weights): without it flash attention's backward dkv at
    // head_dim 256 spills up to 2.4 x the rest (tests/data/tpu/flash_backward_d256_spill_sweep.jsonl.gz).
    return absl::StrCat("round_up(", dot.m(), ", 8) * round_up(", dot.n(), ", 128) * 4 + ",
                        DotHeldBytes(dot, operand_bytes, device), " + round_up(", dot.k(), ", ", row_tile,
                        ") * round_up(", dot.n(), ", 128) * ", operand_bytes);
  });
}

std::string TransposeHeldBytes(const PallasValue& transpose, const DeviceModel& device) {
  const int64_t width = WidthBits(transpose.dtype());
  const std::string cols = absl::StrCat("round_up(", transpose.cols(), ", 128)");
  if (width == 16) {
    // One strip of 128 rows (16 packed rows to a vreg sublane pair: 8 vregs per 128 columns) with
    // all its columns; operands of at most 128 rows turn without holding (0/1 by min/max).
    return absl::StrCat("min(1, max(0, (", transpose.rows(), ") - 128)) * 128 * ", cols, " * 2");
  }
  if (width < 16 && !absl::c_linear_search(kTurnsEightBitTransposeUnwidened, TpuGeneration(device))) {
    return absl::StrCat("round_up(", transpose.rows(), ", 16) * ", cols, " * 2");
  }
  return "0";
}

std::string UnalignedNarrowLoadHeldBytes(const PallasValue& load, const DeviceModel& device) {
  if (WidthBits(load.dtype()) >= 16 || !WidensUnalignedNarrowLoads(device)) {
    return "0";
  }
  // 32-bit values: rows to the 8-sublane tile, columns to 128 lanes; leading dims fold into the
  // rows (a (4, 1024, 130) block spills as (4096, 130) does).
  return absl::StrCat("(", load.count().empty() ? "1" : load.count(), ") * round_up(", load.rows(),
                      ", 8) * round_up(", load.cols(), ", 128) * 4");
}

namespace {

// What the largest of the body's unaligned narrow loads holds widened on `device`, as an
// expression in bytes; "" where nothing is widened.
std::string WidenedLoadHeldBytes(const PallasBody& body, const DeviceModel& device) {
  std::vector<std::string> widened;  // what each load widened on this device holds
  for (const PallasValue& load : body.unaligned_narrow_loads()) {
    std::string bytes = UnalignedNarrowLoadHeldBytes(load, device);
    if (bytes != "0") widened.push_back(std::move(bytes));
  }
  return widened.empty() ? "" : MaxOver(widened, [](const std::string& bytes) { return bytes; });
}

// The central spills of a widened load holding `held`: that less what the registers keep.
std::string WidenedLoadCentral(const std::string& held) {
  return absl::StrCat("max(0, ", held, " - ", kWidenedLoadKeptBytes, ")");
}

// The spills of a body's unaligned narrow loads, added to its class's estimate: 0 to the largest
// widened load, central that less what the registers keep. Unchanged where nothing is widened.
void AddWidenedLoads(const PallasBody& body, const DeviceModel& device, SpillEstimate& out) {
  const std::string held = WidenedLoadHeldBytes(body, device);
  if (held.empty()) return;
  const std::string central = WidenedLoadCentral(held);
  const std::string words = absl::StrCat(
      "0 to 1.000 x the largest 8-bit load of unaligned width widened to 32 bits, central that less ",
      kWidenedLoadKeptBytes / 4096, " vregs (", TpuGeneration(device).empty() ? "a TPU" : TpuGeneration(device),
      ", tests/data/tpu/unaligned8_spill_sweep.jsonl.gz)");
  if (out.body_class == BodyClass::kStreaming) {
    out.figure = held;
    out.central = central;
    out.high = held;
    out.basis = absl::StrCat("register spills, streaming body: ", words);
    return;
  }
  out.central = absl::StrCat(out.central, " + ", central);
  out.high = absl::StrCat(out.high, " + ", held);
  out.basis = absl::StrCat(out.basis, "; plus ", words);
}

// The vector type of value `id` of the region, if it is a vector; none for a ref, a scalar, a word
// that does not parse or an index out of range (the replay names those).
std::optional<VregValueType> VectorTypeAt(const PallasRegion& region, int32_t id) {
  if (id < 0 || id >= region.values_size()) return std::nullopt;
  absl::StatusOr<VregValueType> type = ParseValueType(region.values(id), "");
  if (!type.ok() || !type->vector) return std::nullopt;
  return *std::move(type);
}

// The 32-bit values a body widens from 16-bit loads (converts from a 16-bit type to a 32-bit one),
// all of them, where the body rolls lanes (an XLU permute): LLO runs the later values' loads and
// unpacks ahead of the roll and holds them (docs/validation/data/tpu/rotate-heads-spill-probe.txt:
// eight rotated heads spill the whole block at 32 bits on v6e), so the program order's peak does
// not bound the slots there. 0 for a body without a roll.
int64_t UnpackedAheadOfAnXluBytes(const PallasBody& body) {
  bool rolls = false;
  int64_t unpacked = 0;
  for (const PallasRegion& region : body.program()) {
    for (const PallasOp& op : region.ops()) {
      if (op.op() == "roll") rolls = true;
      if (op.op() != "convert_element_type" || op.operands_size() < 1 || op.results_size() < 1) continue;
      const std::optional<VregValueType> narrow = VectorTypeAt(region, op.operands(0));
      const std::optional<VregValueType> wide = VectorTypeAt(region, op.results(0));
      if (narrow && wide && narrow->bits == 16 && wide->bits == 32) {
        unpacked = CheckedAdd(unpacked, VregBytes(*wide, /*widened=*/true)).value_or(std::numeric_limits<int64_t>::max());
      }
    }
  }
  return rolls ? unpacked : 0;
}

// The largest dot operand a body computes from 8-bit (or 4-bit) values, at 32 bits, on a
// generation whose Mosaic unpacks it whole before the MXU takes it; 0 elsewhere, or without one.
int64_t ConvertedNarrowDotOperandBytes(const PallasBody& body, const DeviceModel& device) {
  if (!UnpacksConvertedNarrowDotOperands(device)) return 0;
  int64_t largest = 0;
  for (const PallasRegion& region : body.program()) {
    std::vector<int> defining(region.values_size(), -1);
    for (int i = 0; i < region.ops_size(); ++i) {
      for (const int32_t result : region.ops(i).results()) {
        if (result >= 0 && result < region.values_size()) defining[result] = i;
      }
    }
    for (const PallasOp& op : region.ops()) {
      if (op.op() != "dot_general") continue;
      for (int i = 0; i < std::min(2, op.operands_size()); ++i) {
        if (!ComputedFromNarrowConvert(region, defining, op.operands(i))) continue;
        const std::optional<VregValueType> operand = VectorTypeAt(region, op.operands(i));
        const int64_t copies = std::max(1, region.unrolled());
        largest = std::max(largest, copies * VregBytes(*operand, /*widened=*/true));
      }
    }
  }
  return largest;
}

// The spills of a dot operand converted from 8-bit values and unpacked whole to 32 bits (v4): at
// least what the register file cannot hold of it, central that less what the registers keep of a
// widened value, at most all of it; added to the class's band, which no such body was fitted on.
void AddConvertedNarrowDotOperands(const PallasBody& body, const DeviceModel& device, SpillEstimate& out) {
  const int64_t converted = ConvertedNarrowDotOperandBytes(body, device);
  if (converted == 0) return;
  const std::string words = absl::StrCat(
      "a dot operand converted from 8-bit values unpacked whole to 32 bits (", converted, " B): at least that less ",
      kVregFileBytes / 4096, " vregs (the register file), central that less ", kWidenedLoadKeptBytes / 4096,
      " vregs, at most all of it (", TpuGeneration(device).empty() ? "a TPU" : TpuGeneration(device),
      ", tests/data/tpu/converted_dot_operand_probe.txt)");
  const int64_t low = std::max<int64_t>(0, converted - kVregFileBytes);
  const int64_t central = std::max<int64_t>(0, converted - kWidenedLoadKeptBytes);
  if (out.body_class == BodyClass::kStreaming) {
    out.figure = absl::StrCat(converted);
    out.low = absl::StrCat(low);
    out.central = absl::StrCat(central);
    out.high = absl::StrCat(converted);
    out.basis = absl::StrCat("register spills, streaming body: ", words);
    return;
  }
  out.low = absl::StrCat(out.low, " + ", low);
  out.central = absl::StrCat(out.central, " + ", central);
  out.high = absl::StrCat(out.high, " + ", converted);
  out.basis = absl::StrCat(out.basis, "; plus ", words);
}

// A body whose ops or pattern no fitted body of its class has, or whose shape lies outside the
// shapes its band was drawn from (ShapesOutsideTheFit): the class's band is not evidence for it,
// so the band widens to what the vreg replay proves. Low 0 (nothing fitted says it spills
// at least that), or what the register file cannot hold of a dot operand unpacked whole from 8 bits
// (ConvertedNarrowDotOperandBytes); central the computed values the replay holds across a barrier (loads left out:
// LLO loads a block again rather than keeping it; docs/tpu.md, "How libtpu allocates spill
// slots") less v4's register file (kVregFileBytes), plus any widened unaligned loads' term, and
// not the class's central, for which the class is no evidence; high the replay's bound on spill
// slots (SpillBoundBytes, which counts a widened load at 32 bits and holds libtpu's slots on every
// recorded compile), not the class's high either. The patterns are named in the basis, which the
// report prints.
void WidenForUnvalidatedPatterns(const PallasBody& body, const DeviceModel& device, const VregReplay* replay,
                                 SpillEstimate& out) {
  if (body.program_size() == 0 || replay == nullptr) return;
  std::vector<std::string> unvalidated = UnvalidatedPatterns(out.body_class, *replay);
  for (std::string& outside : ShapesOutsideTheFit(body, out, device)) unvalidated.push_back(std::move(outside));
  if (unvalidated.empty()) return;
  out.unvalidated = absl::StrJoin(unvalidated, ", ");
  const int64_t held_beyond_file = std::max<int64_t>(0, replay->peak_computed_held_bytes - kVregFileBytes);
  const std::string widened_load = WidenedLoadHeldBytes(body, device);
  const std::string held = widened_load.empty()
                               ? absl::StrCat(held_beyond_file)
                               : absl::StrCat(held_beyond_file, " + ", WidenedLoadCentral(widened_load));
  const int64_t replay_bound = SpillBoundBytes(*replay), unpacked_ahead = UnpackedAheadOfAnXluBytes(body);
  const int64_t converted = ConvertedNarrowDotOperandBytes(body, device);
  const int64_t bound = std::max({replay_bound, unpacked_ahead, converted});
  out.low = absl::StrCat(std::max<int64_t>(0, converted - kVregFileBytes));
  const int64_t converted_central = std::max<int64_t>(0, converted - kWidenedLoadKeptBytes);
  // What the largest 16-bit dot keeps across its MXU passes (DotHeldBytes: the left operand, loaded
  // or not, and a column of partials), on top of an operand unpacked whole from 8 bits: a bf16 dot
  // spills that whatever its operands are computed from (tests/data/tpu/streamed_dot_operand_probe.txt:
  // on v5e-v7x a right operand converted from 8 bits spills as the bf16 dot of the same shape). The
  // probe has no dot of 8-bit operands, whose MXU passes differ.
  const int64_t operand_bytes = OperandBytes(body);
  const std::string dot_held = body.dots_size() == 0 || operand_bytes != 2
                                   ? ""
                                   : MaxOver(body.dots(), [&](const PallasDot& dot) {
                                       return DotHeldBytes(dot, operand_bytes, device);
                                     });
  // What the central and the high are at least beyond the replay's figures ("": nothing more).
  const std::string central_floor = !dot_held.empty()     ? absl::StrCat(converted_central, " + ", dot_held)
                                    : converted_central > 0 ? absl::StrCat(converted_central)
                                                            : "";
  const std::string high_floor = dot_held.empty() ? "" : absl::StrCat(converted, " + ", dot_held);
  out.central = central_floor.empty() ? absl::StrCat("round_up(", held, ", 4096)")
                                      : absl::StrCat("round_up(max(", held, ", ", central_floor, "), 4096)");
  const std::string replay_high = absl::StrCat("max(", bound, ", ", held, ")");
  out.high = high_floor.empty() ? absl::StrCat("round_up(", replay_high, ", 4096)")
                                : absl::StrCat("round_up(max(", replay_high, ", ", high_floor, "), 4096)");
  out.basis = absl::StrCat(
      out.basis.empty() ? "register spills" : out.basis, "; widened, as the ", BodyClassName(out.body_class),
      " band is not validated for ", out.unvalidated, ": ",
      converted > kVregFileBytes ? absl::StrCat(out.low, " B (what the register file cannot hold of a dot operand "
                                                         "unpacked whole from 8 bits)")
                                 : "0",
      " to ",
      replay->rolled ? "every vector value the body defines (a rolled loop)" : "the program-order peak of live values",
      unpacked_ahead > replay_bound ? ", or the 16-bit values it unpacks, which LLO loads ahead of a roll," : "",
      converted > std::max(replay_bound, unpacked_ahead) ? ", or the dot operand it unpacks whole from 8 bits," : "",
      " (", bound, " B), central the ", replay->peak_computed_held_bytes,
      " B of computed values the vreg replay holds across ",
      replay->computed_peak_at.empty() ? "no whole-operand op" : replay->computed_peak_at,
      " (loads are loaded again) less ", kVregFileBytes, " B (v4's register file)");
}

// What a register file of `file_bytes` cannot keep of `held_bytes` held whole, in whole vregs;
// nothing where it keeps them all.
std::optional<std::string> WholeVregsBeyond(int64_t held_bytes, int64_t file_bytes) {
  const int64_t beyond = held_bytes - file_bytes;
  if (beyond <= 0) return std::nullopt;
  return absl::StrCat(beyond / 4096 * 4096);
}

// A validated band's high is at least the computed values the replay holds whole across a barrier:
// a schedule may spill every one of them (heldout5_families.jsonl.gz: int8 KV decode attention,
// libtpu spilling its whole (16, 16384) f32 score block held across the softmax's max, 1.07 x the
// figure, above the fitted 0.902 x). Its central is at least those values less v4's register file,
// the widened central's figure (WidenForUnvalidatedPatterns): the class's fitted central speaks for
// the corpus's shapes, the replay for this body (heldout12_families.jsonl.gz: whole-sequence
// attention, its score block held across the softmax, at 0.45 x libtpu's slots on the fitted
// central alone). A widened band has both already.
void HoldWhatTheReplayHoldsInTheBand(const VregReplay* replay, SpillEstimate& out) {
  if (replay == nullptr || !out.unvalidated.empty() || replay->peak_computed_held_bytes == 0) return;
  out.high = absl::StrCat("round_up(max(", out.high, ", ", replay->peak_computed_held_bytes, "), 4096)");
  const std::optional<std::string> floor = WholeVregsBeyond(replay->peak_computed_held_bytes, kVregFileBytes);
  if (!floor) return;
  out.central = absl::StrCat("max(", out.central, ", ", *floor, ")");
  out.basis = absl::StrCat(out.basis, "; central at least ", *floor, " B: the ", replay->peak_computed_held_bytes,
                           " B of computed values the vreg replay holds across ", replay->computed_peak_at, " less ",
                           kVregFileBytes, " B (v4's register file)");
}

// What any schedule spills of `held_bytes` held whole: what the device's register file cannot keep
// of them. The band's low is at least that, and its central and high with it; `what` says in the
// basis what holds them.
void HoldAtLeast(int64_t held_bytes, absl::string_view what, const DeviceModel& device, SpillEstimate& out) {
  const std::optional<std::string> floor = WholeVregsBeyond(held_bytes, RegisterFileBytes(device));
  if (!floor) return;
  out.low = absl::StrCat("max(", out.low, ", ", *floor, ")");
  out.central = absl::StrCat("max(", out.central, ", ", *floor, ")");
  out.high = absl::StrCat("max(", out.high, ", ", *floor, ")");
  out.basis = absl::StrCat(out.basis, "; at least ", *floor, " B: the ", held_bytes, " B of ", what,
                           ", less the register file (", device.tpu().vector_registers(), " vregs)");
}

// Two whole holds no schedule avoids (each checked on every recorded compile:
// TpuCorpusTest.SpillsHoldWhatColumnSumsHold, SpillsHoldWhatStoreGroupsHold): the computed values a
// reduction over a block's sublanes holds (it reads every vreg before it yields), and those the
// stores of several outputs hold (each output's stores are one run of LLO's schedule).
void HoldWhatNoScheduleAvoids(const VregReplay* replay, const DeviceModel& device, SpillEstimate& out) {
  if (replay == nullptr) return;
  HoldAtLeast(replay->sublane_reduction_computed_held_bytes,
              "computed values held across a reduction over a block's sublanes, which reads every vreg before it "
              "yields", device, out);
  HoldAtLeast(replay->store_group_held_bytes,
              "computed values the stores of several outputs hold on any order of their runs", device, out);
}

// What the runs of several outputs' stores hold on the program's order, less the register file:
// the central at least, and the high with it (the low stays the least over every order).
void CenterOnStoresInProgramOrder(const VregReplay* replay, const DeviceModel& device, SpillEstimate& out) {
  if (replay == nullptr) return;
  const std::optional<std::string> figure =
      WholeVregsBeyond(replay->store_group_program_order_bytes, RegisterFileBytes(device));
  if (!figure) return;
  out.central = absl::StrCat("max(", out.central, ", ", *figure, ")");
  out.high = absl::StrCat("max(", out.high, ", ", *figure, ")");
  out.basis = absl::StrCat(out.basis, "; central at least ", *figure, " B: the ", replay->store_group_program_order_bytes,
                           " B the stores of several outputs hold in the program's order of their runs, less the "
                           "register file");
}

}  // namespace

SpillEstimate EstimateSpills(const PallasBody& body, const DeviceModel& device) {
  const absl::StatusOr<VregReplay> replay = ReplayVregs(body, device);
  return EstimateSpills(body, device, replay.ok() ? &*replay : nullptr);
}

SpillEstimate EstimateSpills(const PallasBody& body, const DeviceModel& device, const VregReplay* replay) {
  SpillEstimate out = EstimateClassSpills(body, device);
  AddWidenedLoads(body, device, out);
  AddConvertedNarrowDotOperands(body, device, out);
  WidenForUnvalidatedPatterns(body, device, replay, out);
  HoldWhatTheReplayHoldsInTheBand(replay, out);
  HoldWhatNoScheduleAvoids(replay, device, out);
  CenterOnStoresInProgramOrder(replay, device, out);
  return out;
}

std::string ValidatedSignatureTable() {
  std::string out;
  for (const ValidatedSignature& row : kValidated) {
    absl::StrAppend(&out, ValidatedSignatureLine(row.body_class, row.max_barriers, row.ops), "\n");
  }
  return out;
}

std::string ValidatedSignatureLine(BodyClass body_class, int max_barriers, absl::string_view ops) {
  return absl::StrCat("{BodyClass::", BodyClassEnumerator(body_class), ", ", max_barriers, ", \"", ops, "\"},");
}

std::vector<std::string> ShapesOutsideTheFit(const PallasBody& body, const SpillEstimate& estimate,
                                             const DeviceModel& device) {
  std::vector<std::string> out;
  const std::string generation = TpuGeneration(device);
  // Streaming bodies have no band; a TPU other than the five already takes the widest band.
  if (estimate.body_class == BodyClass::kStreaming || generation.empty()) return out;
  // A graph whose figures are expressions (not a traced kernel's constants) keeps the class band.
  const absl::StatusOr<int64_t> figure = Expr::EvaluateConstant(estimate.figure);
  if (!figure.ok()) return out;
  std::vector<std::pair<const char*, int64_t>> dims = {{"figure", *figure}};
  const bool one_dot = estimate.body_class == BodyClass::kMatmul || estimate.body_class == BodyClass::kMatmul8 ||
                       estimate.body_class == BodyClass::kMatmul32;
  if (one_dot && body.dots_size() > 0) {
    const absl::StatusOr<int64_t> m = Expr::EvaluateConstant(body.dots(0).m());
    const absl::StatusOr<int64_t> k = Expr::EvaluateConstant(body.dots(0).k());
    const absl::StatusOr<int64_t> n = Expr::EvaluateConstant(body.dots(0).n());
    if (!m.ok() || !k.ok() || !n.ok()) return out;
    dims.insert(dims.end(), {{"m", *m}, {"k", *k}, {"n", *n}, {"m x k", *m * *k}, {"m x n", *m * *n}});
  }
  const bool zero = *figure == 0;
  const std::string regime = absl::StrCat(generation, " ", BodyClassName(estimate.body_class), " bodies ",
                                          zero ? "whose figure is 0" : "whose figure is not 0");
  const ShapeCoverage* coverage = nullptr;
  for (const ShapeCoverage& row : kCoverage) {
    if (row.body_class == estimate.body_class && row.generation == generation && row.figure_zero == zero) {
      coverage = &row;
    }
  }
  if (coverage == nullptr) {
    out.push_back(absl::StrCat("a shape no compile of the fit has (no ", regime, " were fitted)"));
    return out;
  }
  const int64_t* ranges[] = {coverage->figure, coverage->m, coverage->k, coverage->n, coverage->mk, coverage->mn};
  for (size_t i = 0; i < dims.size(); ++i) {
    const auto [name, value] = dims[i];
    const int64_t* range = ranges[i];
    if (range[1] == 0 || (value >= range[0] && value <= range[1])) continue;
    out.push_back(absl::StrCat(name, " = ", value, ", outside the ", range[0], " to ", range[1], " of the fitted ",
                               regime));
  }
  return out;
}

std::vector<std::string> UnvalidatedPatterns(BodyClass body_class, const VregReplay& replay) {
  std::vector<std::string> out;
  const ValidatedSignature* signature = nullptr;
  for (const ValidatedSignature& row : kValidated) {
    if (row.body_class == body_class) signature = &row;
  }
  if (signature == nullptr) {
    out.push_back(absl::StrCat("a ", BodyClassName(body_class), " body (no such body was fitted)"));
    return out;
  }
  const std::vector<absl::string_view> known = absl::StrSplit(signature->ops, ' ');
  for (const std::string& op : replay.primitives) {
    if (!absl::c_linear_search(known, op)) out.push_back(op);
  }
  if ((body_class == BodyClass::kDot || body_class == BodyClass::kDot32) && !replay.dot_result_held) {
    out.push_back("dots whose results stream out (the fitted dot bodies hold the largest's result across another "
                  "whole-operand op)");
  }
  if (replay.max_barriers_per_region > signature->max_barriers) {
    out.push_back(absl::StrCat(replay.max_barriers_per_region, " whole-operand ops in one region (the fitted ",
                               BodyClassName(body_class), " bodies have at most ", signature->max_barriers, ")"));
  }
  return out;
}

namespace {

// What a body of its class keeps in vector registers (the figure its band multiplies), as an
// expression and in words.
struct ClassFigure {
  std::string figure;
  std::string name;
  bool low_is_zero = false;  // the figure is a stand-in larger than what the body holds
};

// The reduction class's figure: the block kept across the reduction, plus what stays beside it.
ClassFigure ReductionFigure(const PallasBody& body) {
  // Row vectors broadcast against the block (a layer norm's weight and bias) stay in vector
  // registers, replicated down the sublanes, while the reduced block streams past them; the
  // per-row results of the reductions (a softmax's max and sum), a vreg per 8 rows, are kept
  // beside the block (without them tall, narrow blocks spill beyond the band:
  // tests/data/tpu/reduction_spill_sweep.jsonl.gz).
  std::vector<std::string> terms = {body.reduction_live_bytes()};
  std::vector<std::string> names = {"reduction_live_bytes"};
  for (const auto& [figure, name] :
       {std::pair<const std::string&, const char*>{body.row_broadcast_bytes(), "row_broadcast_bytes"},
        {body.reduction_output_bytes(), "reduction_output_bytes"}}) {
    if (!Given(figure)) continue;
    terms.push_back(figure);
    names.push_back(name);
  }
  return {absl::StrCat("(", absl::StrJoin(terms, " + "), ")"), absl::StrJoin(names, " + ")};
}

// The attention classes' figure: the scores kept across the reduction, plus what the unrolled
// kind's dots hold or the looped kind's running statistics.
ClassFigure AttentionFigure(const PallasBody& body, BodyClass body_class, const DeviceModel& device) {
  ClassFigure out;
  out.figure = Given(body.reduction_input_bytes())
                   ? absl::StrCat("max(", body.reduction_live_bytes(), ", (", body.reduction_input_bytes(), ") / 2)")
                   : absl::StrCat("(", body.reduction_live_bytes(), ")");
  out.name = "max(reduction_live_bytes, reduction_input_bytes / 2)";
  // Unrolled attention also keeps what every dot holds across its MXU passes, once per run: the
  // scheduler interleaves an unrolled loop's iterations, each of whose dots holds its left operand
  // (q for q k^T, p for p v; counted once, the largest); the looped kind reloads per iteration.
  if (body_class == BodyClass::kAttention && body.dots_size() > 0) {
    std::vector<std::string> held;
    for (const PallasDot& dot : body.dots()) {
      held.push_back(absl::StrCat("(", DotHeldBytes(dot, OperandBytes(body), device), ") * (",
                                  dot.count().empty() ? "1" : dot.count(), ")"));
    }
    out.figure = absl::StrCat("(", out.figure, " + ", absl::StrJoin(held, " + "), ")");
    out.name = "max(reduction_live_bytes, reduction_input_bytes / 2) + what every dot holds, per run";
  }
  // The looped kind keeps every head's running statistics (max and sum) beside the scores
  // (without them blocks of few kv tokens spill beyond the band:
  // tests/data/tpu/ragged_spill_sweep.jsonl.gz).
  if (body_class == BodyClass::kLooped && Given(body.reduction_output_bytes())) {
    out.figure = absl::StrCat("(", out.figure, " + ", body.reduction_output_bytes(), ")");
    out.name = "max(reduction_live_bytes, reduction_input_bytes / 2) + reduction_output_bytes";
  }
  return out;
}

// The figure of a body of any class but streaming.
ClassFigure FigureOf(const PallasBody& body, BodyClass body_class, const DeviceModel& device) {
  switch (body_class) {
    case BodyClass::kStreaming: return {"0", "nothing"};
    case BodyClass::kReduction: return ReductionFigure(body);
    case BodyClass::kAttention:
    case BodyClass::kLooped: return AttentionFigure(body, body_class, device);
    case BodyClass::kMatmul:
    case BodyClass::kMatmul8:
    case BodyClass::kMatmul32:
      return {absl::StrCat("(", DotHeldBytes(body.dots(0), OperandBytes(body), device), ")"),
              "what the dot holds in vector registers"};
    case BodyClass::kDot:
    case BodyClass::kDot32:
      if (body.dots_size() > 0) {
        return {absl::StrCat("(", LargestDotBytes(body, device), ")"), "the largest dot's f32 result and what it holds"};
      } else {
        // A body summarised before body.dots existed keeps the older figure, its dots' bytes.
        const bool packed = body_class == BodyClass::kDot;
        return {absl::StrCat("(", packed ? body.packed_dot_bytes() : body.dot_bytes(), ")"),
                packed ? "packed_dot_bytes" : "dot_bytes"};
      }
    case BodyClass::kTranspose:
      if (body.transposes_size() > 0) {
        return {absl::StrCat(
                    "(", MaxOver(body.transposes(), [&](const PallasValue& t) { return TransposeHeldBytes(t, device); }),
                    ")"),
                "what the transpose holds in vector registers"};
      }
      // A body summarised before body.transposes existed keeps the older figure, the operand's
      // bytes: more than the transpose holds, so the band's high errs high and its low is 0 (the
      // class's additive low would claim most of the operand).
      return {absl::StrCat("(", body.packed_transpose_bytes(), ")"), "packed_transpose_bytes", true};
  }
  return {"0", "nothing"};
}

// The class's coefficients on `generation`; on another TPU (`found` false) the widest band of
// the five generations and the largest central slope.
Coefficients CoefficientsOf(BodyClass body_class, const std::string& generation, bool* found) {
  Coefficients c{body_class, "", 0, 0, 0, 0, 0, 0};
  *found = false;
  for (const Coefficients& row : kTable) {
    if (row.body_class == body_class && row.generation == generation) {
      c = row;
      *found = true;
    }
  }
  if (*found) return c;
  bool first = true;
  for (const Coefficients& row : kTable) {
    if (row.body_class != body_class) continue;
    c.low = first ? row.low : std::min(c.low, row.low);
    c.low_offset = first ? row.low_offset : std::max(c.low_offset, row.low_offset);
    c.high_offset = first ? row.high_offset : std::max(c.high_offset, row.high_offset);
    c.small_offset = first ? row.small_offset : std::max(c.small_offset, row.small_offset);
    c.small_rows = first ? row.small_rows : std::max(c.small_rows, row.small_rows);
    c.high = first ? row.high : std::max(c.high, row.high);
    c.slope = first ? row.slope : std::max(c.slope, row.slope);
    first = false;
  }
  return c;
}

SpillEstimate EstimateClassSpills(const PallasBody& body, const DeviceModel& device) {
  SpillEstimate out;
  out.body_class = ClassifyBody(body);
  if (out.body_class == BodyClass::kStreaming) {
    out.low = out.central = out.high = "0";
    out.basis = "streaming body (nothing kept whole across a reduction, a dot or a transpose): no spill slots";
    return out;
  }
  const ClassFigure figure = FigureOf(body, out.body_class, device);
  out.figure = figure.figure;
  const std::string generation = TpuGeneration(device);
  bool found = false;
  const Coefficients c = CoefficientsOf(out.body_class, generation, &found);
  // Spill slots are whole vector registers (4 KiB: 8 sublanes x 128 lanes x 32 bit; every SPILL
  // allocation of the corpus is a multiple of 4096 B): the bounds are rounded to them.
  const std::string& f = out.figure;
  const std::string low = figure.low_is_zero ? std::string("0")
                          : c.low_offset > 0 ? absl::StrCat("max(0, ", f, " * ", c.low, " / 1000 - ", c.low_offset, ")")
                                             : absl::StrCat(f, " * ", c.low, " / 1000");
  // small_offset where the block has at most small_rows rows (0/1 written with min/max).
  const std::string small_block =
      c.small_offset > 0 && body.dots_size() > 0
          ? absl::StrCat(" + ", c.small_offset, " * min(1, max(0, ", c.small_rows + 1, " - (", body.dots(0).m(), ")))")
          : "";
  // A negative high_offset (the 32-bit matmuls: the registers keep at least that much of the
  // partials whenever anything spills) lowers the bound, never below 0; a positive one (what
  // blocks were seen to spill beyond the multiple) applies where the body holds something, as it
  // was fitted (a figure of 0 takes small_offset alone).
  const std::string scaled = absl::StrCat("cdiv(", f, " * ", c.high, ", 1000)");
  const std::string high =
      absl::StrCat(c.high_offset < 0   ? absl::StrCat("max(0, ", scaled, " - ", -c.high_offset, ")")
                   : c.high_offset > 0 ? absl::StrCat("(", scaled, " + ", c.high_offset, " * min(1, ", f, "))")
                                       : scaled,
                   small_block);
  out.low = absl::StrCat("round_up(", low, ", 4096)");
  out.high = absl::StrCat("round_up(", high, ", 4096)");
  out.central = absl::StrCat("round_up(min(max(", f, " * ", c.slope, " / 1000 - ", c.offset, ", ", low, "), ", high,
                             "), 4096)");
  const std::string low_words =
      figure.low_is_zero ? "0"
                         : absl::StrCat(Permille(c.low), c.low_offset > 0 ? absl::StrCat(" x - ", c.low_offset, " B") : "");
  out.basis = absl::StrCat("register spills, ", BodyClassName(out.body_class), " body: ", low_words, " to ",
                           Permille(c.high), " x",
                           c.high_offset > 0   ? absl::StrCat(" + ", c.high_offset, " B")
                           : c.high_offset < 0 ? absl::StrCat(" - ", -c.high_offset, " B")
                                               : "",
                           " ", figure.name,
                           small_block.empty() ? ""
                                               : absl::StrCat(" (high + ", c.small_offset, " B for blocks of at most ",
                                                              c.small_rows, " rows)"),
                           ", central ", Permille(c.slope), " x",
                           c.offset > 0 ? absl::StrCat(" - ", c.offset, " B") : "",
                           found ? absl::StrCat(" (libtpu 0.0.42.1 corpus fit, ", generation, ")")
                                 : " (libtpu 0.0.42.1 corpus fit: the widest band of v4-v7x, this TPU is not in the corpus)");
  return out;
}

// Whether the body's program converts a vector value to or from a type narrower than 16 bits
// (int8, int4, fp8; a bool counts as 32 bits, as Mosaic holds it).
bool ConvertsNarrowValues(const PallasBody& body) {
  for (const PallasRegion& region : body.program()) {
    for (const PallasOp& op : region.ops()) {
      if (op.op() != "convert_element_type") continue;
      for (const auto* ids : {&op.operands(), &op.results()}) {
        for (int32_t id : *ids) {
          const std::optional<VregValueType> type = VectorTypeAt(region, id);
          if (type && type->bits < 16) return true;
        }
      }
    }
  }
  return false;
}

// A vector value of one row: its second-minor extent is 1.
bool IsOneRow(const VregValueType& type) { return type.dims.size() >= 2 && type.dims[type.dims.size() - 2] == 1; }

// A vector value of a 16-bit type with one row: a sixteenth of a packed tile's rows.
bool IsOneRowSixteenBitVector(const PallasRegion& region, int32_t id) {
  const std::optional<VregValueType> type = VectorTypeAt(region, id);
  return type && type->bits == 16 && IsOneRow(*type);
}

// The most lanes of any one-row vector value of the body (a (..., 1, n) value) that is not already
// in every sublane: 0 if it has none, nothing if the body has no traced program to tell. A row whose
// layout replicates its sublanes (a block's column sum, an iota along the lanes) needs no relayout.
std::optional<int64_t> WidestOneRowVectorLanes(const PallasBody& body) {
  if (body.program_size() == 0) return std::nullopt;
  int64_t widest = 0;
  for (const PallasRegion& region : body.program()) {
    for (int32_t id = 0; id < region.values_size(); ++id) {
      const std::optional<VregValueType> type = VectorTypeAt(region, id);
      if (type && IsOneRow(*type) && !InEverySublane(*type)) widest = std::max(widest, type->dims.back());
    }
  }
  return widest;
}

// How Mosaic relays out a one-row 16-bit value through its internal scratch, which the limit then
// counts (tests/data/tpu/row_store_scratch_probe.txt; not on v6e and v7x).
enum class OneRowRelayout { kNone, kStored, kConverted };

// kStored: one loaded and stored as it is (a get, then a swap of it) on v4-v5p; the probe counts
// the scratch on every such kernel. kConverted: on v4, one converted to or from another type (or
// stored after a convert): the probe's kernels count it, and a paged decode attention on v4 with a
// one-row query and output counts 12 KiB of other scratch instead (heldout4_families.jsonl.gz), so
// it is an estimate there.
OneRowRelayout RelaysOutOneRowSixteenBitValues(const PallasBody& body, const std::string& generation) {
  if (generation != "v4" && generation != "v5e" && generation != "v5p") return OneRowRelayout::kNone;
  OneRowRelayout found = OneRowRelayout::kNone;
  for (const PallasRegion& region : body.program()) {
    std::vector<bool> loaded(region.values_size(), false);
    for (const PallasOp& op : region.ops()) {
      if (op.op() == "get") {
        for (int32_t id : op.results()) {
          if (id >= 0 && id < region.values_size()) loaded[id] = true;
        }
      } else if (op.op() == "swap" && op.operands_size() >= 2) {
        const int32_t stored = op.operands(1);
        if (IsOneRowSixteenBitVector(region, stored)) {
          if (loaded[stored]) return OneRowRelayout::kStored;
          if (generation == "v4") found = OneRowRelayout::kConverted;
        }
      } else if (op.op() == "convert_element_type" && generation == "v4") {
        for (const auto* ids : {&op.operands(), &op.results()}) {
          for (int32_t id : *ids) {
            if (IsOneRowSixteenBitVector(region, id)) found = OneRowRelayout::kConverted;
          }
        }
      }
    }
  }
  return found;
}

}  // namespace

std::vector<CountedScratch> CountedMosaicScratch(const PallasBody& body, const DeviceModel& device,
                                                 bool internal_scratch_given) {
  // Mosaic's internal scratch on v4-v5p: u32[72,128] (tests/data/tpu/internal_scratch_probe.txt).
  constexpr int64_t kInternalScratchBytes = 72 * 128 * 4;
  const std::string generation = TpuGeneration(device);
  std::vector<CountedScratch> out;
  const bool row_broadcast = generation == "v4" && Given(body.row_broadcast_bytes());
  if (row_broadcast) {
    const std::string bytes = absl::StrCat("(", body.row_broadcast_bytes(), ")");
    out.push_back({"sublane_replication", bytes, bytes, bytes,
                   "Mosaic temporaries for sublane replication: one u32[8,128] per vector register of the row vectors "
                   "broadcast down the block (row_broadcast_bytes; v4, tests/data/tpu/counted_scratch_probe.txt)"});
  }
  // v4: a convert to or from an 8- or 4-bit type packs or unpacks through VMEM, in a 4 KiB
  // temporary scoped to the converting region (tests/data/tpu/counted_scratch_probe.txt, part 4).
  // libtpu's report counts it in every probe and in the held-out absmax quantization and group
  // dequant matmul, not in the dev int8 dequant matmul (3 compiles), whose program has the
  // temporaries too: an estimate of 0 to 4 KiB, central 4 KiB.
  if (generation == "v4" && ConvertsNarrowValues(body)) {
    out.push_back({"pack_temporary", "4096", "0", "4096",
                   "Mosaic temporary for packing or unpacking 8- and 4-bit values, u8[4096] in the converting region "
                   "(v4; tests/data/tpu/counted_scratch_probe.txt): the limit counts it in most kernels"});
  }
  if (internal_scratch_given || (generation != "v4" && generation != "v5e" && generation != "v5p")) return out;
  const std::string internal = absl::StrCat(kInternalScratchBytes);
  const std::string doc =
      "Mosaic internal scratch (u32[72,128]) that the vmem_report lists and the scoped limit counts "
      "(tests/data/tpu/counted_scratch_probe.txt)";
  // v4 replicates a row vector of one lane tile in registers; a wider one goes through the internal
  // scratch (no v4 compile of any family file whose one-row values are all at most 128 lanes wide
  // lists it, and the counted-scratch probe's rows of 768-5,120 lanes all do). A body without its
  // traced program counts it.
  constexpr int64_t kLaneTile = 128;
  const std::optional<int64_t> widest_row = WidestOneRowVectorLanes(body);
  if (row_broadcast && (!widest_row.has_value() || *widest_row > kLaneTile)) {
    out.push_back({"internal_scratch", internal, internal, internal,
                   absl::StrCat(doc, ": v4 with row vectors wider than one lane tile")});
    return out;
  }
  switch (RelaysOutOneRowSixteenBitValues(body, generation)) {
    case OneRowRelayout::kStored:
      out.push_back({"internal_scratch", internal, internal, internal,
                     absl::StrCat(doc, ": a one-row 16-bit value stored (tests/data/tpu/row_store_scratch_probe.txt)")});
      return out;
    case OneRowRelayout::kConverted:
      out.push_back({"internal_scratch", internal, "0", internal,
                     absl::StrCat(doc, ": v4, a one-row 16-bit value converted; counted by the probe's kernels, not by "
                                       "a paged decode attention (tests/data/tpu/row_store_scratch_probe.txt)")});
      return out;
    case OneRowRelayout::kNone:
      break;
  }
  if (body.dots_size() == 0) return out;
  // 1/0 over the dots: one with 2-4 left-operand rows (always seen), one with fewer than 8 (seen in some kernels).
  const std::string two_to_four = MaxOver(body.dots(), [](const PallasDot& d) {
    return absl::StrCat("((", d.m(), ") >= 2 && (", d.m(), ") <= 4)");
  });
  const std::string under_eight = MaxOver(body.dots(), [](const PallasDot& d) { return absl::StrCat("((", d.m(), ") < 8)"); });
  CountedScratch scratch{"internal_scratch", absl::StrCat(internal, " * ", two_to_four),
                         absl::StrCat(internal, " * ", two_to_four), absl::StrCat(internal, " * ", under_eight),
                         absl::StrCat(doc, ": a dot with 2-4 left-operand rows allocates it; 1 or 5-7 rows may")};
  // Constant rows (a traced kernel's): the rule's answer as numbers, exact where it is certain
  // (its bounds then read the same) and nothing where no dot has fewer than 8 rows.
  const absl::StatusOr<int64_t> sure = Expr::EvaluateConstant(scratch.central);
  const absl::StatusOr<int64_t> maybe = Expr::EvaluateConstant(scratch.high);
  if (sure.ok() && maybe.ok()) {
    if (*maybe == 0) return out;
    scratch.central = scratch.low = absl::StrCat(*sure);
    scratch.high = absl::StrCat(*maybe);
  }
  out.push_back(std::move(scratch));
  return out;
}

}  // namespace scratchsim
