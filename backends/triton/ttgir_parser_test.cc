#include "backends/triton/ttgir_parser.h"

#include <sys/stat.h>

#include <fstream>
#include <string>
#include <vector>

#include "backends/triton/ttgir_testdata.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scratchsim::triton {
namespace {

using ::testing::HasSubstr;

const std::string kHead = "module attributes {\"ttg.num-warps\" = 4 : i32} {\n";

TEST(TtgirParserTest, ReadsModuleAttributesAndTheOpsTree) {
  auto m = ParseTtgir(ReadTtgirTestdata("pipelined.ttgir"), "k.ttgir");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->num_warps, 4);
  EXPECT_EQ(m->threads_per_warp, 32);
  EXPECT_EQ(m->target, "cuda:90");
  EXPECT_EQ(m->function, "k");
  ASSERT_EQ(m->body.size(), 6u);
  const TtgirOp& loop = m->ops[m->body[2]];
  EXPECT_EQ(loop.kind, TtgirOpKind::kFor);
  ASSERT_EQ(loop.regions.size(), 1u);
  EXPECT_EQ(loop.regions[0].size(), 2u);  // memdesc_index, yield
  EXPECT_EQ(loop.results.size(), 2u);     // %r#0, %r#1
}

// Ops view their text and value lists in the module's storage: moving the module (as
// StatusOr and vectors do) must keep them valid.
TEST(TtgirParserTest, ModuleSurvivesMoves) {
  const std::string text = ReadTtgirTestdata("pipelined.ttgir");
  auto parsed = ParseTtgir(text, "k.ttgir");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  std::vector<TtgirModule> modules;
  modules.push_back(*std::move(parsed));
  for (int i = 0; i < 8; ++i) modules.push_back(ParseTtgir(text, "k.ttgir").value());
  EXPECT_EQ(modules[0].ops[0].name, "ttg.local_alloc");
  EXPECT_EQ(modules[0].ValueName(modules[0].ops[0].results[0]), "%a");
}

TEST(TtgirParserTest, RegionNeverClosedIsAnError) {
  auto m = ParseTtgir(kHead + " tt.func @k() {\n", "a.ttgir");
  EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(m.status().message(), HasSubstr("a.ttgir:3: 2 region(s) never closed"));
}

TEST(TtgirParserTest, ModuleWithoutFunctionIsAnError) {
  auto m = ParseTtgir(kHead + "}\n", "b.ttgir");
  EXPECT_THAT(m.status().message(), HasSubstr("b.ttgir:1: no tt.func"));
}

TEST(TtgirParserTest, TextThatIsNoOperationNamesTheLine) {
  auto m = ParseTtgir(kHead + " tt.func @k() {\n  ???\n }\n}\n", "d.ttgir");
  EXPECT_THAT(m.status().message(), HasSubstr("d.ttgir:3: expected an operation"));
}

TEST(TtgirParserTest, UnbalancedParenthesesIsAnError) {
  auto m = ParseTtgir(kHead + " tt.func @k( {\n", "e.ttgir");
  EXPECT_THAT(m.status().message(), HasSubstr("e.ttgir:2: unbalanced"));
}

// Trailing spaces are trimmed before the results are read: "%a = " has no " = " left.
TEST(TtgirParserTest, ResultListWithNothingAfterItNamesTheLine) {
  auto m = ParseTtgir(kHead + "  tt.func @k() {\n    %a = \n  }\n}\n", "h.ttgir");
  EXPECT_THAT(m.status().message(), HasSubstr("h.ttgir:3: expected '=' after results"));
}

TEST(TtgirParserTest, ResultsWithoutEqualsNameTheLine) {
  auto m = ParseTtgir(kHead + "  tt.func @k() {\n    %a tt.return\n  }\n}\n", "i.ttgir");
  EXPECT_THAT(m.status().message(), HasSubstr("i.ttgir:3: expected '=' after results"));
}

// Reproducer of issue 17 (shared/reliability): a `partition` line without '(' made
// string_view::substr throw std::out_of_range and abort the process.
TEST(TtgirParserTest, PartitionHeaderWithoutArgumentListNamesTheLine) {
  auto m = ParseTtgir(ReadTtgirTestdata("ttgir_partition_substr_abort.ttgir"), "p.ttgir");
  EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(m.status().message(), HasSubstr("p.ttgir:4: partition header without its argument list"));
}

// Issue 17: "ttg.threads-per-warp" = 0 was accepted (and divided by in the layouts).
TEST(TtgirParserTest, ThreadsPerWarpOfZeroNamesTheAttribute) {
  auto m = ParseTtgir("module attributes {\"ttg.num-warps\" = 4 : i32, \"ttg.threads-per-warp\" = 0 : i32} {\n"
                      " tt.func @k() {\n  tt.return\n }\n}\n",
                      "t.ttgir");
  EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(m.status().message(),
              HasSubstr("t.ttgir:1: \"ttg.threads-per-warp\" = 0: expected a power of two from 1 to 1024"));
}

