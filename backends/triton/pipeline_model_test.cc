#include "backends/triton/pipeline_model.h"

#include <fstream>
#include <iostream>
#include <map>
#include <regex>
#include <sstream>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"

namespace scratchsim::triton {
namespace {

TEST(PipelineModelTest, SeedGegluReproducesRequired) {
  // Seed 002: fp32 GeGLU on the H100, BLOCK_T=16 (so mma.sync, not wgmma), num_stages=3.
  DotLoop loop{90, 4, 3, 16, {}};
  auto d = PipelineCopies(loop);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->mma, TritonMma::kMmaV2);
  EXPECT_EQ(d->copies, 2);
  EXPECT_EQ(d->copies * (16 * 16 + 2 * 16 * 2048) * 4, 526336);
  // The seed's second figure fits tile_t = tile_h = 32 with the same depth.
  loop.block_m = 32;
  d = PipelineCopies(loop);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->copies * (32 * 32 + 2 * 32 * 2048) * 4, 1056768);
}

TEST(PipelineModelTest, KindsAndAssumptions) {
  EXPECT_EQ(*SelectMma({90, 4, 3, 128, {}}), TritonMma::kWgmma);
  EXPECT_EQ(*SelectMma({100, 4, 3, 128, {}}), TritonMma::kTcgen05);
  EXPECT_EQ(*SelectMma({120, 4, 3, 128, {}}), TritonMma::kMmaV2);
  EXPECT_EQ(*SelectMma({80, 4, 3, 128, {}}), TritonMma::kMmaV2);
  EXPECT_FALSE(SelectMma({75, 4, 3, 128, {}}).ok());
  EXPECT_FALSE(SelectMma({90, 0, 3, 128, {}}).ok());
  DotLoop unaligned{90, 4, 4, 128, {true, false, true}};
  auto d = PipelineCopies(unaligned);
  ASSERT_TRUE(d.ok());
  EXPECT_FALSE(d->multi_buffered);
  EXPECT_EQ(d->copies, 1);
  ASSERT_GE(d->assumptions.size(), 2u);
  EXPECT_NE(d->assumptions[1].find("not divisible by 16"), std::string::npos);
}

TEST(PipelineModelTest, RewritesGraphCopies) {
  KernelGraph g;
  Buffer* b = g.add_buffers();
  b->set_name("a");
  b->set_role(OPERAND);
  Loop* l = g.add_loops();
  l->set_name("k");
  l->set_num_stages("num_stages");
  Op* op = g.add_ops();
  op->set_name("load");
  op->set_loop("k");
  op->add_writes("a");
  ASSERT_TRUE(ApplyTritonPipelining({80, 4, 4, 128, {}}, &g).ok());
  EXPECT_EQ(g.buffers(0).copies(), "3");
  EXPECT_NE(g.doc().find("Assumed"), std::string::npos);
}

// The model's depth against the depth Triton 3.6 actually allocated (the leading dimension of
// the pipelined operand buffers) on every GEMM-like fixture, and the total against
// metadata.shared where the operand tiles are all Triton allocates.
TEST(PipelineModelTest, MatchesTritonOnGemmSweep) {
  std::ifstream in(std::string(SCRATCHSIM_SOURCE_DIR) + "/tests/data/triton/expected.tsv");
  std::string line;
  int checked = 0, depth_ok = 0, total_ok = 0, total_checked = 0;
  const std::regex alloc(R"(ttg\.local_alloc\s*:\s*\(\)\s*->\s*!ttg\.memdesc<(\d+)x\d+x\d+x(\w+),)");
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> f = absl::StrSplit(line, '\t');
    if (f.size() < 9) continue;
    const std::string& kernel = f[4];
    if (kernel != "matmul" && kernel != "matmul_tma" && kernel != "geglu") continue;
    std::map<std::string, int64_t> p;
    for (const std::string& kv : std::vector<std::string>(absl::StrSplit(f[8], ','))) {
      std::vector<std::string> parts = absl::StrSplit(kv, '=');
      int64_t v = 0;
      if (parts.size() == 2 && absl::SimpleAtoi(parts[1], &v)) p[parts[0]] = v;
    }
    if (p.count("WARP_SPEC") && p["WARP_SPEC"]) continue;  // warp-specialized: own schedule
    const int target = std::stoi(f[1]), warps = std::stoi(f[5]), stages = std::stoi(f[6]);
    if (stages < 2) continue;
    const int64_t bm = kernel == "geglu" ? p["BLOCK_T"] : p["BLOCK_M"];
    auto d = PipelineCopies({target, warps, stages, bm, {}});
    ASSERT_TRUE(d.ok()) << d.status();
    std::ifstream t(std::string(SCRATCHSIM_BINARY_DIR) + "/triton_fixtures/" + f[0] + ".ttgir");
    std::stringstream ss;
    ss << t.rdbuf();
    std::string text = ss.str();
    int64_t measured = -1;
    for (std::sregex_iterator it(text.begin(), text.end(), alloc), end; it != end; ++it) {
      if ((*it)[2] == "i64") continue;
      measured = std::stoll((*it)[1]);
      break;
    }
    ++checked;
    if (measured == d->copies) ++depth_ok;
    else std::cout << "depth " << f[0] << " model " << d->copies << " triton " << measured << "\n";
    if (kernel == "matmul" && target != 100) {
      const int64_t bytes = f[7] == "fp32" ? 4 : f[7] == "fp8e4nv" ? 1 : 2;
      const int64_t tiles = (p["BLOCK_M"] * p["BLOCK_K"] + p["BLOCK_K"] * p["BLOCK_N"]) * bytes;
      ++total_checked;
      if (d->copies * tiles == std::stoll(f[2])) ++total_ok;
    }
  }
  std::cout << "pipelining depth matches Triton on " << depth_ok << "/" << checked
            << " GEMM-like fixtures; copies x tiles == metadata.shared on " << total_ok << "/"
            << total_checked << " pointer GEMMs\n";
  EXPECT_GE(checked, 150);
  EXPECT_EQ(depth_ok, checked);
}

