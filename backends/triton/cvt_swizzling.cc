// Facts from Triton 3.6's lib/Tools/GenericSwizzling.cpp (optimalSwizzling and its helpers),
// lib/Conversion/TritonGPUToLLVM/Utility.cpp (getSrcDstTiles) and the NVIDIA backend's
// Allocation.cpp (getNumScratchElemsSwizzledCvt). The choices below are Triton's heuristics,
// tie-breaks included: the number of rounds depends on them, so they are kept as they are.
#include "backends/triton/cvt_swizzling.h"

#include <algorithm>

namespace scratchsim::triton {
namespace {

using Bases = BasisList;

bool Contains(const Bases& v, uint32_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

bool IsPowerOf2(uint32_t x) { return x != 0 && (x & (x - 1)) == 0; }

int Log2(uint32_t x) {
  int l = -1;
  while (x != 0) {
    x >>= 1;
    ++l;
  }
  return l;
}

int Ctz(uint32_t x) { return __builtin_ctz(x); }

// Reduced row echelon form over GF(2) with columns in bit order: each row's pivot is its
// lowest set bit and no other row has that bit. Unique for a given row space, so any
// elimination gives the rows f2reduce gives Triton. Kept by pivot, on the stack.
struct Rref {
  uint32_t row[32];     // read only where `pivots` has the bit
  uint32_t pivots = 0;  // bit p set: row[p] is the row with pivot p
};

// Echelon form without back-substitution: each row's lowest set bit is its pivot and no
// later row has it, but rows above may. Its pivot columns (so its rank) are those of the
// reduced form, at a fraction of the work; only the nullspace needs the reduced rows.
struct Span {
  uint32_t row[32];     // read only where `pivots` has the bit
  uint32_t pivots = 0;
};

void Add(Span& s, uint32_t v) {
  // Each step clears v's lowest pivot bit and touches only higher bits.
  for (uint32_t p = s.pivots & v; p != 0; p = s.pivots & v) v ^= s.row[Ctz(p)];
  if (v == 0) return;
  s.row[Ctz(v)] = v;
  s.pivots |= v & (~v + 1);
}

Span SpanOf(const Bases& vectors) {
  Span s;
  for (uint32_t v : vectors) Add(s, v);
  return s;
}

int Rank(const Span& s) { return __builtin_popcount(s.pivots); }

void Insert(Rref& r, uint32_t v) {
  for (uint32_t p = r.pivots & v; p != 0; p = r.pivots & v) v ^= r.row[Ctz(p)];
  if (v == 0) return;
  const int pivot = Ctz(v);
  for (uint32_t rest = r.pivots; rest != 0; rest &= rest - 1) {
    uint32_t& row = r.row[Ctz(rest)];
    if ((row >> pivot) & 1) row ^= v;
  }
  r.row[pivot] = v;
  r.pivots |= uint32_t{1} << pivot;
}

Rref Reduce(const Bases& vectors) {
  Rref r;
  for (uint32_t v : vectors) Insert(r, v);
  return r;
}

// {x : <v, x> = 0 for every v in r's row space}, one vector per free column.
Bases Nullspace(const Rref& r, int dim) {
  Bases out;
  for (int col = 0; col < dim; ++col) {
    if ((r.pivots >> col) & 1) continue;
    uint32_t v = uint32_t{1} << col;
    for (uint32_t rest = r.pivots; rest != 0; rest &= rest - 1) {
      const int p = Ctz(rest);
      if ((r.row[p] >> col) & 1) v ^= uint32_t{1} << p;
    }
    out.push_back(v);
  }
  return out;
}

// Unit vectors completing `basis` to the whole space.
Bases Complement(const Bases& basis, int dim) {
  const Span s = SpanOf(basis);
  Bases out;
  for (int col = 0; col < dim; ++col) {
    if (!((s.pivots >> col) & 1)) out.push_back(uint32_t{1} << col);
  }
  return out;
}

// intersectionBasis: for bases of unit vectors, the common ones in b1's order; otherwise a
// basis of the intersection of the spans.
Bases Intersection(const Bases& b1, const Bases& b2, int dim) {
  if (std::all_of(b1.begin(), b1.end(), IsPowerOf2) && std::all_of(b2.begin(), b2.end(), IsPowerOf2)) {
    Bases out;
    for (uint32_t b : b1) if (b != 0 && Contains(b2, b)) out.push_back(b);
    return out;
  }
  // The echelon form of both nullspaces together is unique, so inserting them into one form
  // gives what the nullspace of their concatenation gives.
  Rref joint;
  for (uint32_t v : Nullspace(Reduce(b1), dim)) Insert(joint, v);
  for (uint32_t v : Nullspace(Reduce(b2), dim)) Insert(joint, v);
  return Nullspace(joint, dim);
}

// Registers of one layout that are lanes of the other: vectorizing over them on one side
// costs nothing on the other (up to 128 bits per access).
Bases ExtraVectorBases(const Bases& regs, const Bases& vbasis, const Bases& other_lanes,
                       int bitwidth) {
  const size_t max_log2 = Log2(128 / std::max(bitwidth, 32));
  Bases out;
  for (uint32_t r : regs) {
    if (Contains(vbasis, r)) continue;
    if (Contains(other_lanes, r)) out.push_back(r);
    if (out.size() == max_log2) break;
  }
  return out;
}

bool IsPrefix(const Bases& prefix, const Bases& regs) {
  return prefix.size() <= regs.size() && std::equal(prefix.begin(), prefix.end(), regs.begin());
}

// getVbasis: the bases of one vectorized access.
Bases VectorBases(Bases reg_src, Bases reg_dst, const Bases& lane_src, const Bases& lane_dst,
                  int dim, int bitwidth) {
  Bases vbasis = Intersection(reg_src, reg_dst, dim);
  const size_t max_vec = Log2(128 / bitwidth);
  vbasis.truncate(max_vec);
  const size_t per_bank = bitwidth > 32 ? 0 : Log2(32 / bitwidth);
  auto fill = [&](const Bases& regs, const Bases& v) {
    Bases out = v;
    for (size_t i = v.size(); i < per_bank && i < regs.size(); ++i) out.push_back(regs[i]);
    return out;
  };
  bool vec_src = true;
  if ((int64_t{1} << vbasis.size()) * bitwidth < 32) {
    bool src_prefix = IsPrefix(vbasis, reg_src);
    bool dst_prefix = IsPrefix(vbasis, reg_dst);
    if (!vbasis.empty() && !src_prefix && !dst_prefix) {
      // Neither side starts with the common bases: both are reordered to do so.
      auto to_front = [&](const Bases& regs) {
        Bases out = vbasis;
        for (uint32_t r : regs) if (!Contains(vbasis, r)) out.push_back(r);
        return out;
      };
      reg_src = to_front(reg_src);
      reg_dst = to_front(reg_dst);
      src_prefix = dst_prefix = true;
    }
    if (src_prefix && dst_prefix) {
      const Bases extra_src = ExtraVectorBases(reg_src, fill(reg_src, vbasis), lane_dst, bitwidth);
      const Bases extra_dst = ExtraVectorBases(reg_dst, fill(reg_dst, vbasis), lane_src, bitwidth);
      // Triton compares the two lists as sequences (lexicographically), not by length.
      src_prefix = extra_src >= extra_dst;
    }
    vec_src = src_prefix;
    vbasis = fill(vec_src ? reg_src : reg_dst, vbasis);
  }
  const Bases extra = vec_src ? ExtraVectorBases(reg_src, vbasis, lane_dst, bitwidth)
                              : ExtraVectorBases(reg_dst, vbasis, lane_src, bitwidth);
  vbasis.append(extra);
  return vbasis;
}

// computeSegment: the bases that pick the 32-bank line. Unit vectors neither side's bank
// bases use first; then, pairing the bases only one side uses, xors of the pairs (conflict
// free) and, when still short, the unpaired bases themselves (conflicts).
Bases Segment(const Bases& bank_src, const Bases& bank_dst, int dim, int len) {
  Bases set_src, set_dst;
  for (uint32_t b : bank_src) if (b != 0 && !Contains(set_src, b)) set_src.push_back(b);
  for (uint32_t b : bank_dst) if (b != 0 && !Contains(set_dst, b)) set_dst.push_back(b);
  Bases segment;
  for (int b = 0; b < dim; ++b) {
    const uint32_t u = uint32_t{1} << b;
    if (!Contains(set_src, u) && !Contains(set_dst, u)) segment.push_back(u);
  }
  if (static_cast<int>(segment.size()) >= len) {
    segment.truncate(std::max(len, 0));
    return segment;
  }
  Bases a, b;
  for (uint32_t v : set_src) if (!Contains(set_dst, v)) a.push_back(v);
  for (uint32_t v : set_dst) if (!Contains(set_src, v)) b.push_back(v);
  if (a.size() > b.size()) std::swap(a, b);
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  const int na = static_cast<int>(a.size());
  const int conflicts = std::min(std::max(0, len - na - static_cast<int>(segment.size())), na);
  // Only the first `len` are kept (pushing past it would be cut off anyway).
  auto push = [&](uint32_t v) {
    if (static_cast<int>(segment.size()) < len) segment.push_back(v);
  };
  for (int i = conflicts; i < na; ++i) push(a[i] ^ b[i]);
  for (int i = 0; i < conflicts; ++i) push(a[i]);
  for (int i = 0; i < conflicts; ++i) push(b[i]);
  return segment;
}

// The shared-memory layout for one vectorization and one pair of access tiles; segment bases
// that are registers on both sides become rounds ("reps"), except the first `leave_reps`,
// which ldmatrix/stmatrix pairs need in one round to use their .x4 forms (buildReps).
SwizzledRound Swizzle(const FlatLayout& src, const FlatLayout& dst, int dim, int bitwidth,
                      const Bases& vbasis, const Bases& tile_src, const Bases& tile_dst,
                      int leave_reps, int num_banks) {
  Bases bank_src = vbasis, bank_dst = vbasis;
  bank_src.append(tile_src);
  bank_dst.append(tile_dst);
  const int nv = static_cast<int>(vbasis.size());
  // num_banks banks x 32 bits per line (32 on NVIDIA and CDNA3, 64 on CDNA4).
  const int len_bank = std::min(
      Log2(static_cast<uint32_t>(std::max<int64_t>(1, int64_t{32} * num_banks / ((int64_t{1} << nv) * bitwidth)))), dim - nv);
  const int len_segment = dim - len_bank - nv;
  const Bases segment = Segment(bank_src, bank_dst, dim, len_segment);
  Bases used = vbasis;
  used.append(segment);
  SwizzledRound r;
  r.vec = vbasis;
  r.bank = Complement(used, dim);
  for (uint32_t s : segment) {
    if (Contains(r.segment, s) || Contains(r.reps, s)) continue;
    if (Contains(src.reg, s) && Contains(dst.reg, s)) {
      if (leave_reps > 0) {
        --leave_reps;
        r.segment.push_back(s);
      } else {
        r.reps.push_back(s);
      }
    } else {
      r.segment.push_back(s);
    }
  }
  return r;
}

// The size of Intersection(b1, b2): common unit vectors, or else the dimension of the
// intersection of the spans (rank b1 + rank b2 - rank of both).
int IntersectionSize(const Bases& b1, const Bases& b2) {
  if (std::all_of(b1.begin(), b1.end(), IsPowerOf2) && std::all_of(b2.begin(), b2.end(), IsPowerOf2)) {
    int n = 0;
    for (uint32_t b : b1) n += Contains(b2, b) ? 1 : 0;
    return n;
  }
  Span both = SpanOf(b1);
  const int rank1 = Rank(both);
  for (uint32_t v : b2) Add(both, v);
  return rank1 + Rank(SpanOf(b2)) - Rank(both);
}

// bankConflicts: ways of conflict of the store and of the load, from the segment bases their
// tiles touch.
int Conflicts(const Bases& tile_src, const Bases& tile_dst, const Bases& segment) {
  const int write = 1 << IntersectionSize(segment, tile_src);
  const int read = 1 << IntersectionSize(segment, tile_dst);
  return (read - 1) + (write - 1);
}

// A layout's images in echelon form (one row per leading bit) with the inputs that give them,
// for preimages (LinearLayout::invertAndCompose, one vector at a time). Inputs are taken in
// the order register, lane, warp.
struct Inverse {
  uint32_t image[32] = {};
  uint64_t inputs[32] = {};
  size_t num_reg = 0, num_lane = 0;
};

int TopBit(uint32_t x) { return 31 - __builtin_clz(x); }

Inverse Invert(const FlatLayout& a) {
  Inverse inv;
  inv.num_reg = a.reg.size();
  inv.num_lane = a.lane.size();
  uint64_t bit = 1;
  auto add = [&](uint32_t image) {
    uint64_t input = bit;
    bit <<= 1;
    while (image != 0) {
      const int t = TopBit(image);
      if (inv.image[t] == 0) {
        inv.image[t] = image;
        inv.inputs[t] = input;
        return;
      }
      image ^= inv.image[t];
      input ^= inv.inputs[t];
    }
  };
  for (uint32_t x : a.reg) add(x);
  for (uint32_t x : a.lane) add(x);
  for (uint32_t x : a.warp) add(x);
  return inv;
}

// The input whose image is `v`, as (register index, lane index).
struct Preimage {
  uint32_t reg = 0, lane = 0;
};
Preimage PreimageOf(const Inverse& inv, uint32_t v) {
  uint64_t inputs = 0;
  while (v != 0) {
    const int t = TopBit(v);
    if (inv.image[t] == 0) break;  // not in the layout's image
    v ^= inv.image[t];
    inputs ^= inv.inputs[t];
  }
  Preimage p;
  p.reg = static_cast<uint32_t>(inputs & ((uint64_t{1} << inv.num_reg) - 1));
  p.lane = static_cast<uint32_t>((inputs >> inv.num_reg) & ((uint64_t{1} << inv.num_lane) - 1));
  return p;
}

// optimalSwizzlingTile: the vector bases when `a` uses an access with n_reg_a register bits
// and lanes lane_ids_a per piece and `b` likewise; std::nullopt when the pair cannot be used.
// common_ab and common_ba are Intersection(a.reg, b.reg) and Intersection(b.reg, a.reg), the
// same for every pair of instructions.
std::optional<Bases> TileVector(const FlatLayout& a, const FlatLayout& b, const Inverse& inv_a,
                                const Inverse& inv_b, int n_reg_a, int n_reg_b,
                                const LaneIds& lane_ids_a, const LaneIds& lane_ids_b,
                                const Bases& common_ab, const Bases& common_ba) {
  if (n_reg_a < n_reg_b) {
    return TileVector(b, a, inv_b, inv_a, n_reg_b, n_reg_a, lane_ids_b, lane_ids_a, common_ba,
                      common_ab);
  }
  Bases vbasis = common_ab;
  if (static_cast<int>(vbasis.size()) < n_reg_b) return std::nullopt;
  vbasis.truncate(n_reg_b);
  Bases lanes_a, lanes_b;
  for (int id : lane_ids_a) {
    if (id >= static_cast<int>(a.lane.size()) || a.lane[id] == 0) return std::nullopt;
    lanes_a.push_back(a.lane[id]);
  }
  for (int id : lane_ids_b) {
    if (id >= static_cast<int>(b.lane.size()) || b.lane[id] == 0) return std::nullopt;
    lanes_b.push_back(b.lane[id]);
  }
  // b's first lanes must be registers of a, the rest a's lanes in the same roles.
  for (int i = 0; i < n_reg_a - n_reg_b; ++i) {
    if (i >= static_cast<int>(lane_ids_b.size())) return std::nullopt;
    if (PreimageOf(inv_a, b.lane[lane_ids_b[i]]).reg == 0) return std::nullopt;
  }
  const size_t skip = lane_ids_b.size() - std::min(lane_ids_b.size(), lane_ids_a.size());
  for (size_t k = 0; k < lane_ids_a.size() && skip + k < lane_ids_b.size(); ++k) {
    if (PreimageOf(inv_a, b.lane[lane_ids_b[skip + k]]).lane != (uint32_t{1} << lane_ids_a[k])) {
      return std::nullopt;
    }
  }
  vbasis.append(lanes_b);
  return vbasis;
}

// The bases one access instruction covers besides the vector: the first registers not in the
// vector, then the address lanes (3 bases in all).
std::optional<Bases> AccessTile(const SharedAccessTile& t, const Bases& regs, const Bases& lanes,
                                const Bases& vbasis) {
  Bases tile;
  int needed = 3 - static_cast<int>(t.lane_addr.size());
  for (uint32_t r : regs) {
    if (needed <= 0) break;
    if (!Contains(vbasis, r)) {
      tile.push_back(r);
      --needed;
    }
  }
  if (needed > 0) return std::nullopt;
  for (int i : t.lane_addr) {
    if (i >= static_cast<int>(lanes.size())) return std::nullopt;
    tile.push_back(lanes[i]);
  }
  return tile;
}

bool Covers(const FlatLayout& l, int dim) {
  Span s;
  for (const Bases* list : {&l.reg, &l.lane, &l.warp}) {
    for (uint32_t x : *list) {
      if (x >> dim) return false;
      Add(s, x);
    }
  }
  return Rank(s) == dim;
}

}  // namespace

AccessTiles SharedAccessTiles(int compute_capability, int bitwidth) {
  AccessTiles tiles;
  AccessTileList& src = tiles.src;
  AccessTileList& dst = tiles.dst;
  const SharedAccessTile ld_st{{}, {0, 1, 2}};
  src.push_back(ld_st);
  dst.push_back(ld_st);
  if (compute_capability <= 0) return tiles;
  const bool ldmatrix = compute_capability >= 75, stmatrix = compute_capability >= 90;
  if (bitwidth <= 32) {
    const SharedAccessTile matrix{{0, 1}, {2, 3, 4}};
    if (stmatrix) src.push_back(matrix);
    if (ldmatrix) dst.push_back(matrix);
  }
  if (bitwidth == 16) {
    const SharedAccessTile trans{{2, 3, 4}, {0, 1}};
    if (stmatrix) src.push_back(trans);
    if (ldmatrix) dst.push_back(trans);
  }
  return tiles;
}

SharedAccessTile AmdLoadTile(int amd_arch) {
  // The lane bits of one LDS cycle of ds_read_b128 (AMD TargetInfo::getSharedLdStTiles): lanes
  // 0, 1, 3, 4 on gfx950, 0, 1, 4 on gfx942. The gfx950 tile decides the Triton 3.9.0 catalogue's
  // gfx950 reductions (colsum, reduce2d: exact only with it and 64 banks); no catalogue kernel
  // tells the gfx942 one from the plain ld/st tile.
  if (amd_arch == 950) return SharedAccessTile{{}, {0, 1, 3, 4}};
  return SharedAccessTile{{}, {0, 1, 4}};
}

SwizzledRound SwizzleLdSt(const FlatLayout& src, const FlatLayout& dst, int dim, int bitwidth, int num_banks) {
  const Bases vbasis = VectorBases(src.reg, dst.reg, src.lane, dst.lane, dim, bitwidth);
  // A side that stores (loads) 64 or 128 bits at a time covers its last lane bits with the
  // vector: they leave the tile.
  auto tile = [&](const Bases& regs, const Bases& lanes) {
    size_t run = 0;
    while (run < vbasis.size() && run < regs.size() && regs[run] == vbasis[run]) ++run;
    Bases t = lanes;
    const int64_t bits = (int64_t{1} << run) * bitwidth;
    if (bits > 32) {
      const size_t drop = std::min<size_t>(t.size(), Log2(static_cast<uint32_t>(bits / 32)));
      t.truncate(t.size() - drop);
    }
    Bases out;
    for (uint32_t b : t) if (!Contains(vbasis, b)) out.push_back(b);
    return out;
  };
  return Swizzle(src, dst, dim, bitwidth, vbasis, tile(src.reg, src.lane), tile(dst.reg, dst.lane), 0, num_banks);
}

SwizzledRound SwizzleWithTiles(const FlatLayout& src, const FlatLayout& dst, int dim,
                               int bitwidth, const AccessTileList& src_tiles,
                               const AccessTileList& dst_tiles, int num_banks) {
  const int total = Log2(static_cast<uint32_t>(std::max(1, 128 / bitwidth)));
  std::optional<SwizzledRound> best;
  const Inverse inv_src = Invert(src), inv_dst = Invert(dst);
  const Bases common_sd = Intersection(src.reg, dst.reg, dim);
  const Bases common_ds = Intersection(dst.reg, src.reg, dim);
  for (const SharedAccessTile& ts : src_tiles) {
    for (const SharedAccessTile& td : dst_tiles) {
      const int n_src = total - static_cast<int>(ts.lane_contig.size());
      const int n_dst = total - static_cast<int>(td.lane_contig.size());
      if (n_src < 0 || n_dst < 0) continue;
      std::optional<Bases> vbasis =
          TileVector(src, dst, inv_src, inv_dst, n_src, n_dst, ts.lane_contig, td.lane_contig,
                     common_sd, common_ds);
      if (!vbasis) continue;
      std::optional<Bases> tile_src = AccessTile(ts, src.reg, src.lane, *vbasis);
      std::optional<Bases> tile_dst = AccessTile(td, dst.reg, dst.lane, *vbasis);
      if (!tile_src || !tile_dst) continue;
      auto missing = [](const SharedAccessTile& t) {
        return static_cast<int>(t.lane_contig.size() + t.lane_addr.size()) - 3;
      };
      const int leave = std::min(missing(ts), missing(td));
      SwizzledRound r = Swizzle(src, dst, dim, bitwidth, *vbasis, *tile_src, *tile_dst, leave, num_banks);
      r.conflicts = Conflicts(*tile_src, *tile_dst, r.segment);
      if (!best || r.conflicts < best->conflicts ||
          (r.conflicts == best->conflicts && r.reps.size() > best->reps.size())) {
        best = std::move(r);
      }
    }
  }
  if (best) return *best;
  return SwizzleLdSt(src, dst, dim, bitwidth, num_banks);
}

std::optional<int64_t> SwizzledCvtScratchElems(const FlatLayout& src_in, const FlatLayout& dst_in,
                                               int dim, int bitwidth, int compute_capability, int num_banks,
                                               int amd_arch) {
  if (dim < 0 || dim > 30 || bitwidth <= 0 || bitwidth > 128) return std::nullopt;
  if (num_banks != 32 && num_banks != 64) return std::nullopt;
  for (const FlatLayout* l : {&src_in, &dst_in}) {
    for (const Bases* list : {&l->reg, &l->lane, &l->warp}) {
      if (list->overflowed() || list->size() > kMaxLayoutBases) return std::nullopt;
    }
  }
  if (!Covers(src_in, dim) || !Covers(dst_in, dim)) return std::nullopt;
  // actionRemoveBroadcastedRegs.
  FlatLayout src, dst;
  for (auto [in, out] : {std::pair{&src_in, &src}, std::pair{&dst_in, &dst}}) {
    for (uint32_t r : in->reg) if (r != 0) out->reg.push_back(r);
    out->lane = in->lane;
    out->warp = in->warp;
  }
  SwizzledRound r;
  if (amd_arch != 0) {
    // AMD (TargetInfo::getSharedLdStTiles): stores are plain ds_write; a 128-bit load is a
    // ds_read_b128, whose lanes served in one LDS cycle are the ones of `AmdLoadTile`.
    const Bases vbasis = VectorBases(src.reg, dst.reg, src.lane, dst.lane, dim, bitwidth);
    if ((int64_t{1} << vbasis.size()) * bitwidth == 128) {
      AccessTileList store, load;
      store.push_back(SharedAccessTile{{}, {0, 1, 2}});
      load.push_back(AmdLoadTile(amd_arch));
      r = SwizzleWithTiles(src, dst, dim, bitwidth, store, load, num_banks);
    } else {
      r = SwizzleLdSt(src, dst, dim, bitwidth, num_banks);
    }
  } else {
    const AccessTiles tiles = SharedAccessTiles(compute_capability, bitwidth);
    r = SwizzleWithTiles(src, dst, dim, bitwidth, tiles.src, tiles.dst, num_banks);
  }
  return (int64_t{1} << dim) >> r.reps.size();
}

}  // namespace scratchsim::triton