TEST(TtgirParserTest, ThreadsPerWarpThatIsNoPowerOfTwoNamesTheAttribute) {
  auto m = ParseTtgir("module attributes {\"ttg.num-warps\" = 4 : i32, \"ttg.threads-per-warp\" = 48 : i32} {\n"
                      " tt.func @k() {\n  tt.return\n }\n}\n",
                      "t.ttgir");
  EXPECT_THAT(m.status().message(), HasSubstr("t.ttgir:1: \"ttg.threads-per-warp\" = 48"));
}

TEST(TtgirParserTest, NegativeNumWarpsNamesTheAttribute) {
  auto m = ParseTtgir("module attributes {\"ttg.num-warps\" = -4 : i32} {\n tt.func @k() {\n  tt.return\n }\n}\n",
                      "w.ttgir");
  EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(m.status().message(), HasSubstr("w.ttgir:1: \"ttg.num-warps\" = -4: expected an integer from 1 to 1024"));
}

TEST(TtgirParserTest, PartitionWarpsBeyondTheLimitNameTheLine) {
  auto m = ParseTtgir(kHead + " tt.func @k() {\n  ttg.warp_specialize()\n  default {\n  }\n"
                              "  partition0() num_warps(9223372036854775807) {\n  }\n }\n}\n",
                      "p.ttgir");
  EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(m.status().message(), HasSubstr("p.ttgir:6: bad num_warps(9223372036854775807)"));
}

TEST(TtgirParserTest, ReadTtgirFileReadsTheFile) {
  auto text = ReadTtgirFile(TtgirTestdataPath("pipelined.ttgir"));
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(*text, ReadTtgirTestdata("pipelined.ttgir"));
}