// The full pre-compile prediction (pipelined operands, tcgen05 barriers, epilogue conversion
// scratch, placed with Triton's liveness) against metadata.shared on every `matmul` fixture.
TEST(PipelineModelTest, GemmSharedMatchesTritonOnPointerGemmSweep) {
  std::ifstream in(std::string(SCRATCHSIM_SOURCE_DIR) + "/tests/data/triton/expected.tsv");
  ASSERT_TRUE(in.good());
  std::string line;
  int checked = 0, exact = 0, layouts_ok = 0;
  std::map<int, std::pair<int, int>> per_target;  // target -> (exact, checked)
  const std::regex cvt_re(R"(ttg\.convert_layout %[\w#]+ : tensor<\w+, (#\w+)> -> tensor<\w+, (#\w+)>)");
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> f = absl::StrSplit(line, '\t');
    if (f.size() < 9 || f[4] != "matmul") continue;
    std::map<std::string, int64_t> p;
    for (const std::string& kv : std::vector<std::string>(absl::StrSplit(f[8], ','))) {
      std::vector<std::string> parts = absl::StrSplit(kv, '=');
      int64_t v = 0;
      if (parts.size() == 2 && absl::SimpleAtoi(parts[1], &v)) p[parts[0]] = v;
    }
    GemmConfig g;
    g.loop = {std::stoi(f[1]), std::stoi(f[5]), std::stoi(f[6]), p["BLOCK_M"], {}};
    g.block_n = p["BLOCK_N"];
    g.block_k = p["BLOCK_K"];
    g.dtype = f[7];
    // bench/triton/make_fixtures.py stores C as fp16 for fp8 inputs, else in the input dtype.
    g.out_dtype = f[7] == "fp8e4nv" ? "fp16" : f[7];
    auto pred = PredictGemmShared(g);
    ASSERT_TRUE(pred.ok()) << f[0] << ": " << pred.status();
    const int64_t measured = std::stoll(f[2]);
    // The layouts Triton actually picked: the epilogue's convert_layout in the fixture's TTGIR.
    std::ifstream ir(std::string(SCRATCHSIM_BINARY_DIR) + "/triton_fixtures/" + f[0] + ".ttgir");
    std::stringstream ss;
    ss << ir.rdbuf();
    const std::string text = ss.str();
    std::smatch cvt;
    ASSERT_TRUE(std::regex_search(text, cvt, cvt_re)) << f[0];
    auto alias = [&](const std::string& name) {
      const std::string key = name + " = ";
      for (size_t pos = 0; (pos = text.find(key, pos)) != std::string::npos; pos += key.size()) {
        if (pos != 0 && text[pos - 1] != '\n') continue;
        const size_t end = text.find('\n', pos);
        return text.substr(pos + key.size(), end - pos - key.size());
      }
      return std::string("?");
    };
    if (alias(cvt[1]) == pred->accumulator_layout && alias(cvt[2]) == pred->store_layout) {
      ++layouts_ok;
    } else {
      std::cout << "layouts " << f[0] << ": model " << pred->accumulator_layout << " -> "
                << pred->store_layout << "; triton " << alias(cvt[1]) << " -> " << alias(cvt[2])
                << "\n";
    }
    ++checked;
    auto& t = per_target[g.loop.target_cc];
    ++t.second;
    if (pred->total_bytes == measured) {
      ++exact;
      ++t.first;
    } else {
      std::cout << "differs " << f[0] << " " << f[7] << " " << f[8] << " warps " << f[5]
                << " stages " << f[6] << ": model " << pred->total_bytes << " (operands "
                << pred->operand_bytes << ", epilogue " << pred->epilogue_scratch_bytes
                << ") triton " << measured << "\n";
    }
  }
  std::cout << "accumulator and store layouts == Triton's on " << layouts_ok << "/" << checked
            << "; pre-compile model == metadata.shared on " << exact << "/" << checked
            << " matmul fixtures;";
  for (const auto& [target, c] : per_target) std::cout << " sm_" << target << " " << c.first << "/" << c.second;
  std::cout << "\n";
  EXPECT_EQ(checked, 304);
  EXPECT_EQ(layouts_ok, checked);
  // Every one since the conversion scratch follows Triton's swizzling (cvt_swizzling.h).
  EXPECT_EQ(exact, checked);
}

