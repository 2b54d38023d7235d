#include "backends/tpu/pallas_lowering.h"

#include <string>
#include <vector>

#include "sim/proto_io.h"
#include "sim/test_util.h"
#include "gtest/gtest.h"

namespace scratchsim {
namespace {

constexpr int64_t kMiB = 1024 * 1024;

const PallasAllocation* Find(const PallasFootprint& fp, const std::string& name) {
  for (const PallasAllocation& a : fp.allocations) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

const Buffer* FindBuffer(const KernelGraph& g, const std::string& name) {
  for (const Buffer& b : g.buffers()) {
    if (b.name() == name) return &b;
  }
  return nullptr;
}

TEST(PallasLoweringTest, E1001LowersToScopedVmemBuffers) {
  KernelGraph graph = testing::ExampleGraph("tpu_e1001.pbtxt");
  absl::StatusOr<KernelGraph> lowered = LowerPallasCall(graph, testing::ShippedDevice("tpu_v5e"));
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  EXPECT_FALSE(lowered->has_pallas());
  const Buffer* x = FindBuffer(*lowered, "x");
  ASSERT_NE(x, nullptr);
  EXPECT_EQ(x->memory_space(), "vmem");
  EXPECT_EQ(x->scope(), INSTRUCTION);
  EXPECT_EQ(x->role(), OPERAND);
  EXPECT_EQ(x->dtype(), "bf16");
  EXPECT_EQ(x->copies(), "min(2, (2048/BM)*(4))");
  ASSERT_EQ(x->round_up_size(), 2);
  EXPECT_EQ(x->round_up(0), "min(8, max(2, pow2ceil(BM)))");
  EXPECT_EQ(x->round_up(1), "128");
  ASSERT_EQ(lowered->ops_size(), 1);
  EXPECT_EQ(lowered->ops(0).name(), "my-custom-kernel");
  EXPECT_EQ(lowered->ops(0).reads(0), "x");
  EXPECT_EQ(lowered->ops(0).writes(0), "o");
  ASSERT_EQ(lowered->loops_size(), 1);
  EXPECT_EQ(lowered->loops(0).trip_count(), "(2048/BM)*(4)");
}

// Golden per generation: the seed's double-buffered bf16[2048,4096] operand (2 x 16 MiB) and
// the 16 MiB output block, against each generation's default scoped limit.
TEST(PallasLoweringTest, E1001GoldenPerGeneration) {
  KernelGraph graph = testing::ExampleGraph("tpu_e1001.pbtxt");
  struct Case { const char* device; int64_t limit; };
  for (Case c : {Case{"tpu_v4", 16 * kMiB}, Case{"tpu_v5e", 16 * kMiB}, Case{"tpu_v5p", 16 * kMiB},
                 Case{"tpu_v6e", 32 * kMiB}, Case{"tpu_v7x", 32 * kMiB}}) {
    absl::StatusOr<PallasFootprint> fp = ComputePallasFootprint(graph, testing::ShippedDevice(c.device));
    ASSERT_TRUE(fp.ok()) << fp.status();
    EXPECT_EQ(fp->scoped_vmem_bytes, 48 * kMiB) << c.device;
    EXPECT_EQ(fp->scoped_limit_bytes, c.limit) << c.device;
    EXPECT_EQ(fp->scoped_limit_source, "default scoped limit");
    const PallasAllocation* x = Find(*fp, "x");
    ASSERT_NE(x, nullptr);
    EXPECT_EQ(x->copies, 2);
    EXPECT_EQ(x->bytes_per_copy, 16 * kMiB);
    EXPECT_EQ(x->kind, "input");
    const PallasAllocation* o = Find(*fp, "o");
    ASSERT_NE(o, nullptr);
    EXPECT_EQ(o->copies, 1) << "the output block does not move along the reduction axis";
    EXPECT_EQ(o->kind, "output");
  }
}

TEST(PallasLoweringTest, E1001SmallerBlocksDoubleBufferTheOutputToo) {
  KernelGraph graph = testing::ExampleGraph("tpu_e1001.pbtxt");
  std::vector<int64_t> bm512 = {512};
  absl::StatusOr<PallasFootprint> fp = ComputePallasFootprint(graph, testing::ShippedDevice("tpu_v5e"), bm512);
  ASSERT_TRUE(fp.ok()) << fp.status();
  EXPECT_EQ(Find(*fp, "o")->copies, 2);
  EXPECT_EQ(fp->scoped_vmem_bytes, 2 * 4 * kMiB + 2 * 4 * kMiB);
}

TEST(PallasLoweringTest, VmemLimitBytesAndFlagSelectTheLimit) {
  KernelGraph graph = testing::ExampleGraph("tpu_e1001.pbtxt");
  graph.mutable_tpu()->set_scoped_vmem_limit_kib("65536");
  absl::StatusOr<PallasFootprint> fp = ComputePallasFootprint(graph, testing::ShippedDevice("tpu_v5e"));
  ASSERT_TRUE(fp.ok());
  EXPECT_EQ(fp->scoped_limit_bytes, 64 * kMiB);
  EXPECT_EQ(fp->scoped_limit_source, "--xla_tpu_scoped_vmem_limit_kib");
  graph.mutable_tpu()->set_vmem_limit_bytes("48 * 1024 * 1024");
  fp = ComputePallasFootprint(graph, testing::ShippedDevice("tpu_v5e"));
  ASSERT_TRUE(fp.ok());
  EXPECT_EQ(fp->scoped_limit_bytes, 48 * kMiB);
  EXPECT_EQ(fp->scoped_limit_source, "vmem_limit_bytes");
}

// JAX tests/pallas/tpu_pallas_test.py test_automatic_single_buffering: an int8 window of
// 10 MiB (20 MiB from TPU v6) compiles when its index map reads only the extent-1 grid axis
// or with Buffered(1), and runs out of VMEM when it moves (two copies).
KernelGraph SingleBufferingGraph(int64_t window_mib, std::vector<int> axes, int buffers) {
  KernelGraph g;
  g.set_name("single_buffering");
  PallasCall* call = g.mutable_pallas();
  call->add_grid("4");
  call->add_grid("1");
  PallasBlockSpec* out = call->add_out_specs();
  out->set_name("x");
  out->set_dtype("int8");
  out->add_block_shape(std::to_string(window_mib * kMiB));
  out->add_array_shape(std::to_string(100 * kMiB));
  for (int a : axes) out->add_index_map_axes(a);
  if (buffers > 0) out->set_buffer_count(buffers);
  return g;
}

TEST(PallasLoweringTest, ReproducesJaxAutomaticSingleBufferingTest) {
  struct Case { const char* device; int64_t window_mib; };
  for (Case c : {Case{"tpu_v4", 10}, Case{"tpu_v5e", 10}, Case{"tpu_v5p", 10}, Case{"tpu_v6e", 20},
                 Case{"tpu_v7x", 20}}) {
    DeviceModel d = testing::ShippedDevice(c.device);
    absl::StatusOr<PallasFootprint> only_unit_axis = ComputePallasFootprint(SingleBufferingGraph(c.window_mib, {1}, 0), d);
    absl::StatusOr<PallasFootprint> moving = ComputePallasFootprint(SingleBufferingGraph(c.window_mib, {0, 1}, 0), d);
    absl::StatusOr<PallasFootprint> buffered1 = ComputePallasFootprint(SingleBufferingGraph(c.window_mib, {0, 1}, 1), d);
    ASSERT_TRUE(only_unit_axis.ok() && moving.ok() && buffered1.ok()) << c.device;
    EXPECT_EQ(only_unit_axis->scoped_vmem_bytes, c.window_mib * kMiB);
    EXPECT_LE(only_unit_axis->scoped_vmem_bytes, only_unit_axis->scoped_limit_bytes) << c.device;
    EXPECT_EQ(moving->scoped_vmem_bytes, 2 * c.window_mib * kMiB);
    EXPECT_GT(moving->scoped_vmem_bytes, moving->scoped_limit_bytes) << c.device;
    EXPECT_LE(buffered1->scoped_vmem_bytes, buffered1->scoped_limit_bytes) << c.device;
  }
}

TEST(PallasLoweringTest, BufferedNAndConstantIndexMap) {
  KernelGraph g = SingleBufferingGraph(1, {0}, 3);
  absl::StatusOr<PallasFootprint> fp = ComputePallasFootprint(g, testing::ShippedDevice("tpu_v6e"));
  ASSERT_TRUE(fp.ok());
  EXPECT_EQ(fp->allocations[0].copies, 3);
  g = SingleBufferingGraph(1, {0}, 0);
  g.mutable_pallas()->mutable_out_specs(0)->set_constant_index_map(true);
  fp = ComputePallasFootprint(g, testing::ShippedDevice("tpu_v6e"));
  ASSERT_TRUE(fp.ok());
  EXPECT_EQ(fp->allocations[0].copies, 1);
  g.mutable_pallas()->clear_grid();  // no grid: whole arrays, one copy each
  g.mutable_pallas()->mutable_out_specs(0)->set_constant_index_map(false);
  g.mutable_pallas()->mutable_out_specs(0)->clear_index_map_axes();
  fp = ComputePallasFootprint(g, testing::ShippedDevice("tpu_v6e"));
  ASSERT_TRUE(fp.ok()) << fp.status();
  EXPECT_EQ(fp->allocations[0].copies, 1);
}

TEST(PallasLoweringTest, FlashAttentionBlocksPadHeadDimTo128Lanes) {
  KernelGraph graph = testing::ExampleGraph("tpu_flash_attention.pbtxt");
  absl::StatusOr<PallasFootprint> fp = ComputePallasFootprint(graph, testing::ShippedDevice("tpu_v6e"));
  ASSERT_TRUE(fp.ok()) << fp.status();
  const PallasAllocation* q = Find(*fp, "q");
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->padded_shape, (std::vector<int64_t>{1, 1, 1024, 128}));
  EXPECT_EQ(q->shape, (std::vector<int64_t>{1, 1, 1024, 80}));
  EXPECT_EQ(q->bytes_per_copy, 256 * 1024);
  EXPECT_EQ(q->copies, 2);
  const PallasAllocation* acc = Find(*fp, "acc_scratch");
  ASSERT_NE(acc, nullptr);
  EXPECT_EQ(acc->copies, 1);
  EXPECT_EQ(acc->kind, "scratch");
  EXPECT_EQ(acc->bytes_per_copy, 512 * 1024);
  // q, k, v, o: 2 x 256 KiB each; m, l, acc: 512 KiB each.
  EXPECT_EQ(fp->scoped_vmem_bytes, 4 * 512 * 1024 + 3 * 512 * 1024);
  EXPECT_LE(fp->scoped_vmem_bytes, fp->scoped_limit_bytes);
}

TEST(PallasLoweringTest, MatmulBigBlocksGolden) {
  KernelGraph graph = testing::ExampleGraph("tpu_matmul_big.pbtxt");
  for (const char* name : {"tpu_v4", "tpu_v5e", "tpu_v5p", "tpu_v6e", "tpu_v7x"}) {
    absl::StatusOr<PallasFootprint> fp = ComputePallasFootprint(graph, testing::ShippedDevice(name));
    ASSERT_TRUE(fp.ok()) << fp.status();
    // x, y, z: 2 x 8 MiB each; acc f32: 16 MiB.
    EXPECT_EQ(fp->scoped_vmem_bytes, 64 * kMiB) << name;
    EXPECT_GT(fp->scoped_vmem_bytes, fp->scoped_limit_bytes) << name;
  }
}

TEST(PallasLoweringTest, ScalarPrefetchScratchSpillsAndSemaphores) {
  KernelGraph g = testing::ExampleGraph("tpu_e1001.pbtxt");
  PallasCall* call = g.mutable_pallas();
  PallasBlockSpec* pf = call->add_scalar_prefetch();
  pf->set_name("block_tables");
  pf->set_dtype("int32");
  pf->add_array_shape("8");
  pf->add_array_shape("1024");
  PallasScratch* s = call->add_scratch_shapes();
  s->set_name("flags");
  s->set_dtype("int32");
  s->set_memory_space("smem");
  s->add_shape("16");
  PallasScratch* sem = call->add_scratch_shapes();
  sem->set_memory_space("semaphore");
  sem->add_shape("4");
  call->set_spill_bytes_estimate("2 * 1024 * 1024");
  call->set_internal_scratch_bytes("32768");
  absl::StatusOr<KernelGraph> lowered = LowerPallasCall(g, testing::ShippedDevice("tpu_v5e"));
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  EXPECT_EQ(FindBuffer(*lowered, "block_tables")->memory_space(), "tpu_smem");
  EXPECT_EQ(FindBuffer(*lowered, "flags")->memory_space(), "tpu_smem");
  const Buffer* spills = FindBuffer(*lowered, "my-custom-kernel.spills");
  ASSERT_NE(spills, nullptr);
  EXPECT_EQ(spills->role(), SPILL);
  EXPECT_EQ(spills->scope(), INSTRUCTION);
  absl::StatusOr<PallasFootprint> fp = ComputePallasFootprint(g, testing::ShippedDevice("tpu_v5e"));
  ASSERT_TRUE(fp.ok()) << fp.status();
  EXPECT_EQ(fp->smem_bytes, 8 * 1024 * 4 + 16 * 4);
  EXPECT_EQ(fp->scoped_vmem_bytes, 48 * kMiB + 2 * kMiB + 32768);
  EXPECT_EQ(fp->semaphores, 4);
}

// Bad input: every path names the field and the problem, never crashes.
void ExpectError(const KernelGraph& g, const std::string& needle, const char* device = "tpu_v5e") {
  absl::StatusOr<KernelGraph> lowered = LowerPallasCall(g, testing::ShippedDevice(device));
  ASSERT_FALSE(lowered.ok()) << "expected an error mentioning " << needle;
  EXPECT_EQ(lowered.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(lowered.status().message().find(needle), std::string::npos) << lowered.status();
}

TEST(PallasLoweringBadInputTest, UnknownDtype) {
  KernelGraph g = testing::ExampleGraph("tpu_e1001.pbtxt");
  g.mutable_pallas()->mutable_in_specs(0)->set_dtype("bfloat12");
  ExpectError(g, "in_specs[0] 'x'.dtype: unknown dtype 'bfloat12'");
}

TEST(PallasLoweringBadInputTest, MissingDtype) {
  KernelGraph g = testing::ExampleGraph("tpu_e1001.pbtxt");
  g.mutable_pallas()->mutable_out_specs(0)->clear_dtype();
  ExpectError(g, "out_specs[0] 'o'.dtype: is missing");
}

TEST(PallasLoweringBadInputTest, ZeroAndNegativeBlockDims) {
  KernelGraph g = testing::ExampleGraph("tpu_e1001.pbtxt");
  g.mutable_pallas()->mutable_in_specs(0)->set_block_shape(2, "0");
  ExpectError(g, "block_shape[2]: '0' is 0; block dimensions must be positive");
  g = testing::ExampleGraph("tpu_e1001.pbtxt");
  g.mutable_pallas()->mutable_in_specs(0)->set_block_shape(1, "BM - 4096");
  ExpectError(g, "block_shape[1]: 'BM - 4096' is -2048");
}

TEST(PallasLoweringBadInputTest, BufferedZero) {
  KernelGraph g = testing::ExampleGraph("tpu_e1001.pbtxt");
  g.mutable_pallas()->mutable_in_specs(0)->set_buffer_count(0);
  ExpectError(g, "pipeline_mode Buffered(0): the buffer count must be at least 1");
}

TEST(PallasLoweringBadInputTest, EmptyBlockShape) {
  KernelGraph g = testing::ExampleGraph("tpu_e1001.pbtxt");
  g.mutable_pallas()->mutable_in_specs(0)->clear_block_shape();
  ExpectError(g, "rank >= 1");
}

TEST(PallasLoweringBadInputTest, IndexMapAxisOutsideGrid) {
  KernelGraph g = testing::ExampleGraph("tpu_e1001.pbtxt");
  g.mutable_pallas()->mutable_in_specs(0)->add_index_map_axes(5);
  ExpectError(g, "axis 5 is outside the grid of rank 2");
}

TEST(PallasLoweringBadInputTest, BadGridAndExpressions) {
  KernelGraph g = testing::ExampleGraph("tpu_e1001.pbtxt");
  g.mutable_pallas()->set_grid(1, "0");
  ExpectError(g, "pallas.grid[1]: '0' is 0");
  g = testing::ExampleGraph("tpu_e1001.pbtxt");
  g.mutable_pallas()->set_grid(0, "2048/NOPE");
  ExpectError(g, "pallas.grid[0]");
}

TEST(PallasLoweringBadInputTest, UnknownMemorySpaceAndDuplicateNames) {
  KernelGraph g = testing::ExampleGraph("tpu_e1001.pbtxt");
  g.mutable_pallas()->mutable_in_specs(0)->set_memory_space("cmem");
  ExpectError(g, "unknown memory_space 'cmem'");
  g = testing::ExampleGraph("tpu_e1001.pbtxt");
  g.mutable_pallas()->mutable_out_specs(0)->set_name("x");
  ExpectError(g, "name 'x' is used twice");
}

TEST(PallasLoweringBadInputTest, NegativeSpillEstimate) {
  KernelGraph g = testing::ExampleGraph("tpu_e1001.pbtxt");
  g.mutable_pallas()->set_spill_bytes_estimate("-1");
  ExpectError(g, "spill_bytes_estimate: '-1' is -1");
}

TEST(PallasLoweringBadInputTest, NoPallasCallOrNotATpu) {
  KernelGraph g = testing::ExampleGraph("tpu_e1001.pbtxt");
  KernelGraph none = g;
  none.clear_pallas();
  ExpectError(none, "pallas: is missing");
  DeviceModel gpu;
  gpu.set_name("h100");
  MemorySpace* smem = gpu.add_memory_spaces();
  smem->set_name("smem");
  absl::StatusOr<KernelGraph> lowered = LowerPallasCall(g, gpu);
  ASSERT_FALSE(lowered.ok());
  EXPECT_NE(lowered.status().message().find("needs a TPU device model"), std::string::npos);
}

TEST(PallasLoweringTest, HbmOperandsGetNoBlock) {
  KernelGraph g = testing::ExampleGraph("tpu_e1001.pbtxt");
  g.mutable_pallas()->mutable_in_specs(0)->set_memory_space("any");
  absl::StatusOr<PallasFootprint> fp = ComputePallasFootprint(g, testing::ShippedDevice("tpu_v5e"));
  ASSERT_TRUE(fp.ok()) << fp.status();
  EXPECT_EQ(Find(*fp, "x"), nullptr);
  EXPECT_EQ(fp->scoped_vmem_bytes, 16 * kMiB);
  ASSERT_FALSE(fp->notes.empty());
}

}  // namespace
}  // namespace scratchsim

namespace scratchsim {
namespace {

KernelGraph TracedGraph(const std::string& file) {
  KernelGraph graph;
  absl::Status status =
      LoadProtoFile(std::string(SCRATCHSIM_SOURCE_DIR) + "/backends/tpu/testdata/" + file, &graph);
  EXPECT_TRUE(status.ok()) << status;
  return graph;
}

// Graphs written by bench/tpu/pallas_to_graph.py from real pallas_call code agree with the
// hand-written examples.
TEST(PallasLoweringTracedTest, TracedGraphsMatchTheHandWrittenOnes) {
  DeviceModel v6e = testing::ShippedDevice("tpu_v6e");
  absl::StatusOr<PallasFootprint> mm = ComputePallasFootprint(TracedGraph("traced_matmul.pbtxt"), v6e);
  ASSERT_TRUE(mm.ok()) << mm.status();
  EXPECT_EQ(mm->scoped_vmem_bytes, 64 * kMiB);
  DeviceModel v5e = testing::ShippedDevice("tpu_v5e");
  absl::StatusOr<PallasFootprint> e1001 = ComputePallasFootprint(TracedGraph("traced_e1001.pbtxt"), v5e);
  ASSERT_TRUE(e1001.ok()) << e1001.status();
  EXPECT_EQ(e1001->scoped_vmem_bytes, 48 * kMiB);
}

TEST(PallasLoweringTracedTest, TracedPrefetchBufferedAndScratch) {
  absl::StatusOr<PallasFootprint> fp =
      ComputePallasFootprint(TracedGraph("traced_prefetch.pbtxt"), testing::ShippedDevice("tpu_v5e"));
  ASSERT_TRUE(fp.ok()) << fp.status();
  // in0 2 x 128 KiB, in1 Buffered(1) 128 KiB, out0 2 x 128 KiB, f32 scratch 256 KiB.
  EXPECT_EQ(fp->scoped_vmem_bytes, 896 * 1024);
  EXPECT_EQ(fp->scoped_limit_bytes, 32 * kMiB);
  EXPECT_EQ(fp->scoped_limit_source, "vmem_limit_bytes");
  EXPECT_EQ(fp->smem_bytes, 8 * 4 + 16 * 4);
  EXPECT_EQ(fp->semaphores, 1);
}

}  // namespace
}  // namespace scratchsim
