// The portable graph families of models/graphs (docs/planner.md, "Graph families"): every
// shipped device plans its family member with no extra flags, through the command line; the
// device-specific paths (tcgen05 with TMEM on sm_100, MFMA with LDS on CDNA) show where they should.
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "sim/device.h"
#include "sim/driver/cli.h"
#include "sim/frontend.h"

namespace scratchsim {
namespace {

using ::testing::HasSubstr;

std::string Source(const std::string& relative) { return std::string(SCRATCHSIM_SOURCE_DIR) + "/" + relative; }

bool HasTpuFrontEnd() {
  for (const auto& front_end : FrontEnds()) {
    if (front_end->name() == "tpu") return true;
  }
  return false;
}

struct PlanRun {
  int code = -1;
  std::string out, err;
  google::protobuf::Struct json;
};

PlanRun Plan(const std::vector<std::string>& args) {
  std::vector<std::string> all = {"plan"};
  all.insert(all.end(), args.begin(), args.end());
  std::ostringstream out, err;
  PlanRun r;
  r.code = RunSimulateCommand(all, out, err);
  r.out = out.str();
  r.err = err.str();
  if (std::find(args.begin(), args.end(), "json") != args.end()) {
    EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(r.out, &r.json).ok()) << r.out;
  }
  return r;
}

std::vector<std::string> ShippedDevices() {
  std::vector<std::string> names;
  auto devices = LoadShippedDevices();
  EXPECT_TRUE(devices.ok()) << devices.status();
  if (devices.ok()) {
    for (const DeviceModel& d : *devices) names.push_back(d.name());
  }
  return names;
}

// The family member for a device: Triton on GPUs, Pallas on TPUs.
std::string Member(const std::string& device, const std::string& family) {
  const bool tpu = device.rfind("tpu_", 0) == 0;
  return Source(absl::StrCat("models/graphs/", tpu ? "pallas_" : "triton_", family, ".pbtxt"));
}

class FamilyTest : public ::testing::TestWithParam<std::string> {};

// `simulate plan --device X --graph F` with nothing else: a ranking with estimates.
TEST_P(FamilyTest, EveryShippedDevicePlansItWithNoExtraFlags) {
  const std::string family = GetParam();
  int planned = 0;
  for (const std::string& device : ShippedDevices()) {
    if (device.rfind("tpu_", 0) == 0 && !HasTpuFrontEnd()) continue;
    const PlanRun r = Plan({"--device", device, "--graph", Member(device, family), "--format", "json", "--top", "3"});
    ASSERT_EQ(r.code, 0) << device << ": " << r.err;
    const auto& configs = r.json.fields().at("configs").list_value().values();
    ASSERT_FALSE(configs.empty()) << device;
    EXPECT_TRUE(configs[0].struct_value().fields().at("estimated_us").has_number_value()) << device;
    ++planned;
  }
  EXPECT_GE(planned, 11);  // the GPUs at least
}

INSTANTIATE_TEST_SUITE_P(Families, FamilyTest, ::testing::Values("matmul", "attention"));

// The CUDA backend's GEMM is a CUDA kernel, but its graph follows WARP_SIZE: a HIP port plans on CDNA.
TEST(PortableGraphsTest, TheCudaGemmGraphPlansOnAmd) {
  for (const char* device : {"mi300x", "mi355x"}) {
    const PlanRun r = Plan({"--device", device, "--graph", Source("models/graphs/gemm.pbtxt"), "--top", "1"});
    EXPECT_EQ(r.code, 0) << device << ": " << r.err << r.out;
  }
}

// tcgen05 keeps the accumulator in TMEM: 128 x 256 tiles are not register-spill pruned on the B200.
TEST(PortableGraphsTest, Blackwell128x256TilesAreNotPrunedForSpills) {
  const PlanRun r = Plan({"--device", "b200", "--graph", Source("models/graphs/triton_matmul.pbtxt"), "--param",
                      "BLOCK_M=128", "--param", "BLOCK_N=256", "--param", "NUM_WARPS=4", "--format", "json", "--top", "100"});
  ASSERT_EQ(r.code, 0) << r.err;
  for (const auto& family : r.json.fields().at("pruned").list_value().values()) {
    EXPECT_NE(family.struct_value().fields().at("limit").string_value(), "register spills");
  }
}

// The TMEM columns bound residency on the B200: 256 x 256 tiles take all 512 columns.
TEST(PortableGraphsTest, BlackwellTensorMemoryBoundsResidency) {
  const PlanRun r = Plan({"--device", "b200", "--graph", Source("models/graphs/triton_matmul.pbtxt"), "--param",
                      "BLOCK_M=256", "--param", "BLOCK_N=256", "--param", "BLOCK_K=32", "--param", "NUM_STAGES=2",
                      "--param", "NUM_WARPS=8", "--format", "json", "--top", "1"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto& top = r.json.fields().at("configs").list_value().values(0).struct_value().fields();
  EXPECT_EQ(top.at("peak_bytes").struct_value().fields().at("tmem").number_value(), 512 * 512);
  EXPECT_EQ(top.at("blocks_per_core").number_value(), 1);
}

// A 4096^3 f16 GEMM on the B200 is compute-bound once L2 reuse counts (with the stand-in L2 bandwidth).
TEST(PortableGraphsTest, ABlackwellGemmOf4096CubedIsComputeBound) {
  const PlanRun r = Plan({"--device", "b200", "--graph", Source("models/graphs/triton_matmul.pbtxt"), "--format", "json",
                      "--top", "1"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto& top = r.json.fields().at("configs").list_value().values(0).struct_value().fields();
  EXPECT_EQ(top.at("bound").string_value(), "compute");
}

// A device without a term the ranking needs warns, in the text and in the JSON.
TEST(PortableGraphsTest, AMissingTermIsAWarningInTextAndJson) {
  const PlanRun text = Plan({"--device", "b200", "--graph", Source("models/graphs/triton_matmul.pbtxt"), "--top", "1"});
  EXPECT_THAT(text.out, HasSubstr("warning  b200 gives no l2_bandwidth_gbps"));
  const PlanRun json = Plan({"--device", "b200", "--graph", Source("models/graphs/triton_matmul.pbtxt"), "--format", "json",
                         "--top", "1"});
  ASSERT_TRUE(json.json.fields().contains("warnings"));
  EXPECT_FALSE(json.json.fields().at("warnings").list_value().values().empty());
}

// The plan says where each term came from: the h200 inherits h100's measured on-chip terms.
TEST(PortableGraphsTest, ThePlanNamesInheritedTerms) {
  const PlanRun r = Plan({"--device", "h200", "--graph", Source("models/graphs/triton_matmul.pbtxt"), "--top", "1"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("l2_bandwidth_gbps 12,500 GB/s (inherited from h100)"));
  EXPECT_THAT(r.out, HasSubstr("memory_bandwidth_gbps 4,800 GB/s (h200)"));
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("warning")));
}

}  // namespace
}  // namespace scratchsim
