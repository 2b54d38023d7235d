// Layout facts from the TritonGPU dialect and scratch sizes after Triton 3.6's
// Allocation.cpp (defaultAllocationAnalysisScratchSizeFn) and its lowering helpers.
#include "backends/triton/ttgir_layout.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <utility>

#include "absl/base/attributes.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "backends/triton/cvt_swizzling.h"
#include "backends/triton/ttgir_parser.h"
#include "sim/checked_math.h"
#include "sim/status_macros.h"

namespace scratchsim::triton {
namespace {

// The first `key` followed by `tail` in `text` (what text.find(key + tail) finds, without
// building the needle).
size_t FindKey(absl::string_view text, absl::string_view key, absl::string_view tail) {
  for (size_t p = text.find(key); p != absl::string_view::npos; p = text.find(key, p + 1)) {
    if (text.substr(p + key.size(), tail.size()) == tail) return p;
  }
  return absl::string_view::npos;
}

// A layout attribute's integer list (one entry per dimension).
using IntVector = InlineList<int64_t, 16>;

// The list after `key = [` as integers; empty or blank entries are skipped. std::nullopt when
// there is none, an entry is not an integer, or it has more than 16 entries.
std::optional<IntVector> IntList(absl::string_view text, absl::string_view key) {
  size_t p = FindKey(text, key, " = [");
  if (p == absl::string_view::npos) return std::nullopt;
  p = text.find('[', p) + 1;
  const size_t e = text.find(']', p);
  // std::string_view's find inlines (memchr); the Debian Abseil's is a library call.
  std::string_view rest(text.data() + p, (e == absl::string_view::npos ? text.size() : e) - p);
  IntVector out;
  while (true) {
    const size_t comma = rest.find(',');
    const absl::string_view t = absl::StripAsciiWhitespace(
        absl::string_view(rest.data(), comma == std::string_view::npos ? rest.size() : comma));
    if (!t.empty()) {
      int64_t v = 0;
      if (!absl::SimpleAtoi(t, &v)) return std::nullopt;
      out.push_back(v);
    }
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  if (out.overflowed()) return std::nullopt;
  return out;
}

std::optional<int64_t> IntField(absl::string_view text, absl::string_view key) {
  size_t p = FindKey(text, key, " = ");
  if (p == absl::string_view::npos) return std::nullopt;
  p += key.size() + 3;
  size_t q = p;
  while (q < text.size() && std::isdigit(static_cast<unsigned char>(text[q]))) ++q;
  int64_t v = 0;
  if (!absl::SimpleAtoi(text.substr(p, q - p), &v)) return std::nullopt;
  return v;
}

// Nested bases "[[0, 1], [0, 2]]" after `key = ` -> per-dimension log2 counts of nonzero bases.
std::optional<std::vector<int64_t>> BasisCounts(absl::string_view text, absl::string_view key,
                                                int rank) {
  size_t p = FindKey(text, key, " = [");
  if (p == absl::string_view::npos) return std::nullopt;
  p = text.find('[', p);
  int depth = 0;
  size_t e = p;
  for (; e < text.size(); ++e) {
    if (text[e] == '[') ++depth;
    if (text[e] == ']' && --depth == 0) break;
  }
  std::vector<int64_t> counts(rank, 1);
  absl::string_view inner = text.substr(p + 1, e - p - 1);
  size_t i = 0;
  while ((i = inner.find('[', i)) != absl::string_view::npos) {
    const size_t j = inner.find(']', i);
    // An unclosed basis would restart the search at 0 and loop forever.
    if (j == absl::string_view::npos) return std::nullopt;
    std::vector<absl::string_view> vals = absl::StrSplit(inner.substr(i + 1, j - i - 1), ',');
    for (int d = 0; d < rank && d < static_cast<int>(vals.size()); ++d) {
      int64_t v = 0;
      if (absl::SimpleAtoi(absl::StripAsciiWhitespace(vals[d]), &v) && v != 0) {
        if (counts[d] >= (int64_t{1} << 40)) return std::nullopt;  // no layout has 2^40 of one kind
        counts[d] *= 2;
      }
    }
    i = j + 1;
  }
  return counts;
}

// The alias's text (a view into the module's alias table) or `enc` itself.
absl::string_view Resolve(const LayoutContext& ctx, absl::string_view enc) {
  enc = absl::StripAsciiWhitespace(enc);
  auto it = ctx.aliases.find(std::string(enc));
  return it == ctx.aliases.end() ? enc : absl::string_view(it->second);
}

absl::Status Unsupported(absl::string_view origin, int line, absl::string_view what) {
  return absl::UnimplementedError(absl::StrCat(origin, ":", line, ": unsupported construct: ", what));
}

// Scratch sizes come from shapes and layout counts in the IR text, any of which can be huge: they
// are multiplied checked, and a size past int64 is an error naming the op, never a wrapped
// (negative, hence dropped) buffer.
class ScratchMath {
 public:
  ScratchMath(absl::string_view origin, int line, absl::string_view op)
      : origin_(origin), line_(line), op_(op) {}

  absl::StatusOr<int64_t> Mul(int64_t a, int64_t b) const {
    const std::optional<int64_t> p = CheckedMul(a, b);
    if (!p) return Overflow();
    return *p;
  }

  // Elements of a tensor shape; every extent must be positive.
  absl::StatusOr<int64_t> Elements(const std::vector<int64_t>& shape) const {
    int64_t n = 1;
    for (int64_t x : shape) {
      if (x <= 0) {
        return absl::InvalidArgumentError(
            absl::StrCat(origin_, ":", line_, ": ", op_, ": tensor dimension ", x, " is not positive"));
      }
      ASSIGN_OR_RETURN(n, Mul(n, x));
    }
    return n;
  }

 private:
  absl::Status Overflow() const {
    return absl::InvalidArgumentError(
        absl::StrCat(origin_, ":", line_, ": ", op_, ": scratch size overflows 64 bits"));
  }

  absl::string_view origin_;
  int line_;
  absl::string_view op_;
};


// A distributed layout as linear-layout bases (Triton's LinearLayout, restricted to what the
// scratch size needs): each basis is the tensor coordinate one bit of the register, lane or
// warp index moves to, packed 20 bits per dimension; 0 means broadcast.
// At most 64 of each kind (BasesOf refuses more), kept inline.
using PackedBases = InlineList<uint64_t, 64>;
struct Bases {
  PackedBases reg, lane, warp;
};

// Bits per dimension of a packed basis. 20 (Triton's 2^20-element bound on any extent) for the
// tensors of rank 2 or less; ops on tensors of higher rank (3-D dots, reshapes into many
// dimensions of 2 for tl.sort) pack each dimension in the bits their largest extent needs, set
// for the op by a PackingScope. BasesOf refuses shapes that do not fit.
thread_local int tl_bits_per_dim = 20;
int BitsPerDim() { return tl_bits_per_dim; }

class PackingScope {
 public:
  explicit PackingScope(int bits) : saved_(tl_bits_per_dim) { tl_bits_per_dim = bits; }
  ~PackingScope() { tl_bits_per_dim = saved_; }
  PackingScope(const PackingScope&) = delete;
  PackingScope& operator=(const PackingScope&) = delete;

 private:
  int saved_;
};

uint64_t Pack(int dim, int64_t value) {
  return static_cast<uint64_t>(value) << (BitsPerDim() * dim);
}


// Bases along `dim` for `count` (a power of two) indices starting at stride `cum`; values at
// or beyond the extent broadcast.
void Append(PackedBases& out, int dim, int64_t cum, int64_t count, int64_t extent) {
  for (int k = 0; (int64_t{1} << k) < count; ++k) {
    const int64_t v = cum << k;
    out.push_back(v >= extent ? 0 : Pack(dim, v));
  }
}

absl::StatusOr<Bases> BasesOf(const LayoutContext& ctx, absl::string_view encoding,
                              const std::vector<int64_t>& shape);

// Layouts with more bases of one kind than PackedBases holds are refused, not truncated.
absl::StatusOr<Bases> Checked(Bases b) {
  if (b.reg.overflowed() || b.lane.overflowed() || b.warp.overflowed()) {
    return absl::InvalidArgumentError("layout with more than 64 bases of one kind");
  }
  return b;
}

// Counts that the bases are doubled up to must be positive, or the doubling never ends, and
// below 2^20: a basis packs 20 bits per dimension, and products of three counts stay in int64.
constexpr int64_t kMaxLayoutExtent = int64_t{1} << 20;
bool AllPositive(const IntVector& v) {
  return std::all_of(v.begin(), v.end(), [](int64_t x) { return x > 0 && x <= kMaxLayoutExtent; });
}

// Dimensions `rank - 1` down to 0: the order Triton's MMA layouts give warps and repetitions.
IntVector FastestFirst(int rank) {
  IntVector order;
  for (int d = rank - 1; d >= 0; --d) order.push_back(d);
  return order;
}

// The starting stride of every dimension: 1.
IntVector Ones(int rank) {
  IntVector ones;
  for (int d = 0; d < rank; ++d) ones.push_back(1);
  return ones;
}

// The basis moving dimension `d` by `v`, broadcast (0) at or past the tensor's extent.
uint64_t PackWithin(const std::vector<int64_t>& shape, int d, int64_t v) {
  return v >= shape[d] ? uint64_t{0} : Pack(d, v);
}

// Warps per dimension in `order`, each from the stride `cum` the tile below reached; `cum` grows
// past them.
void AppendWarps(PackedBases& warp, const IntVector& order, const IntVector& wpc, IntVector& cum,
                 const std::vector<int64_t>& shape) {
  for (int64_t d : order) {
    Append(warp, static_cast<int>(d), cum[d], wpc[d], shape[d]);
    cum[d] *= wpc[d];
  }
}

// The CTA tile repeated in registers until it covers the tensor, dimension by dimension in
// `order` (what the layouts' toLinearLayout gets from combineCtaCgaWithShape).
void AppendRepetitions(PackedBases& reg, const IntVector& order, const IntVector& cum,
                       const std::vector<int64_t>& shape) {
  for (int64_t d : order) {
    for (int64_t v = cum[d]; v < shape[d]; v *= 2) reg.push_back(Pack(static_cast<int>(d), v));
  }
}

// The layout a slice or dot operand names after the `parent = ` at `parent_at`: up to the first
// of the characters `end`, or with no `end` (a slice's parent, itself a layout with braces) up
// to the last "}>".
std::string ParentOf(absl::string_view enc, size_t parent_at, const char* end = nullptr) {
  std::string parent(enc.substr(parent_at + 9));
  return parent.substr(0, end == nullptr ? parent.rfind("}>") : parent.find_first_of(end));
}

// Whether an #ttg.amd_mfma's tilesPerWarp asks for more than one tile (not modelled).
bool SeveralTilesPerWarp(absl::string_view mfma) {
  auto tiles = IntList(mfma, "tilesPerWarp");
  return tiles && std::any_of(tiles->begin(), tiles->end(), [](int64_t t) { return t != 1; });
}

// BlockedEncodingAttr::toLinearLayout: sizePerThread registers, threadsPerWarp lanes and
// warpsPerCTA warps per dimension in the layout's order, then repetitions in registers.
absl::StatusOr<Bases> BlockedToBases(absl::string_view enc, const std::vector<int64_t>& shape) {
  const int rank = static_cast<int>(shape.size());
  auto spt = IntList(enc, "sizePerThread");
  auto tpw = IntList(enc, "threadsPerWarp");
  auto wpc = IntList(enc, "warpsPerCTA");
  auto order = IntList(enc, "order");
  if (!spt || !tpw || !wpc || !order || static_cast<int>(order->size()) != rank ||
      static_cast<int>(spt->size()) < rank || static_cast<int>(tpw->size()) < rank ||
      static_cast<int>(wpc->size()) < rank || !AllPositive(*spt) || !AllPositive(*tpw) ||
      !AllPositive(*wpc) ||
      std::any_of(order->begin(), order->end(), [&](int64_t d) { return d < 0 || d >= rank; })) {
    return absl::InvalidArgumentError("malformed #ttg.blocked");
  }
  Bases b;
  IntVector cum = Ones(rank);
  for (int64_t d : *order) { Append(b.reg, d, cum[d], (*spt)[d], shape[d]); cum[d] *= (*spt)[d]; }
  for (int64_t d : *order) { Append(b.lane, d, cum[d], (*tpw)[d], shape[d]); cum[d] *= (*tpw)[d]; }
  AppendWarps(b.warp, *order, *wpc, cum, shape);
  AppendRepetitions(b.reg, *order, cum, shape);
  return b;
}

// SliceEncodingAttr::toLinearLayout: the parent's bases on the shape with the sliced dimension
// put back (extent 1), that coordinate then dropped.
absl::StatusOr<Bases> SliceToBases(const LayoutContext& ctx, absl::string_view enc,
                                   const std::vector<int64_t>& shape) {
  const int rank = static_cast<int>(shape.size());
  auto dim = IntField(enc, "dim");
  size_t p = enc.find("parent = ");
  if (!dim || p == std::string::npos || *dim > rank) return absl::InvalidArgumentError("malformed #ttg.slice");
  const std::string parent = ParentOf(enc, p);
  std::vector<int64_t> pshape = shape;
  pshape.insert(pshape.begin() + *dim, 1);
  ASSIGN_OR_RETURN(Bases pb, BasesOf(ctx, parent, pshape));
  // Drop the sliced coordinate: bases along it already broadcast (extent 1).
  auto drop = [&](PackedBases& v) {
    for (uint64_t& x : v) {
      uint64_t out = 0;
      for (int d = 0, nd = 0; d <= rank; ++d) {
        if (d == *dim) continue;
        out |= ((x >> (BitsPerDim() * d)) & ((uint64_t{1} << BitsPerDim()) - 1)) << (BitsPerDim() * nd);
        ++nd;
      }
      x = out;
    }
  };
  drop(pb.reg);
  drop(pb.lane);
  drop(pb.warp);
  return pb;
}

// NvidiaMmaEncodingAttr::toLinearLayout (nvidiaMmaTile with kWidth 2): one warp's accumulator
// fragment (PTX ISA, mma.m16n8 / wgmma m64nN): two adjacent columns per register pair, lanes
// 4 across and 8 down, rows +8 in registers, wider wgmma tiles in more registers; warps along
// the columns first for mma.sync (row-major warp order), the rows first for wgmma; then
// repetitions in registers, columns first, the batch dimension last.
absl::StatusOr<Bases> NvidiaMmaToBases(absl::string_view enc, const std::vector<int64_t>& shape) {
  const int rank = static_cast<int>(shape.size());
  auto major = IntField(enc, "versionMajor");
  auto wpc = IntList(enc, "warpsPerCTA");
  auto instr = IntList(enc, "instrShape");
  if (!major || !wpc || static_cast<int>(wpc->size()) != rank || !AllPositive(*wpc) ||
      (*major != 2 && *major != 3) || (*major == 3 && rank != 2)) {
    return absl::InvalidArgumentError("malformed #ttg.nvidia_mma");
  }
  const int m = rank - 2, n = rank - 1;
  Bases b;
  b.reg = {PackWithin(shape, n, 1), PackWithin(shape, m, 8)};
  b.lane = {PackWithin(shape, n, 2), PackWithin(shape, n, 4), PackWithin(shape, m, 1), PackWithin(shape, m, 2),
            PackWithin(shape, m, 4)};
  IntVector cum = Ones(rank);
  cum[m] = 16;
  cum[n] = 8;
  if (*major == 3) {
    const int64_t instr_n = instr && instr->size() >= 2 ? (*instr)[1] : 8;
    if (instr_n <= 0 || instr_n > kMaxLayoutExtent) return absl::InvalidArgumentError("malformed #ttg.nvidia_mma");
    for (int64_t v = 8; v < instr_n; v *= 2) b.reg.push_back(PackWithin(shape, n, v));
    cum[n] = instr_n;
    AppendWarps(b.warp, {m, n}, *wpc, cum, shape);
  } else {
    AppendWarps(b.warp, FastestFirst(rank), *wpc, cum, shape);
  }
  AppendRepetitions(b.reg, FastestFirst(rank), cum, shape);
  return b;
}

// AMDMfmaEncodingAttr::toLinearLayout: one 32x32 or 16x16 output tile per warp (the register
// and lane bases of the MFMA instruction's result, rows and columns swapped when
// isTransposed), warps along the fastest dimension first (order [rank-1, ..., 0]), then
// repetitions in registers, fastest dimension first.
absl::StatusOr<Bases> AmdMfmaToBases(absl::string_view enc, const std::vector<int64_t>& shape) {
  const int rank = static_cast<int>(shape.size());
  auto wpc = IntList(enc, "warpsPerCTA");
  auto instr = IntList(enc, "instrShape");
  if (!wpc || static_cast<int>(wpc->size()) != rank || !AllPositive(*wpc) || !instr || instr->size() < 2) {
    return absl::InvalidArgumentError("malformed #ttg.amd_mfma");
  }
  const int64_t mdim = (*instr)[0], ndim = (*instr)[1];
  if (!((mdim == 32 && ndim == 32) || (mdim == 16 && ndim == 16))) {
    return absl::UnimplementedError(absl::StrCat("#ttg.amd_mfma with instrShape ", mdim, "x", ndim,
                                                 " (only 32x32 and 16x16 are modelled)"));
  }
  if (SeveralTilesPerWarp(enc)) return absl::UnimplementedError("#ttg.amd_mfma with tilesPerWarp other than 1");
  if (auto ebw = IntField(enc, "elementBitWidth"); ebw && *ebw == 64) {
    return absl::UnimplementedError("#ttg.amd_mfma for 64-bit elements");
  }
  const bool transposed = enc.find("isTransposed = true") != absl::string_view::npos;
  const int m = rank - 2, n = rank - 1;  // row and column dimensions
  // (dimension, stride) per basis; the instruction's result tile.
  std::vector<std::pair<int, int64_t>> regs, lanes;
  const int along_regs = transposed ? n : m, along_lanes = transposed ? m : n;
  if (mdim == 32) {
    regs = {{along_regs, 1}, {along_regs, 2}, {along_regs, 8}, {along_regs, 16}};
    lanes = {{along_lanes, 1}, {along_lanes, 2}, {along_lanes, 4}, {along_lanes, 8}, {along_lanes, 16}, {along_regs, 4}};
  } else {
    regs = {{along_regs, 1}, {along_regs, 2}};
    lanes = {{along_lanes, 1}, {along_lanes, 2}, {along_lanes, 4}, {along_lanes, 8}, {along_regs, 4}, {along_regs, 8}};
  }
  Bases b;
  for (const auto& [d, v] : regs) b.reg.push_back(PackWithin(shape, d, v));
  for (const auto& [d, v] : lanes) b.lane.push_back(PackWithin(shape, d, v));
  IntVector cum = Ones(rank);
  cum[m] = mdim;
  cum[n] = ndim;
  AppendWarps(b.warp, FastestFirst(rank), *wpc, cum, shape);
  AppendRepetitions(b.reg, FastestFirst(rank), cum, shape);
  return b;
}

// LinearEncodingAttr: the bases as written, `key = [[...], ...]` per kind. False when a basis is
// unclosed, not an integer or outside the packing.
bool ReadLinearBases(absl::string_view enc, absl::string_view key, int rank, PackedBases& out) {
  size_t p = FindKey(enc, key, " = [");
  if (p == std::string::npos) return false;
  p = enc.find('[', p);
  int depth = 0;
  size_t e = p;
  for (; e < enc.size(); ++e) {
    if (enc[e] == '[') ++depth;
    if (enc[e] == ']' && --depth == 0) break;
  }
  absl::string_view inner = absl::string_view(enc).substr(p + 1, e - p - 1);
  size_t i = 0;
  while ((i = inner.find('[', i)) != absl::string_view::npos) {
    const size_t j = inner.find(']', i);
    if (j == absl::string_view::npos) return false;  // else the scan restarts at 0 forever
    uint64_t packed = 0;
    int d = 0;
    for (absl::string_view v : absl::StrSplit(inner.substr(i + 1, j - i - 1), ',')) {
      int64_t x = 0;
      if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(v), &x) || d >= rank || x < 0 ||
          x >= kMaxLayoutExtent || x >= (int64_t{1} << BitsPerDim())) {
        return false;
      }
      packed |= Pack(d++, x);
    }
    out.push_back(packed);
    i = j + 1;
  }
  return true;
}

absl::StatusOr<Bases> LinearToBases(absl::string_view enc, int rank) {
  Bases b;
  if (!ReadLinearBases(enc, "register", rank, b.reg) || !ReadLinearBases(enc, "lane", rank, b.lane) ||
      !ReadLinearBases(enc, "warp", rank, b.warp)) {
    return absl::InvalidArgumentError("malformed #ttg.linear");
  }
  return b;
}

// An MMA operand's K dimension and its other one: A (opIdx 0) is M x K, B is K x N, after any
// batch dimensions.
std::pair<int, int> DotOperandDims(int64_t op_idx, int rank) {
  return op_idx == 0 ? std::pair{rank - 1, rank - 2} : std::pair{rank - 2, rank - 1};
}

// Repetitions of an MMA operand's tile: along K first, then the other dimension, then the batch.
IntVector DotRepetitionOrder(int kdim, int other, int rank) {
  IntVector order = {kdim, other};
  for (int d = rank - 3; d >= 0; --d) order.push_back(d);
  return order;
}

// mfmaDotToLinearLayout: kWidth registers along K, the instruction's non-K extent in lanes,
// the other lanes (64 / that extent) along K, registers for the rest of K; warps as the
// parent's (those along K fall outside the tensor: broadcast), then repetitions along the
// non-K dimension and the batch.
absl::StatusOr<Bases> MfmaDotToBases(absl::string_view parent, int64_t op_idx, std::optional<int64_t> k_width,
                                     const std::vector<int64_t>& shape) {
  const int rank = static_cast<int>(shape.size());
  auto wpc = IntList(parent, "warpsPerCTA");
  auto instr = IntList(parent, "instrShape");
  if (!k_width || *k_width <= 0 || *k_width > 64 || (*k_width & (*k_width - 1)) != 0 || !wpc ||
      static_cast<int>(wpc->size()) != rank || !AllPositive(*wpc) || !instr || instr->size() < 2) {
    return absl::InvalidArgumentError("malformed #ttg.dot_op of #ttg.amd_mfma");
  }
  const int64_t mdim = (*instr)[0], ndim = (*instr)[1];
  if (!((mdim == 32 && ndim == 32) || (mdim == 16 && ndim == 16))) {
    return absl::UnimplementedError(absl::StrCat("#ttg.dot_op of #ttg.amd_mfma with instrShape ", mdim, "x", ndim));
  }
  if (SeveralTilesPerWarp(parent)) return absl::UnimplementedError("#ttg.amd_mfma with tilesPerWarp other than 1");
  const auto [kdim, other] = DotOperandDims(op_idx, rank);
  const int64_t non_k = op_idx == 0 ? mdim : ndim;
  const int64_t kw = *k_width;
  Bases b;
  for (int64_t v = 1; v < kw; v *= 2) b.reg.push_back(PackWithin(shape, kdim, v));
  for (int64_t v = 1; v < non_k; v *= 2) b.lane.push_back(PackWithin(shape, other, v));
  const int64_t k_tile = 64 / non_k * kw;
  for (int64_t v = kw; v < k_tile; v *= 2) b.lane.push_back(PackWithin(shape, kdim, v));
  for (int64_t v = k_tile; v < shape[kdim]; v *= 2) b.reg.push_back(Pack(kdim, v));
  IntVector cum = Ones(rank);
  cum[kdim] = std::max(k_tile, shape[kdim]);
  cum[other] = non_k;
  AppendWarps(b.warp, FastestFirst(rank), *wpc, cum, shape);
  AppendRepetitions(b.reg, DotRepetitionOrder(kdim, other, rank), cum, shape);
  return b;
}

// nvidiaDotToLinearLayout: the tile of one warp is 16 x 8kWidth (A) or 8kWidth x 8 (B,
// mma.sync only): kWidth registers and 4 lanes along K, 8 lanes along the other dimension, then
// registers for the rest of the tile; warps as the parent's, those along K broadcast;
// repetitions in registers, K first, the batch dimension last.
absl::StatusOr<Bases> NvidiaDotToBases(absl::string_view parent, int64_t op_idx, std::optional<int64_t> k_width,
                                       const std::vector<int64_t>& shape) {
  const int rank = static_cast<int>(shape.size());
  auto major = IntField(parent, "versionMajor");
  auto wpc = IntList(parent, "warpsPerCTA");
  if (!major || !wpc || static_cast<int>(wpc->size()) != rank || !AllPositive(*wpc) ||
      (*major != 2 && *major != 3) || (*major == 3 && (rank != 2 || op_idx != 0))) {
    return absl::InvalidArgumentError("malformed #ttg.dot_op of #ttg.nvidia_mma");
  }
  // Hopper's A operand in registers has no kWidth of its own in older printers: 2 as the accumulator's.
  const int64_t kw = k_width ? *k_width : 2;
  if (kw <= 0 || kw > 64 || (kw & (kw - 1)) != 0) return absl::InvalidArgumentError("malformed #ttg.dot_op kWidth");
  const auto [kdim, other] = DotOperandDims(op_idx, rank);
  const int64_t tile_k = 8 * kw, tile_other = op_idx == 0 ? 16 : 8;
  Bases b;
  for (int64_t v = 1; v < kw; v *= 2) b.reg.push_back(PackWithin(shape, kdim, v));
  for (int64_t v = kw; v < 4 * kw; v *= 2) b.lane.push_back(PackWithin(shape, kdim, v));
  for (int64_t v = 1; v < 8; v *= 2) b.lane.push_back(PackWithin(shape, other, v));
  for (int64_t v = 8; v < tile_other; v *= 2) b.reg.push_back(PackWithin(shape, other, v));
  for (int64_t v = 4 * kw; v < tile_k; v *= 2) b.reg.push_back(PackWithin(shape, kdim, v));
  IntVector cum = Ones(rank);
  cum[kdim] = tile_k;
  cum[other] = tile_other;
  const IntVector warp_order = *major == 3 ? IntVector{0, 1} : FastestFirst(rank);
  for (int64_t d : warp_order) {
    if (d == kdim) {
      for (int64_t w = 1; w < (*wpc)[d]; w *= 2) b.warp.push_back(0);
      continue;
    }
    Append(b.warp, static_cast<int>(d), cum[d], (*wpc)[d], shape[d]);
    cum[d] *= (*wpc)[d];
  }
  AppendRepetitions(b.reg, DotRepetitionOrder(kdim, other, rank), cum, shape);
  return b;
}

// An MMA operand in registers (#ttg.dot_op): the bases its parent's operand layout gives.
absl::StatusOr<Bases> DotOperandToBases(const LayoutContext& ctx, absl::string_view enc,
                                        const std::vector<int64_t>& shape) {
  auto op_idx = IntField(enc, "opIdx");
  auto k_width = IntField(enc, "kWidth");
  size_t p = enc.find("parent = ");
  if (!op_idx || (*op_idx != 0 && *op_idx != 1) || p == absl::string_view::npos) {
    return absl::InvalidArgumentError("malformed #ttg.dot_op");
  }
  const std::string parent = ParentOf(enc, p, ",}");
  const absl::string_view pe = Resolve(ctx, parent);
  if (absl::StartsWith(pe, "#ttg.amd_mfma<")) return MfmaDotToBases(pe, *op_idx, k_width, shape);
  if (!absl::StartsWith(pe, "#ttg.nvidia_mma<")) {
    return absl::UnimplementedError(absl::StrCat("layout #ttg.dot_op of parent ", pe.substr(0, pe.find('<'))));
  }
  return NvidiaDotToBases(pe, *op_idx, k_width, shape);
}

// The layout's toLinearLayout, by its encoding; BasesOf checks the shape first.
absl::StatusOr<Bases> BasesOfUnchecked(const LayoutContext& ctx, absl::string_view encoding,
                                       const std::vector<int64_t>& shape) {
  const absl::string_view enc = Resolve(ctx, encoding);
  const int rank = static_cast<int>(shape.size());
  const bool mma_rank = rank == 2 || rank == 3;
  if (absl::StartsWith(enc, "#ttg.blocked<")) return BlockedToBases(enc, shape);
  if (absl::StartsWith(enc, "#ttg.slice<")) return SliceToBases(ctx, enc, shape);
  if (absl::StartsWith(enc, "#ttg.nvidia_mma<") && mma_rank) return NvidiaMmaToBases(enc, shape);
  if (absl::StartsWith(enc, "#ttg.amd_mfma<") && mma_rank) return AmdMfmaToBases(enc, shape);
  if (absl::StartsWith(enc, "#ttg.linear<")) return LinearToBases(enc, rank);
  if (absl::StartsWith(enc, "#ttg.dot_op<") && mma_rank) return DotOperandToBases(ctx, enc, shape);
  return absl::UnimplementedError(absl::StrCat("layout ", enc.substr(0, 40)));
}

absl::StatusOr<Bases> BasesOf(const LayoutContext& ctx, absl::string_view encoding,
                              const std::vector<int64_t>& shape) {
  // Blocked layouts index a per-dimension list; 16 dimensions is far past any tensor.
  // Shapes past these bounds are no Triton tensor (OutOfRange: callers that can size the op
  // without bases do so, checked); a layout that is malformed or not modelled is an error.
  if (shape.size() > IntVector::capacity()) {
    return absl::OutOfRangeError("tensor of more than 16 dimensions");
  }
  // Triton's tensors hold at most 2^20 elements (TRITON_MAX_TENSOR_NUMEL); a basis packs 20 bits
  // per dimension.
  if (std::any_of(shape.begin(), shape.end(), [](int64_t x) { return x <= 0 || x > kMaxLayoutExtent; })) {
    return absl::OutOfRangeError("tensor extent outside 1 to 2^20");
  }
  // The packing of this op (PackingScope): every dimension's values below 2^bits, all dimensions
  // in 64 bits.
  if (static_cast<int>(shape.size()) * BitsPerDim() > 64 ||
      std::any_of(shape.begin(), shape.end(), [](int64_t x) { return x > (int64_t{1} << BitsPerDim()); })) {
    return absl::OutOfRangeError("tensor shape past the packing of layout bases");
  }
  ASSIGN_OR_RETURN(Bases b, BasesOfUnchecked(ctx, encoding, shape));
  return Checked(std::move(b));
}

int Gf2Rank(std::vector<uint64_t> v) {
  int rank = 0;
  for (int bit = 63; bit >= 0; --bit) {
    auto pivot = std::find_if(v.begin(), v.end(), [&](uint64_t x) { return (x >> bit) & 1; });
    if (pivot == v.end()) continue;
    const uint64_t p = *pivot;
    v.erase(pivot);
    for (uint64_t& x : v) if ((x >> bit) & 1) x ^= p;
    ++rank;
  }
  return rank;
}

// Elements of one round of a layout conversion through shared memory: the tile that both
// sides' lanes and warps (and the registers both vectorize over) cover, as in
// getNumScratchElemsSwizzledCvt; source warps that hold copies each keep their own.
std::optional<int64_t> CvtScratchElems(const absl::StatusOr<Bases>& s,
                                       const absl::StatusOr<Bases>& d, int64_t bits) {
  if (!s.ok() || !d.ok()) return std::nullopt;
  std::vector<uint64_t> tile;
  for (size_t i = 0; i < s->reg.size() && i < d->reg.size(); ++i) {
    if (s->reg[i] == 0 || s->reg[i] != d->reg[i] || ((int64_t{2} << i) * bits) > 128) break;
    tile.push_back(s->reg[i]);
  }
  int copies = 0;
  for (const auto* v : {&s->lane, &s->warp, &d->lane, &d->warp})
    for (uint64_t x : *v) if (x != 0) tile.push_back(x);
  for (uint64_t x : s->warp) if (x == 0) ++copies;
  const int log2 = Gf2Rank(tile) + copies;
  if (log2 > 40) return std::nullopt;  // past any scratchpad; the tensor's size bounds it instead
  return int64_t{1} << log2;
}

// The bases as indices into the tensor flattened with dimension 0 the most minor (Triton's
// flattenOuts); std::nullopt unless every extent is a power of two.
std::optional<FlatLayout> Flatten(const Bases& b, const std::vector<int64_t>& shape, int* dim) {
  int total = 0;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] <= 0 || (shape[d] & (shape[d] - 1)) != 0) return std::nullopt;
    total += __builtin_ctzll(static_cast<uint64_t>(shape[d]));
  }
  if (total > 30) return std::nullopt;
  *dim = total;
  auto flat = [&](const PackedBases& in, BasisList& out) {
    for (uint64_t x : in) {
      uint64_t v = 0;
      int shift = 0;
      for (size_t d = 0; d < shape.size(); ++d) {
        v += ((x >> (BitsPerDim() * d)) & ((uint64_t{1} << BitsPerDim()) - 1)) << shift;
        shift += __builtin_ctzll(static_cast<uint64_t>(shape[d]));
      }
      out.push_back(static_cast<uint32_t>(v));
    }
  };
  FlatLayout f;
  flat(b.reg, f.reg);
  flat(b.lane, f.lane);
  flat(b.warp, f.warp);
  return f;
}
}  // namespace

