// Pipelining depth per MMA kind, as Triton 3.6 builds it (tests/data/triton: H200 and
// compile-only sm_80/100/120 fixtures): with mma.sync the loads go through cp.async and the
// pipeliner keeps num_stages - 1 buffers; with wgmma and tcgen05 the MMA itself reads shared
// memory asynchronously and the pipeliner keeps num_stages buffers.
#include "backends/triton/pipeline_model.h"

#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "backends/triton/triton_allocator.h"
#include "backends/triton/ttgir_layout.h"
#include "sim/checked_math.h"
#include "sim/dtype.h"
#include "sim/status_macros.h"

namespace scratchsim::triton {

absl::StatusOr<TritonMma> SelectMma(const DotLoop& loop) {
  if (loop.target_cc < 80) {
    return absl::InvalidArgumentError(
        absl::StrCat("sm_", loop.target_cc, ": the Triton model covers sm_80 and newer"));
  }
  if (loop.num_warps <= 0 || loop.block_m <= 0 || loop.num_stages <= 0) {
    return absl::InvalidArgumentError("num_warps, block_m and num_stages must be positive");
  }
  const int major = loop.target_cc / 10;
  if (major == 9 && loop.block_m >= 64 && loop.num_warps % 4 == 0) return TritonMma::kWgmma;
  if (major == 10 && loop.block_m >= 64 && !(loop.integer_operands && loop.release == TritonRelease::k3_6)) {
    return TritonMma::kTcgen05;
  }
  return TritonMma::kMmaV2;
}

absl::StatusOr<PipelineDepth> PipelineCopies(const DotLoop& loop) {
  auto mma = SelectMma(loop);
  if (!mma.ok()) return mma.status();
  PipelineDepth d;
  d.mma = *mma;
  d.assumptions.push_back(absl::StrCat("MMA: ", TritonMmaName(d.mma), " (sm_", loop.target_cc,
                                       ", BLOCK_M=", loop.block_m, ", num_warps=",
                                       loop.num_warps, ")"));
  const JitSpecialization& j = loop.jit;
  d.assumptions.push_back(absl::StrCat(
      "JIT specialization: pointers ", j.pointers_divisible_by_16 ? "" : "not ",
      "divisible by 16, leading strides ", j.strides_divisible_by_16 ? "" : "not ",
      "divisible by 16, inner stride ", j.inner_stride_is_1 ? "equal to 1" : "not 1"));
  // The loads become asynchronous copies into the pipelined buffers when each thread's piece is
  // 4, 8 or 16 bytes wide and aligned (cp.async): vectorized loads (16-byte aligned pointers and
  // strides, a unit inner stride), or elements of 32 bits or more, which are one such piece each.
  // Otherwise the loop's loads stay in registers and are written to shared memory each
  // iteration (local_alloc).
  const bool vectorized = j.pointers_divisible_by_16 && j.strides_divisible_by_16 &&
                          j.inner_stride_is_1;
  const bool async_copy = vectorized || loop.operand_bits >= 32;
  if (loop.num_stages <= 1) {
    d.copies = 1;
    d.multi_buffered = false;
    d.assumptions.push_back("num_stages <= 1: no software pipelining, one staging copy");
    return d;
  }
  if (!async_copy) {
    // tcgen05 reads its operands asynchronously: the pipeliner keeps the buffer of the MMA in
    // flight and the next one's, two staging copies; mma.sync and wgmma wait, one copy
    // (every fixture of the catalogue: Triton 3.6 and 3.9, sm_80..120, the `none` regime).
    d.copies = d.mma == TritonMma::kTcgen05 ? 2 : 1;
    d.multi_buffered = d.copies > 1;
    d.assumptions.push_back(absl::StrCat("loads not vectorized (", loop.operand_bits,
                                         "-bit elements): staged through registers, ", d.copies,
                                         d.copies == 1 ? " copy" : " copies (tcgen05 in flight)"));
    return d;
  }
  if (!vectorized) d.assumptions.push_back("loads not vectorized, but 32-bit elements: cp.async per element");
  d.multi_buffered = true;
  d.copies = PipelineRingSlots(d.mma).Slots(loop.num_stages);
  return d;
}

absl::Status ApplyTritonPipelining(const DotLoop& loop, KernelGraph* graph) {
  auto depth = PipelineCopies(loop);
  if (!depth.ok()) return depth.status();
  std::map<std::string, const Loop*> loops;
  for (const Loop& l : graph->loops()) loops[l.name()] = &l;
  std::set<std::string> pipelined;
  for (const Op& op : graph->ops()) {
    auto it = loops.find(op.loop());
    if (op.loop().empty() || it == loops.end() || it->second->num_stages().empty()) continue;
    for (const std::string& w : op.writes()) pipelined.insert(w);
  }
  for (Buffer& b : *graph->mutable_buffers()) {
    if (b.role() != OPERAND || !pipelined.count(b.name())) continue;
    b.set_copies(absl::StrCat(depth->copies));
  }
  graph->set_doc(absl::StrCat(graph->doc(), graph->doc().empty() ? "" : " ",
                              "Triton pipelining model: ", depth->copies,
                              " copies per operand tile. Assumed: ",
                              absl::StrJoin(depth->assumptions, "; "), "."));
  return absl::OkStatus();
}

namespace {

// Bits of a tl.dot element (a Triton dtype name, tl.float16 -> "fp16", or its MLIR element
// type) from sim/dtype; 0 for names sim/dtype does not know and for widths tl.dot does not take
// (it multiplies 8-, 16- and 32-bit elements).
int64_t DotElementBits(const std::string& d) {
  const absl::StatusOr<int64_t> bits = scratchsim::DtypeBits(d);
  return bits.ok() && (*bits == 8 || *bits == 16 || *bits == 32) ? *bits : 0;
}

bool IntegerDtype(const std::string& d) { return d == "i8" || d == "int8" || d == "i32" || d == "int32"; }

// The MLIR element type the epilogue's tensors carry.
std::string MlirElement(const std::string& d) {
  if (d == "fp16" || d == "f16") return "f16";
  if (d == "bf16") return "bf16";
  if (d == "fp32" || d == "f32") return "f32";
  if (d == "i32" || d == "int32") return "i32";
  return "";
}

absl::StatusOr<int64_t> NoOverflow(std::optional<int64_t> v) {
  if (!v) return absl::InvalidArgumentError("GEMM tile sizes overflow 64-bit byte counts");
  return *v;
}

std::string IntList(const std::vector<int64_t>& v) { return absl::StrCat("[", absl::StrJoin(v, ", "), "]"); }

std::string BasesText(const std::vector<std::pair<int64_t, int64_t>>& bases) {
  std::vector<std::string> parts;
  for (const auto& [r, c] : bases) parts.push_back(absl::StrCat("[", r, ", ", c, "]"));
  return absl::StrCat("[", absl::StrJoin(parts, ", "), "]");
}

// AccelerateMatmul.cpp, warpsPerTileV2: double the warps along whichever dimension has more
// 16x8 mma tiles left per warp, rows first on ties.
std::vector<int64_t> WarpsPerTileV2(int64_t m, int64_t n, int num_warps) {
  std::vector<int64_t> ret = {1, 1};
  while (ret[0] * ret[1] < num_warps) {
    if (m / 16 / ret[0] >= n / (8 * ret[1])) {
      if (ret[0] < m / 16) ret[0] *= 2;
      else ret[1] *= 2;
    } else {
      ret[1] *= 2;
    }
  }
  return ret;
}

// AccelerateMatmul.cpp, warpsPerTileV3: warp groups of (4, 1), then rows while the tile has
// more than 16 rows per warp, else columns.
std::vector<int64_t> WarpsPerTileV3(int64_t m, int num_warps) {
  std::vector<int64_t> ret = {4, 1};
  while (ret[0] * ret[1] < num_warps) {
    if (m > 16 * ret[0]) ret[0] *= 2;
    else ret[1] *= 2;
  }
  return ret;
}

// mmaVersionToInstrShape (TritonGPU Utility.cpp), version 3: m16, the widest n (a multiple of
// 8 up to 256) that divides BLOCK_N and is at most BLOCK_N over the warps left after the rows,
// k = 256 bits of the operand type.
std::vector<int64_t> WgmmaInstrShape(int64_t m, int64_t n, int num_warps, int64_t operand_bits) {
  const int64_t m_warps = std::max<int64_t>(m / 16, 1);
  const int64_t n_warps = std::max<int64_t>(num_warps / m_warps, 1);
  const int64_t max_n = std::max<int64_t>(n / n_warps, 8);
  int64_t instr_n = 8;
  for (int64_t c = 256; c >= 8; c -= 8) {
    if (n % c == 0 && c <= max_n) { instr_n = c; break; }
  }
  return {16, instr_n, 256 / operand_bits};
}

// The register layout tmem_load gives the tcgen05 accumulator (as in the fixtures' TTGIR,
// Triton's TMEM 32x32b / 16x32bx2 access patterns): each warp of a warp group reads 32 TMEM
// lanes (rows) for BLOCK_M >= 128, or 16 rows with the upper 16 lanes on the second half of the
// columns for BLOCK_M = 64; further warp groups split the columns; registers hold the rest.
std::string TmemLoadLayout(int64_t m, int64_t n, int num_warps) {
  const int64_t groups = std::max(1, num_warps / 4);
  const int64_t cols = std::max<int64_t>(1, n / groups);
  std::vector<std::pair<int64_t, int64_t>> reg, lane, warp;
  const bool half_rows = m < 128;
  const int64_t reg_cols = half_rows ? cols / 2 : cols;
  for (int64_t c = 1; c < reg_cols; c *= 2) reg.push_back({0, c});
  const int64_t lane_rows = half_rows ? 16 : 32;
  for (int64_t r = 1; r < lane_rows; r *= 2) lane.push_back({r, 0});
  if (half_rows) lane.push_back({0, reg_cols});
  for (int64_t r = lane_rows; r < lane_rows * 4; r *= 2) warp.push_back({r >= m ? 0 : r, 0});
  for (int64_t c = cols; c < n; c *= 2) warp.push_back({0, c});
  for (int64_t r = lane_rows * 4; r < m; r *= 2) reg.push_back({r, 0});
  return absl::StrCat("#ttg.linear<{register = ", BasesText(reg), ", lane = ", BasesText(lane),
                      ", warp = ", BasesText(warp), ", block = []}>");
}

// Coalesce.cpp and BlockedEncodingAttr's builder (getDefaultBlockedEncoding): 16 bytes per
// thread along the contiguous dimension (fewer when the tile has fewer elements per thread, one
// when the pointer is not known 16-byte aligned), lanes then warps fill that dimension first,
// the rest go to the rows.
std::string StoreLayout(int64_t m, int64_t n, int num_warps, int64_t bits, bool aligned, TritonRelease release) {
  if (!aligned && release == TritonRelease::k3_6) {
    // Triton 3.6's Coalesce orders a pointer of unknown contiguity dimension 0 first (so does
    // every `none`-regime GEMM of the 3.6.0 catalogue: one element per thread, lanes and then
    // warps down the rows).
    const int64_t lanes_m = std::clamp<int64_t>(m, 1, 32);
    const int64_t warps_m = std::clamp<int64_t>(m / lanes_m, 1, num_warps);
    return absl::StrCat("#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [", lanes_m, ", ", 32 / lanes_m,
                        "], warpsPerCTA = [", warps_m, ", ", num_warps / warps_m, "], order = [0, 1]}>");
  }
  const int64_t threads = int64_t{32} * num_warps;
  int64_t per_thread = aligned ? std::max<int64_t>(1, 128 / bits) : 1;
  per_thread = std::min(per_thread, std::max<int64_t>(m * n / threads, 1));
  per_thread = std::min(per_thread, n);
  const int64_t threads_n = std::clamp<int64_t>(threads, 1, std::max<int64_t>(1, n / per_thread));
  const int64_t lanes_n = std::clamp<int64_t>(threads_n, 1, 32);
  const int64_t warps_n = std::clamp<int64_t>(threads_n / lanes_n, 1, num_warps);
  return absl::StrCat("#ttg.blocked<{sizePerThread = [1, ", per_thread, "], threadsPerWarp = [",
                      32 / lanes_n, ", ", lanes_n, "], warpsPerCTA = [", num_warps / warps_n, ", ",
                      warps_n, "], order = [1, 0]}>");
}

}  // namespace

absl::StatusOr<GemmSharedPrediction> PredictGemmShared(const GemmConfig& gemm) {
  const DotLoop& loop = gemm.loop;
  const int64_t in_bits = DotElementBits(gemm.dtype);
  const std::string out_elem = MlirElement(gemm.out_dtype);
  if (in_bits == 0) return absl::InvalidArgumentError(absl::StrCat("GEMM dtype '", gemm.dtype, "' is not one of fp16, bf16, fp32, fp8e4nv, fp8e5, fp8e4b15, i8"));
  if (out_elem.empty()) return absl::InvalidArgumentError(absl::StrCat("GEMM out dtype '", gemm.out_dtype, "' is not one of fp16, bf16, fp32, i32"));
  for (int64_t v : {loop.block_m, gemm.block_n, gemm.block_k}) {
    if (v < 16 || (v & (v - 1)) != 0) {
      return absl::InvalidArgumentError(absl::StrCat("BLOCK_M/N/K must be powers of two >= 16 (Triton's tl.dot minimum), got ", v));
    }
  }
  // TRITON_MAX_TENSOR_NUMEL (python/triton/language/core.py): no block may exceed 2^20 elements.
  constexpr int64_t kMaxTensorNumel = int64_t{1} << 20;
  for (auto [rows, cols] : {std::pair{loop.block_m, gemm.block_k}, std::pair{gemm.block_k, gemm.block_n},
                            std::pair{loop.block_m, gemm.block_n}}) {
    if (rows > kMaxTensorNumel / cols) {
      return absl::InvalidArgumentError(absl::StrCat("a ", rows, "x", cols, " block exceeds Triton's 2^20-element tensor limit"));
    }
  }
  // 32 warps of 32 threads is CUDA's 1024-thread block limit.
  if (loop.num_warps <= 0 || loop.num_warps > 32 || (loop.num_warps & (loop.num_warps - 1)) != 0) {
    return absl::InvalidArgumentError(absl::StrCat("num_warps must be a power of two from 1 to 32, got ", loop.num_warps));
  }
  GemmSharedPrediction p;
  DotLoop typed = loop;
  typed.operand_bits = static_cast<int>(in_bits);
  typed.integer_operands = IntegerDtype(gemm.dtype);
  ASSIGN_OR_RETURN(p.depth, PipelineCopies(typed));
  p.assumptions = p.depth.assumptions;
  p.a_copies = p.b_copies = p.depth.copies;
  // wgmma reads 8-bit operands only K-major from shared memory. An operand whose contiguous
  // dimension is not K cannot be copied there with cp.async; Triton loads it into registers
  // and writes it transposed with one local_alloc, a single unpipelined buffer (fixtures:
  // fp8e4nv on sm_90, B [K, N] row-major: num_stages copies of A, one of B).
  if (p.depth.mma == TritonMma::kWgmma && in_bits == 8) {
    if (!gemm.a_k_contiguous) p.a_copies = 1;
    if (!gemm.b_k_contiguous) p.b_copies = 1;
    if (!gemm.a_k_contiguous || !gemm.b_k_contiguous) {
      p.assumptions.push_back("8-bit wgmma operand not K-contiguous: staged through registers, one copy");
    }
  }
  const int64_t bytes = in_bits / 8;
  int64_t a_tile = 0, b_tile = 0;
  ASSIGN_OR_RETURN(a_tile, NoOverflow(CheckedMul(loop.block_m, gemm.block_k)));
  ASSIGN_OR_RETURN(b_tile, NoOverflow(CheckedMul(gemm.block_k, gemm.block_n)));
  ASSIGN_OR_RETURN(a_tile, NoOverflow(CheckedMul(a_tile, bytes * p.a_copies)));
  ASSIGN_OR_RETURN(b_tile, NoOverflow(CheckedMul(b_tile, bytes * p.b_copies)));
  ASSIGN_OR_RETURN(p.operand_bytes, NoOverflow(CheckedAdd(a_tile, b_tile)));
  // The tcgen05 loop keeps two mbarriers (2x1xi64) after the operand buffers in every sm_100
  // fixture (num_stages 2..4).
  if (p.depth.mma == TritonMma::kTcgen05) {
    p.barrier_bytes = 16;
    p.assumptions.push_back("tcgen05: two 8-byte mbarriers next to the operands (measured for num_stages 2..4)");
  }
  // The accumulator's layout, converted to the store's blocked layout in the epilogue.
  const int64_t m = loop.block_m, n = gemm.block_n;
  switch (p.depth.mma) {
    case TritonMma::kMmaV2:
      p.accumulator_layout = absl::StrCat(
          "#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = ",
          IntList(WarpsPerTileV2(m, n, loop.num_warps)), ", instrShape = [16, 8]}>");
      break;
    case TritonMma::kWgmma:
      p.accumulator_layout = absl::StrCat(
          "#ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = ",
          IntList(WarpsPerTileV3(m, loop.num_warps)), ", instrShape = ",
          IntList(WgmmaInstrShape(m, n, loop.num_warps, in_bits)), "}>");
      break;
    case TritonMma::kTcgen05:
      if (m > 128) p.assumptions.push_back("tcgen05 with BLOCK_M > 128: rows beyond 128 assumed in registers (no fixture)");
      if (m < 128 && loop.num_warps > 4) {
        p.assumptions.push_back("tcgen05 with BLOCK_M = 64 and more than one warp group: column split assumed (no fixture)");
      }
      p.accumulator_layout = TmemLoadLayout(m, n, loop.num_warps);
      break;
  }
  const int64_t out_bits = DotElementBits(gemm.out_dtype);
  p.store_layout = StoreLayout(m, n, loop.num_warps, out_bits, loop.jit.pointers_divisible_by_16, loop.release);
  ASSIGN_OR_RETURN(ScratchNeed need, ConvertLayoutScratch(p.accumulator_layout, p.store_layout, m, n, out_elem,
                                                         loop.num_warps, 32, loop.target_cc, "gemm epilogue"));
  p.epilogue_scratch_bytes = need.bytes;
  // Allocation.cpp: the operand buffers and barriers are live through the K loop and dead
  // after it; the epilogue scratch is live only at the conversion, so it reuses offset 0.
  int64_t loop_bytes = 0;
  ASSIGN_OR_RETURN(loop_bytes, NoOverflow(CheckedAdd(p.operand_bytes, p.barrier_bytes)));
  p.total_bytes = std::max(loop_bytes, p.epilogue_scratch_bytes);
  p.assumptions.push_back(absl::StrCat("accumulator ", p.accumulator_layout, " converted to ",
                                       p.store_layout, " before the store"));
  return p;
}

absl::StatusOr<GemmSharedPrediction> PredictTmaGemmShared(const GemmConfig& gemm_in, bool warp_specialize) {
  if (warp_specialize) {
    return absl::UnimplementedError(
        "a TMA GEMM with warp_specialize is not modelled before compiling (partitions, captures and "
        "their barriers); compile it and give the .ttgir");
  }
  GemmConfig gemm = gemm_in;
  gemm.a_k_contiguous = true;
  gemm.b_k_contiguous = true;  // B[N, K] through its descriptor
  if (gemm.loop.target_cc < 90) {
    // No TMA: the descriptors are lowered to loads and stores of 16-byte aligned, contiguous rows.
    ASSIGN_OR_RETURN(GemmSharedPrediction p, PredictGemmShared(gemm));
    p.assumptions.push_back("sm_" + std::to_string(gemm.loop.target_cc) +
                            " has no TMA: descriptor loads lowered to pointer loads");
    return p;
  }
  const DotLoop& loop = gemm.loop;
  const int64_t in_bits = DotElementBits(gemm.dtype), out_bits = DotElementBits(gemm.out_dtype);
  if (in_bits == 0 || out_bits == 0) {
    return absl::InvalidArgumentError(absl::StrCat("TMA GEMM dtypes '", gemm.dtype, "' -> '", gemm.out_dtype,
                                                   "' are not modelled"));
  }
  for (int64_t v : {loop.block_m, gemm.block_n, gemm.block_k}) {
    if (v < 16 || v > 256 || (v & (v - 1)) != 0) {
      return absl::InvalidArgumentError(absl::StrCat("TMA block sizes must be powers of two from 16 to 256, got ", v));
    }
  }
  if (loop.num_warps <= 0 || loop.num_warps > 32 || (loop.num_warps & (loop.num_warps - 1)) != 0 || loop.num_stages <= 0) {
    return absl::InvalidArgumentError("num_warps must be a power of two from 1 to 32 and num_stages positive");
  }
  DotLoop typed = loop;
  typed.operand_bits = static_cast<int>(in_bits);
  typed.integer_operands = IntegerDtype(gemm.dtype);
  // TMA copies are asynchronous whatever the JIT knows: the descriptor carries the layout.
  typed.jit = JitSpecialization{};
  GemmSharedPrediction p;
  ASSIGN_OR_RETURN(p.depth, PipelineCopies(typed));
  p.assumptions = p.depth.assumptions;
  p.assumptions.push_back("TMA loads (tensor descriptors): asynchronous, one mbarrier per buffer");
  p.a_copies = p.b_copies = p.depth.copies;
  const int64_t bytes = in_bits / 8;
  ASSIGN_OR_RETURN(const int64_t a_bytes, NoOverflow(CheckedMul(loop.block_m * gemm.block_k, bytes * p.a_copies)));
  ASSIGN_OR_RETURN(const int64_t b_bytes, NoOverflow(CheckedMul(gemm.block_n * gemm.block_k, bytes * p.b_copies)));
  p.operand_bytes = a_bytes + b_bytes;
  const int64_t stage_barriers = 8 * p.depth.copies;
  const int64_t mma_barriers = p.depth.mma == TritonMma::kTcgen05 ? 16 : 0;
  p.barrier_bytes = stage_barriers + mma_barriers;
  p.epilogue_scratch_bytes = loop.block_m * gemm.block_n * out_bits / 8;
  // Triton's allocator on the buffers and their lifetimes: the tensormap scratch before the loop,
  // operands and barriers through it, C's buffer after it.
  std::vector<TritonBuffer> buffers;
  if (mma_barriers > 0) buffers.push_back({mma_barriers, 16, 3, 8});
  buffers.push_back({a_bytes, 1024, 4, 7});
  buffers.push_back({b_bytes, 1024, 4, 7});
  buffers.push_back({stage_barriers, 16, 4, 7});
  buffers.push_back({p.epilogue_scratch_bytes, 1024, 8, 9});
  for (uint64_t t = 0; t < 3; ++t) buffers.push_back({128, 128, t, t + 1});
  ASSIGN_OR_RETURN(const TritonAllocation placed, AllocateLikeTriton(buffers));
  p.total_bytes = placed.shared;
  p.assumptions.push_back(absl::StrCat("C (", loop.block_m, "x", gemm.block_n, ") staged in shared memory for the TMA store"));
  return p;
}

absl::StatusOr<AttentionSharedPrediction> PredictAttentionShared(const GemmConfig& attention) {
  const DotLoop& loop = attention.loop;
  const int64_t bm = loop.block_m, bn = attention.block_n, hd = attention.block_k;
  const int64_t in_bits = DotElementBits(attention.dtype);
  const std::string elem = MlirElement(attention.out_dtype);
  if (in_bits != 16 || elem.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("attention dtype '", attention.dtype, "' -> '", attention.out_dtype,
                                                   "': fp16 and bf16 are modelled"));
  }
  for (int64_t v : {bm, bn, hd}) {
    if (v < 16 || v > 256 || (v & (v - 1)) != 0) {
      return absl::InvalidArgumentError(absl::StrCat("attention block sizes must be powers of two from 16 to 256, got ", v));
    }
  }
  if (loop.num_warps <= 0 || loop.num_warps > 32 || (loop.num_warps & (loop.num_warps - 1)) != 0) {
    return absl::InvalidArgumentError("num_warps must be a power of two from 1 to 32");
  }
  DotLoop typed = loop;
  typed.operand_bits = static_cast<int>(in_bits);
  AttentionSharedPrediction p;
  ASSIGN_OR_RETURN(p.depth, PipelineCopies(typed));
  if (p.depth.mma == TritonMma::kTcgen05) {
    return absl::UnimplementedError(
        "attention on tcgen05 (sm_100) is not modelled before compiling (tensor memory, MMA barriers, the "
        "conversions between TMEM and registers); compile it and give the .ttgir");
  }
  p.assumptions = p.depth.assumptions;
  const int64_t bytes = in_bits / 8;
  const int64_t copies = p.depth.copies;
  p.q_bytes = bm * hd * bytes;
  const int64_t k_bytes = copies * hd * bn * bytes, v_bytes = copies * bn * hd * bytes;
  p.kv_bytes = k_bytes + v_bytes;
  const int cc = loop.target_cc;
  std::string s_layout, o_layout;
  if (p.depth.mma == TritonMma::kMmaV2) {
    // AccelerateMatmul's warpsPerTileV2 for chained dots: the second dot (P V, [BLOCK_M,
    // HEAD_DIM]) is converted first and puts all warps along its larger dimension; the first
    // (Q K^T) takes the same warps.
    const std::vector<int64_t> warps =
        bm >= hd ? std::vector<int64_t>{loop.num_warps, 1} : std::vector<int64_t>{1, loop.num_warps};
    s_layout = absl::StrCat("#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = ", IntList(warps),
                            ", instrShape = [16, 8]}>");
    o_layout = s_layout;
    // P feeds the second dot as its A operand, whose warps must each hold whole rows: with warps
    // along the columns it goes through a shared-memory buffer.
    if (warps[1] > 1) {
      p.p_bytes = bm * bn * bytes;
      p.assumptions.push_back("warps split the key columns (BLOCK_M < HEAD_DIM): P staged in shared memory");
    }
  } else {
    const std::vector<int64_t> warps = WarpsPerTileV3(bm, loop.num_warps);
    s_layout = absl::StrCat("#ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = ", IntList(warps),
                            ", instrShape = ", IntList(WgmmaInstrShape(bm, bn, loop.num_warps, in_bits)), "}>");
    o_layout = absl::StrCat("#ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = ", IntList(warps),
                            ", instrShape = ", IntList(WgmmaInstrShape(bm, hd, loop.num_warps, in_bits)), "}>");
  }
  ASSIGN_OR_RETURN(const ScratchNeed reduce,
                   ReduceScratch(s_layout, bm, bn, 1, "f32", loop.num_warps, 32, cc, loop.release, "attention softmax"));
  p.reduce_scratch_bytes = reduce.bytes;
  const std::string store = StoreLayout(bm, hd, loop.num_warps, in_bits, loop.jit.pointers_divisible_by_16, loop.release);
  ASSIGN_OR_RETURN(const ScratchNeed epilogue,
                   ConvertLayoutScratch(o_layout, store, bm, hd, elem, loop.num_warps, 32, cc, "attention epilogue"));
  p.epilogue_scratch_bytes = epilogue.bytes;
  // Lifetimes as Allocation.cpp numbers them: Q through the loop; K and V through it when
  // pipelined, else each around its own dot; the two reductions between the dots; P with the
  // second dot; the epilogue conversion after the loop.
  const bool pipelined = p.depth.multi_buffered;
  std::vector<TritonBuffer> buffers;
  buffers.push_back({p.q_bytes, 16, 0, 10});
  buffers.push_back({k_bytes, 16, 1, pipelined ? 9u : 3u});
  buffers.push_back({v_bytes, 16, pipelined ? 1u : 5u, pipelined ? 9u : 7u});
  if (p.p_bytes > 0) buffers.push_back({p.p_bytes, 16, 5, 7});
  if (reduce.bytes > 0) {
    buffers.push_back({reduce.bytes, 128, 3, 4});
    buffers.push_back({reduce.bytes, 128, 4, 5});
  }
  if (epilogue.bytes > 0) buffers.push_back({epilogue.bytes, 128, 10, 11});
  ASSIGN_OR_RETURN(const TritonAllocation placed, AllocateLikeTriton(buffers));
  p.total_bytes = placed.shared;
  return p;
}

}  // namespace scratchsim::triton
