#include "backends/tpu/vreg_replay.h"

#include <algorithm>
#include <bit>
#include <iterator>
#include <limits>
#include <numeric>
#include <optional>
#include <utility>

#include "absl/algorithm/container.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/strip.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "backends/tpu/tpu_tiling.h"
#include "sim/checked_math.h"
#include "sim/dtype.h"
#include "sim/status_macros.h"

namespace scratchsim {
namespace {

// Reductions and cumulative ops: each yields only after its whole operand
// (sim/python/scratchsim/_pallas_body.py, REDUCTIONS).
constexpr absl::string_view kReductions[] = {"reduce_sum", "reduce_max", "reduce_min", "reduce_prod", "reduce_and",
                                             "reduce_or", "argmax", "argmin", "cumsum", "cummax", "cummin",
                                             "cumprod", "cumlogsumexp"};
// Ops that read or write a ref: a load's result is a value; a store's operand is consumed.
constexpr absl::string_view kLoads[] = {"get", "load"};
// Ops that make a value of one operand without arithmetic on other values: what they make of a
// load, LLO remakes from the load where it is read (StoreGroupHeldBytes).
constexpr absl::string_view kRemadeFromALoad[] = {"convert_element_type", "reshape", "broadcast_in_dim", "squeeze",
                                                  "expand_dims"};

// Whether `op` reduces over its operand's second-minor dim (a block's column sum): its axes name it.
// Not a cumulative op, whose rows yield as the scan passes them.
bool ReducesOverSublanes(const PallasOp& op, const std::vector<VregValueType>& values) {
  if (!absl::c_linear_search(kReductions, op.op()) || absl::StartsWith(op.op(), "cum") || op.operands_size() == 0) {
    return false;
  }
  const VregValueType& operand = values[op.operands(0)];
  const int rank = static_cast<int>(operand.dims.size());
  return operand.vector && rank >= 2 && absl::c_linear_search(op.axes(), rank - 2);
}

// Generations with a bf16 VPU, whose Mosaic keeps 16-bit arithmetic packed (TPU v6e: "Trillium"
// adds bf16 to the VPU; v7x keeps it). Elsewhere it is computed in 32 bits.
constexpr absl::string_view kPackedArithmetic[] = {"v6e", "v7x"};

// Byte arithmetic that saturates: a hostile shape makes the figure huge, never wraps.
int64_t Saturate(std::optional<int64_t> v) { return v.value_or(std::numeric_limits<int64_t>::max()); }
int64_t SaturatingAdd(int64_t a, int64_t b) { return Saturate(CheckedAdd(a, b)); }
int64_t SaturatingMul(int64_t a, int64_t b) { return Saturate(CheckedMul(a, b)); }

// Generations whose Mosaic keeps an 8-bit (or 4-bit) value loaded from a block of unaligned width
// (minor dim not a multiple of 128) packed; elsewhere it is widened to 32 bits.
constexpr absl::string_view kKeepsUnalignedNarrowLoadsPacked[] = {"v5e", "v5p", "v6e", "v7x"};

// Generations whose Mosaic converts an 8-bit (or 4-bit) dot operand vreg by vreg rather than
// unpacking it whole (UnpacksConvertedNarrowDotOperands).
constexpr absl::string_view kConvertsNarrowDotOperandsStreaming[] = {"v5e", "v5p", "v6e", "v7x"};

// Elements of `bits` (clamped to 4-32) one 32-bit sublane of a vreg packs.
int64_t SublanePacking(int bits) { return std::max(1, 32 / std::clamp(bits, 4, 32)); }

// Whether `value` fills whole native tiles (8 x packing sublanes, 128 lanes) on its two minor dims,
// with no replicated axis.
bool FillsWholeTiles(const VregValueType& value) {
  const size_t rank = value.dims.size();
  return value.vector && rank >= 2 && value.replicated == Replicated::kNone &&
         value.dims[rank - 2] % (8 * SublanePacking(value.bits)) == 0 && value.dims[rank - 1] % 128 == 0;
}

// Whether `op`'s result is its operands' vregs put side by side, with no data moved: Mosaic's
// concatenate of operands that fill whole native tiles (apply_vector_layout, tpu_concatenate_rule:
// it disassembles each operand into its vreg array, concatenates the arrays and assembles them).
// Such a result holds no vreg of its own; its operands' vregs live as long as it does.
bool ReassemblesOperandVregs(const PallasOp& op, const std::vector<VregValueType>& values) {
  if (op.op() != "concatenate" || op.results_size() != 1 || op.operands_size() == 0) return false;
  const VregValueType& result = values[op.results(0)];
  if (!FillsWholeTiles(result)) return false;
  return absl::c_all_of(op.operands(), [&](int id) {
    return FillsWholeTiles(values[id]) && values[id].dtype == result.dtype;
  });
}

// Whether `op` is a slice whose result covers every vreg of its operand: Mosaic gives a slice's
// result the layout offset start mod the tile and keeps the operand's vregs that cover it, moving no
// data (infer_vector_layout and apply_vector_layout, ExtractStridedSliceOp), so a slice that leaves
// no vreg out (lanes 0-31 of a 128-lane row, rows 3-13 of a 16-row tile) is its operand's vregs.
// Under either sublane tiling (packed, or widened to 32 bits). False where the start is unknown.
bool SliceKeepsOperandVregs(const PallasOp& op, const std::vector<VregValueType>& values) {
  if (op.op() != "slice" || op.operands_size() != 1 || op.results_size() != 1) return false;
  const VregValueType& operand = values[op.operands(0)];
  const VregValueType& result = values[op.results(0)];
  const size_t rank = operand.dims.size();
  if (!operand.vector || rank < 2 || result.dims.size() != rank || op.start_indices_size() != static_cast<int>(rank) ||
      operand.replicated != Replicated::kNone || result.replicated != Replicated::kNone) {
    return false;
  }
  // Tiles of `tile` elements a run of `size` from `start` touches.
  auto tiles = [](int64_t start, int64_t size, int64_t tile) {
    return size <= 0 ? 0 : (start + size - 1) / tile - start / tile + 1;
  };
  for (size_t d = 0; d + 2 < rank; ++d) {
    if (result.dims[d] != operand.dims[d]) return false;
  }
  // In range (CheckSliceStarts), so below a dim's size (ParseValueType): no overflow below.
  const int64_t row_start = op.start_indices(static_cast<int>(rank - 2));
  const int64_t lane_start = op.start_indices(static_cast<int>(rank - 1));
  for (const int64_t tile_rows : {int64_t{8}, 8 * SublanePacking(operand.bits)}) {
    if (tiles(row_start, result.dims[rank - 2], tile_rows) != tiles(0, operand.dims[rank - 2], tile_rows)) return false;
  }
  return tiles(lane_start, result.dims[rank - 1], 128) == tiles(0, operand.dims[rank - 1], 128);
}

struct Region {
  const PallasRegion* proto = nullptr;
  int index = 0;
  int64_t copies = 1;
  std::vector<VregValueType> values;
};

}  // namespace

absl::StatusOr<VregValueType> ParseValueType(absl::string_view text, absl::string_view field) {
  VregValueType out;
  if (text == "ref") return out;
  const absl::string_view word = text;
  // A replicated layout follows the dims: "i32[128,1024]{sublanes replicated}".
  for (const auto& [suffix, axis] :
       {std::pair{absl::string_view("{sublanes and lanes replicated}"), Replicated::kBoth},
        std::pair{absl::string_view("{sublanes replicated}"), Replicated::kSublanes},
        std::pair{absl::string_view("{lanes replicated}"), Replicated::kLanes}}) {
    if (absl::ConsumeSuffix(&text, suffix)) {
      out.replicated = axis;
      break;
    }
  }
  const size_t open = text.find('[');
  if (open == absl::string_view::npos || text.empty() || text.back() != ']') {
    return absl::InvalidArgumentError(absl::StrCat(
        field, ": '", word,
        "' is not a value type (dtype[dims], as \"f32[256,512]\", optionally followed by {sublanes replicated}, "
        "{lanes replicated} or {sublanes and lanes replicated}; or \"ref\")"));
  }
  absl::StatusOr<std::string> dtype = NormalizeTpuDtype(text.substr(0, open));
  if (!dtype.ok()) return absl::InvalidArgumentError(absl::StrCat(field, ": ", dtype.status().message()));
  out.dtype = *dtype;
  absl::StatusOr<int64_t> bits = out.dtype == "i1" ? absl::StatusOr<int64_t>(32) : DtypeBits(out.dtype);
  out.bits = bits.ok() ? static_cast<int>(*bits) : 32;
  const absl::string_view dims = text.substr(open + 1, text.size() - open - 2);
  if (!dims.empty()) {
    for (absl::string_view d : absl::StrSplit(dims, ',')) {
      int64_t n = 0;
      if (!absl::SimpleAtoi(d, &n) || n < 0 || n > (int64_t{1} << 40)) {
        return absl::InvalidArgumentError(absl::StrCat(field, ": dim '", d, "' of '", text, "' is not a size"));
      }
      out.dims.push_back(n);
    }
  }
  out.vector = !out.dims.empty();
  if (out.replicated != Replicated::kNone && out.dims.size() < 2) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": '", word, "' is replicated, but only a value of two or more dims has a replicated layout"));
  }
  return out;
}