const char* TritonReleaseName(TritonRelease release) {
  switch (release) {
    case TritonRelease::k3_6: return "3.6";
    case TritonRelease::k3_9: return "3.9";
    case TritonRelease::kUnknown: break;
  }
  return "unknown";
}

absl::StatusOr<TritonRelease> ParseTritonRelease(absl::string_view text) {
  if (text == "3.6" || text == "3.6.0") return TritonRelease::k3_6;
  if (text == "3.9" || text == "3.9.0") return TritonRelease::k3_9;
  return absl::InvalidArgumentError(
      absl::StrCat("Triton release '", text, "' is not modelled (modelled: 3.6, 3.9)"));
}

int64_t ElementBits(absl::string_view t) {
  if (t == "f16" || t == "bf16" || t == "i16") return 16;
  if (t == "f32" || t == "i32" || t == "tf32") return 32;
  if (t == "f64" || t == "i64") return 64;
  if (t == "i8" || absl::StartsWith(t, "f8")) return 8;
  if (t == "i1") return 1;
  if (absl::StartsWith(t, "!tt.ptr")) return 64;
  if (t == "f4E2M1FN" || t == "i4") return 4;
  return 0;
}

// PaddedSharedEncodingAttr::getPaddedSize: `pad` elements after every `interval` elements but
// the last (no padding after the final element).
std::optional<int64_t> SharedEncoding::PaddedSize(int64_t numel) const {
  int64_t total = numel;
  for (const auto& [interval, pad] : padding) {
    if (interval <= 0) continue;
    std::optional<int64_t> extra = CheckedMul(numel / interval, pad);
    if (!extra) return std::nullopt;
    if (numel % interval == 0 && *extra >= pad) *extra -= pad;
    const std::optional<int64_t> sum = CheckedAdd(total, *extra);
    if (!sum) return std::nullopt;
    total = *sum;
  }
  return total;
}

