#include "backends/triton/operand_banks.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "sim/smem_banks.h"

namespace scratchsim::triton {
namespace {

// The text after "key = " in an attribute ("#ttg.blocked<{sizePerThread = [1, 4], ...}>").
std::optional<absl::string_view> After(absl::string_view text, absl::string_view key) {
  const std::string needle = absl::StrCat(key, " = ");
  for (size_t p = text.find(needle); p != absl::string_view::npos; p = text.find(needle, p + 1)) {
    const bool starts_name = p == 0 || !(absl::ascii_isalnum(text[p - 1]) || text[p - 1] == '_');
    if (starts_name) return text.substr(p + needle.size());
  }
  return std::nullopt;
}

// "key = [a, b]" as two non-negative integers.
std::optional<std::array<int64_t, 2>> Pair(absl::string_view text, absl::string_view key) {
  std::optional<absl::string_view> rest = After(text, key);
  if (!rest || !absl::ConsumePrefix(&*rest, "[")) return std::nullopt;
  std::vector<absl::string_view> parts = absl::StrSplit(rest->substr(0, rest->find(']')), ',');
  std::array<int64_t, 2> out{};
  if (parts.size() != 2) return std::nullopt;
  for (int i = 0; i < 2; ++i) {
    if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(parts[i]), &out[i]) || out[i] < 0) return std::nullopt;
  }
  return out;
}

// "key = N" as an integer.
std::optional<int64_t> Field(absl::string_view text, absl::string_view key) {
  std::optional<absl::string_view> rest = After(text, key);
  if (!rest) return std::nullopt;
  size_t end = 0;
  while (end < rest->size() && absl::ascii_isdigit((*rest)[end])) ++end;
  int64_t v = 0;
  if (!absl::SimpleAtoi(rest->substr(0, end), &v)) return std::nullopt;
  return v;
}

bool IsPowerOfTwo(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

// Index along each dimension of a warp's or lane's id, split fastest along order[0].
std::array<int64_t, 2> Split(int64_t id, const std::array<int64_t, 2>& extents, const std::array<int, 2>& order) {
  std::array<int64_t, 2> out{};
  out[order[0]] = id % extents[order[0]];
  out[order[1]] = id / extents[order[0]] % extents[order[1]];
  return out;
}

}  // namespace

absl::StatusOr<Blocked2D> ParseBlocked2D(absl::string_view encoding) {
  if (!absl::StrContains(encoding, "blocked<")) {
    return absl::InvalidArgumentError(absl::StrCat("not a blocked layout: ", encoding.substr(0, 60)));
  }
  auto spt = Pair(encoding, "sizePerThread");
  auto tpw = Pair(encoding, "threadsPerWarp");
  auto wpc = Pair(encoding, "warpsPerCTA");
  auto order = Pair(encoding, "order");
  if (!spt || !tpw || !wpc || !order || ((*order)[0] + (*order)[1] != 1) || (*order)[0] > 1) {
    return absl::InvalidArgumentError(absl::StrCat("not a rank-2 blocked layout: ", encoding.substr(0, 120)));
  }
  Blocked2D b;
  b.size_per_thread = *spt;
  b.threads_per_warp = *tpw;
  b.warps_per_cta = *wpc;
  b.order = {static_cast<int>((*order)[0]), static_cast<int>((*order)[1])};
  for (int d = 0; d < 2; ++d) {
    if (!IsPowerOfTwo(b.size_per_thread[d]) || !IsPowerOfTwo(b.threads_per_warp[d]) || !IsPowerOfTwo(b.warps_per_cta[d])) {
      return absl::InvalidArgumentError(absl::StrCat("blocked layout with a zero or non-power-of-two extent: ",
                                                     encoding.substr(0, 120)));
    }
  }
  return b;
}

absl::StatusOr<Shared2D> ParseShared2D(absl::string_view encoding) {
  Shared2D s;
  if (absl::StrContains(encoding, "nvmma_shared<")) {
    s.nvmma = true;
    std::optional<int64_t> width = Field(encoding, "swizzlingByteWidth");
    if (!width || (*width != 32 && *width != 64 && *width != 128)) {
      return absl::UnimplementedError(absl::StrCat("nvmma_shared swizzle other than 32, 64, 128 bytes: ",
                                                   encoding.substr(0, 120)));
    }
    s.swizzle_bytes = *width;
    s.contiguous_dim = absl::StrContains(encoding, "transposed = true") ? 0 : 1;
    return s;
  }
  if (absl::StrContains(encoding, "swizzled_shared<")) {
    std::optional<int64_t> vec = Field(encoding, "vec");
    std::optional<int64_t> per_phase = Field(encoding, "perPhase");
    std::optional<int64_t> max_phase = Field(encoding, "maxPhase");
    auto order = Pair(encoding, "order");
    if (!vec || !per_phase || !max_phase || !order || *vec <= 0 || *per_phase <= 0 || *max_phase <= 0 ||
        (*order)[0] > 1 || (*order)[0] + (*order)[1] != 1) {
      return absl::InvalidArgumentError(absl::StrCat("not a rank-2 swizzled_shared layout: ", encoding.substr(0, 120)));
    }
    s.vec = *vec;
    s.per_phase = *per_phase;
    s.max_phase = *max_phase;
    s.contiguous_dim = static_cast<int>((*order)[0]);
    return s;
  }
  return absl::UnimplementedError(absl::StrCat("shared encoding without a bank model: ", encoding.substr(0, 60)));
}