bool InEverySublane(const VregValueType& value) {
  return value.replicated == Replicated::kSublanes || value.replicated == Replicated::kBoth;
}

int64_t RegisterFileBytes(const DeviceModel& device) {
  constexpr int64_t kVregBytes = 8 * 128 * 4;  // 8 sublanes x 128 lanes x 32 bits
  return int64_t{device.tpu().vector_registers()} * kVregBytes;
}

int64_t VregBytes(const VregValueType& value, bool widened) {
  if (!value.vector) return 0;
  const int bits = widened ? 32 : std::clamp(value.bits, 4, 32);
  const int64_t packing = SublanePacking(bits);
  // Padded elements, then bits: a product past int64 saturates the whole figure (no division
  // afterwards may bring a saturated figure back into range).
  std::optional<int64_t> elements;
  if (value.dims.size() == 1) {
    elements = CheckedRoundUp(value.dims[0], 128 * packing);
  } else {
    // A replicated axis holds one tile: every vreg repeats its sublanes (or lanes).
    const bool one_row = InEverySublane(value);
    const bool one_lane = value.replicated == Replicated::kLanes || value.replicated == Replicated::kBoth;
    const int64_t row_dim = one_row ? 1 : value.dims[value.dims.size() - 2];
    const int64_t col_dim = one_lane ? 1 : value.dims.back();
    const std::optional<int64_t> rows = CheckedRoundUp(row_dim, 8 * packing);
    const std::optional<int64_t> cols = CheckedRoundUp(col_dim, 128);
    elements = rows && cols ? CheckedMul(*rows, *cols) : std::nullopt;
    for (size_t i = 0; elements && i + 2 < value.dims.size(); ++i) elements = CheckedMul(*elements, value.dims[i]);
  }
  const std::optional<int64_t> total_bits = elements ? CheckedMul(*elements, bits) : std::nullopt;
  return total_bits ? *total_bits / 8 : std::numeric_limits<int64_t>::max();
}

