#include "backends/triton/ttgir_parser.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scratchsim::triton {
namespace {

using ::testing::HasSubstr;

constexpr char kPipelined[] = R"(#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>
#shared1 = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @k(%p: !tt.ptr<f16> {tt.divisibility = 16 : i32} loc("p"(#loc))) attributes {noinline = false} {
    %a = ttg.local_alloc : () -> !ttg.memdesc<2x128x64xf16, #shared, #smem, mutable> loc(#loc1)
    %bar = ttg.local_alloc : () -> !ttg.memdesc<2xi64, #shared1, #smem, mutable>
    %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%x = %c0, %y = %c0) -> (i32, i32)  : i32 {
      %v = ttg.memdesc_index %a[%x] : !ttg.memdesc<2x128x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<128x64xf16, #shared, #smem, mutable>
      scf.yield %x, %y : i32, i32
    }
    ttg.local_dealloc %a : !ttg.memdesc<2x128x64xf16, #shared, #smem, mutable>
    %t = ttg.convert_layout %z : tensor<128x64xf16, #blocked> -> tensor<128x64xf16, #ttg.slice<{dim = 0, parent = #blocked}>>
    tt.return
  }
}
)";

TEST(TtgirParserTest, PipelinedBuffersAndEpilogueScratch) {
  auto plan = PlanTtgir(kPipelined, "k.ttgir");
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->buffers.size(), 3u);
  EXPECT_EQ(plan->buffers[0].buffer.size, 2 * 128 * 64 * 2);
  EXPECT_EQ(plan->buffers[0].buffer.alignment, 1024);
  EXPECT_EQ(plan->buffers[1].buffer.size, 16);
  EXPECT_EQ(plan->buffers[2].kind, SharedBufferKind::kScratch);
  // The barrier is never used after its allocation, so the convert's scratch reuses space
  // freed by the pipeline buffer once the loop is done.
  EXPECT_EQ(plan->allocation.shared, 32768 + 16);
  EXPECT_EQ(plan->num_warps, 4);
  EXPECT_EQ(plan->target, "cuda:90");
}

// Ops view their text and value lists in the module's storage: moving the module (as
// StatusOr and vectors do) must keep them valid.
TEST(TtgirParserTest, ModuleSurvivesMoves) {
  auto parsed = ParseTtgir(kPipelined, "k.ttgir");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  std::vector<TtgirModule> modules;
  modules.push_back(*std::move(parsed));
  for (int i = 0; i < 8; ++i) modules.push_back(ParseTtgir(kPipelined, "k.ttgir").value());
  EXPECT_EQ(modules[0].ops[0].name, "ttg.local_alloc");
  EXPECT_EQ(modules[0].ValueName(modules[0].ops[0].results[0]), "%a");
  auto plan = PlanSharedMemory(modules[0]);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->allocation.shared, 32768 + 16);
  EXPECT_EQ(plan->buffers[0].name, "%a");
}

TEST(TtgirParserTest, ImportBuildsAGraph) {
  auto g = ImportTtgir(kPipelined, "k.ttgir");
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->buffers_size(), 3);
  EXPECT_EQ(g->launch().num_warps(), "4");
  EXPECT_THAT(g->doc(), HasSubstr("metadata.shared"));
}

TEST(TtgirParserTest, ErrorsNameLineAndConstruct) {
  auto unclosed = PlanTtgir("module attributes {\"ttg.num-warps\" = 4 : i32} {\n tt.func @k() {\n", "a.ttgir");
  EXPECT_FALSE(unclosed.ok());
  EXPECT_THAT(unclosed.status().message(), HasSubstr("never closed"));

  auto no_func = PlanTtgir("module attributes {\"ttg.num-warps\" = 4 : i32} {\n}\n", "b.ttgir");
  EXPECT_THAT(no_func.status().message(), HasSubstr("no tt.func"));

  auto bad_enc = PlanTtgir(
      "module attributes {\"ttg.num-warps\" = 4 : i32} {\n tt.func @k() {\n"
      "  %a = ttg.local_alloc : () -> !ttg.memdesc<4xf32, #nope, #smem, mutable>\n }\n}\n",
      "c.ttgir");
  EXPECT_THAT(bad_enc.status().message(), HasSubstr("c.ttgir:3: unknown shared encoding #nope"));

  auto garbage = PlanTtgir("module attributes {\"ttg.num-warps\" = 4 : i32} {\n tt.func @k() {\n  ???\n }\n}\n", "d.ttgir");
  EXPECT_THAT(garbage.status().message(), HasSubstr("d.ttgir:3: expected an operation"));

  auto parens = PlanTtgir("module attributes {\"ttg.num-warps\" = 4 : i32} {\n tt.func @k( {\n", "e.ttgir");
  EXPECT_THAT(parens.status().message(), HasSubstr("unbalanced"));

  auto elem = PlanTtgir(
      "#s = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>\n"
      "module attributes {\"ttg.num-warps\" = 4 : i32} {\n tt.func @k() {\n"
      "  %a = ttg.local_alloc : () -> !ttg.memdesc<4xq7, #s, #smem, mutable>\n }\n}\n",
      "f.ttgir");
  EXPECT_THAT(elem.status().message(), HasSubstr("f.ttgir:4: unsupported element type q7"));

  EXPECT_FALSE(LoadTtgirFile("/nonexistent/x.ttgir").ok());
}

// The line scanner's edge cases: a statement longer than the vector scan's 127-block flush
// spread over lines, brackets inside a string, a result list with nothing after " = ", a
// memdesc whose shape does not parse.
TEST(TtgirParserTest, ScannerEdgeCases) {
  std::string args;
  for (int i = 0; i < 200; ++i) args += "%arg" + std::to_string(i) + ": i32 {tt.divisibility = 16 : i32}, ";
  const std::string head =
      "#s = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>\n"
      "module attributes {\"ttg.num-warps\" = 4 : i32} {\n";
  const std::string long_func = head + "  tt.func @k(" + args + "\n      %last: i32) {\n" +
                                "    %a = ttg.local_alloc {note = \"((\"} : () -> "
                                "!ttg.memdesc<4xf32, #s, #smem, mutable> loc(#loc1)\n" +
                                "    tt.return\n  }\n}\n";
  ASSERT_GT(long_func.size(), 127u * 16u);
  auto plan = PlanTtgir(long_func, "g.ttgir");
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->buffers.size(), 1u);
  EXPECT_EQ(plan->buffers[0].line, 5);
  EXPECT_EQ(plan->buffers[0].buffer.size, 16);

  // Trailing spaces are trimmed before the results are read: "%a = " has no " = " left.
  auto dangling = PlanTtgir(head + "  tt.func @k() {\n    %a = \n  }\n}\n", "h.ttgir");
  EXPECT_THAT(dangling.status().message(), HasSubstr("h.ttgir:4: expected '=' after results"));

  auto no_eq = PlanTtgir(head + "  tt.func @k() {\n    %a tt.return\n  }\n}\n", "i.ttgir");
  EXPECT_THAT(no_eq.status().message(), HasSubstr("i.ttgir:4: expected '=' after results"));

  auto bad_shape = PlanTtgir(
      head + "  tt.func @k() {\n    %a = ttg.local_alloc : () -> !ttg.memdesc<4x?xf32, #s, #smem>\n"
             "  }\n}\n",
      "j.ttgir");
  EXPECT_THAT(bad_shape.status().message(),
              HasSubstr("j.ttgir:4: ttg.local_alloc without a !ttg.memdesc result type"));
}

}  // namespace
}  // namespace scratchsim::triton
