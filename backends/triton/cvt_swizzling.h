// The shared-memory round of a layout conversion as Triton 3.6 plans it: the swizzled layout
// that optimalSwizzling (lib/Tools/GenericSwizzling.cpp) builds for the store of the source
// registers and the load into the destination registers, and how many rounds ("reps") the
// conversion is split into. getNumScratchElemsSwizzledCvt allocates one round.
//
// Everything works on layouts flattened to one tensor index (dimension 0 the most minor, as
// LinearLayout::flattenOuts): a layout is the index each bit of the register, lane and warp id
// moves to, 0 meaning broadcast. All sets of bases are vectors over GF(2).
#ifndef SCRATCHSIM_BACKENDS_TRITON_CVT_SWIZZLING_H_
#define SCRATCHSIM_BACKENDS_TRITON_CVT_SWIZZLING_H_

#include <cstdint>
#include <optional>
#include <vector>

namespace scratchsim::triton {

struct FlatLayout {
  std::vector<uint32_t> reg, lane, warp;
};

// A shared-memory access instruction as a tile: the lane bits whose elements lie side by side
// in one contiguous piece (lane_contig) and the lane bits that give the pieces' addresses
// (lane_addr). ld/st.shared: {}, {0, 1, 2}; ldmatrix/stmatrix: {0, 1}, {2, 3, 4}; their .trans
// forms: {2, 3, 4}, {0, 1}.
struct SharedAccessTile {
  std::vector<int> lane_contig, lane_addr;
};

// The instructions Triton's NVIDIA backend may use for the store (src) and the load (dst) of a
// conversion (getSrcDstTiles): ld/st.shared always; stmatrix from sm_90 and ldmatrix from
// sm_75 for elements of at most 32 bits, and their transposing forms for 16-bit elements.
// compute_capability 0 (not an NVIDIA target): ld/st.shared only.
void SharedAccessTiles(int compute_capability, int bitwidth, std::vector<SharedAccessTile>& src,
                       std::vector<SharedAccessTile>& dst);

struct SwizzledRound {
  std::vector<uint32_t> vec, bank, segment, reps;  // bases of the shared-memory layout
  int conflicts = 0;                               // read + write bank conflicts (tile path)
};

// optimalSwizzlingLdSt: vectorized ld/st.shared only. `dim` is log2 of the tensor's elements;
// register bases must not be 0 (Triton removes broadcast registers first).
SwizzledRound SwizzleLdSt(const FlatLayout& src, const FlatLayout& dst, int dim, int bitwidth);

// optimalSwizzling over every pair of store/load instructions that fits both layouts: the one
// with the fewest bank conflicts, ties to the most rounds; SwizzleLdSt when no pair fits.
SwizzledRound SwizzleWithTiles(const FlatLayout& src, const FlatLayout& dst, int dim,
                               int bitwidth, const std::vector<SharedAccessTile>& src_tiles,
                               const std::vector<SharedAccessTile>& dst_tiles);

// Elements of one round (getNumScratchElemsSwizzledCvt): 2^dim / 2^reps. Drops broadcast
// registers itself. std::nullopt when the layouts do not each cover the 2^dim elements.
std::optional<int64_t> SwizzledCvtScratchElems(FlatLayout src, FlatLayout dst, int dim,
                                               int bitwidth, int compute_capability);

}  // namespace scratchsim::triton

#endif  // SCRATCHSIM_BACKENDS_TRITON_CVT_SWIZZLING_H_