bool WidensNarrowArithmetic(const DeviceModel& device) {
  return !absl::c_linear_search(kPackedArithmetic, TpuGeneration(device));
}

bool WidensUnalignedNarrowLoads(const DeviceModel& device) {
  return !absl::c_linear_search(kKeepsUnalignedNarrowLoadsPacked, TpuGeneration(device));
}

bool UnpacksConvertedNarrowDotOperands(const DeviceModel& device) {
  return !absl::c_linear_search(kConvertsNarrowDotOperandsStreaming, TpuGeneration(device));
}

bool ComputedFromNarrowConvert(const PallasRegion& region, const std::vector<int>& defining, int32_t id) {
  if (id < 0 || id >= static_cast<int32_t>(defining.size()) || defining[id] < 0) return false;
  const PallasOp& op = region.ops(defining[id]);
  if (IsBarrier(op) || absl::c_linear_search(kLoads, op.op()) || op.op() == "swap") return false;
  const absl::StatusOr<VregValueType> result = ParseValueType(region.values(id), "");
  if (!result.ok() || !result->vector) return false;
  for (const int32_t operand : op.operands()) {
    if (operand < 0 || operand >= region.values_size()) continue;
    const absl::StatusOr<VregValueType> source = ParseValueType(region.values(operand), "");
    // A scale row or a scalar broadcast into the block is not what the block is computed from.
    if (!source.ok() || !source->vector || source->dims != result->dims) continue;
    if (op.op() == "convert_element_type" && source->bits <= 8) return true;
    if (ComputedFromNarrowConvert(region, defining, operand)) return true;
  }
  return false;
}