absl::StatusOr<int64_t> SharedByteOffset(const Shared2D& shared, std::array<int64_t, 2> shape, int64_t element_bytes,
                                         int64_t i0, int64_t i1) {
  const int c = shared.contiguous_dim;
  const std::array<int64_t, 2> idx{i0, i1};
  const int64_t col = idx[c], row = idx[1 - c], cols = shape[c], rows = shape[1 - c];
  if (element_bytes <= 0 || col < 0 || row < 0 || col >= cols || row >= rows) {
    return absl::InvalidArgumentError(absl::StrCat("element (", i0, ", ", i1, ") outside the ", shape[0], "x",
                                                   shape[1], " tile"));
  }
  if (!shared.nvmma) {
    const int64_t phase = (row / shared.per_phase) % shared.max_phase;
    const int64_t swizzled = ((col / shared.vec) ^ phase) * shared.vec + col % shared.vec;
    return (row * cols + swizzled) * element_bytes;
  }
  const int64_t w = shared.swizzle_bytes;
  if (cols * element_bytes < w || (w / element_bytes) <= 0) {
    return absl::UnimplementedError(absl::StrCat("nvmma_shared rows of ", w, " bytes wider than the tile's ",
                                                 cols * element_bytes, " contiguous bytes"));
  }
  const int64_t per_row = w / element_bytes;
  const int64_t in_tile = row * w + (col % per_row) * element_bytes;
  const int64_t swizzled = in_tile ^ (((in_tile >> 7) & (w / 16 - 1)) << 4);
  return (col / per_row) * rows * w + swizzled;
}

absl::StatusOr<CopyBanks> AsyncCopyBanks(const Blocked2D& regs, const Shared2D& shared, std::array<int64_t, 2> shape,
                                         int64_t element_bytes, int64_t contiguity, int num_warps) {
  const int c = shared.contiguous_dim;
  const int64_t run_limit = shared.nvmma ? 16 / element_bytes : shared.vec;
  const int64_t vec = std::min({regs.size_per_thread[c], contiguity, 16 / element_bytes, run_limit});
  CopyBanks out;
  out.vector_bytes = vec * element_bytes;
  if (vec <= 0 || out.vector_bytes < 4 || !IsPowerOfTwo(vec)) {
    return absl::UnimplementedError(absl::StrCat("a run of ", out.vector_bytes, " bytes per lane: no cp.async"));
  }
  const int64_t lanes = regs.threads_per_warp[0] * regs.threads_per_warp[1];
  if (regs.warps_per_cta[0] * regs.warps_per_cta[1] != num_warps) {
    return absl::InvalidArgumentError(absl::StrCat("warpsPerCTA covers ", regs.warps_per_cta[0] * regs.warps_per_cta[1],
                                                   " warps, the kernel has ", num_warps));
  }
  std::array<int64_t, 2> cover{}, reps{};
  for (int d = 0; d < 2; ++d) {
    cover[d] = regs.size_per_thread[d] * regs.threads_per_warp[d] * regs.warps_per_cta[d];
    if (shape[d] <= 0 || (shape[d] % cover[d] != 0 && cover[d] % shape[d] != 0)) {
      return absl::UnimplementedError(absl::StrCat("a ", shape[0], "x", shape[1], " tile in a layout covering ",
                                                   cover[0], "x", cover[1]));
    }
    reps[d] = std::max<int64_t>(1, shape[d] / cover[d]);
  }
  // One instruction per (repetition, register vector): every lane copies the vector it holds there.
  std::vector<int64_t> addresses(lanes);
  for (int64_t warp = 0; warp < num_warps; ++warp) {
    const std::array<int64_t, 2> w = Split(warp, regs.warps_per_cta, regs.order);
    for (int64_t r0 = 0; r0 < reps[0]; ++r0) {
      for (int64_t r1 = 0; r1 < reps[1]; ++r1) {
        for (int64_t e0 = 0; e0 < regs.size_per_thread[0]; e0 += (c == 0 ? vec : 1)) {
          for (int64_t e1 = 0; e1 < regs.size_per_thread[1]; e1 += (c == 1 ? vec : 1)) {
            for (int64_t lane = 0; lane < lanes; ++lane) {
              const std::array<int64_t, 2> l = Split(lane, regs.threads_per_warp, regs.order);
              const std::array<int64_t, 2> e{e0, e1}, r{r0, r1};
              std::array<int64_t, 2> i{};
              for (int d = 0; d < 2; ++d) {
                i[d] = (r[d] * cover[d] + w[d] * regs.size_per_thread[d] * regs.threads_per_warp[d] +
                        l[d] * regs.size_per_thread[d] + e[d]) % shape[d];  // a smaller tile wraps (broadcast)
              }
              auto offset = SharedByteOffset(shared, shape, element_bytes, i[0], i[1]);
              if (!offset.ok()) return offset.status();
              addresses[lane] = *offset;
            }
            auto wavefronts = SharedWavefronts(addresses, static_cast<int>(out.vector_bytes));
            if (!wavefronts.ok()) return wavefronts.status();
            out.wavefronts += *wavefronts;
            ++out.instructions;
          }
        }
      }
    }
  }
  return out;
}

}  // namespace scratchsim::triton