absl::StatusOr<SharedEncoding> ParseSharedEncoding(absl::string_view text) {
  SharedEncoding e;
  if (absl::StartsWith(text, "#ttg.nvmma_shared<")) {
    // NVMMASharedEncodingAttr::getAlignment (Triton 3.6 and 3.9): 128 bytes times the swizzle's
    // maxPhase (swizzlingByteWidth / 16, 1 unswizzled). Hardware swizzling works on physical
    // addresses, so one whole swizzle pattern (8 rows of 16-byte chunks for 128-byte
    // swizzling: 1024 bytes) must start on its own boundary.
    const std::optional<int64_t> swizzle = IntField(text, "swizzlingByteWidth");
    if (!swizzle || (*swizzle != 0 && *swizzle != 32 && *swizzle != 64 && *swizzle != 128)) {
      return absl::InvalidArgumentError("#ttg.nvmma_shared without a swizzlingByteWidth of 0, 32, 64 or 128");
    }
    e.alignment = 128 * std::max<int64_t>(1, *swizzle / 16);
    if (text.find("fp4Padded = true") != absl::string_view::npos) e.elements_per_memdesc_element = 2;
  } else if (absl::StartsWith(text, "#ttg.swizzled_shared<") ||
             absl::StartsWith(text, "#ttg.shared_linear<") ||
             absl::StartsWith(text, "#ttg.amd_rotating_shared<")) {
    e.alignment = 16;
  } else if (absl::StartsWith(text, "#ttg.padded_shared<")) {
    e.alignment = 16;
    e.padded = true;
    // "#ttg.padded_shared<[32:+4, 64:+8] {...}>"
    size_t open = text.find('['), close = text.find(']');
    if (open == absl::string_view::npos || close == absl::string_view::npos) {
      return absl::InvalidArgumentError(absl::StrCat("padded_shared without [interval:+pad]: ", text));
    }
    for (absl::string_view part : absl::StrSplit(text.substr(open + 1, close - open - 1), ',',
                                                absl::SkipWhitespace())) {
      std::vector<absl::string_view> kv = absl::StrSplit(absl::StripAsciiWhitespace(part), ":+");
      int64_t interval = 0, pad = 0;
      // Triton shifts by their logarithms: both are powers of two.
      if (kv.size() != 2 || !absl::SimpleAtoi(kv[0], &interval) || !absl::SimpleAtoi(kv[1], &pad) ||
          interval <= 0 || pad <= 0 || (interval & (interval - 1)) != 0 || (pad & (pad - 1)) != 0) {
        return absl::InvalidArgumentError(absl::StrCat("bad padding '", part, "' in ", text));
      }
      e.padding.push_back({interval, pad});
    }
  } else {
    return absl::UnimplementedError(absl::StrCat("unsupported shared encoding ", text.substr(0, 60)));
  }
  return e;
}