TEST(TtgirParserTest, ReadTtgirFileOfAMissingFileIsNotFound) {
  auto text = ReadTtgirFile("/nonexistent/x.ttgir");
  EXPECT_EQ(text.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(text.status().message(), HasSubstr("/nonexistent/x.ttgir"));
}

// Reading stops at the first line past the limit (issue 17: a 1 GiB line took 2.4 GB): the
// error names the file and the line.
TEST(TtgirParserTest, ReadTtgirFileStopsAtALineLongerThanTheLimit) {
  const std::string path = ::testing::TempDir() + "/long_line.ttgir";
  {
    std::ofstream out(path, std::ios::binary);
    out << "module {\n  tt.func @k() {\n    %z = tt.foo ";
    const std::string chunk(1 << 20, 'x');
    for (int i = 0; i < 17; ++i) out << chunk;
    out << "\n  }\n}\n";
  }
  auto text = ReadTtgirFile(path);
  EXPECT_EQ(text.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(text.status().message(), HasSubstr(path + ":3: line longer than the maximum of 16777216 bytes"));
}

// A device that never ends (/dev/zero) or a FIFO that would block is refused before it is read.
TEST(TtgirParserTest, ReadTtgirFileReadsOnlyRegularFiles) {
  if (!std::ifstream("/dev/zero")) GTEST_SKIP() << "no /dev/zero";
  auto text = ReadTtgirFile("/dev/zero");
  EXPECT_EQ(text.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(text.status().message(), HasSubstr("/dev/zero: is not a regular file"));
  const std::string fifo = ::testing::TempDir() + "/kernel.fifo";
  std::remove(fifo.c_str());
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  text = ReadTtgirFile(fifo);
  EXPECT_THAT(text.status().message(), HasSubstr("kernel.fifo: is not a regular file"));
  EXPECT_THAT(ReadTtgirFile(::testing::TempDir()).status().message(), HasSubstr("is a directory"));
}

std::string NestedIfs(int n) {
  std::string text = kHead + " tt.func @k() {\n  %c = arith.constant true\n";
  for (int i = 0; i < n; ++i) text += "scf.if %c {\n";
  for (int i = 0; i < n; ++i) text += "}\n";
  return text + "  tt.return\n }\n}\n";
}

// Reproducer of issue 17 (shared/reliability/ttgir_deep_scf_if.ttgir.gz, generated here):
// 150,000 nested scf.if overflowed the stack in the liveness numbering.
TEST(TtgirParserTest, NestingDeeperThanTheLimitNamesTheLine) {
  auto m = ParseTtgir(NestedIfs(150000), "deep.ttgir");
  EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
  // Lines 1-3 are the module, the function and the constant; module and function count as two
  // levels, so the 1023rd scf.if (line 1026) is the first too deep.
  EXPECT_THAT(m.status().message(), HasSubstr("deep.ttgir:1026: regions nested deeper than 1024 levels"));
}

TEST(TtgirParserTest, NestingUpToTheLimitParses) {
  auto m = ParseTtgir(NestedIfs(static_cast<int>(kMaxTtgirNesting) - 2), "deep.ttgir");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->ops.size(), kMaxTtgirNesting - 2 + 2);  // the ifs, the constant, tt.return
}

// A kernel that returns early keeps its top-level branch in Triton's cache (cf.cond_br to a
// block that returns): the blocks' ops form the function body in their order.
TEST(TtgirParserTest, BlocksOfTheKernelFunctionAreItsBodyInOrder) {
  const std::string text = kHead +
                           "  tt.func public @k(%p: i1) {\n"
                           "    cf.cond_br %p, ^bb1, ^bb2\n"
                           "  ^bb1:  // pred: ^bb0\n"
                           "    tt.return\n"
                           "  ^bb2:  // pred: ^bb0\n"
                           "    %a = ttg.local_alloc : () -> !ttg.memdesc<16xf16, #s, #smem, mutable>\n"
                           "    tt.return\n"
                           "  }\n"
                           "}\n";
  auto m = ParseTtgir(text, "k.ttgir");
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_EQ(m->body.size(), 4u);
  EXPECT_EQ(m->ops[m->body[0]].name, "cf.cond_br");
  EXPECT_EQ(m->ops[m->body[2]].name, "ttg.local_alloc");
}

TEST(TtgirParserTest, ArgumentsOfAKernelFunctionBlockNameTheLine) {
  const std::string text = kHead +
                           "  tt.func public @k(%p: i1) {\n"
                           "    cf.br ^bb1(%p : i1)\n"
                           "  ^bb1(%q: i1):\n"
                           "    tt.return\n"
                           "  }\n"
                           "}\n";
  auto m = ParseTtgir(text, "k.ttgir");
  EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(m.status().message(), HasSubstr("k.ttgir:4: unsupported construct: arguments of a block"));
}

// An op whose shared-memory use is not modelled is refused, named, never counted as zero.
TEST(TtgirParserTest, UnknownOpIsNamedWithItsLine) {
  const std::string text = kHead +
                           "  tt.func public @k() {\n"
                           "    %a = ttg.local_gather_magic : () -> i32\n"
                           "    tt.return\n"
                           "  }\n"
                           "}\n";
  auto m = ParseTtgir(text, "u.ttgir");
  EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(m.status().message(), HasSubstr("u.ttgir:3: unknown op 'ttg.local_gather_magic'"));
}

TEST(TtgirParserTest, ArithAndMathOpsAreKnownAsADialect) {
  EXPECT_TRUE(IsKnownTtgirOp("arith.ceildivui"));
  EXPECT_TRUE(IsKnownTtgirOp("math.rsqrt"));
  EXPECT_TRUE(IsKnownTtgirOp("ttng.tc_gen5_mma_scaled"));
  EXPECT_TRUE(IsKnownTtgirOp("tt.call"));
  EXPECT_TRUE(IsKnownTtgirOp("llvm.intr.assume"));  // tl.assume, in Inductor's mm template
  EXPECT_TRUE(IsKnownTtgirOp("ttg.local_atomic_scatter_rmw"));  // tests/data/triton/ops_registered
  EXPECT_FALSE(IsKnownTtgirOp("ttng.tmem_wait"));  // written after the TTGIR: no fixture shows it
}

// An arith/math op no modelled release writes is taken as elementwise, and the module says so
// naming it and its line, once.
TEST(TtgirParserTest, UnlistedArithOpIsNotedWithItsLine) {
  auto m = ParseTtgir("module attributes {\"ttg.num-warps\" = 4 : i32} {\n tt.func @k(%a: i32) {\n"
                      "  %0 = arith.frobnicate %a : i32\n  %1 = arith.frobnicate %0 : i32\n  %2 = arith.addi %1, %a : i32\n"
                      "  tt.return\n }\n}\n",
                      "n.ttgir");
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_EQ(m->unlisted.size(), 1u);
  EXPECT_THAT(m->unlisted[0], HasSubstr("op arith.frobnicate (line 3): not among the arith/math ops"));
}

TEST(TtgirParserTest, UnknownModuleAttributeIsNoted) {
  auto m = ParseTtgir("module attributes {\"ttg.num-warps\" = 4 : i32, \"ttg.future-knob\" = [1, 2], "
                      "ttg.target = \"cuda:90\"} {\n tt.func @k() {\n  tt.return\n }\n}\n",
                      "a.ttgir");
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_EQ(m->unlisted.size(), 1u);
  EXPECT_THAT(m->unlisted[0], HasSubstr("module attribute \"ttg.future-knob\" (line 1)"));
}

TEST(TtgirParserTest, ModuleOfKnownConstructsNotesNothing) {
  auto m = ParseTtgir("module attributes {\"ttg.num-ctas\" = 1 : i32, \"ttg.num-warps\" = 4 : i32, ttg.target = "
                      "\"cuda:90\", \"ttg.threads-per-warp\" = 32 : i32} {\n tt.func @k(%a: f32) {\n"
                      "  %0 = math.rsqrt %a : f32\n  tt.return\n }\n}\n",
                      "ok.ttgir");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_TRUE(m->unlisted.empty());
}

}  // namespace
}  // namespace scratchsim::triton
