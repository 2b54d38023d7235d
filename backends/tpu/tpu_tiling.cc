#include "backends/tpu/tpu_tiling.h"

#include <algorithm>
#include <optional>
#include <array>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "sim/checked_math.h"
#include "sim/dtype.h"
#include "sim/status_macros.h"

namespace scratchsim {
namespace {

int64_t Packing(int64_t bits) { return bits >= 32 ? 1 : 32 / bits; }

}  // namespace

absl::StatusOr<std::string> NormalizeTpuDtype(absl::string_view dtype) { return CanonicalDtype(dtype); }

int64_t MxuEdge(const DeviceModel& device) { return device.tpu().mxu_size() > 0 ? device.tpu().mxu_size() : 128; }

int64_t MxuCount(const DeviceModel& device) { return device.tpu().mxu_count() > 0 ? device.tpu().mxu_count() : 4; }

bool RightOperandSpansSeveralMxuTiles(int64_t n, const DeviceModel& device) { return n > MxuEdge(device); }

std::string RightOperandSpansSeveralMxuTilesExpr(absl::string_view n, const DeviceModel& device) {
  return absl::StrCat("min(1, cdiv(", n, ", ", MxuEdge(device), ") - 1)");
}

std::string TpuGeneration(const DeviceModel& device) {
  for (const char* g : {"v4", "v5e", "v5p", "v6e", "v7x"}) {
    if (device.name() == absl::StrCat("tpu_", g)) return g;
  }
  return "";
}

absl::StatusOr<int64_t> FullTileRows(const DeviceModel& device, int64_t bits) {
  if (bits <= 0 || bits > 64) return absl::InvalidArgumentError(absl::StrCat("bad element width ", bits));
  const int64_t sublanes = device.tpu().sublanes() > 0 ? device.tpu().sublanes() : 8;
  if (bits >= 32) return sublanes;
  // JAX tpu_info.get_sublane_tiling: 8- and 4-bit types always use the large second-minor
  // tile; 16-bit types only where the generation enables it (TPU7x on).
  bool large = bits < 16 || device.tpu().large_second_minor_tiling_x16();
  return large ? sublanes * Packing(bits) : sublanes;
}

absl::StatusOr<TpuTile> TileFor(const DeviceModel& device, int64_t bits, int64_t rank,
                                int64_t second_minor) {
  const int64_t lanes = device.tpu().lanes() > 0 ? device.tpu().lanes() : 128;
  if (rank <= 0) return absl::InvalidArgumentError("TPU blocks need rank >= 1");
  if (rank == 1) {
    // JAX infer_tiling, 1-D: packing x lanes elements (one 32-bit row of a vreg).
    return TpuTile{1, Packing(bits) * lanes};
  }
  ASSIGN_OR_RETURN(int64_t full, FullTileRows(device, bits));
  const int64_t sublanes = device.tpu().sublanes() > 0 ? device.tpu().sublanes() : 8;
  // A second-minor extent of at least 8 rows that the large tile does not divide (a block that
  // spans a whole, unaligned dimension) gets XLA's 8-row tile: s8[1,17,4096]{...:T(8,128)(4,1)},
  // bf16[1,24,4096]{...:T(8,128)(2,1)} on v7x (libtpu 0.0.42.1 oracle, docs/tpu-oracle.md).
  if (full > sublanes && second_minor >= sublanes && second_minor % full != 0) return TpuTile{sublanes, lanes};
  if (second_minor >= full) return TpuTile{full, lanes};
  // Short second-minor dim: JAX _get_tiling_factor starts at the packing and doubles while
  // below the extent (sglang-jax issue #182 shows bf16[...,2,128] with T(2,128)(2,1)).
  int64_t rows = Packing(bits);
  while (rows < std::min(second_minor, full)) rows *= 2;
  return TpuTile{std::min(rows, full), lanes};
}

absl::StatusOr<std::vector<std::string>> RoundUpExprs(const DeviceModel& device, int64_t bits,
                                                      int64_t rank,
                                                      absl::string_view second_minor_expr) {
  if (rank <= 0) return absl::InvalidArgumentError("TPU blocks need rank >= 1");
  ASSIGN_OR_RETURN(TpuTile tile, TileFor(device, bits, rank, /*second_minor=*/1 << 30));
  if (rank == 1) {
    ASSIGN_OR_RETURN(TpuTile one, TileFor(device, bits, 1, 1));
    return std::vector<std::string>{absl::StrCat(one.lanes)};
  }
  const int64_t packing = Packing(bits);
  // min(full, max(packing, pow2ceil(extent))) is the compact-or-full tile of TileFor.
  std::string rows = absl::StrCat("min(", tile.rows, ", max(", packing, ", pow2ceil(",
                                  second_minor_expr, ")))");
  const int64_t sublanes = device.tpu().sublanes() > 0 ? device.tpu().sublanes() : 8;
  if (tile.rows > sublanes) {
    // TileFor's 8-row tile for an unaligned extent of at least 8 rows.
    const std::string r = absl::StrCat("(", second_minor_expr, ")");
    const std::string unaligned = absl::StrCat("(", r, " >= ", sublanes, " && ", r, " % ", tile.rows, " != 0)");
    rows = absl::StrCat(unaligned, " * ", sublanes, " + (1 - ", unaligned, ") * ", rows);
  }
  return std::vector<std::string>{rows, absl::StrCat(tile.lanes)};
}

absl::StatusOr<std::vector<int64_t>> PaddedShape(const DeviceModel& device,
                                                 absl::Span<const int64_t> shape, int64_t bits) {
  if (shape.empty()) return absl::InvalidArgumentError("TPU blocks need rank >= 1");
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] <= 0) {
      return absl::InvalidArgumentError(absl::StrCat("dimension ", i, " is ", shape[i], ", must be positive"));
    }
  }
  int64_t rank = static_cast<int64_t>(shape.size());
  int64_t second_minor = rank >= 2 ? shape[rank - 2] : 1;
  ASSIGN_OR_RETURN(TpuTile tile, TileFor(device, bits, rank, second_minor));
  std::vector<int64_t> padded(shape.begin(), shape.end());
  std::optional<int64_t> minor = CheckedRoundUp(padded.back(), tile.lanes);
  if (!minor) return absl::InvalidArgumentError("minor dimension overflows when padded");
  padded.back() = *minor;
  if (rank >= 2) {
    std::optional<int64_t> rows = CheckedRoundUp(padded[rank - 2], tile.rows);
    if (!rows) return absl::InvalidArgumentError("second-minor dimension overflows when padded");
    padded[rank - 2] = *rows;
  }
  return padded;
}