std::optional<TensorType> ParseTensorType(absl::string_view text) {
  size_t p = text.find("tensor<");
  if (p == absl::string_view::npos) return std::nullopt;
  p += 7;
  int depth = 1;
  size_t e = p;
  for (; e < text.size() && depth > 0; ++e) {
    if (text[e] == '<') ++depth;
    if (text[e] == '>' && text[e - 1] != '-') --depth;
  }
  absl::string_view body = text.substr(p, e - p - 1);
  size_t comma = body.find(", ");
  absl::string_view dims = comma == absl::string_view::npos ? body : body.substr(0, comma);
  TensorType t;
  if (comma != absl::string_view::npos) t.encoding = std::string(body.substr(comma + 2));
  // The element type may itself contain 'x' (!tt.ptr<f16>): dims are the leading integers
  // of the 'x'-separated parts, the element all that follows them.
  t.shape.reserve(4);
  std::string_view rest(dims.data(), dims.size());
  while (true) {
    const size_t x = rest.find('x');
    int64_t v = 0;
    if (!absl::SimpleAtoi(absl::string_view(rest.data(), std::min(x, rest.size())), &v)) break;
    t.shape.push_back(v);
    if (x == std::string_view::npos) {
      rest = {};
      break;
    }
    rest.remove_prefix(x + 1);
  }
  t.element = std::string(rest);
  return t;
}

std::vector<TensorType> TensorTypes(absl::string_view text) {
  std::vector<TensorType> out;
  size_t p = 0;
  while ((p = text.find("tensor<", p)) != absl::string_view::npos) {
    if (auto t = ParseTensorType(text.substr(p))) out.push_back(std::move(*t));
    p += 7;
  }
  return out;
}

absl::StatusOr<DimSplit> SplitOf(const LayoutContext& ctx, absl::string_view encoding, int rank) {
  // Each #ttg.slice adds a dimension to its parent: the bound on dimensions also bounds the
  // recursion through nested slices.
  if (rank > static_cast<int>(IntVector::capacity())) {
    return absl::InvalidArgumentError("tensor of more than 16 dimensions");
  }
  const absl::string_view enc = Resolve(ctx, encoding);
  DimSplit s;
  if (absl::StartsWith(enc, "#ttg.blocked<")) {
    auto spt = IntList(enc, "sizePerThread");
    auto tpw = IntList(enc, "threadsPerWarp");
    auto wpc = IntList(enc, "warpsPerCTA");
    if (!spt || !tpw || !wpc) return absl::InvalidArgumentError("malformed #ttg.blocked");
    s.per_thread.assign(spt->begin(), spt->end());
    s.threads.assign(tpw->begin(), tpw->end());
    s.warps.assign(wpc->begin(), wpc->end());
  } else if (absl::StartsWith(enc, "#ttg.slice<")) {
    auto dim = IntField(enc, "dim");
    size_t p = enc.find("parent = ");
    if (!dim || p == std::string::npos) return absl::InvalidArgumentError("malformed #ttg.slice");
    const std::string parent = ParentOf(enc, p);
    ASSIGN_OR_RETURN(DimSplit ps, SplitOf(ctx, parent, rank + 1));
    for (int d = 0; d < static_cast<int>(ps.warps.size()); ++d) {
      if (d == *dim) continue;
      s.per_thread.push_back(ps.per_thread[d]);
      s.threads.push_back(ps.threads[d]);
      s.warps.push_back(ps.warps[d]);
    }
  } else if (absl::StartsWith(enc, "#ttg.nvidia_mma<")) {
    auto wpc = IntList(enc, "warpsPerCTA");
    if (!wpc) return absl::InvalidArgumentError("malformed #ttg.nvidia_mma");
    s.warps.assign(wpc->begin(), wpc->end());
    // Each warp's 16xN tile: 8 lanes down the rows, 4 across the columns.
    s.threads.assign(wpc->size(), 1);
    s.per_thread.assign(wpc->size(), 1);
    if (wpc->size() >= 2) {
      s.threads[wpc->size() - 2] = 8;
      s.threads[wpc->size() - 1] = 4;
      s.per_thread[wpc->size() - 2] = 2;
      s.per_thread[wpc->size() - 1] = 2;
    }
  } else if (absl::StartsWith(enc, "#ttg.amd_mfma<")) {
    // One MFMA output tile per warp (see BasesOf): its rows and columns are spanned by the lanes
    // and registers together; only the split between them differs with isTransposed.
    auto wpc = IntList(enc, "warpsPerCTA");
    auto instr = IntList(enc, "instrShape");
    if (!wpc || !instr || instr->size() < 2 || static_cast<int>(wpc->size()) != rank || rank < 2) {
      return absl::InvalidArgumentError("malformed #ttg.amd_mfma");
    }
    const int64_t mdim = (*instr)[0], ndim = (*instr)[1];
    if (!((mdim == 32 && ndim == 32) || (mdim == 16 && ndim == 16))) {
      return absl::UnimplementedError(absl::StrCat("#ttg.amd_mfma with instrShape ", mdim, "x", ndim));
    }
    const bool transposed = enc.find("isTransposed = true") != absl::string_view::npos;
    s.warps.assign(wpc->begin(), wpc->end());
    s.threads.assign(rank, 1);
    s.per_thread.assign(rank, 1);
    const int64_t lanes_across = 64 / mdim;  // lanes along the register side: 2 or 4
    const int regs_side = transposed ? rank - 1 : rank - 2, lanes_side = transposed ? rank - 2 : rank - 1;
    s.threads[lanes_side] = mdim;
    s.threads[regs_side] = lanes_across;
    s.per_thread[regs_side] = mdim / lanes_across;
  } else if (absl::StartsWith(enc, "#ttg.linear<")) {
    auto reg = BasisCounts(enc, "register", rank);
    auto lane = BasisCounts(enc, "lane", rank);
    auto warp = BasisCounts(enc, "warp", rank);
    if (!reg || !lane || !warp) return absl::InvalidArgumentError("malformed #ttg.linear");
    s.per_thread = *reg;
    s.threads = *lane;
    s.warps = *warp;
  } else {
    return absl::UnimplementedError(absl::StrCat("layout ", enc.substr(0, 40)));
  }
  if (static_cast<int>(s.warps.size()) != rank || static_cast<int>(s.threads.size()) != rank ||
      static_cast<int>(s.per_thread.size()) != rank) {
    return absl::InvalidArgumentError(absl::StrCat("layout rank ", s.warps.size(),
                                                   " does not match tensor rank ", rank));
  }
  // The scratch rules divide by these and multiply them: each must be a positive count.
  for (const std::vector<int64_t>* v : {&s.per_thread, &s.threads, &s.warps}) {
    if (std::any_of(v->begin(), v->end(), [](int64_t x) { return x <= 0; })) {
      return absl::InvalidArgumentError("layout with a count per thread, warp or CTA that is not positive");
    }
  }
  return s;
}

