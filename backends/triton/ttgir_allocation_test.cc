#include "backends/triton/ttgir_allocation.h"

#include <map>
#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"

#include "backends/triton/ttgir_testdata.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scratchsim::triton {
namespace {

using ::testing::HasSubstr;

const std::string kHead =
    "#s = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>\n"
    "module attributes {\"ttg.num-warps\" = 4 : i32} {\n";

// The plan of a kernel `@k()` of kHead's module whose body (before tt.return) is `body`; its
// first op is on line 4.
absl::StatusOr<SharedMemoryPlan> PlanKernelBody(const std::string& body, std::string_view origin) {
  return PlanTtgir(kHead + " tt.func @k() {\n" + body + "  tt.return\n }\n}\n", origin);
}

TEST(TtgirAllocationTest, PipelinedBuffersAndEpilogueScratch) {
  auto plan = PlanTtgir(ReadTtgirTestdata("pipelined.ttgir"), "k.ttgir");
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->buffers.size(), 3u);
  EXPECT_EQ(plan->buffers[0].name, "%a");
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

// Operation ids as Triton numbers them after scf-to-cf: the loop's id precedes its body's, and
// a buffer used inside the loop lives to the loop's end.
TEST(TtgirAllocationTest, BufferUsedInALoopLivesThroughTheLoop) {
  auto plan = PlanTtgir(ReadTtgirTestdata("pipelined.ttgir"), "k.ttgir");
  ASSERT_TRUE(plan.ok()) << plan.status();
  // %a: 0, %bar: 1, scf.for: 2, memdesc_index: 3, scf.yield: 4, local_dealloc: 5, convert: 6.
  EXPECT_EQ(plan->buffers[0].buffer.start, 0u);
  EXPECT_EQ(plan->buffers[0].buffer.end, 6u);
  EXPECT_EQ(plan->buffers[2].buffer.start, 6u);
  EXPECT_EQ(plan->buffers[2].buffer.end, 7u);
}

TEST(TtgirAllocationTest, UnknownSharedEncodingNamesTheLine) {
  auto plan = PlanTtgir(kHead + " tt.func @k() {\n"
                                "  %a = ttg.local_alloc : () -> !ttg.memdesc<4xf32, #nope, #smem, mutable>\n }\n}\n",
                        "c.ttgir");
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(plan.status().message(), HasSubstr("c.ttgir:4: unknown shared encoding #nope"));
}

TEST(TtgirAllocationTest, UnsupportedElementTypeNamesTheLine) {
  auto plan = PlanTtgir(kHead + " tt.func @k() {\n"
                                "  %a = ttg.local_alloc : () -> !ttg.memdesc<4xq7, #s, #smem, mutable>\n }\n}\n",
                        "f.ttgir");
  EXPECT_THAT(plan.status().message(), HasSubstr("f.ttgir:4: unsupported element type q7"));
}

TEST(TtgirAllocationTest, MemdescShapeThatDoesNotParseNamesTheLine) {
  auto plan = PlanTtgir(
      kHead + "  tt.func @k() {\n    %a = ttg.local_alloc : () -> !ttg.memdesc<4x?xf32, #s, #smem>\n  }\n}\n",
      "j.ttgir");
  EXPECT_THAT(plan.status().message(),
              HasSubstr("j.ttgir:4: ttg.local_alloc without a !ttg.memdesc result type"));
}

TEST(TtgirAllocationTest, LocalAllocWithoutANamedResultSaysSo) {
  auto plan = PlanKernelBody("  ttg.local_alloc : () -> !ttg.memdesc<4xf32, #s, #smem, mutable>\n", "u.ttgir");
  ASSERT_FALSE(plan.ok());
  EXPECT_THAT(plan.status().message(), HasSubstr("u.ttgir:4: ttg.local_alloc without one named result"));
}

// A function header over two lines longer than the lexer's vector flush, and brackets inside
// a string: the buffer keeps its own line.
TEST(TtgirAllocationTest, BufferAfterALongJoinedHeaderKeepsItsLine) {
  std::string args;
  for (int i = 0; i < 200; ++i) args += "%arg" + std::to_string(i) + ": i32 {tt.divisibility = 16 : i32}, ";
  auto plan = PlanTtgir(kHead + "  tt.func @k(" + args + "\n      %last: i32) {\n" +
                            "    %a = ttg.local_alloc {note = \"((\"} : () -> "
                            "!ttg.memdesc<4xf32, #s, #smem, mutable> loc(#loc1)\n" +
                            "    tt.return\n  }\n}\n",
                        "g.ttgir");
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->buffers.size(), 1u);
  EXPECT_EQ(plan->buffers[0].line, 5);
  EXPECT_EQ(plan->buffers[0].buffer.size, 16);
}