absl::StatusOr<int64_t> UnpaddedBytes(absl::Span<const int64_t> shape, int64_t bits) {
  int64_t elements = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] <= 0) {
      return absl::InvalidArgumentError(absl::StrCat("dimension ", i, " is ", shape[i], ", must be positive"));
    }
    std::optional<int64_t> next = CheckedMul(elements, shape[i]);
    if (!next) return absl::InvalidArgumentError("element count overflows int64");
    elements = *next;
  }
  std::optional<int64_t> total_bits = CheckedMul(elements, bits);
  if (!total_bits) return absl::InvalidArgumentError("byte size overflows int64");
  return CeilDiv(*total_bits, 8);
}

absl::StatusOr<int64_t> PaddedBytes(const DeviceModel& device, absl::Span<const int64_t> shape,
                                    int64_t bits) {
  ASSIGN_OR_RETURN(std::vector<int64_t> padded, PaddedShape(device, shape, bits));
  return UnpaddedBytes(padded, bits);
}

std::string XlaLayoutString(const DeviceModel& device, absl::Span<const int64_t> shape,
                            int64_t bits) {
  std::vector<std::string> dims;
  for (int64_t i = static_cast<int64_t>(shape.size()) - 1; i >= 0; --i) dims.push_back(absl::StrCat(i));
  std::string out = absl::StrCat("{", absl::StrJoin(dims, ","));
  if (shape.empty()) return out + "}";
  int64_t rank = static_cast<int64_t>(shape.size());
  absl::StatusOr<TpuTile> tile = TileFor(device, bits, rank, rank >= 2 ? shape[rank - 2] : 1);
  if (tile.ok()) {
    if (rank == 1) {
      absl::StrAppend(&out, ":T(", tile->lanes, ")");
    } else {
      absl::StrAppend(&out, ":T(", tile->rows, ",", tile->lanes, ")");
    }
    // XLA appends the packing sub-tile for sub-32-bit types: (2,1) for 16-bit, (4,1) for 8-bit.
    if (bits < 32) absl::StrAppend(&out, "(", Packing(bits), ",1)");
  }
  return out + "}";
}

}  // namespace scratchsim