TEST(PipelineModelTest, GemmLayoutsAndBadInput) {
  GemmConfig g;
  g.loop = {90, 8, 3, 64, {}};
  g.block_n = 64;
  g.block_k = 32;
  auto p = PredictGemmShared(g);
  ASSERT_TRUE(p.ok()) << p.status();
  // warpsPerTileV3 puts the second warp group on the columns when 64 rows are covered.
  EXPECT_NE(p->accumulator_layout.find("warpsPerCTA = [4, 2], instrShape = [16, 32, 16]"), std::string::npos);
  EXPECT_NE(p->store_layout.find("sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [8, 1]"), std::string::npos);
  EXPECT_EQ(p->operand_bytes, 3 * (64 * 32 + 32 * 64) * 2);
  g.dtype = "fp8e4nv";
  p = PredictGemmShared(g);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->a_copies, 3);
  EXPECT_EQ(p->b_copies, 1);
  // Outside the fixtures the output says what it assumed.
  GemmConfig blackwell = g;
  blackwell.loop.target_cc = 100;
  blackwell.dtype = "fp16";
  auto bw = PredictGemmShared(blackwell);
  ASSERT_TRUE(bw.ok()) << bw.status();
  EXPECT_EQ(bw->barrier_bytes, 16);
  EXPECT_NE(absl::StrJoin(bw->assumptions, "; ").find("BLOCK_M = 64 and more than one warp group"), std::string::npos);
  g.dtype = "int3";
  EXPECT_FALSE(PredictGemmShared(g).ok());
  g.dtype = "fp16";
  g.out_dtype = "fp64";
  EXPECT_FALSE(PredictGemmShared(g).ok());
  g.out_dtype = "fp16";
  g.block_k = 24;
  EXPECT_FALSE(PredictGemmShared(g).ok());
  g.block_k = 32;
  g.loop.num_warps = 6;
  EXPECT_FALSE(PredictGemmShared(g).ok());
  g.loop.num_warps = 64;
  EXPECT_FALSE(PredictGemmShared(g).ok());
  g.loop.num_warps = 4;
  g.block_n = int64_t{1} << 40;  // would overflow the byte counts
  auto huge = PredictGemmShared(g);
  ASSERT_FALSE(huge.ok());
  EXPECT_NE(huge.status().message().find("2^20"), std::string::npos);
}

// Issue 15's classes of misses of the pre-compile model, each pinned by catalogue figures
// (tests/data/triton/catalogue; pipeline_model_catalogue_test checks them all).
GemmConfig Gemm(int cc, int64_t m, int64_t n, int64_t k, int warps, int stages, const std::string& dtype,
                const std::string& out, bool specialized, TritonRelease release = TritonRelease::k3_9) {
  GemmConfig g;
  g.loop.target_cc = cc;
  g.loop.num_warps = warps;
  g.loop.num_stages = stages;
  g.loop.block_m = m;
  g.block_n = n;
  g.block_k = k;
  g.dtype = dtype;
  g.out_dtype = out;
  g.loop.jit = JitSpecialization{specialized, specialized, specialized};
  g.loop.release = release;
  return g;
}

// Unspecialized 32-bit operands are still copied asynchronously (cp.async of 4 bytes per
// element): pipelined like aligned ones (gemm_sm_80_none_a4cbf92e33: 32768 = 2 x (64x32 + 32x64) x 4).
TEST(PipelineModelTest, UnspecializedF32IsStillPipelined) {
  auto p = PredictGemmShared(Gemm(80, 64, 64, 32, 4, 3, "fp32", "fp32", false, TritonRelease::k3_6));
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->a_copies, 2);
  EXPECT_EQ(p->total_bytes, 32768);
}