// Reproducer of issue 17 (shared/reliability): the histogram's scratch overflowed int64 and the
// buffer vanished from the plan (the kernel "fit").
TEST(TtgirAllocationTest, HistogramScratchOverflowNamesTheOp) {
  auto plan = PlanTtgir(ReadTtgirTestdata("ttgir_histogram_dim_overflow.ttgir"), "h.ttgir");
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(plan.status().message(), HasSubstr("h.ttgir:13: tt.histogram: scratch size overflows"));
}

TEST(TtgirAllocationTest, ScratchPastTheAllocatorsLimitNamesTheOp) {
  auto plan = PlanTtgir(
      "#b = #ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>\n" + kHead.substr(kHead.find('\n') + 1) +
          " tt.func @k() {\n  %h = tt.histogram %x : tensor<1024xi32, #b> -> tensor<1099511627776xi32, #b>\n"
          "  tt.return\n }\n}\n",
      "big.ttgir");
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(plan.status().message(), HasSubstr("big.ttgir:4: tt.histogram: scratch of 4398046511104 bytes"));
}

TEST(TtgirAllocationTest, AlignmentThatIsNoPowerOfTwoNamesTheLine) {
  auto plan = PlanTtgir(kHead + " tt.func @k() {\n"
                                "  %a = ttg.local_alloc {alignment = 24 : i32} : () -> !ttg.memdesc<4xf32, #s, #smem, mutable>\n"
                                " }\n}\n",
                        "al.ttgir");
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(plan.status().message(), HasSubstr("al.ttgir:4: ttg.local_alloc alignment 24"));
}

// Operation ids come from an explicit stack, not recursion: a buffer used at the bottom of the
// deepest nesting the parser accepts is planned, live from its allocation to that use.
TEST(TtgirAllocationTest, DeepestNestingIsNumberedInPostOrder) {
  const int n = static_cast<int>(kMaxTtgirNesting) - 2;
  std::string text = kHead + " tt.func @k() {\n  %c = arith.constant true\n" +
                     "  %a = ttg.local_alloc : () -> !ttg.memdesc<4xf32, #s, #smem, mutable>\n";
  for (int i = 0; i < n; ++i) text += "scf.if %c {\n";
  text += "ttg.local_dealloc %a : !ttg.memdesc<4xf32, #s, #smem, mutable>\n";
  for (int i = 0; i < n; ++i) text += "}\n";
  text += "  tt.return\n }\n}\n";
  auto plan = PlanTtgir(text, "deep.ttgir");
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->buffers.size(), 1u);
  // Ids: the constant 0, %a 1, the ifs 2..n+1 (before their regions), the dealloc n+2.
  EXPECT_EQ(plan->buffers[0].buffer.start, 1u);
  EXPECT_EQ(plan->buffers[0].buffer.end, static_cast<uint64_t>(n) + 3);
}

