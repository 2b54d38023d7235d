#include "backends/triton/operand_banks.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"

namespace scratchsim::triton {
namespace {

constexpr char kNvmmaB[] = "#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = true, elementBitWidth = 32}>";
constexpr char kNvmmaRowMajor[] = "#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>";

// The blocked layout Triton's coalescing gives a BLOCK_K x BLOCK_N f32 tile with N contiguous:
// four elements (16 bytes) per thread along N, BLOCK_N / 4 lanes along N (at most 32), the rest
// along K; the warps along K (as in the sm_90 fixtures' 32x64 and 64x32 copies).
Blocked2D CoalescedF32(int64_t block_n, int num_warps) {
  Blocked2D b;
  b.size_per_thread = {1, 4};
  const int64_t lanes_n = std::min<int64_t>(32, block_n / 4);
  b.threads_per_warp = {32 / lanes_n, lanes_n};
  b.warps_per_cta = {num_warps, 1};
  b.order = {1, 0};
  return b;
}

TEST(OperandBanksTest, NvmmaSwizzleXorsChunksWithTheLine) {
  auto s = ParseShared2D(kNvmmaB);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_TRUE(s->nvmma);
  EXPECT_EQ(s->contiguous_dim, 0);  // transposed: K (dim 0) is contiguous
  // 32 x 64 f32, K-major: column n is a 128-byte row; element (k, n) at n x 128 + ((k / 4) ^ (n % 8)) x 16 + (k % 4) x 4.
  EXPECT_EQ(*SharedByteOffset(*s, {32, 64}, 4, 0, 0), 0);
  EXPECT_EQ(*SharedByteOffset(*s, {32, 64}, 4, 5, 0), 20);
  EXPECT_EQ(*SharedByteOffset(*s, {32, 64}, 4, 0, 1), 128 + 16);
  EXPECT_EQ(*SharedByteOffset(*s, {32, 64}, 4, 5, 3), 3 * 128 + (1 ^ 3) * 16 + 4);
  // K = 64: two 128-byte row-tiles of 64 rows each, the second after the first.
  EXPECT_EQ(*SharedByteOffset(*s, {64, 64}, 4, 32, 0), 64 * 128);
  EXPECT_FALSE(SharedByteOffset(*s, {32, 64}, 4, 32, 0).ok());
}

TEST(OperandBanksTest, SwizzledSharedFollowsVecPerPhaseMaxPhase) {
  auto s = ParseShared2D("#ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_FALSE(s->nvmma);
  // Row 3 of a 64-wide f16 tile: vector 0 moves to vector 3.
  EXPECT_EQ(*SharedByteOffset(*s, {32, 64}, 2, 3, 0), (3 * 64 + 24) * 2);
  EXPECT_EQ(*SharedByteOffset(*s, {32, 64}, 2, 3, 9), (3 * 64 + 16 + 1) * 2);
}

// f32 B of wgmma: global rows along N, shared K-major, so each lane copies one 4-byte element.
// A warp's lanes at one K row and every fourth N hit 2 of the 32 banks (n % 8 takes two values):
// 16-way at BLOCK_N >= 128; at BLOCK_N = 64 two K rows double the banks (8-way), at 32 four K
// rows (4-way).
TEST(OperandBanksTest, F32WgmmaBCopyConflictDegreeByBlockN) {
  auto s = ParseShared2D(kNvmmaB);
  ASSERT_TRUE(s.ok());
  for (auto [block_n, degree] : std::vector<std::pair<int64_t, int64_t>>{{32, 4}, {64, 8}, {128, 16}, {256, 16}}) {
    for (int warps : {4, 8}) {
      for (int64_t block_k : {32, 64, 128}) {
        auto banks = AsyncCopyBanks(CoalescedF32(block_n, warps), *s, {block_k, block_n}, 4, 4, warps);
        ASSERT_TRUE(banks.ok()) << banks.status();
        EXPECT_EQ(banks->vector_bytes, 4);
        EXPECT_EQ(banks->instructions, block_k * block_n / 32);
        EXPECT_EQ(banks->wavefronts, banks->instructions * degree) << block_n << " " << warps << " " << block_k;
      }
    }
  }
}

TEST(OperandBanksTest, RowMajorSixteenByteCopiesAreConflictFree) {
  auto s = ParseShared2D(kNvmmaRowMajor);
  ASSERT_TRUE(s.ok());
  auto b = ParseBlocked2D("#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>");
  ASSERT_TRUE(b.ok()) << b.status();
  auto banks = AsyncCopyBanks(*b, *s, {128, 64}, 2, 8, 4);
  ASSERT_TRUE(banks.ok()) << banks.status();
  EXPECT_EQ(banks->vector_bytes, 16);
  EXPECT_EQ(banks->wavefronts, banks->instructions * 4);  // 512 bytes: four quarter-warp phases
}

// Without the JIT's divisibility (the catalogue's "none" regime) Triton 3.6 copies one element
// per lane with the lanes down dim 0 (blocked sizePerThread [1, 1], threadsPerWarp [32, 1],
// order [0, 1]): B's lanes walk K along a 128-byte row of the K-major buffer, conflict-free; A's
// lanes walk M down the rows of its K-contiguous buffer, where the 128-byte swizzle spreads 8 rows
// over 8 banks: 4-way.
TEST(OperandBanksTest, UnspecializedCopiesWalkTheOtherDimension) {
  auto lanes_down = ParseBlocked2D("#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [32, 1], warpsPerCTA = [4, 1], order = [0, 1]}>");
  ASSERT_TRUE(lanes_down.ok()) << lanes_down.status();
  auto b_shared = ParseShared2D(kNvmmaB);
  auto a_shared = ParseShared2D("#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 32}>");
  ASSERT_TRUE(b_shared.ok() && a_shared.ok());
  auto b = AsyncCopyBanks(*lanes_down, *b_shared, {32, 128}, 4, 1, 4);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->wavefronts, b->instructions);
  auto a = AsyncCopyBanks(*lanes_down, *a_shared, {128, 32}, 4, 1, 4);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->instructions, 128);
  EXPECT_EQ(a->wavefronts, 4 * 128);
}

TEST(OperandBanksTest, RefusesWhatItCannotModel) {
  EXPECT_FALSE(ParseShared2D("#ttg.nvmma_shared<{swizzlingByteWidth = 0, transposed = false, elementBitWidth = 16}>").ok());
  EXPECT_FALSE(ParseShared2D("#ttg.padded_shared<[32:+4] {order = [1, 0]}>").ok());
  EXPECT_FALSE(ParseBlocked2D("#ttg.blocked<{sizePerThread = [1, 3], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>").ok());
  EXPECT_FALSE(ParseBlocked2D("#ttg.blocked<{sizePerThread = [1, 1, 4], threadsPerWarp = [1, 4, 8], warpsPerCTA = [1, 4, 1], order = [2, 1, 0]}>").ok());
  auto s = ParseShared2D(kNvmmaRowMajor);
  ASSERT_TRUE(s.ok());
  // f16 copied one element per lane (2 bytes): no cp.async.
  EXPECT_FALSE(AsyncCopyBanks(CoalescedF32(64, 4), *s, {64, 64}, 2, 1, 4).ok());
  // warpsPerCTA that does not match the kernel's warps.
  EXPECT_FALSE(AsyncCopyBanks(CoalescedF32(64, 4), *s, {64, 64}, 2, 8, 8).ok());
}

// One ttg.async_copy_global_to_local of a fixture: the pointer tensor's shape, element and
// register layout alias, the destination's shared alias and the pointer contiguity.
struct Copy {
  std::vector<int64_t> shape;
  std::string element, blocked, shared;
  int64_t contiguity = 1;
};

std::optional<Copy> ParseCopy(const std::string& line) {
  const size_t t = line.find(": tensor<"), arrow = line.find("-> <"), c = line.find("contiguity = ");
  if (t == std::string::npos || arrow == std::string::npos) return std::nullopt;
  Copy copy;  // no contiguity attribute: one element
  if (c != std::string::npos &&
      !absl::SimpleAtoi(line.substr(c + 13, line.find(' ', c + 13) - c - 13), &copy.contiguity)) {
    return std::nullopt;
  }
  const std::string ptr = line.substr(t + 9, line.find(">,", t) - t - 9);  // "64x256x!tt.ptr<bf16"
  std::vector<std::string> dims = absl::StrSplit(ptr, 'x');
  for (size_t i = 0; i + 1 < dims.size() && !absl::StartsWith(dims[i], "!"); ++i) {
    int64_t v = 0;
    if (absl::SimpleAtoi(dims[i], &v)) copy.shape.push_back(v);
  }
  copy.element = ptr.substr(ptr.find("ptr<") + 4);
  const size_t hash = line.find('#', t);
  copy.blocked = line.substr(hash, line.find('>', hash) - hash);
  const size_t shash = line.find('#', arrow);
  copy.shared = line.substr(shash, line.find(',', shash) - shash);
  return copy;
}

int64_t ElementBytes(const std::string& element) {
  if (element == "f32") return 4;
  if (element == "f16" || element == "bf16") return 2;
  return 1;
}

struct Tally {
  int checked = 0, conflicted = 0, under_four_bytes = 0, other_rank = 0;
};

// Checks every rank-2 operand copy of the TTGIR files in `dir` whose name starts with one of
// `prefixes` (and holding `regime`) against the closed form (see the test below).
void CheckCopies(const std::string& dir, const std::vector<std::string>& prefixes, const std::string& regime,
                 Tally& tally) {
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (std::none_of(prefixes.begin(), prefixes.end(), [&](const std::string& p) { return absl::StartsWith(name, p); }) ||
        !absl::StrContains(name, regime)) {
      continue;
    }
    std::ifstream in(entry.path());
    std::map<std::string, std::string> aliases;
    int num_warps = 0;
    std::string line;
    while (std::getline(in, line)) {
      if (absl::StartsWith(line, "#") && absl::StrContains(line, " = #ttg.")) {
        aliases[line.substr(0, line.find(' '))] = line.substr(line.find(" = ") + 3);
      }
      const size_t w = line.find("\"ttg.num-warps\" = ");
      if (w != std::string::npos) num_warps = std::stoi(line.substr(w + 18));
      if (!absl::StrContains(line, "ttg.async_copy_global_to_local")) continue;
      std::optional<Copy> copy = ParseCopy(line);
      ASSERT_TRUE(copy.has_value()) << name << ": " << line;
      if (copy->shape.size() != 2) {
        ++tally.other_rank;
        continue;
      }
      auto regs = ParseBlocked2D(aliases[copy->blocked]);
      auto shared = ParseShared2D(aliases[copy->shared]);
      ASSERT_TRUE(regs.ok() && shared.ok()) << name << ": " << aliases[copy->blocked] << " " << aliases[copy->shared];
      const int64_t bytes = ElementBytes(copy->element);
      auto banks = AsyncCopyBanks(*regs, *shared, {copy->shape[0], copy->shape[1]}, bytes, copy->contiguity, num_warps);
      if (!banks.ok()) {
        // Only single-byte (fp8) copies without a 4-byte run fall outside cp.async's sizes.
        EXPECT_EQ(bytes, 1) << name << ": " << banks.status();
        ++tally.under_four_bytes;
        continue;
      }
      const bool f32_b = shared->nvmma && shared->contiguous_dim == 0 && bytes == 4;
      const int64_t block_n = copy->shape[1];
      const int64_t degree = f32_b ? 16 / std::min<int64_t>(4, std::max<int64_t>(1, 128 / block_n)) : 1;
      EXPECT_EQ(banks->wavefronts, banks->instructions * degree * banks->vector_bytes * 32 / 128)
          << name << ": " << line;
      ++tally.checked;
      tally.conflicted += f32_b;
    }
  }
}