namespace {

// The value a packed basis moves dimension `d` by.
int64_t Component(uint64_t basis, int d) {
  return static_cast<int64_t>((basis >> (BitsPerDim() * d)) & ((uint64_t{1} << BitsPerDim()) - 1));
}

// LinearEncodingAttr::basesPerDim with broadcast skipped: each non-zero basis doubles the count
// of the first dimension it moves.
IntVector CountsPerDim(const PackedBases& bases, int rank) {
  IntVector out = Ones(rank);
  for (uint64_t x : bases) {
    for (int d = 0; d < rank; ++d) {
      if (Component(x, d) != 0) {
        out[d] *= 2;
        break;
      }
    }
  }
  return out;
}

// ScanLoweringHelper::getScratchSizeInBytes (lib/Analysis/Utility.cpp; the same rule in Triton 3.6
// and 3.9): nothing unless the operand is #ttg.blocked and warps along the axis hold distinct
// data; otherwise (sum of the operands' bytes) x warps x non-axis threads per warp x non-axis
// contiguous elements per thread x the axis' and the other dimensions' repetitions, all counted on
// the operand's linear layout with broadcast registers removed (the LinearEncodingAttr the helper
// builds: warps and lanes per dimension skip broadcast bases, contiguity walks the register bases
// in the layout's order).
absl::StatusOr<ScratchNeed> ScanScratch(const LayoutContext& ctx, const TtgirOp& op,
                                        const std::vector<TensorType>& ins, int axis,
                                        absl::string_view origin) {
  ScratchNeed need;
  const TensorType& src = ins[0];
  const int rank = static_cast<int>(src.shape.size());
  if (!absl::StartsWith(Resolve(ctx, src.encoding), "#ttg.blocked<")) return need;
  absl::StatusOr<Bases> bases = BasesOf(ctx, src.encoding, src.shape);
  if (!bases.ok()) return Unsupported(origin, op.line, bases.status().message());
  PackedBases reg;
  for (uint64_t x : bases->reg)
    if (x != 0) reg.push_back(x);
  const IntVector warps = CountsPerDim(bases->warp, rank);
  const IntVector threads = CountsPerDim(bases->lane, rank);
  if (warps[axis] == 1) return need;
  // LinearEncodingAttr::getOrder: dimensions as the registers first move them, then the rest
  // from the last dimension down.
  IntVector order;
  auto add_dim = [&](int d) {
    if (std::find(order.begin(), order.end(), d) == order.end()) order.push_back(d);
  };
  for (uint64_t x : reg) {
    for (int d = 0; d < rank; ++d) {
      if (Component(x, d) != 0) {
        add_dim(d);
        break;
      }
    }
  }
  for (int d = rank - 1; d >= 0; --d) add_dim(d);
  // getContigPerThread: per dimension in that order, the register bases 1, 2, 4, ... along it
  // that follow one another from the first.
  IntVector contig = Ones(rank);
  size_t next = 0;
  for (int64_t d : order) {
    while (next < reg.size() && reg[next] == Pack(static_cast<int>(d), contig[d])) {
      contig[d] *= 2;
      ++next;
    }
  }
  const ScratchMath math(origin, op.line, op.name);
  int64_t elems = 1;
  for (int d = 0; d < rank; ++d) {
    ASSIGN_OR_RETURN(elems, math.Mul(elems, warps[d]));
    const int64_t span = contig[d] * threads[d] * warps[d];
    ASSIGN_OR_RETURN(elems, math.Mul(elems, (src.shape[d] + span - 1) / span));
    if (d != axis) {
      ASSIGN_OR_RETURN(elems, math.Mul(elems, threads[d]));
      ASSIGN_OR_RETURN(elems, math.Mul(elems, contig[d]));
    }
  }
  int64_t bytes_per_elem = 0;
  for (const TensorType& t : ins) {
    const int64_t bits = ElementBits(t.element);
    if (bits <= 0) return Unsupported(origin, op.line, absl::StrCat("tt.scan of element type ", t.element));
    bytes_per_elem += (bits + 7) / 8;
  }
  ASSIGN_OR_RETURN(need.bytes, math.Mul(elems, bytes_per_elem));
  return need;
}

// Replaces dimension `d` of a packed basis by `v`.
uint64_t WithComponent(uint64_t basis, int d, int64_t v) {
  const uint64_t mask = ((uint64_t{1} << BitsPerDim()) - 1) << (BitsPerDim() * d);
  return (basis & ~mask) | Pack(d, v);
}

// ReduceOpHelper::zeroBasesAlongDimAndReorder: the bases of `which` (0 registers, 1 lanes) stop
// moving along `axis`; the other bases along it are renumbered 1, 2, 4, ... in the order
// registers, lanes, warps.
void ZeroAlongAndReorder(Bases& b, int axis, int which) {
  for (uint64_t& x : which == 0 ? b.reg : b.lane) x = WithComponent(x, axis, 0);
  int64_t next = 1;
  for (PackedBases* v : {&b.reg, &b.lane, &b.warp}) {
    for (uint64_t& x : *v) {
      if (Component(x, axis) == 0) continue;
      x = WithComponent(x, axis, next);
      next *= 2;
    }
  }
}

void DropZeroRegisters(Bases& b) {
  PackedBases kept;
  for (uint64_t x : b.reg)
    if (x != 0) kept.push_back(x);
  b.reg = kept;
}

bool MovesAlong(const Bases& b, int axis) {
  for (const PackedBases* v : {&b.reg, &b.lane, &b.warp})
    for (uint64_t x : *v)
      if (Component(x, axis) != 0) return true;
  return false;
}

// ReduceOpHelper::getInterLayout: the warp bases along the axis move into lanes, into lanes that
// broadcast if there are enough of them, else into the first lanes (whose bases go to those warps).
Bases InterLayout(const Bases& in, int axis) {
  Bases b = in;
  std::vector<size_t> warp_axis, zero_lanes;
  for (size_t i = 0; i < b.warp.size(); ++i)
    if (Component(b.warp[i], axis) != 0) warp_axis.push_back(i);
  for (size_t i = 0; i < b.lane.size(); ++i)
    if (b.lane[i] == 0) zero_lanes.push_back(i);
  if (zero_lanes.size() >= warp_axis.size()) {
    for (size_t k = 0; k < warp_axis.size(); ++k) std::swap(b.lane[zero_lanes[k]], b.warp[warp_axis[k]]);
    return b;
  }
  for (size_t k = 0; k < warp_axis.size() && k < b.lane.size(); ++k) std::swap(b.lane[k], b.warp[warp_axis[k]]);
  return b;
}

// Triton 3.9's ReduceOpHelper::getScratchSizeInBytes (lib/Analysis/Utility.cpp): the reduction
// within threads and lanes happens in registers (the layout reducedRegLaneLayout gives: registers
// along the axis moved to the front and dropped, then lanes along it dropped); each round then
// moves the warps along the axis into lanes through shared memory, a layout conversion whose
// scratch is one swizzled round (getNumScratchElemsSwizzledCvt, plain ld/st.shared) per operand;
// the scratch is the largest round's.
absl::StatusOr<ScratchNeed> ReduceScratchByConversions(const LayoutContext& ctx, const TtgirOp& op,
                                                       const std::vector<TensorType>& ins, int axis,
                                                       absl::string_view origin) {
  ScratchNeed need;
  const TensorType& src = ins[0];
  const int rank = static_cast<int>(src.shape.size());
  absl::StatusOr<Bases> bases = BasesOf(ctx, src.encoding, src.shape);
  if (!bases.ok()) return Unsupported(origin, op.line, bases.status().message());
  Bases b = *bases;
  DropZeroRegisters(b);
  // moveAxisBasesToFront: registers along the axis first, the rest after, each in order.
  PackedBases front, back;
  for (uint64_t x : b.reg) (Component(x, axis) != 0 ? front : back).push_back(x);
  b.reg = front;
  b.reg.append(back);
  ZeroAlongAndReorder(b, axis, 0);
  DropZeroRegisters(b);
  ZeroAlongAndReorder(b, axis, 1);
  const ScratchMath math(origin, op.line, op.name);
  int64_t largest = 0;
  for (int round = 0; MovesAlong(b, axis); ++round) {
    if (round > 64) return Unsupported(origin, op.line, "tt.reduce: its warps along the axis never fit the lanes");
    const Bases tmp = InterLayout(b, axis);
    // The tensor both layouts cover: the axis shrunk to the bases still moving along it.
    std::vector<int64_t> shape = src.shape;
    int64_t along = 1;
    for (const PackedBases* v : {&b.reg, &b.lane, &b.warp})
      for (uint64_t x : *v)
        if (Component(x, axis) != 0) along *= 2;
    shape[axis] = along;
    int dim = 0;
    std::optional<FlatLayout> fs = Flatten(b, shape, &dim);
    std::optional<FlatLayout> fd = Flatten(tmp, shape, &dim);
    int64_t bytes = 0;
    for (const TensorType& t : ins) {
      const int64_t bits = std::max<int64_t>(8, ElementBits(t.element));
      std::optional<int64_t> elems;
      if (fs && fd) {
        elems = SwizzledCvtScratchElems(*fs, *fd, dim, bits, /*compute_capability=*/0, ctx.num_banks, ctx.amd_arch);
      }
      if (!elems) return Unsupported(origin, op.line, "tt.reduce: a layout the conversion model cannot plan");
      ASSIGN_OR_RETURN(const int64_t b_bytes, math.Mul(*elems, bits / 8));
      bytes += b_bytes;
    }
    largest = std::max(largest, bytes);
    b = tmp;
    ZeroAlongAndReorder(b, axis, 1);
  }
  (void)rank;
  need.bytes = largest;
  return need;
}

// getWarpLayoutConvertDecomposition's count of mixed transpositions: the permutation P of the
// register and lane bits (broadcast registers removed, both sides padded with zero bases) that
// maps each source bit to the destination bit holding the same tensor coordinate, zero bits paired
// by position; each register-to-lane step of P's cycles is one transposition. -1 when the
// layouts are not permutations of each other's bits.
int MixedTranspositions(const Bases& src, const Bases& dst) {
  PackedBases sreg, dreg;
  for (uint64_t x : src.reg)
    if (x != 0) sreg.push_back(x);
  for (uint64_t x : dst.reg)
    if (x != 0) dreg.push_back(x);
  const size_t nreg = std::max(sreg.size(), dreg.size()), nlane = std::max(src.lane.size(), dst.lane.size());
  const size_t n = nreg + nlane;
  if (n > 64) return -1;
  uint64_t s[64], d[64];
  for (size_t i = 0; i < n; ++i) {
    const bool reg = i < nreg;
    const size_t k = reg ? i : i - nreg;
    const PackedBases& sl = reg ? sreg : src.lane;
    const PackedBases& dl = reg ? dreg : dst.lane;
    s[i] = k < sl.size() ? sl[k] : 0;
    d[i] = k < dl.size() ? dl[k] : 0;
  }
  int p[64];
  int src_free[64], dst_free[64];
  int num_src_free = 0, num_dst_free = 0;
  for (size_t i = 0; i < n; ++i) {
    p[i] = -1;
    if (s[i] == 0 && d[i] == 0) {
      p[i] = static_cast<int>(i);
    } else if (s[i] == 0) {
      src_free[num_src_free++] = static_cast<int>(i);
    } else if (d[i] == 0) {
      dst_free[num_dst_free++] = static_cast<int>(i);
    }
  }
  for (size_t i = 0; i < n; ++i) {
    if (s[i] == 0) continue;
    for (size_t j = 0; j < n; ++j) {
      if (d[j] == s[i]) {
        p[i] = static_cast<int>(j);
        break;
      }
    }
    if (p[i] < 0) return -1;
  }
  for (int k = 0; k < num_src_free && k < num_dst_free; ++k) p[src_free[k]] = dst_free[k];
  int mixed = 0;
  for (size_t i = 0; i < nreg; ++i) {
    if (p[i] < 0) return -1;
    if (static_cast<size_t>(p[i]) >= nreg) ++mixed;
  }
  return mixed;
}

// The packing width for an op's tensors: 20 bits while every layout (a slice's parent one rank
// up included) has at most 3 dimensions; else the bits the largest extent needs.
int PackingBitsFor(absl::string_view text) {
  // Shapes read in place: "tensor<16x2x2x...": digits and 'x' up to the element type.
  size_t rank = 0;
  int64_t largest = 1;
  const std::string_view t(text.data(), text.size());
  for (size_t p = t.find("tensor<"); p != std::string_view::npos; p = t.find("tensor<", p + 7)) {
    size_t dims = 0;
    int64_t v = 0;
    for (size_t q = p + 7; q < t.size(); ++q) {
      const char c = t[q];
      if (c >= '0' && c <= '9') {
        v = std::min<int64_t>(v * 10 + (c - '0'), int64_t{1} << 40);
      } else if (c == 'x' && q > p + 7 && t[q - 1] >= '0' && t[q - 1] <= '9') {
        ++dims;
        largest = std::max(largest, v);
        v = 0;
      } else {
        break;
      }
    }
    rank = std::max(rank, dims);
  }
  if (rank + 1 <= 3) return 20;
  int bits = 1;
  while (bits < 21 && (int64_t{1} << bits) < largest) ++bits;
  return bits;
}

// LinearEncodingAttr::getOrder: the dimensions in the order the register bases first move
// along them, then those the registers never move along, from the last to the first.
std::vector<int> RegisterOrder(const Bases& b, int rank) {
  std::vector<int> order;
  auto add = [&](int d) {
    if (std::find(order.begin(), order.end(), d) == order.end()) order.push_back(d);
  };
  const uint64_t mask = (uint64_t{1} << BitsPerDim()) - 1;
  for (uint64_t x : b.reg) {
    for (int d = 0; d < rank; ++d) {
      if ((x >> (BitsPerDim() * d)) & mask) add(d);
    }
  }
  for (int d = rank - 1; d >= 0; --d) add(d);
  return order;
}

// LinearEncodingAttr::getContigPerThread along `dim`, the first of the order: the leading
// register bases that step 1, 2, 4, ... along it.
int64_t ContiguousAlong(const Bases& b, int dim) {
  int64_t contig = 1;
  for (uint64_t x : b.reg) {
    if (x != Pack(dim, contig)) break;
    contig *= 2;
  }
  return contig;
}

// AMD's padded conversion (third_party/amd/lib/Analysis/AMDGPUAllocation.cpp,
// getScratchConfigForCvt; the scratch of a conversion marked amdg.use_padded_scratch_shmem):
// the tile both layouts' first CTA tiles cover (per dimension the larger of min(shape,
// sizePerThread x threadsPerWarp x warpsPerCTA) of each side), its fastest dimension in the
// destination's order padded by the wider of the two vector accesses (at most 128 bits), unless
// the tile is one row.
absl::StatusOr<int64_t> PaddedCvtScratchElems(const LayoutContext& ctx, const TensorType& src, const TensorType& dst,
                                              const Bases& sb, const Bases& db, int64_t bits) {
  const int rank = static_cast<int>(src.shape.size());
  ASSIGN_OR_RETURN(const DimSplit ss, SplitOf(ctx, src.encoding, rank));
  ASSIGN_OR_RETURN(const DimSplit ds, SplitOf(ctx, dst.encoding, rank));
  std::vector<int64_t> rep(rank);
  for (int d = 0; d < rank; ++d) {
    const int64_t s_tile = ss.per_thread[d] * ss.threads[d] * ss.warps[d];
    const int64_t d_tile = ds.per_thread[d] * ds.threads[d] * ds.warps[d];
    rep[d] = std::max(std::min(src.shape[d], s_tile), std::min(dst.shape[d], d_tile));
  }
  const std::vector<int> in_order = RegisterOrder(sb, rank), out_order = RegisterOrder(db, rank);
  const int inner = rank - 1, fast = out_order[0];
  int64_t in_vec = fast != inner || in_order[0] != inner ? 1 : ContiguousAlong(sb, in_order[0]);
  int64_t out_vec = fast != inner ? 1 : ContiguousAlong(db, fast);
  const int64_t widest = std::max<int64_t>(1, 128 / bits);
  in_vec = std::min({in_vec, rep[fast], widest});
  out_vec = std::min({out_vec, rep[fast], widest});
  int64_t elems = 1;
  for (int64_t r : rep) elems *= r;
  if (rank <= 1 || elems == rep[fast]) return elems;
  return elems / rep[fast] * (rep[fast] + std::max(in_vec, out_vec));
}

// A conversion from a source every warp holds whole (its warp bases all zero) into a destination
// whose warps split the tensor: each destination warp's elements are in that warp already, so
// what moves is the exchange within a warp, between the source's register and lane bits less the
// destination's warp bits and the destination's register and lane bits. nullopt where the source
// is not held whole by every warp, or a destination warp bit is not one of the source's bits.
std::optional<std::pair<Bases, Bases>> WithinWarpExchange(const Bases& src, const Bases& dst) {
  if (src.warp.empty() || std::any_of(src.warp.begin(), src.warp.end(), [](uint64_t b) { return b != 0; })) {
    return std::nullopt;
  }
  Bases local_src = src, local_dst = dst;
  for (uint64_t& w : local_dst.warp) {
    if (w == 0) continue;
    bool found = false;
    for (PackedBases* list : {&local_src.reg, &local_src.lane}) {
      for (uint64_t& b : *list) {
        if (b == w) {
          b = 0;
          found = true;
        }
      }
    }
    if (!found) return std::nullopt;
    w = 0;
  }
  return std::make_pair(local_src, local_dst);
}

// cvtNeedsSharedMemory and getNumScratchElemsSwizzledCvt: nothing when the data stays in
// registers or inside each warp; else one round of the swizzled store/load, in bytes.
absl::StatusOr<ScratchNeed> ConvertLayoutOpScratch(const TtgirOp& op, const LayoutContext& ctx,
                                                   absl::string_view origin) {
  ScratchNeed need;
  std::vector<TensorType> types = TensorTypes(op.text);
  if (types.size() != 2) return Unsupported(origin, op.line, "convert_layout without src -> dst tensor types");
  const absl::string_view src_enc = Resolve(ctx, types[0].encoding);
  const absl::string_view dst_enc = Resolve(ctx, types[1].encoding);
  if (src_enc == dst_enc) return need;
  // An MMA accumulator feeding the next dot as its A operand stays in registers
  // (the mma-to-dot-operand shortcut of cvtNeedsSharedMemory).
  if (absl::StartsWith(dst_enc, "#ttg.dot_op<{opIdx = 0")) {
    const std::string parent = ParentOf(dst_enc, dst_enc.find("parent = "), ",}");
    if (Resolve(ctx, parent) == src_enc && absl::StartsWith(src_enc, "#ttg.nvidia_mma<")) {
      return need;
    }
  }
  // Data that stays inside each warp moves by register permutation or warp shuffles
  // (cvtNeedsSharedMemory): only a change of the warp bases goes through shared memory.
  const absl::StatusOr<Bases> sb = BasesOf(ctx, types[0].encoding, types[0].shape);
  const absl::StatusOr<Bases> db = BasesOf(ctx, types[1].encoding, types[1].shape);
  // A layout the model does not know, or cannot read, is named; never a guess.
  for (const absl::StatusOr<Bases>* b : {&sb, &db}) {
    if (!b->ok() && !absl::IsOutOfRange(b->status())) return Unsupported(origin, op.line, b->status().message());
  }
  if (sb.ok() && db.ok() && sb->warp == db->warp) {
    // Triton 3.6 and 3.9 alike shuffle within a warp only when the exchange is at most one
    // transposition of a register bit with a lane bit (cvtNeedsWarpShuffle: mixedTranspositions
    // < 2); more go through shared memory like any conversion, one warp or many.
    if (MixedTranspositions(*sb, *db) < 2) return need;
  }
  if (sb.ok() && db.ok() && ctx.release != TritonRelease::k3_6) {
    // Triton 3.9 also shuffles where every warp holds the whole source: the exchange within a
    // warp is then all there is (tests/data/triton/cvt_bcast).
    if (std::optional<std::pair<Bases, Bases>> local = WithinWarpExchange(*sb, *db)) {
      const int mixed = MixedTranspositions(local->first, local->second);
      if (mixed >= 0 && mixed < 2) return need;
    }
  }
  const ScratchMath math(origin, op.line, op.name);
  int64_t bits = std::max<int64_t>(8, ElementBits(types[0].element));
  ASSIGN_OR_RETURN(int64_t elems, math.Elements(types[0].shape));
  // Triton 3.6's AMD conversions marked amdg.use_padded_scratch_shmem (OptimizeLDSUsage marks
  // the two it splits a conversion into when only padded scratch fits) take
  // AMDAllocationAnalysisScratchSizeFn's padded rule; Triton 3.9's allocator reads no such mark
  // (its allocation pass sizes a marked conversion swizzled).
  if (ctx.amd_arch != 0 && ctx.release == TritonRelease::k3_6 &&
      op.text.find("amdg.use_padded_scratch_shmem") != std::string::npos) {
    if (!sb.ok() || !db.ok()) return Unsupported(origin, op.line, "padded conversion of a layout not modelled");
    ASSIGN_OR_RETURN(elems, PaddedCvtScratchElems(ctx, types[0], types[1], *sb, *db, bits));
    ASSIGN_OR_RETURN(need.bytes, math.Mul(elems, bits));
    need.bytes /= 8;
    return need;
  }
  // One round of Triton's swizzled store/load where both layouts are known in full; the tile
  // both sides' lanes and warps span, as a bound, where they are not.
  std::optional<int64_t> round;
  int dim = 0;
  if (sb.ok() && db.ok()) {
    std::optional<FlatLayout> fs = Flatten(*sb, types[0].shape, &dim);
    std::optional<FlatLayout> fd = Flatten(*db, types[1].shape, &dim);
    if (fs && fd && types[0].shape == types[1].shape) {
      round = SwizzledCvtScratchElems(*fs, *fd, dim, bits, ctx.compute_capability, ctx.num_banks, ctx.amd_arch);
    }
  }
  if (round) {
    elems = *round;
  } else if (auto e = CvtScratchElems(sb, db, bits)) {
    elems = std::min(elems, *e);
  }
  ASSIGN_OR_RETURN(const int64_t total_bits, math.Mul(elems, bits));
  need.bytes = total_bits / 8;
  return need;
}

// Triton 3.6's ReduceOpHelper::getScratchSizeInBytes: getScratchRepShape (the operand's shape
// with the axis cut to the warps along it that hold distinct data) times the operands' bytes per
// element; nothing when a single warp holds the axis.
absl::StatusOr<ScratchNeed> ReduceScratchByRepShape(const TtgirOp& op, const std::vector<TensorType>& ins,
                                                    const DimSplit& split, int axis, absl::string_view origin) {
  ScratchNeed need;
  const TensorType& src = ins[0];
  const ScratchMath math(origin, op.line, op.name);
  int64_t bytes_per_elem = 0;
  for (const TensorType& t : ins) bytes_per_elem += std::max<int64_t>(8, ElementBits(t.element)) / 8;
  ASSIGN_OR_RETURN(const int64_t lane_span, math.Mul(split.per_thread[axis], split.threads[axis]));
  const int64_t unique_warps =
      std::max<int64_t>(1, std::min<int64_t>(split.warps[axis], src.shape[axis] / lane_span));
  if (unique_warps <= 1) return need;
  std::vector<int64_t> rep = src.shape;
  rep[axis] = unique_warps;
  ASSIGN_OR_RETURN(const int64_t elems, math.Elements(rep));
  ASSIGN_OR_RETURN(need.bytes, math.Mul(elems, bytes_per_elem));
  return need;
}

// tt.reduce and tt.scan: the axis and operand types read and checked, then the release's rule.
absl::StatusOr<ScratchNeed> ReduceOrScanOpScratch(const TtgirOp& op, const LayoutContext& ctx,
                                                  absl::string_view origin) {
  const absl::string_view n = op.name;
  auto axis = IntField(op.text, "axis");
  // The operand types are in the trailer "}) : (tensor<...>, ...) -> ...".
  size_t colon = op.text.rfind(" : (");
  if (!axis || colon == std::string::npos) return Unsupported(origin, op.line, absl::StrCat(n, " without axis or operand types"));
  absl::string_view operands = absl::string_view(op.text).substr(colon);
  operands = operands.substr(0, operands.find("->"));
  std::vector<TensorType> ins = TensorTypes(operands);
  if (ins.empty()) return ScratchNeed{};
  const TensorType& src = ins[0];
  const int rank = static_cast<int>(src.shape.size());
  if (*axis < 0 || *axis >= rank) return Unsupported(origin, op.line, "axis out of range");
  auto split = SplitOf(ctx, src.encoding, rank);
  if (!split.ok()) return Unsupported(origin, op.line, split.status().message());
  const ScratchMath math(origin, op.line, n);
  RETURN_IF_ERROR(math.Elements(src.shape).status());
  const int a = static_cast<int>(*axis);
  if (n == "tt.scan") return ScanScratch(ctx, op, ins, a, origin);
  if (ctx.release != TritonRelease::k3_6) return ReduceScratchByConversions(ctx, op, ins, a, origin);
  return ReduceScratchByRepShape(op, ins, *split, a, origin);
}

// GatherLoweringHelper::getScratchSizeInBytes: nothing when the gather is warp-local (no
// warp holds part of a column along the axis, and source and indices split the other
// dimensions over the same warps); otherwise the whole source tensor.
absl::StatusOr<ScratchNeed> GatherOpScratch(const TtgirOp& op, const LayoutContext& ctx, absl::string_view origin) {
  ScratchNeed need;
  const size_t signature = op.text.rfind(" : (");
  if (signature == absl::string_view::npos) {
    return Unsupported(origin, op.line, "tt.gather without its operand types ' : (...)'");
  }
  std::vector<TensorType> types = TensorTypes(op.text.substr(signature));
  auto axis = IntField(op.text, "axis");
  if (types.size() < 2 || !axis) return Unsupported(origin, op.line, "tt.gather without axis or operand types");
  const TensorType& src = types[0];
  const TensorType& idx = types[1];
  if (*axis < 0 || *axis >= static_cast<int64_t>(src.shape.size())) return Unsupported(origin, op.line, "tt.gather axis out of range");
  const absl::StatusOr<Bases> sb = BasesOf(ctx, src.encoding, src.shape);
  const absl::StatusOr<Bases> ib = BasesOf(ctx, idx.encoding, idx.shape);
  if (!sb.ok()) return Unsupported(origin, op.line, sb.status().message());
  if (!ib.ok()) return Unsupported(origin, op.line, ib.status().message());
  bool warp_local = sb->warp.size() == ib->warp.size();
  for (size_t k = 0; warp_local && k < sb->warp.size(); ++k) {
    warp_local = Component(sb->warp[k], static_cast<int>(*axis)) == 0 &&
                 Component(ib->warp[k], static_cast<int>(*axis)) == 0 && sb->warp[k] == ib->warp[k];
  }
  if (warp_local) return need;
  const ScratchMath math(origin, op.line, op.name);
  ASSIGN_OR_RETURN(const int64_t elems, math.Elements(src.shape));
  const int64_t bits = ElementBits(src.element);
  if (bits <= 0) return Unsupported(origin, op.line, absl::StrCat("tt.gather of element type ", src.element));
  ASSIGN_OR_RETURN(need.bytes, math.Mul(elems, (bits + 7) / 8));
  return need;
}

// tt.histogram: one counter per bin, at least one per lane of a warp.
absl::StatusOr<ScratchNeed> HistogramOpScratch(const TtgirOp& op, const LayoutContext& ctx,
                                               absl::string_view origin) {
  ScratchNeed need;
  std::vector<TensorType> types = TensorTypes(op.text);
  if (types.size() < 2) return Unsupported(origin, op.line, "histogram without types");
  const TensorType& dst = types.back();
  const int64_t bits = ElementBits(dst.element);
  if (bits <= 0) return Unsupported(origin, op.line, absl::StrCat("histogram of element type ", dst.element));
  const ScratchMath math(origin, op.line, op.name);
  ASSIGN_OR_RETURN(const int64_t bins, math.Elements(dst.shape));
  ASSIGN_OR_RETURN(const int64_t total_bits, math.Mul(std::max<int64_t>(bins, ctx.threads_per_warp), bits));
  need.bytes = total_bits / 8;
  return need;
}

// Which threads of a layout hold copies of an element (a basis of zero: a free variable of its
// dimension): any, and any in another warp. nullopt where the layout has no modelled bases.
struct LayoutCopies {
  bool any = false;
  bool across_warps = false;
};
std::optional<LayoutCopies> CopiesOf(const LayoutContext& ctx, const TensorType& t) {
  absl::StatusOr<Bases> bases = BasesOf(ctx, t.encoding, t.shape);
  if (!bases.ok()) return std::nullopt;
  auto has_zero = [](const PackedBases& list) {
    return std::any_of(list.begin(), list.end(), [](uint64_t b) { return b == 0; });
  };
  LayoutCopies c;
  c.across_warps = has_zero(bases->warp);
  c.any = c.across_warps || has_zero(bases->lane) || has_zero(bases->reg);
  return c;
}

// Whether a layout without modelled bases covers more elements than the tensor has (its
// per-thread, per-warp and per-CTA extents): copies somewhere.
absl::StatusOr<bool> CoversMoreThanTheTensor(const TtgirOp& op, const LayoutContext& ctx, const TensorType& t,
                                             absl::string_view origin) {
  auto split = SplitOf(ctx, t.encoding, static_cast<int>(t.shape.size()));
  if (!split.ok()) return Unsupported(origin, op.line, split.status().message());
  const ScratchMath math(origin, op.line, op.name);
  ASSIGN_OR_RETURN(const int64_t elems, math.Elements(t.shape));
  int64_t covered = 1;
  for (size_t d = 0; d < t.shape.size(); ++d) {
    ASSIGN_OR_RETURN(covered, math.Mul(covered, split->per_thread[d]));
    ASSIGN_OR_RETURN(covered, math.Mul(covered, split->threads[d]));
    ASSIGN_OR_RETURN(covered, math.Mul(covered, split->warps[d]));
  }
  return covered > elems;
}

// tt.atomic_rmw and tt.atomic_cas whose result is used (getRepShapeForAtomic): a scalar's
// bytes, or the whole tensor when its layout holds copies, to broadcast the one result. Triton
// 3.9 broadcasts within a warp by shuffles: only copies in another warp take scratch (a scalar:
// more than one warp). Measured with Triton 3.9.0 (docs/validation/triton-generated.md, "The
// 3.9 atomic rule"). A layout without modelled bases: copies anywhere, at least Triton's figure.
// Triton 3.9 sizes tt.atomic_load and ttg.local_atomic_scatter_rmw (its result: the old values)
// by the same rule, and tt.atomic_poll with a timeout without the within-warp shuffle
// (`within_warp_shuffle` false): tests/data/triton/ops_registered.
absl::StatusOr<ScratchNeed> AtomicOpScratch(const TtgirOp& op, const LayoutContext& ctx, bool result_used,
                                            absl::string_view origin,
                                            bool within_warp_shuffle = true) {
  ScratchNeed need;
  if (!result_used) return need;
  size_t arrow = op.text.rfind("-> ");
  if (arrow == std::string::npos) return Unsupported(origin, op.line, "atomic without result type");
  absl::string_view result = absl::string_view(op.text).substr(arrow + 3);
  const bool warp_rule = within_warp_shuffle && ctx.release != TritonRelease::k3_6;
  if (!absl::StartsWith(result, "tensor<")) {
    if (warp_rule && ctx.num_warps <= 1) return need;
    need.bytes = std::max<int64_t>(8, ElementBits(absl::StripAsciiWhitespace(result))) / 8;
    return need;
  }
  auto t = ParseTensorType(result);
  if (!t) return Unsupported(origin, op.line, "atomic result type");
  bool copies = false;
  if (std::optional<LayoutCopies> c = CopiesOf(ctx, *t)) {
    copies = warp_rule ? c->across_warps : c->any;
  } else {
    ASSIGN_OR_RETURN(copies, CoversMoreThanTheTensor(op, ctx, *t, origin));
  }
  if (copies) {
    const ScratchMath math(origin, op.line, op.name);
    ASSIGN_OR_RETURN(const int64_t elems, math.Elements(t->shape));
    ASSIGN_OR_RETURN(const int64_t total_bits, math.Mul(elems, std::max<int64_t>(8, ElementBits(t->element))));
    need.bytes = total_bits / 8;
  }
  return need;
}

// amdg.buffer_atomic_rmw and amdg.buffer_atomic_cas whose tensor result is used and whose layout
// holds copies: the whole tensor, as tt.atomic_rmw's (getBufferAtomicScratchSizeInBytes in AMD's
// AMDGPUAllocation.cpp, Triton 3.9: a broadcasting layout, the per-CTA elements at >= 8 bits
// each). Triton 3.6's AMD allocation has no rule for buffer atomics: none.
absl::StatusOr<ScratchNeed> BufferAtomicOpScratch(const TtgirOp& op, const LayoutContext& ctx, bool result_used,
                                                  absl::string_view origin) {
  const size_t arrow = op.text.rfind("-> ");
  if (ctx.release == TritonRelease::k3_6 || arrow == std::string::npos ||
      !absl::StartsWith(absl::string_view(op.text).substr(arrow + 3), "tensor<")) {
    return ScratchNeed{};
  }
  return AtomicOpScratch(op, ctx, result_used, origin);
}

// tt.atomic_poll: a poll without a timeout can only return true, so its result is not
// broadcast (no scratch); one with a timeout broadcasts its i1 result (a byte per element) as an
// atomic's, within a warp too (defaultAllocationAnalysisScratchSizeFn, Triton 3.9; measured:
// tests/data/triton/ops_registered).
absl::StatusOr<ScratchNeed> AtomicPollOpScratch(const TtgirOp& op, const LayoutContext& ctx, bool result_used,
                                                absl::string_view origin) {
  if (absl::string_view(op.text).find(" timeout ") == absl::string_view::npos) return ScratchNeed{};
  return AtomicOpScratch(op, ctx, result_used, origin, /*within_warp_shuffle=*/false);
}

}  // namespace