// A buffer allocated in a loop body and yielded to the next iteration (and out of the loop)
// aliases the loop's argument and result (upstream's alias analysis joins yields with them):
// it lives from the loop's start through the last use of the result.
TEST(TtgirAllocationTest, BufferYieldedByALoopLivesThroughItsArgumentAndResult) {
  auto plan = PlanTtgir(kHead + " tt.func @k(%n: i32) {\n"
                                "  %a0 = ttg.local_alloc : () -> !ttg.memdesc<4xf32, #s, #smem, mutable>\n"
                                "  %r = scf.for %i = %c0 to %n step %c1 iter_args(%x = %a0) -> (!ttg.memdesc<4xf32, #s, #smem, mutable>)  : i32 {\n"
                                "    ttg.local_dealloc %x : !ttg.memdesc<4xf32, #s, #smem, mutable>\n"
                                "    %b = ttg.local_alloc : () -> !ttg.memdesc<4xf32, #s, #smem, mutable>\n"
                                "    scf.yield %b : !ttg.memdesc<4xf32, #s, #smem, mutable>\n"
                                "  }\n"
                                "  ttg.local_dealloc %r : !ttg.memdesc<4xf32, #s, #smem, mutable>\n"
                                "  tt.return\n }\n}\n",
                        "y.ttgir");
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->buffers.size(), 2u);
  // Ids: %a0 0, scf.for 1, dealloc 2, %b 3, yield 4, dealloc of %r 5.
  EXPECT_EQ(plan->buffers[1].name, "%b");
  EXPECT_EQ(plan->buffers[1].buffer.start, 1u);
  EXPECT_EQ(plan->buffers[1].buffer.end, 6u);
  // Both live together: 16 + 16.
  EXPECT_EQ(plan->allocation.shared, 32);
}

// MLIR reuses a value name in sibling regions: an i32 %v yielded by a loop is not the buffer
// %v of a later region, and the loop's result does not alias that buffer.
TEST(TtgirAllocationTest, NameReusedInASiblingRegionIsAnotherValue) {
  auto plan = PlanTtgir(kHead + " tt.func @k(%n: i32, %p: i1) {\n"
                                "  %r = scf.for %i = %c0 to %n step %c1 iter_args(%x = %c0) -> (i32)  : i32 {\n"
                                "    %v = arith.addi %x, %c1 : i32\n"
                                "    scf.yield %v : i32\n"
                                "  }\n"
                                "  scf.if %p {\n"
                                "    %v = ttg.local_alloc : () -> !ttg.memdesc<4xf32, #s, #smem, mutable>\n"
                                "    ttg.local_dealloc %v : !ttg.memdesc<4xf32, #s, #smem, mutable>\n"
                                "  }\n"
                                "  %w = arith.addi %r, %c1 : i32\n"
                                "  tt.return\n }\n}\n",
                        "n.ttgir");
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->buffers.size(), 1u);
  // Ids: for 0, addi 1, yield 2, if 3, alloc 4, dealloc 5: the buffer ends at its dealloc.
  EXPECT_EQ(plan->buffers[0].buffer.start, 4u);
  EXPECT_EQ(plan->buffers[0].buffer.end, 6u);
}

// A memdesc's memory space is shared memory whether the TTGIR aliases it (`#smem`, as Triton's
// printer does) or writes it inline (`#ttg.shared_memory`, as hand-written IR does): both buffers
// are Triton's, neither is dropped. An undefined space is refused.
TEST(TtgirAllocationTest, SharedMemorySpaceWrittenInlineIsShared) {
  auto plan = PlanKernelBody("  %a = ttg.local_alloc : () -> !ttg.memdesc<32x16xf16, #s, #ttg.shared_memory, mutable>\n"
                             "  %b = ttg.local_alloc : () -> !ttg.memdesc<32x16xf16, #s, #smem, mutable>\n"
                             "  ttg.local_dealloc %a : !ttg.memdesc<32x16xf16, #s, #ttg.shared_memory, mutable>\n",
                             "inline.ttgir");
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->buffers.size(), 2u);
  EXPECT_EQ(plan->buffers[0].name, "%a");
  EXPECT_EQ(plan->buffers[0].buffer.size, 1024);
  EXPECT_EQ(plan->allocation.shared, 2048);  // %a lives to its dealloc, beside %b
}

