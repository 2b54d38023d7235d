// Mosaic/XLA tiling of TPU arrays: how the last two dimensions are padded in VMEM per generation.
// Rules follow JAX tpu_info.py (get_sublane_tiling, infer_tiling); see docs/tpu.md for the sources.
#ifndef SCRATCHSIM_BACKENDS_TPU_TPU_TILING_H_
#define SCRATCHSIM_BACKENDS_TPU_TPU_TILING_H_

#include <cstdint>
#include <string>
#include "absl/strings/string_view.h"
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "proto/device.pb.h"

namespace scratchsim {

// The (rows, lanes) tile of an array's last two dimensions; for rank 1, rows is 1 and lanes is
// the 1-D tile in elements.
struct TpuTile {
  int64_t rows = 1;
  int64_t lanes = 1;
};

// Maps JAX/NumPy names ("bfloat16", "float32", "int8") and scratchsim names ("bf16") to the
// scratchsim dtype name. Unknown names are an error listing the accepted ones.
absl::StatusOr<std::string> NormalizeTpuDtype(absl::string_view dtype);

// The MXU's weight tile: its edge (tpu.mxu_size) and how many MXUs a TensorCore has
// (tpu.mxu_count); 128 and 4, v4-v5p's, where a device model lacks them.
int64_t MxuEdge(const DeviceModel& device);
int64_t MxuCount(const DeviceModel& device);

// Whether a dot whose result is `n` lanes wide latches more than one MXU tile of its right
// operand, so that its left operand streams through the MXUs once per tile and is kept between
// the passes; one tile's left operand streams through once, made as it is pushed
// (tests/data/tpu/left_operand_passes_probe.txt). The expression form takes `n` as an expression
// (a graph's symbolic dims) and is 0 or 1.
bool RightOperandSpansSeveralMxuTiles(int64_t n, const DeviceModel& device);
std::string RightOperandSpansSeveralMxuTilesExpr(absl::string_view n, const DeviceModel& device);

// "v5e" for tpu_v5e: the generations the oracle corpus compiled for (the fitted tables' rows);
// empty for another device.
std::string TpuGeneration(const DeviceModel& device);

// Sublane rows of a full tile for `bits`-wide elements: 8 for 32-bit, 8 x 32/bits for packed
// types that use large second-minor tiling on this generation.
absl::StatusOr<int64_t> FullTileRows(const DeviceModel& device, int64_t bits);

// The tile Mosaic gives an array of `rank` dims whose second-minor extent is `second_minor`:
// the full tile, or for a short second-minor dim the compact tile (packing, doubled until it
// covers the extent), as JAX infer_tiling does.
absl::StatusOr<TpuTile> TileFor(const DeviceModel& device, int64_t bits, int64_t rank,
                                int64_t second_minor);

// Round-up multiples for the trailing dims as expressions over `second_minor_expr`, so a
// symbolic block keeps the right tile for every parameter value. One entry for rank 1, two
// otherwise.
absl::StatusOr<std::vector<std::string>> RoundUpExprs(const DeviceModel& device, int64_t bits,
                                                      int64_t rank,
                                                      absl::string_view second_minor_expr);

// `shape` with its trailing dims padded to the tile.
absl::StatusOr<std::vector<int64_t>> PaddedShape(const DeviceModel& device,
                                                 absl::Span<const int64_t> shape, int64_t bits);

// Bytes of one copy of `shape` after padding (checked arithmetic; non-positive dims are errors).
absl::StatusOr<int64_t> PaddedBytes(const DeviceModel& device, absl::Span<const int64_t> shape,
                                    int64_t bits);

// Bytes without padding.
absl::StatusOr<int64_t> UnpaddedBytes(absl::Span<const int64_t> shape, int64_t bits);

// XLA's layout suffix for a TPU array: "{1,0:T(8,128)(2,1)}".
std::string XlaLayoutString(const DeviceModel& device, absl::Span<const int64_t> shape,
                            int64_t bits);

}  // namespace scratchsim

#endif  // SCRATCHSIM_BACKENDS_TPU_TPU_TILING_H_
