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
  EXPECT_EQ(g->buffers(0).size_bytes(), "32768");
  EXPECT_EQ(g->buffers(0).alignment(), "1024");
  EXPECT_EQ(g->buffers(2).role(), SCRATCH);
  EXPECT_EQ(g->launch().num_warps(), "4");
  EXPECT_THAT(g->doc(), HasSubstr("32784 bytes (metadata.shared)"));
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