TEST(TtgirAllocationTest, UndefinedMemorySpaceNamesTheLine) {
  auto plan = PlanKernelBody("  %a = ttg.local_alloc : () -> !ttg.memdesc<4xf32, #s, #nowhere, mutable>\n",
                             "space.ttgir");
  ASSERT_FALSE(plan.ok());
  EXPECT_THAT(std::string(plan.status().message()), HasSubstr("space.ttgir:4: unknown memory space #nowhere"));
}

// WarpSpecializeOp::getCaptureSize: captures packed tightly, a shared memdesc 8 bytes plus 4 per
// dimension, pointers and tensor descriptors 8, scalars their bytes; aligned to 8.
TEST(TtgirAllocationTest, WarpSpecializeCapturesArePackedTightly) {
  auto plan = PlanTtgir(kHead + " tt.func @k(%d: !tt.tensordesc<tensor<64x64xf16, #s>>, %n: i32, %h: i16) {\n"
                                "  %a = ttg.local_alloc : () -> !ttg.memdesc<3x64x64xf16, #s, #smem, mutable>\n"
                                "  ttg.warp_specialize(%a, %d, %n, %h)\n"
                                "  default {\n"
                                "    ttg.warp_yield\n"
                                "  }\n"
                                "  partition0(%a1: !ttg.memdesc<3x64x64xf16, #s, #smem, mutable>, %d1: !tt.tensordesc<tensor<64x64xf16, #s>>, %n1: i32, %h1: i16) num_warps(4) {\n"
                                "    ttg.warp_return\n"
                                "  } : (!ttg.memdesc<3x64x64xf16, #s, #smem, mutable>, !tt.tensordesc<tensor<64x64xf16, #s>>, i32, i16) -> ()\n"
                                "  tt.return\n }\n}\n",
                        "w.ttgir");
  ASSERT_TRUE(plan.ok()) << plan.status();
  int64_t captures = -1, align = -1;
  for (const SharedBuffer& b : plan->buffers) {
    if (b.op == "ttg.warp_specialize") {
      captures = b.buffer.size;
      align = b.buffer.alignment;
    }
  }
  EXPECT_EQ(captures, (8 + 3 * 4) + 8 + 4 + 2);
  EXPECT_EQ(align, 8);
}

// A warp_specialize that captures nothing (`: () -> ()`) packs no captures: no capture buffer,
// where it was refused as a capture of an empty type. A shared memdesc captured with its space
// written inline is packed as one with `#smem`.
TEST(TtgirAllocationTest, WarpSpecializeWithoutCapturesHasNoCaptureBuffer) {
  auto plan = PlanKernelBody("  ttg.warp_specialize()\n"
                             "  default {\n"
                             "    %a = ttg.local_alloc : () -> !ttg.memdesc<4xi32, #s, #ttg.shared_memory, mutable>\n"
                             "    ttg.warp_yield\n"
                             "  }\n"
                             "  partition0() num_warps(4) {\n"
                             "    ttg.warp_return\n"
                             "  } : () -> ()\n",
                             "none.ttgir");
  ASSERT_TRUE(plan.ok()) << plan.status();
  for (const SharedBuffer& b : plan->buffers) EXPECT_NE(b.op, "ttg.warp_specialize") << b.name;
  EXPECT_EQ(plan->buffers[0].name, "%a");
}