// Every operand copy of Triton 3.6's matmuls, through the layouts Triton gave it: the GPU
// fixtures (tests/data/triton: sm_80, 90, 100, 120; f16, bf16, f32, fp8) and the CPU catalogue's
// GEMM kinds compiled with the JIT's specialization (plain, split-K, persistent, int8, fp8;
// sm_80-sm_120; strides divisible by 16, as the planner's sweeps launch them). Conflict-free,
// except the f32 B operand of wgmma and tcgen05 (K-major nvmma_shared filled from N-major global
// rows, one 4-byte element per lane), whose degree is 16 / min(4, max(1, 128 / BLOCK_N)).
TEST(OperandBanksTest, TritonMatmulCopies) {
  Tally tally;
  CheckCopies(std::string(SCRATCHSIM_BINARY_DIR) + "/triton_fixtures", {"matmul_sm"}, "", tally);
  for (const char* target : {"sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120"}) {
    CheckCopies(absl::StrCat(SCRATCHSIM_BINARY_DIR, "/triton_catalogue/3.6.0/", target), {"gemm", "moe_gemm"}, "_jit_",
                tally);
  }
  std::printf("%d operand copies checked (%d f32 wgmma/tcgen05 B copies), %d fp8 copies under 4 bytes, %d not rank 2\n",
              tally.checked, tally.conflicted, tally.under_four_bytes, tally.other_rank);
  EXPECT_GE(tally.checked, 1700);
  EXPECT_GE(tally.conflicted, 136);
}

}  // namespace
}  // namespace scratchsim::triton