bool IsBarrier(const PallasOp& op) {
  if (absl::c_linear_search(kReductions, op.op()) || op.op() == "dot_general") return true;
  if (op.op() != "transpose") return false;
  // A permutation that moves either of the two minor dims turns vregs; one of leading dims only
  // renames them.
  const int rank = op.axes_size();
  return rank >= 2 && (op.axes(rank - 2) != rank - 2 || op.axes(rank - 1) != rank - 1);
}

namespace {

// A slice's start_indices, where given, place its result inside its operand: one per dim, each
// from 0 to the operand's dim less the result's. `where` names the op in the error.
absl::Status CheckSliceStarts(const PallasOp& op, const std::vector<VregValueType>& values, absl::string_view where) {
  if (op.start_indices_size() == 0) return absl::OkStatus();
  if (op.op() != "slice" || op.operands_size() != 1 || op.results_size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(where, ".start_indices: only a slice of one operand has them (",
                                                   op.op(), ")"));
  }
  const VregValueType& operand = values[op.operands(0)];
  const VregValueType& result = values[op.results(0)];
  if (op.start_indices_size() != static_cast<int>(operand.dims.size()) || result.dims.size() != operand.dims.size()) {
    return absl::InvalidArgumentError(absl::StrCat(where, ".start_indices: ", op.start_indices_size(),
                                                   " starts for a slice of rank ", operand.dims.size(), " into rank ",
                                                   result.dims.size()));
  }
  for (int d = 0; d < op.start_indices_size(); ++d) {
    const int64_t start = op.start_indices(d);
    if (start < 0 || result.dims[d] > operand.dims[d] || start > operand.dims[d] - result.dims[d]) {
      return absl::InvalidArgumentError(absl::StrCat(where, ".start_indices[", d, "]: ", start, " places ",
                                                     result.dims[d], " elements outside the operand's ",
                                                     operand.dims[d]));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Region> ReadRegion(const PallasRegion& proto, int index) {
  Region region;
  region.proto = &proto;
  region.index = index;
  region.copies = std::max(1, proto.unrolled());
  for (int v = 0; v < proto.values_size(); ++v) {
    ASSIGN_OR_RETURN(VregValueType type,
                     ParseValueType(proto.values(v), absl::StrCat("body.program[", index, "].values[", v, "]")));
    region.values.push_back(std::move(type));
  }
  for (int o = 0; o < proto.ops_size(); ++o) {
    const PallasOp& op = proto.ops(o);
    for (int id : op.operands()) {
      if (id < 0 || id >= proto.values_size()) {
        return absl::InvalidArgumentError(absl::StrCat("body.program[", index, "].ops[", o, "] (", op.op(),
                                                       "): operand ", id, " is not a value of the region (",
                                                       proto.values_size(), " values)"));
      }
    }
    for (int id : op.results()) {
      if (id < 0 || id >= proto.values_size()) {
        return absl::InvalidArgumentError(absl::StrCat("body.program[", index, "].ops[", o, "] (", op.op(),
                                                       "): result ", id, " is not a value of the region (",
                                                       proto.values_size(), " values)"));
      }
    }
    RETURN_IF_ERROR(CheckSliceStarts(op, region.values, absl::StrCat("body.program[", index, "].ops[", o, "]")));
  }
  return region;
}

// Bytes live strictly across each op of a region: defined before it (or entering the region) and
// read after it, counting only the values `counted` accepts.
template <typename Held, typename Counted>
std::vector<int64_t> BytesAcross(const PallasRegion& proto, const std::vector<int>& defined,
                                 const std::vector<int>& last_use, Held held, Counted counted,
                                 int64_t* peak_live = nullptr) {
  const int n = proto.ops_size();
  // Live bytes per position: a value counts from its definition (0 for a region input) to its
  // last read; one never read never occupies a vreg.
  std::vector<int64_t> starts(n + 1, 0), ends(n + 1, 0);
  for (size_t v = 0; v < defined.size(); ++v) {
    if (last_use[v] < 0 || !counted(static_cast<int>(v))) continue;
    const int64_t bytes = held(static_cast<int>(v));
    const int from = std::max(defined[v], 0);
    starts[from] = SaturatingAdd(starts[from], bytes);
    ends[last_use[v] + 1] = SaturatingAdd(ends[last_use[v] + 1], bytes);
  }
  // Live at o less what o reads for the last time and what it defines; both sides are
  // non-negative, so each difference stays in range, clamped at 0 each step.
  int64_t live = 0;
  std::vector<int64_t> through(n, 0);
  for (int o = 0; o < n; ++o) {
    live = std::max<int64_t>(0, SaturatingAdd(live, starts[o]) - ends[o]);
    if (peak_live != nullptr) *peak_live = std::max(*peak_live, live);
    through[o] = std::max<int64_t>(0, live - ends[o + 1]);
    for (int id : proto.ops(o).results()) {
      if (last_use[id] > o && counted(id)) through[o] = std::max<int64_t>(0, through[o] - held(id));
    }
  }
  return through;
}

// The most output groups StoreGroupHeldBytes orders (8! orders); a region with more is left out.
constexpr int kMaxStoreGroups = 8;

// What the runs of a region's stores hold: the least over every order of the runs, and on the
// program's order of their first stores (VregReplay::store_group_held_bytes and
// store_group_program_order_bytes).
struct StoreRunHolds {
  int64_t least = 0, program_order = 0;
};

// StoreRunHolds for one region. Its stores are grouped by the ref they write; each op feeds the
// groups whose stored values it computes (through computed values only: LLO loads a loaded value
// again rather than holding it). On an order of the groups each op is emitted in the first group it
// feeds, and a computed value is held whole across every boundary from its op's group to the last
// group with an op that reads it; an order holds the most bytes held across one boundary.
template <typename Held>
StoreRunHolds StoreGroupHeldBytes(const PallasRegion& proto, const std::vector<int>& defined,
                                  const std::vector<bool>& loaded, Held held) {
  const int n = proto.ops_size();
  std::vector<int> refs;                   // one group per stored ref
  std::vector<uint32_t> feeds(n, 0);       // per op: the groups it feeds, a bit each
  std::vector<uint32_t> value_feeds(defined.size(), 0);
  for (int o = n - 1; o >= 0; --o) {  // backwards: an op feeds what its results feed
    const PallasOp& op = proto.ops(o);
    if ((op.op() == "swap" || op.op() == "masked_swap") && op.operands_size() >= 2) {
      auto it = absl::c_find(refs, op.operands(0));
      if (it == refs.end()) {
        if (refs.size() == kMaxStoreGroups) return {};
        refs.push_back(op.operands(0));
        it = refs.end() - 1;
      }
      feeds[o] = 1u << (it - refs.begin());
    } else {
      for (int id : op.results()) feeds[o] |= value_feeds[id];
    }
    for (int id : op.operands()) {
      if (!loaded[id]) value_feeds[id] |= feeds[o];
    }
  }
  const int groups = static_cast<int>(refs.size());
  if (groups < 2) return {};
  // Computed vector values read by ops of another group than their own on some order.
  struct Shared {
    uint32_t made_by = 0;                // the groups the defining op feeds
    std::vector<uint32_t> readers;       // per reading op, the groups it feeds
    int64_t bytes = 0;
  };
  std::vector<Shared> shared;
  for (size_t v = 0; v < defined.size(); ++v) {
    if (defined[v] < 0 || loaded[v] || std::popcount(value_feeds[v]) < 2) continue;
    Shared s{feeds[defined[v]], {}, held(static_cast<int>(v))};
    for (int o = defined[v] + 1; o < n; ++o) {
      if (absl::c_linear_search(proto.ops(o).operands(), static_cast<int>(v)) && feeds[o] != 0) {
        s.readers.push_back(feeds[o]);
      }
    }
    if (s.made_by != 0 && s.bytes > 0) shared.push_back(std::move(s));
  }
  if (shared.empty()) return {};
  // The most held across one boundary on `order` (group indices, first run first).
  std::vector<int> position(groups);
  auto most_held = [&](const std::vector<int>& order) {
    for (int k = 0; k < groups; ++k) position[order[k]] = k;
    auto first = [&](uint32_t mask) {  // the position of the first group of `mask`
      int best = groups;
      for (int g = 0; g < groups; ++g) {
        if (mask & (1u << g)) best = std::min(best, position[g]);
      }
      return best;
    };
    std::vector<int64_t> across(groups, 0);  // held across the boundary after position k
    for (const Shared& s : shared) {
      const int made = first(s.made_by);
      int last = made;
      for (uint32_t r : s.readers) last = std::max(last, first(r));
      for (int k = made; k < last; ++k) across[k] = SaturatingAdd(across[k], s.bytes);
    }
    return *std::max_element(across.begin(), across.end());
  };
  StoreRunHolds out;
  std::vector<int> order;  // the program's order of each group's first store
  for (const PallasOp& op : proto.ops()) {
    if (op.op() != "swap" && op.op() != "masked_swap") continue;
    const auto it = absl::c_find(refs, op.operands(0));
    if (it != refs.end() && !absl::c_linear_search(order, static_cast<int>(it - refs.begin()))) {
      order.push_back(static_cast<int>(it - refs.begin()));
    }
  }
  out.program_order = most_held(order);
  std::sort(order.begin(), order.end());
  out.least = std::numeric_limits<int64_t>::max();
  do {
    out.least = std::min(out.least, most_held(order));
  } while (std::next_permutation(order.begin(), order.end()));
  return out;
}

// What a dot (op `o` of the region) keeps of its computed operands read for the last time there, the
// values each operand is made of. A computed left operand is held whole where it streams through
// the MXU once per tile of the right one, more than one (RightOperandSpansSeveralMxuTiles), and
// packed, as the MXU takes it, whatever width it was computed at; through one tile it is made as it
// is pushed (tests/data/tpu/left_operand_passes_probe.txt). A computed right operand is made a tile
// at a time as the MXU latches it (tests/data/tpu/streamed_dot_operand_probe.txt: a right block
// scaled in the body spills as the loaded one), but for one converted from 8 bits on a generation
// that unpacks it whole, which is held whole on either side at its held width.
template <typename Held>
int64_t DotOperandsKeptBytes(const Region& region, int o, const std::vector<std::vector<int>>& made_of,
                             const std::vector<int>& defined, const std::vector<int>& last_use,
                             const std::vector<bool>& loaded, const DeviceModel& device, Held held) {
  const PallasRegion& proto = *region.proto;
  const PallasOp& op = proto.ops(o);
  const bool unpacks_converted = UnpacksConvertedNarrowDotOperands(device);
  const bool left_kept_between_passes =
      op.results_size() == 1 && !region.values[op.results(0)].dims.empty() &&
      RightOperandSpansSeveralMxuTiles(region.values[op.results(0)].dims.back(), device);
  int64_t kept = 0;
  for (int i = 0; i < op.operands_size(); ++i) {
    for (int id : made_of[op.operands(i)]) {
      if (defined[id] < 0 || loaded[id] || last_use[id] != o) continue;
      const bool converted = ComputedFromNarrowConvert(proto, defined, id);
      if (converted ? !unpacks_converted : i > 0 || !left_kept_between_passes) continue;
      kept = SaturatingAdd(kept, converted ? held(id) : VregBytes(region.values[id], /*widened=*/false));
    }
  }
  return kept;
}

// Bytes live across an op of a region's enclosing code (times its copies), the base of a region
// the op runs: every value, and the computed ones alone.
struct Base {
  int64_t all = 0, computed = 0;
};

// Replays one region into `out` (its barriers' held bytes, its values, its signature) on top of
// `base`. Returns, per op, the base of a region it runs.
std::vector<Base> ReplayRegion(const Region& region, const Base& base, const DeviceModel& device, VregReplay* out) {
  const bool widened = WidensNarrowArithmetic(device);
  const bool widens_unaligned_loads = WidensUnalignedNarrowLoads(device);
  const PallasRegion& proto = *region.proto;
  const int n = proto.ops_size();
  // Where each value is defined (-1: an input of the region) and last read.
  std::vector<int> defined(region.values.size(), -1), last_use(region.values.size(), -1);
  std::vector<bool> loaded(region.values.size(), false);
  for (int o = 0; o < n; ++o) {
    const PallasOp& op = proto.ops(o);
    for (int id : op.operands()) last_use[id] = std::max(last_use[id], o);
    // A slice of a load is part of the load's vregs (SliceKeepsOperandVregs), which LLO loads again
    // from the block: loaded too, whatever it covers.
    const bool slices_a_load = op.op() == "slice" && op.start_indices_size() > 0 && op.operands_size() == 1 &&
                               loaded[op.operands(0)];
    for (int id : op.results()) {
      defined[id] = o;
      loaded[id] = absl::c_linear_search(kLoads, op.op()) || slices_a_load;
    }
  }
  // A reassembled result (ReassemblesOperandVregs), or a slice that keeps every vreg of its operand
  // (SliceKeepsOperandVregs), is the vregs of the values it is made of: it holds none of its own,
  // they live while it is read, and it is loaded when all of them are.
  std::vector<std::vector<int>> made_of(region.values.size());
  for (size_t v = 0; v < made_of.size(); ++v) made_of[v] = {static_cast<int>(v)};
  std::vector<bool> reassembled(region.values.size(), false);
  for (int o = 0; o < n; ++o) {
    const PallasOp& op = proto.ops(o);
    if (!ReassemblesOperandVregs(op, region.values) && !SliceKeepsOperandVregs(op, region.values)) continue;
    const int result = op.results(0);
    reassembled[result] = true;
    made_of[result].clear();
    for (int id : op.operands()) absl::c_copy(made_of[id], std::back_inserter(made_of[result]));
    loaded[result] = absl::c_all_of(made_of[result], [&](int id) { return static_cast<bool>(loaded[id]); });
  }
  for (size_t v = 0; v < made_of.size(); ++v) {
    if (!reassembled[v]) continue;
    for (int id : made_of[v]) last_use[id] = std::max(last_use[id], last_use[v]);
  }
  // The arithmetic width: what is computed is held at it; a load keeps its packed layout, but for
  // a narrow load of unaligned width on a generation that widens it.
  auto unaligned_narrow = [&](int id) {
    const VregValueType& v = region.values[id];
    return v.vector && v.bits < 16 && v.dims.back() % 128 != 0;
  };
  auto held = [&](int id) {
    if (reassembled[id]) return int64_t{0};
    const bool wide = loaded[id] ? widens_unaligned_loads && unaligned_narrow(id) : widened;
    return VregBytes(region.values[id], wide);
  };
  int64_t live = 0;
  const std::vector<int64_t> through = BytesAcross(proto, defined, last_use, held, [](int) { return true; }, &live);
  out->peak_live_bytes = std::max(out->peak_live_bytes, SaturatingAdd(base.all, SaturatingMul(live, region.copies)));
  // LLO loads a block's values again where it needs them rather than keeping them in registers
  // (docs/tpu.md, "How libtpu allocates spill slots"): the computed values alone.
  const std::vector<int64_t> computed =
      BytesAcross(proto, defined, last_use, held, [&](int id) { return !loaded[id]; });
  // Values computed from a dot's result in this region, through any ops after it.
  std::vector<bool> from_dot(region.values.size(), false);
  int barriers = 0;
  for (int o = 0; o < n; ++o) {
    const PallasOp& op = proto.ops(o);
    const bool reads_dot_result =
        absl::c_any_of(op.operands(), [&](int id) { return static_cast<bool>(from_dot[id]); });
    for (int id : op.results()) from_dot[id] = op.op() == "dot_general" || reads_dot_result;
    out->primitives.insert(op.op());
    for (int id : op.results()) {
      if (last_use[id] < 0) continue;  // never read (a store's old contents): never in a vreg
      out->all_values_bytes = SaturatingAdd(out->all_values_bytes, SaturatingMul(held(id), region.copies));
    }
    // A concatenation of part tiles shifts and merges lanes (or sublanes) across its operands'
    // vregs: its result is made whole before it is read.
    const bool moves_part_tiles = op.op() == "concatenate" && op.results_size() == 1 && !reassembled[op.results(0)];
    if (!IsBarrier(op) && !moves_part_tiles) continue;
    ++barriers;
    // The pattern around it: what produced each operand ("dot_general(convert_element_type)").
    for (int id : op.operands()) {
      if (!region.values[id].vector) continue;
      out->primitives.insert(
          absl::StrCat(op.op(), "(", defined[id] >= 0 ? proto.ops(defined[id]).op() : std::string("input"), ")"));
    }
    // What the dot classes' figure presumes: a value computed from a dot's result held across this
    // op, or fed to it as a dot's left operand.
    const int left_operand = op.op() == "dot_general" && op.operands_size() > 0 ? op.operands(0) : -1;
    for (int id = 0; id < static_cast<int>(region.values.size()) && !out->dot_result_held; ++id) {
      const bool held_across = defined[id] >= 0 && defined[id] < o && last_use[id] > o;
      if (from_dot[id] && !loaded[id] && (held_across || id == left_operand)) out->dot_result_held = true;
    }
    int64_t bytes = through[o], computed_bytes = computed[o], results = 0;
    if (moves_part_tiles && last_use[op.results(0)] > o) {
      bytes = SaturatingAdd(bytes, held(op.results(0)));
      computed_bytes = SaturatingAdd(computed_bytes, held(op.results(0)));
    }
    if (op.op() == "dot_general") {
      const int64_t kept = DotOperandsKeptBytes(region, o, made_of, defined, last_use, loaded, device, held);
      bytes = SaturatingAdd(bytes, kept);
      computed_bytes = SaturatingAdd(computed_bytes, kept);
    }
    for (int id : op.results()) results = SaturatingAdd(results, held(id));
    bytes = SaturatingAdd(base.all, SaturatingMul(bytes, region.copies));
    if (bytes > out->peak_held_bytes) {
      out->peak_held_bytes = bytes;
      out->peak_at = absl::StrCat(op.op(), " (region ", region.index, ", op ", o, ")");
    }
    computed_bytes = SaturatingAdd(base.computed, SaturatingMul(computed_bytes, region.copies));
    if (ReducesOverSublanes(op, region.values)) {
      out->sublane_reduction_computed_held_bytes = std::max(out->sublane_reduction_computed_held_bytes, computed_bytes);
    }
    if (computed_bytes > out->peak_computed_held_bytes) {
      out->peak_computed_held_bytes = computed_bytes;
      out->computed_peak_at = absl::StrCat(op.op(), " (region ", region.index, ", op ", o, ")");
      out->barrier_results_bytes = SaturatingMul(results, region.copies);
    }
  }
  out->max_barriers_per_region = std::max(out->max_barriers_per_region, barriers);
  if (!proto.has_parent() && !proto.rolled() && region.copies == 1 && barriers == 0) {
    // What one op makes of a load alone (its convert, reshape or broadcast) is loaded again and
    // remade where it is read, as the load itself.
    std::vector<bool> reloaded = loaded;
    for (int o = 0; o < n; ++o) {
      const PallasOp& op = proto.ops(o);
      if (!absl::c_linear_search(kRemadeFromALoad, op.op()) || op.operands_size() != 1 || !reloaded[op.operands(0)]) {
        continue;
      }
      for (int id : op.results()) reloaded[id] = true;
    }
    const StoreRunHolds holds = StoreGroupHeldBytes(proto, defined, reloaded, held);
    out->store_group_held_bytes = std::max(out->store_group_held_bytes, holds.least);
    out->store_group_program_order_bytes = std::max(out->store_group_program_order_bytes, holds.program_order);
  }
  std::vector<Base> bases(n);
  for (int o = 0; o < n; ++o) {
    bases[o] = {SaturatingAdd(base.all, SaturatingMul(through[o], region.copies)),
                SaturatingAdd(base.computed, SaturatingMul(computed[o], region.copies))};
  }
  return bases;
}

}  // namespace

int64_t SpillBoundBytes(const VregReplay& replay) {
  return replay.rolled ? replay.all_values_bytes : std::min(replay.peak_live_bytes, replay.all_values_bytes);
}

absl::StatusOr<VregReplay> ReplayVregs(const PallasBody& body, const DeviceModel& device) {
  VregReplay out;
  std::vector<std::vector<Base>> bases;  // per region, per op: the base of a region the op runs
  for (int r = 0; r < body.program_size(); ++r) {
    const PallasRegion& proto = body.program(r);
    ASSIGN_OR_RETURN(Region region, ReadRegion(proto, r));
    Base base;
    if (proto.has_parent()) {
      const int parent = proto.parent();
      if (parent < 0 || parent >= r || proto.at_op() < 0 || proto.at_op() >= static_cast<int>(bases[parent].size())) {
        return absl::InvalidArgumentError(absl::StrCat("body.program[", r, "].parent: region ", parent, ", op ",
                                                       proto.at_op(), " is not an op of an earlier region"));
      }
      base = bases[parent][proto.at_op()];
    }
    out.rolled = out.rolled || proto.rolled();
    bases.push_back(ReplayRegion(region, base, device, &out));
  }
  return out;
}

}  // namespace scratchsim
