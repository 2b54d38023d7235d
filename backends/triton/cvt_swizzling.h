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

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>

namespace scratchsim::triton {

// A list of at most kCapacity values kept inline. The model runs once per distinct conversion
// of every kernel and its lists hold a few dozen bases at most, so heap vectors cost more than
// the work itself. Values past kCapacity are dropped and overflowed() turns true.
template <typename T, int kCapacity>
class InlineList {
 public:
  using value_type = T;
  using iterator = T*;
  using const_iterator = const T*;

  InlineList() = default;
  InlineList(std::initializer_list<T> values) {
    for (const T& v : values) push_back(v);
  }
  // Only the filled part is copied.
  InlineList(const InlineList& o) : size_(o.size_), overflowed_(o.overflowed_) {
    std::copy_n(o.data_, o.size_, data_);
  }
  InlineList& operator=(const InlineList& o) {
    if (this == &o) return *this;
    size_ = o.size_;
    overflowed_ = o.overflowed_;
    std::copy_n(o.data_, o.size_, data_);
    return *this;
  }

  void push_back(const T& v) {
    if (size_ < kCapacity) {
      data_[size_++] = v;
    } else {
      overflowed_ = true;
    }
  }
  template <typename List>
  void append(const List& values) {
    for (const T& v : values) push_back(v);
  }
  // Keeps the first n values (no-op when there are fewer).
  void truncate(size_t n) {
    if (n < size_) size_ = static_cast<uint32_t>(n);
  }
  void clear() { size_ = 0; }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  bool overflowed() const { return overflowed_; }
  static constexpr size_t capacity() { return kCapacity; }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }

  friend bool operator==(const InlineList& a, const InlineList& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }
  // Lexicographic, as std::vector compares.
  friend bool operator<(const InlineList& a, const InlineList& b) {
    return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end());
  }
  friend bool operator>=(const InlineList& a, const InlineList& b) { return !(a < b); }

 private:
  T data_[kCapacity];
  uint32_t size_ = 0;
  bool overflowed_ = false;
};

// Bases of a layout or of a set the model derives from two layouts. A layout's register, lane
// and warp lists may each hold at most kMaxLayoutBases (SwizzledCvtScratchElems refuses
// more: that is 2^32 registers per thread); every list derived from two such layouts then
// fits in 64 (the longest, a vector basis plus one side's lanes or registers).
constexpr size_t kMaxLayoutBases = 32;
using BasisList = InlineList<uint32_t, 64>;

struct FlatLayout {
  BasisList reg, lane, warp;
};

// Lane bit indices of a shared-memory access instruction (at most the 5 of a warp).
using LaneIds = InlineList<int, 5>;

// A shared-memory access instruction as a tile: the lane bits whose elements lie side by side
// in one contiguous piece (lane_contig) and the lane bits that give the pieces' addresses
// (lane_addr). ld/st.shared: {}, {0, 1, 2}; ldmatrix/stmatrix: {0, 1}, {2, 3, 4}; their .trans
// forms: {2, 3, 4}, {0, 1}.
struct SharedAccessTile {
  LaneIds lane_contig, lane_addr;
};
using AccessTileList = InlineList<SharedAccessTile, 3>;

struct AccessTiles {
  AccessTileList src, dst;
};

// The instructions Triton's NVIDIA backend may use for the store (src) and the load (dst) of a
// conversion (getSrcDstTiles): ld/st.shared always; stmatrix from sm_90 and ldmatrix from
// sm_75 for elements of at most 32 bits, and their transposing forms for 16-bit elements.
// compute_capability 0 (not an NVIDIA target): ld/st.shared only.
AccessTiles SharedAccessTiles(int compute_capability, int bitwidth);

struct SwizzledRound {
  BasisList vec, bank, segment, reps;  // bases of the shared-memory layout
  int conflicts = 0;                   // read + write bank conflicts (tile path)
};

// optimalSwizzlingLdSt: vectorized ld/st.shared only. `dim` is log2 of the tensor's elements;
// register bases must not be 0 (Triton removes broadcast registers first).
// The lanes of one LDS cycle of a 128-bit load on AMD (`amd_arch` 942 or 950).
SharedAccessTile AmdLoadTile(int amd_arch);

// `num_banks`: 32-bit banks per shared-memory line (32 on NVIDIA and gfx942, 64 on gfx950).
SwizzledRound SwizzleLdSt(const FlatLayout& src, const FlatLayout& dst, int dim, int bitwidth,
                          int num_banks = 32);

// optimalSwizzling over every pair of store/load instructions that fits both layouts: the one
// with the fewest bank conflicts, ties to the most rounds; SwizzleLdSt when no pair fits.
SwizzledRound SwizzleWithTiles(const FlatLayout& src, const FlatLayout& dst, int dim,
                               int bitwidth, const AccessTileList& src_tiles,
                               const AccessTileList& dst_tiles,
                               int num_banks = 32);

// Elements of one round (getNumScratchElemsSwizzledCvt): 2^dim / 2^reps. Drops broadcast
// registers itself. std::nullopt when the layouts do not each cover the 2^dim elements or
// a list holds more than kMaxLayoutBases bases.
std::optional<int64_t> SwizzledCvtScratchElems(const FlatLayout& src, const FlatLayout& dst,
                                               int dim, int bitwidth, int compute_capability,
                                               int num_banks = 32,
                                               int amd_arch = 0);

}  // namespace scratchsim::triton

#endif  // SCRATCHSIM_BACKENDS_TRITON_CVT_SWIZZLING_H_