// A memdesc the default region yields is the warp_specialize's result: it lives while the result
// is used, so a buffer made after the op cannot take its place.
TEST(TtgirAllocationTest, WarpSpecializeResultAliasesWhatTheDefaultRegionYields) {
  auto plan = PlanKernelBody("  %a = ttg.local_alloc : () -> !ttg.memdesc<4xi32, #s, #smem, mutable>\n"
                             "  %r = ttg.warp_specialize()\n"
                             "  default {\n"
                             "    ttg.warp_yield %a : !ttg.memdesc<4xi32, #s, #smem, mutable>\n"
                             "  }\n"
                             "  partition0() num_warps(4) {\n"
                             "    ttg.warp_return\n"
                             "  } : () -> !ttg.memdesc<4xi32, #s, #smem, mutable>\n"
                             "  %b = ttg.local_alloc : () -> !ttg.memdesc<4xi32, #s, #smem, mutable>\n"
                             "  %v = ttg.local_load %r : !ttg.memdesc<4xi32, #s, #smem, mutable> -> tensor<4xi32>\n",
                             "yield.ttgir");
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_GE(plan->buffers.size(), 2u);
  EXPECT_EQ(plan->buffers[0].name, "%a");
  EXPECT_EQ(plan->buffers[1].name, "%b");
  EXPECT_NE(plan->allocation.offsets[0], plan->allocation.offsets[1]);  // both live at the load
}

TEST(TtgirAllocationTest, CapturedMemdescWithItsSpaceInlineIsShared) {
  auto plan = PlanKernelBody("  %a = ttg.local_alloc : () -> !ttg.memdesc<2x8xi32, #s, #ttg.shared_memory, mutable>\n"
                             "  ttg.warp_specialize(%a)\n"
                             "  default {\n"
                             "    ttg.warp_yield\n"
                             "  }\n"
                             "  partition0(%a1: !ttg.memdesc<2x8xi32, #s, #ttg.shared_memory, mutable>) num_warps(4) {\n"
                             "    ttg.warp_return\n"
                             "  } : (!ttg.memdesc<2x8xi32, #s, #ttg.shared_memory, mutable>) -> ()\n",
                             "inline_capture.ttgir");
  ASSERT_TRUE(plan.ok()) << plan.status();
  int64_t captures = -1;
  for (const SharedBuffer& b : plan->buffers) {
    if (b.op == "ttg.warp_specialize") captures = b.buffer.size;
  }
  EXPECT_EQ(captures, 8 + 2 * 4);
}

// Which release's rules apply: what the module says, else what the caller says, else the newest
// modelled, said as an assumption.
TtgirModule ModuleOf(const std::string& attrs, const std::string& body) {
  return ParseTtgir("module attributes {\"ttg.num-warps\" = 4 : i32, " + attrs + "} {\n tt.func @k() {\n" + body +
                        " tt.return\n }\n}\n",
                    "r.ttgir")
      .value();
}

TEST(TtgirAllocationTest, NvidiaModuleOfTriton39CarriesTwoCtas) {
  const TritonReleaseCue cue = DetectTritonRelease(ModuleOf("ttg.target = \"cuda:90\", \"ttng.two-ctas\" = false", ""));
  EXPECT_EQ(cue.release, TritonRelease::k3_9);
  EXPECT_THAT(cue.cue, HasSubstr("ttng.two-ctas"));
}

TEST(TtgirAllocationTest, NvidiaModuleWithoutTwoCtasIsTriton36) {
  EXPECT_EQ(DetectTritonRelease(ModuleOf("ttg.target = \"cuda:90\"", "")).release, TritonRelease::k3_6);
}

TEST(TtgirAllocationTest, AmdModuleTellsByItsBarrierOp) {
  EXPECT_EQ(DetectTritonRelease(ModuleOf("ttg.target = \"hip:gfx942\"", "  gpu.barrier\n")).release, TritonRelease::k3_6);
  EXPECT_EQ(DetectTritonRelease(ModuleOf("ttg.target = \"hip:gfx942\"", "  ttg.barrier all\n")).release,
            TritonRelease::k3_9);
}

