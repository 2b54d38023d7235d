// Shared-memory bank conflicts of Triton's operand copies (ttg.async_copy_global_to_local, which
// lowers to cp.async): each lane's shared address from the copy's blocked register layout and the
// destination's shared encoding, through the hardware's bank rule (sim/smem_banks).
#ifndef SCRATCHSIM_BACKENDS_TRITON_OPERAND_BANKS_H_
#define SCRATCHSIM_BACKENDS_TRITON_OPERAND_BANKS_H_

#include <array>
#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace scratchsim::triton {

// A rank-2 #ttg.blocked layout (BlockedEncodingAttr): per dimension, elements per thread,
// threads per warp, warps per CTA; order[0] is the dimension whose lanes and registers advance
// fastest.
struct Blocked2D {
  std::array<int64_t, 2> size_per_thread{1, 1}, threads_per_warp{1, 32}, warps_per_cta{1, 1};
  std::array<int, 2> order{1, 0};
};
absl::StatusOr<Blocked2D> ParseBlocked2D(absl::string_view encoding);

// A rank-2 shared encoding: the dimension whose consecutive elements are consecutive bytes and the
// swizzle that permutes them.
//   nvmma_shared (wgmma/tcgen05 operands): rows of swizzle_bytes (32, 64, 128) along the
//     contiguous dimension (dim 1, dim 0 when transposed); within each row its 16-byte chunks are
//     XORed with the index of the 128-byte line mod swizzle_bytes / 16 (PTX ISA, "Shared memory
//     matrix layout" of wgmma: the 32B/64B/128B swizzling modes; Triton's
//     nvmmaSharedToLinearLayout: core tiles of 8 such rows, extended along the rows first, then
//     the columns). A contiguous extent wider than one row is stored as several row-tiles one
//     after another.
//   swizzled_shared (cp.async + ldmatrix operands, mma.sync): element (r, c) of contiguous
//     dimension order[0] sits at r x C + ((c / vec) XOR ((r / perPhase) % maxPhase)) x vec +
//     c % vec (Triton's SwizzledSharedEncodingAttr, TritonGPUAttrDefs.td).
struct Shared2D {
  bool nvmma = false;
  int contiguous_dim = 1;
  int64_t swizzle_bytes = 0;                      // nvmma
  int64_t vec = 1, per_phase = 1, max_phase = 1;  // swizzled_shared
};
absl::StatusOr<Shared2D> ParseShared2D(absl::string_view encoding);

// Byte offset of element (i0, i1) of a shape[0] x shape[1] tile of element_bytes elements.
absl::StatusOr<int64_t> SharedByteOffset(const Shared2D& shared, std::array<int64_t, 2> shape,
                                         int64_t element_bytes, int64_t i0, int64_t i1);

struct CopyBanks {
  int64_t vector_bytes = 0;  // bytes one lane copies per cp.async
  int64_t instructions = 0;  // warp-wide cp.async instructions for the whole tile, all warps
  int64_t wavefronts = 0;    // their shared-memory wavefronts
};

// The cp.async copy of a shape[0] x shape[1] tile held in `regs` into `shared`: a lane copies
// the largest run of its own elements that is contiguous in both (its elements along the shared
// contiguous dimension, at most the pointer's `contiguity`, 16 bytes and the run the swizzle
// leaves whole: 16 bytes for nvmma, vec for swizzled_shared; Triton's
// AsyncCopyGlobalToLocalOpConversion), one vector per instruction. Runs under 4 bytes (no
// cp.async) and tiles that are not whole multiples of the layout are Unimplemented.
absl::StatusOr<CopyBanks> AsyncCopyBanks(const Blocked2D& regs, const Shared2D& shared, std::array<int64_t, 2> shape,
                                         int64_t element_bytes, int64_t contiguity, int num_warps);

}  // namespace scratchsim::triton

#endif  // SCRATCHSIM_BACKENDS_TRITON_OPERAND_BANKS_H_