MemorySpace ClassifyMemorySpace(std::string_view space, const std::map<std::string, std::string>& aliases) {
  if (auto a = aliases.find(std::string(space)); a != aliases.end()) space = a->second;
  if (space == "#ttg.shared_memory" || space == "#smem") return MemorySpace::kShared;
  if (space.starts_with("#ttg.") || space.starts_with("#ttng.")) return MemorySpace::kOther;
  return MemorySpace::kUnknown;
}

namespace {

// WarpSpecializeOp::getCaptureSize: the captures packed like a struct, aligned to 8; none
// without captures (`: () -> ()`).
absl::StatusOr<ScratchNeed> CaptureScratch(const TtgirOp& op, const LayoutContext& ctx, absl::string_view origin) {
  ScratchNeed need;
  size_t colon = op.text.rfind(" : (");
  if (colon == std::string::npos) return need;
  absl::string_view types = absl::string_view(op.text).substr(colon + 4);
  types = absl::StripAsciiWhitespace(types.substr(0, types.rfind(") ->")));
  if (types.empty()) return need;
  int64_t size = 0;
  int depth = 0;
  size_t start = 0;
  std::vector<absl::string_view> list;
  for (size_t i = 0; i <= types.size(); ++i) {
    if (i == types.size() || (depth == 0 && types[i] == ',')) {
      list.push_back(absl::StripAsciiWhitespace(types.substr(start, i - start)));
      start = i + 1;
      continue;
    }
    if (types[i] == '<') ++depth;
    if (types[i] == '>' && types[i - 1] != '-') --depth;
  }
  for (absl::string_view t : list) {
    // Tightly packed (getSharedMemorySize per capture): a shared-memory memdesc is its object,
    // an 8-byte base plus one i32 offset per dimension; pointers, tensor descriptors and
    // memdescs of other spaces 8 bytes; scalars their bytes rounded up. The whole is aligned to 8.
    int64_t bytes = 8;
    if (absl::StartsWith(t, "!ttg.memdesc<")) {
      absl::string_view inner = t.substr(13, t.rfind('>') - 13);
      std::vector<absl::string_view> parts = absl::StrSplit(inner, ", ");
      const int64_t rank = std::count(parts[0].begin(), parts[0].end(), 'x');
      const MemorySpace space = parts.size() > 2 ? ClassifyMemorySpace(std::string_view(parts[2].data(), parts[2].size()), ctx.aliases)
                                                 : MemorySpace::kUnknown;
      if (space == MemorySpace::kUnknown) {
        return Unsupported(origin, op.line, absl::StrCat("warp_specialize capture of type ", t));
      }
      bytes = space == MemorySpace::kShared ? 8 + 4 * rank : 8;
    } else if (absl::StartsWith(t, "!tt.ptr") || absl::StartsWith(t, "!tt.tensordesc")) {
      bytes = 8;
    } else {
      const int64_t bits = ElementBits(t);
      if (bits <= 0 || absl::StartsWith(t, "!")) {
        return Unsupported(origin, op.line, absl::StrCat("warp_specialize capture of type ", t));
      }
      bytes = (bits + 7) / 8;
    }
    size += bytes;
  }
  need.bytes = size;
  need.alignment = 8;
  return need;
}

// The ops with scratch, by defaultAllocationAnalysisScratchSizeFn's cases. Kept out of line:
// ScratchFor runs for every op of a module, almost all of which have none, and this body's
// frame (inline layout bases) would cost each of them its prologue.
ABSL_ATTRIBUTE_NOINLINE absl::StatusOr<ScratchNeed> ScratchForOpWithScratch(
    const TtgirOp& op, const LayoutContext& ctx, bool result_used, absl::string_view origin) {
  const PackingScope packing(PackingBitsFor(op.text));
  const absl::string_view n = op.name;
  if (n == "ttg.convert_layout") return ConvertLayoutOpScratch(op, ctx, origin);
  if (n == "tt.reduce" || n == "tt.scan") return ReduceOrScanOpScratch(op, ctx, origin);
  if (n == "tt.gather") return GatherOpScratch(op, ctx, origin);
  if (n == "tt.histogram") return HistogramOpScratch(op, ctx, origin);
  if (n == "tt.atomic_rmw" || n == "tt.atomic_cas" || n == "tt.atomic_load" || n == "ttg.local_atomic_scatter_rmw") {
    return AtomicOpScratch(op, ctx, result_used, origin);
  }
  if (n == "tt.atomic_poll") return AtomicPollOpScratch(op, ctx, result_used, origin);
  if (n == "amdg.buffer_atomic_rmw" || n == "amdg.buffer_atomic_cas") {
    return BufferAtomicOpScratch(op, ctx, result_used, origin);
  }
  if (n == "ttng.tensormap_create") return ScratchNeed{.bytes = 128};  // kTMASize
  if (n == "ttg.warp_specialize") return CaptureScratch(op, ctx, origin);
  return ScratchNeed{};
}

}  // namespace