// Unspecialized 16-bit operands on tcgen05: staged through registers into two buffers, as the
// MMA reading one runs while the next is written (gemm_sm_100_none_39e6bb31ed: 16400).
TEST(PipelineModelTest, UnspecializedOperandsOnTcgen05KeepTwoCopies) {
  auto p = PredictGemmShared(Gemm(100, 64, 64, 32, 4, 3, "fp16", "fp16", false));
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->a_copies, 2);
  EXPECT_EQ(p->total_bytes, 16400);
}

// Triton 3.6 runs int8 dots on sm_100 with mma.sync, 3.9 with tcgen05 (gemm_int8_sm_100_jit_3f49469dde:
// 3.6 16384, 3.9 24592).
TEST(PipelineModelTest, Int8OnSm100FollowsTheRelease) {
  auto old_rel = PredictGemmShared(Gemm(100, 64, 64, 64, 4, 3, "i8", "i32", true, TritonRelease::k3_6));
  auto new_rel = PredictGemmShared(Gemm(100, 64, 64, 64, 4, 3, "i8", "i32", true, TritonRelease::k3_9));
  ASSERT_TRUE(old_rel.ok() && new_rel.ok());
  EXPECT_EQ(old_rel->depth.mma, TritonMma::kMmaV2);
  EXPECT_EQ(old_rel->total_bytes, 16384);
  EXPECT_EQ(new_rel->depth.mma, TritonMma::kTcgen05);
  EXPECT_EQ(new_rel->total_bytes, 24592);
}

// Triton 3.6 stores through a pointer of unknown contiguity with lanes down the rows (its
// Coalesce orders such a pointer dimension 0 first): the epilogue conversion of an fp8 GEMM's
// 128x128 f16 tile is smaller than the operands (gemm_fp8_sm_80_none_5029517bfb: 16384, the
// operands; with 3.9's row-major store layout it would be 32768).
TEST(PipelineModelTest, UnspecializedStoreLayoutFollowsTheRelease) {
  auto p = PredictGemmShared(Gemm(80, 128, 128, 64, 4, 3, "fp8e5", "fp16", false, TritonRelease::k3_6));
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_NE(p->store_layout.find("order = [0, 1]"), std::string::npos) << p->store_layout;
  EXPECT_EQ(p->total_bytes, 16384);
}

// TMA GEMM (tl.make_tensor_descriptor): fp16 128x128x64, 4 warps, 3 stages
// (gemm_tma_*_0cc03223b6): wgmma 3 copies + 3 barriers; tcgen05 the same + its 2 barriers;
// sm_120's mma.sync 2 copies + 2 barriers; sm_80 lowers the descriptors to pointer loads.
TEST(PipelineModelTest, TmaGemmPerTarget) {
  const std::map<int, int64_t> triton = {{80, 65536}, {90, 98328}, {100, 98352}, {120, 65552}};
  for (const auto& [cc, shared] : triton) {
    auto p = PredictTmaGemmShared(Gemm(cc, 128, 128, 64, 4, 3, "fp16", "fp16", true));
    ASSERT_TRUE(p.ok()) << p.status();
    EXPECT_EQ(p->total_bytes, shared) << "sm_" << cc;
  }
  EXPECT_EQ(PredictTmaGemmShared(Gemm(90, 128, 128, 64, 4, 3, "fp16", "fp16", true), /*warp_specialize=*/true)
                .status()
                .code(),
            absl::StatusCode::kUnimplemented);
}

// Attention forward (the tutorial kernel), catalogue attn_fwd_*_199f0f9cfc (fp16, BLOCK_M 64,
// BLOCK_N 64, HEAD_DIM 128, 4 warps, 2 stages): on mma.sync the chained dots put their warps along
// HEAD_DIM, so P goes through shared memory (57344 = Q 16384 + K 16384 + V 16384 + P 8192); wgmma
// keeps P in registers and pipelines K and V two deep (81920).
TEST(PipelineModelTest, AttentionForwardPerMma) {
  auto mma_sync = PredictAttentionShared(Gemm(80, 64, 64, 128, 4, 2, "fp16", "fp16", true));
  ASSERT_TRUE(mma_sync.ok()) << mma_sync.status();
  EXPECT_EQ(mma_sync->p_bytes, 64 * 64 * 2);
  EXPECT_EQ(mma_sync->total_bytes, 57344);
  auto wgmma = PredictAttentionShared(Gemm(90, 64, 64, 128, 4, 2, "fp16", "fp16", true));
  ASSERT_TRUE(wgmma.ok()) << wgmma.status();
  EXPECT_EQ(wgmma->p_bytes, 0);
  EXPECT_EQ(wgmma->total_bytes, 81920);
  EXPECT_EQ(PredictAttentionShared(Gemm(100, 64, 64, 128, 4, 2, "fp16", "fp16", true)).status().code(),
            absl::StatusCode::kUnimplemented);
}

}  // namespace
}  // namespace scratchsim::triton