// The kernel's own location: a top-level definition is column 0 to Triton 3.6 and 1 to 3.9; an
// indented one (column 4 or 5) tells nothing.
TEST(TtgirAllocationTest, AmdModuleTellsByTheKernelsLocationColumn) {
  const std::string module = "module attributes {\"ttg.num-warps\" = 4 : i32, ttg.target = \"hip:gfx942\"} {\n"
                             " tt.func @k() {\n tt.return\n }\n}\n";
  const std::map<std::string, TritonRelease> expected = {{"0", TritonRelease::k3_6}, {"1", TritonRelease::k3_9},
                                                         {"4", TritonRelease::kUnknown}};
  for (const auto& [column, release] : expected) {
    const std::string text = "#loc = loc(\"/src/k.py\":12:" + column + ")\n" + module;
    auto m = ParseTtgir(text, "r.ttgir");
    ASSERT_TRUE(m.ok()) << m.status();
    const TritonReleaseCue cue = DetectTritonRelease(*m);
    EXPECT_EQ(cue.release, release) << column;
    if (release != TritonRelease::kUnknown) EXPECT_THAT(cue.cue, HasSubstr("location is in column " + column)) << column;
  }
}

TEST(TtgirAllocationTest, AmdModuleWithoutCueIsPlannedByTheNewestReleaseSaidAsAnAssumption) {
  const TtgirModule m = ModuleOf("ttg.target = \"hip:gfx942\"", "");
  EXPECT_EQ(DetectTritonRelease(m).release, TritonRelease::kUnknown);
  auto plan = PlanSharedMemory(m);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->release, kNewestTritonRelease);
  EXPECT_THAT(plan->release_source, HasSubstr("assumed"));
  PlanOptions given;
  given.release = TritonRelease::k3_6;
  auto plan36 = PlanSharedMemory(m, given);
  ASSERT_TRUE(plan36.ok()) << plan36.status();
  EXPECT_EQ(plan36->release, TritonRelease::k3_6);
  EXPECT_EQ(plan36->release_source, "given");
}

}  // namespace
// A non-inlined device function (@triton.jit(noinline=True)): Triton 3.6 gives the call the
// callee's whole allocation (2048 bytes of its cross-warp reduction) as scratch, which is
// larger than the kernel's own reduction (1024): metadata.shared is 2048
// (tests/data/triton/ops/call_reduce_sm_90.json).
TEST(TtgirAllocationTest, CallHoldsTheCalleesAllocation) {
  const std::string text = ReadTritonOpsFixture("call_reduce_sm_90.ttgir");
  ASSERT_FALSE(text.empty());
  auto plan = PlanTtgir(text, "call_reduce_sm_90.ttgir");
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->kernel, "call_reduce");
  EXPECT_EQ(plan->allocation.shared, 2048);
  bool call_scratch = false;
  for (const SharedBuffer& b : plan->buffers) {
    if (b.op == "tt.call") call_scratch = b.buffer.size == 2048 && b.buffer.alignment == 128;
  }
  EXPECT_TRUE(call_scratch);
}

TEST(TtgirAllocationTest, CallOfAnUndefinedFunctionNamesIt) {
  auto plan = PlanTtgir(kHead + " tt.func public @k() {\n  tt.call @nowhere() : () -> ()\n  tt.return\n }\n}\n",
                        "u.ttgir");
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(plan.status().message(), HasSubstr("u.ttgir:4: tt.call of @nowhere, which the module does not define"));
}

TEST(TtgirAllocationTest, RecursiveCallIsRefused) {
  auto plan = PlanTtgir(kHead + " tt.func public @k() {\n  tt.call @f() : () -> ()\n  tt.return\n }\n"
                                " tt.func private @f() {\n  tt.call @f() : () -> ()\n  tt.return\n }\n}\n",
                        "r.ttgir");
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(plan.status().message(), HasSubstr("r.ttgir:8: tt.call of @f is recursive"));
}

// Ops of both releases that need no shared memory (an approximate division, a fence, AMD's
// wait on its memory counters): inserted into a compiled kernel they leave Triton's figure.
class ScratchFreeOpTest : public ::testing::TestWithParam<const char*> {};

TEST_P(ScratchFreeOpTest, LeavesTritonsFigure) {
  std::string text = ReadTritonOpsFixture("call_reduce_sm_90.ttgir");
  const std::string anchor = "    %x_9 = tt.load %x_8 : tensor<64x128x!tt.ptr<f32>, #blocked>";
  const size_t at = text.find(anchor);
  ASSERT_NE(at, std::string::npos);
  text.insert(at + anchor.size(), std::string("\n    ") + GetParam());
  auto plan = PlanTtgir(text, "op.ttgir");
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->allocation.shared, 2048);
}

