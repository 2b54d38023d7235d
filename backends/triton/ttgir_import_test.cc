#include "backends/triton/ttgir_import.h"

#include <string>

#include "backends/triton/ttgir_testdata.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scratchsim::triton {
namespace {

using ::testing::HasSubstr;

TEST(TtgirImportTest, BuildsOneBufferPerPlannedAllocation) {
  auto g = ImportTtgir(ReadTtgirTestdata("pipelined.ttgir"), "k.ttgir");
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->name(), "k");
  ASSERT_EQ(g->buffers_size(), 3);
  EXPECT_EQ(g->buffers(0).name(), "b0_a");
  EXPECT_THAT(g->buffers(0).shape(), ::testing::ElementsAre("max(1, NUM_STAGES - 1)", "128", "64"));
  EXPECT_EQ(g->buffers(0).dtype(), "f16");
  EXPECT_EQ(g->buffers(0).alignment(), "1024");
  EXPECT_EQ(g->buffers(2).role(), SCRATCH);
  EXPECT_EQ(g->launch().num_warps(), "4");
  EXPECT_THAT(g->doc(), HasSubstr("32784 bytes (metadata.shared)"));
}

// %a is a ring of two slots (taken apart by ttg.memdesc_index) in a loop without wgmma: Triton's
// cp.async pipeline keeps one slot fewer than num_stages, so the module is num_stages 3.
TEST(TtgirImportTest, RingIsSizedByTheStagesItsDepthTells) {
  auto g = ImportTtgir(ReadTtgirTestdata("pipelined.ttgir"), "k.ttgir");
  ASSERT_TRUE(g.ok()) << g.status();
  ASSERT_EQ(g->parameters_size(), 1);
  EXPECT_EQ(g->parameters(0).name(), "NUM_STAGES");
  EXPECT_EQ(g->parameters(0).default_value(), 3);
  EXPECT_EQ(g->parameters(0).min(), 1);
  EXPECT_EQ(g->parameters(0).max(), 3);
  EXPECT_THAT(g->parameters(0).doc(), HasSubstr("cp.async"));
  // The barrier array is no ring (nothing indexes it): its bytes stay fixed.
  EXPECT_EQ(g->buffers(1).shape_size(), 1);
  EXPECT_EQ(g->buffers(1).shape(0), "2");
}

TEST(TtgirImportTest, BuffersAndPositionsCarryTheSourceLines) {
  const std::string text = ReadTtgirTestdata("pipelined.ttgir") +
                           "#loc1 = loc(\"a\"(#loc2))\n#loc2 = loc(\"/u/kernel.py\":12:8)\n";
  auto g = ImportTtgir(text, "k.ttgir");
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->buffers(0).source(), "a at kernel.py:12");
  EXPECT_EQ(g->buffers(2).source(), "");  // the convert_layout's line has no location
  EXPECT_THAT(g->ops(0).name(), HasSubstr("ttg.local_alloc (a at kernel.py:12)"));
  EXPECT_EQ(g->ops(0).kind(), "ttg.local_alloc");
}

// The front end's path (parse once, plan once, import from both) gives the graph the text
// path gives.
TEST(TtgirImportTest, ModuleAndPlanGiveTheGraphOfTheText) {
  const std::string text = ReadTtgirTestdata("pipelined.ttgir");
  auto module = ParseTtgir(text, "k.ttgir");
  ASSERT_TRUE(module.ok()) << module.status();
  auto plan = PlanSharedMemory(*module);
  ASSERT_TRUE(plan.ok()) << plan.status();
  auto from_module = ImportTtgir(*module, *plan);
  auto from_text = ImportTtgir(text, "k.ttgir");
  ASSERT_TRUE(from_module.ok() && from_text.ok());
  EXPECT_EQ(from_module->SerializeAsString(), from_text->SerializeAsString());
}

TEST(TtgirImportTest, PlanOfAnotherKernelIsRejected) {
  auto module = ParseTtgir(ReadTtgirTestdata("pipelined.ttgir"), "k.ttgir");
  ASSERT_TRUE(module.ok()) << module.status();
  SharedMemoryPlan other;
  other.kernel = "other";
  auto g = ImportTtgir(*module, other);
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(g.status().message(), HasSubstr("k.ttgir"));
}

TEST(TtgirImportTest, MissingFileIsNotFound) {
  auto g = LoadTtgirFile("/nonexistent/x.ttgir");
  EXPECT_EQ(g.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(g.status().message(), HasSubstr("/nonexistent/x.ttgir"));
}

}  // namespace
}  // namespace scratchsim::triton