bool ScratchDependsOnResultUse(TtgirOpKind kind) {
  switch (kind) {
    case TtgirOpKind::kAtomicRmw:
    case TtgirOpKind::kAtomicCas:
    case TtgirOpKind::kAtomicLoad:
    case TtgirOpKind::kAtomicPoll:
    case TtgirOpKind::kLocalAtomicScatterRmw:
    case TtgirOpKind::kBufferAtomicRmw:
    case TtgirOpKind::kBufferAtomicCas:
      return true;
    default:
      return false;
  }
}

absl::StatusOr<ScratchNeed> ScratchFor(const TtgirOp& op, const LayoutContext& ctx,
                                       bool result_used, absl::string_view origin) {
  if (ScratchDependsOnResultUse(op.kind)) return ScratchForOpWithScratch(op, ctx, result_used, origin);
  switch (op.kind) {
    case TtgirOpKind::kConvertLayout:
    case TtgirOpKind::kReduce:
    case TtgirOpKind::kScan:
    case TtgirOpKind::kHistogram:
    case TtgirOpKind::kGather:
    case TtgirOpKind::kTensormapCreate:
    case TtgirOpKind::kWarpSpecialize:
      return ScratchForOpWithScratch(op, ctx, result_used, origin);
    default:
      return ScratchNeed{};  // every other op works in registers
  }
}