INSTANTIATE_TEST_SUITE_P(
    Ops, ScratchFreeOpTest,
    ::testing::Values("%q = tt.approx_divf %x_9, %cst_0 : tensor<64x128xf32, #blocked>",
                      "llvm.fence syncscope(\"agent\") release", "amdg.memory_counter_wait ds(0)"));

// Reductions of a cluster launch (num_ctas=2: layouts with a CGALayout), compiled by Triton
// 3.6.0; their metadata.shared in tests/data/triton/ops/<name>.json. Triton splits the tile over
// the cluster along the dimension kept, so each reduction stays within a CTA.
struct OpsFixture {
  const char* name;
  int64_t shared;
};
class OpsFixtureTest : public ::testing::TestWithParam<OpsFixture> {};

TEST_P(OpsFixtureTest, PlansTritonsFigure) {
  const std::string text = ReadTritonOpsFixture(std::string(GetParam().name) + ".ttgir");
  ASSERT_FALSE(text.empty());
  auto plan = PlanTtgir(text, GetParam().name);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->allocation.shared, GetParam().shared);
}

INSTANTIATE_TEST_SUITE_P(Cluster, OpsFixtureTest,
                         ::testing::Values(OpsFixture{"cluster_reduce_axis0_sm_90", 0},
                                           OpsFixture{"cluster_reduce_axis1_sm_90", 1024}));

// A reduction on a #ttg.linear layout whose `block` basis splits the tile over a 2-CTA cluster
// along the kept dimension (the tensor-memory load's layout of a num_ctas=2 attention on
// sm_100): it stays within its CTA, so Triton 3.9 sizes it at the shape per CTA, the same
// figure as the same reduction of the 64-row tile on one CTA.
std::string LinearRowMax(bool cluster) {
  const std::string rows = cluster ? "128" : "64";
  const std::string type = absl::StrCat("tensor<", rows, "x64xf32, #linear>");
  return absl::StrCat(
      "#linear = #ttg.linear<{register = [[0, 1], [0, 2], [0, 4], [0, 8]], lane = [[1, 0], [2, 0], [4, 0], [8, 0], "
      "[0, 16]], warp = [[16, 0], [32, 0], [0, 32]]",
      cluster ? ", block = [[64, 0]]" : "", "}>\n", "module attributes {\"ttg.num-ctas\" = ", cluster ? 2 : 1,
      " : i32, \"ttg.num-warps\" = 8 : i32, ttg.target = \"cuda:100\", \"ttng.two-ctas\" = false} {\n",
      "  tt.func public @k(%x: ", type, ") {\n", "    %m = \"tt.reduce\"(%x) <{axis = 1 : i32}> ({\n",
      "    ^bb0(%a: f32, %b: f32):\n", "      %c = arith.maxnumf %a, %b : f32\n", "      tt.reduce.return %c : f32\n",
      "    }) : (", type, ") -> tensor<", rows, "xf32, #ttg.slice<{dim = 1, parent = #linear}>>\n",
      "    tt.return\n  }\n}\n");
}

TEST(TtgirAllocationTest, ClusterReductionOnALinearLayoutIsSizedPerCta) {
  PlanOptions options;
  options.release = TritonRelease::k3_9;
  auto one = PlanTtgir(LinearRowMax(false), "one.ttgir", options);
  ASSERT_TRUE(one.ok()) << one.status();
  auto cluster = PlanTtgir(LinearRowMax(true), "cluster.ttgir", options);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  EXPECT_EQ(cluster->allocation.shared, one->allocation.shared);
  EXPECT_EQ(cluster->allocation.shared, 512);
  EXPECT_TRUE(cluster->cross_cta_ops.empty());
}

}  // namespace scratchsim::triton