absl::StatusOr<std::vector<int>> RegisterOrderOf(const LayoutContext& ctx, const TensorType& type) {
  const PackingScope packing(PackingBitsFor(absl::StrCat("tensor<", absl::StrJoin(type.shape, "x"), "x", type.element, ">")));
  ASSIGN_OR_RETURN(const Bases b, BasesOf(ctx, type.encoding, type.shape));
  return RegisterOrder(b, static_cast<int>(type.shape.size()));
}

absl::StatusOr<ScratchNeed> ConvertLayoutScratch(absl::string_view src, absl::string_view dst, int64_t m, int64_t n,
                                                 absl::string_view elem, int num_warps, int threads_per_warp,
                                                 int compute_capability, absl::string_view origin) {
  const std::map<std::string, std::string> aliases = {{"#src", std::string(src)}, {"#dst", std::string(dst)}};
  // TtgirOp views its text: keep the text alive for the call.
  const std::string text = absl::StrCat("%1 = ttg.convert_layout %0 : tensor<", m, "x", n, "x", elem,
                                        ", #src> -> tensor<", m, "x", n, "x", elem, ", #dst>");
  TtgirOp op;
  op.line = 1;
  op.kind = TtgirOpKind::kConvertLayout;
  op.name = "ttg.convert_layout";
  op.text = text;
  LayoutContext ctx{aliases, num_warps, threads_per_warp, compute_capability};
  return ScratchFor(op, ctx, true, origin);
}

absl::StatusOr<ScratchNeed> ReduceScratch(absl::string_view layout, int64_t m, int64_t n, int axis,
                                          absl::string_view elem, int num_warps, int threads_per_warp,
                                          int compute_capability, TritonRelease release, absl::string_view origin) {
  const std::map<std::string, std::string> aliases = {{"#src", std::string(layout)}};
  const std::string text = absl::StrCat("%1 = \"tt.reduce\"(%0) <{axis = ", axis, " : i32}> ({ }) : (tensor<", m, "x", n,
                                        "x", elem, ", #src>) -> tensor<", axis == 0 ? n : m, "x", elem,
                                        ", #ttg.slice<{dim = ", axis, ", parent = #src}>>");
  TtgirOp op;
  op.line = 1;
  op.kind = TtgirOpKind::kReduce;
  op.name = "tt.reduce";
  op.text = text;
  LayoutContext ctx{aliases, num_warps, threads_per_warp, compute_capability};
  ctx.release = release;
  return ScratchFor(op, ctx, true, origin);
}

}  // namespace scratchsim::triton
