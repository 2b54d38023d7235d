#include "sim/driver/plan_command.h"

#include <signal.h>
#include <unistd.h>
#include <atomic>
#include <chrono>
#include <thread>
#include <filesystem>
#include <algorithm>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "sim/device.h"
#include "sim/graph.h"
#include "sim/planner/planner_test_util.h"
#include "sim/test_util.h"
#include "sim/driver/cli.h"
#include "sim/planner/planner.h"

namespace scratchsim {
namespace {

using ::testing::HasSubstr;
using namespace ::scratchsim::testing;

int RunPlan(const std::vector<std::string>& args, std::string* out, std::string* err) {
  std::ostringstream o, e;
  int code = RunPlanCommand(args, o, e);
  *out = o.str();
  *err = e.str();
  return code;
}


// The longest line of `text`.
size_t LongestLine(const std::string& text) {
  size_t longest = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) longest = std::max(longest, line.size());
  return longest;
}

// Where nothing fits, the plan gives the way forward plain `simulate` gives (seed 002's GeGLU:

// Each shortlist entry's hedge_reason in a plan's JSON ("" where it has none).
std::vector<std::string> ShortlistReasons(const std::string& json_text) {
  google::protobuf::Struct json;
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(json_text, &json).ok()) << json_text;
  std::vector<std::string> reasons;
  if (!json.fields().contains("shortlist")) return reasons;
  for (const auto& entry : json.fields().at("shortlist").list_value().values()) {
    const auto& fields = entry.struct_value().fields();
    reasons.push_back(fields.contains("hedge_reason") ? fields.at("hedge_reason").string_value() : "");
  }
  return reasons;
}

// split the problem dimension I_RED).
TEST(PlanCommandTest, NothingFitsGivesSimulatesWayForward) {
  std::string out, err;
  EXPECT_EQ(RunPlan({"--device", "h100", "--graph", ExampleGraphPath("mlp.pbtxt")}, &out, &err), kExitDoesNotFit) << err;
  EXPECT_THAT(out, HasSubstr("fits     0 of"));
  EXPECT_THAT(out, HasSubstr("to fit (what `simulate` suggests"));
  EXPECT_THAT(out, HasSubstr("I_RED is a problem dimension held whole in one block: split it"));
}

// Where a size no tile divides breaks a requirement of every configuration, the plan says nothing
// fits and names that requirement (not one the defaults happen to break first).
TEST(PlanCommandTest, ASizeNoTileDividesIsNothingFitsNamingItsRequirement) {
  std::string out, err;
  EXPECT_EQ(RunPlan({"--device", "h200", "--graph", ExampleGraphPath("gemm.pbtxt"), "--set", "M=16", "--set",
                     "N=49155", "--set", "K=4096", "--param", "BLOCK_M=16,32", "--param", "BLOCK_N=32,64"},
                    &out, &err),
            kExitDoesNotFit)
      << err;
  EXPECT_THAT(out, HasSubstr("fits     0 of"));
  EXPECT_THAT(out, HasSubstr("N % BLOCK_N == 0"));
  EXPECT_THAT(out, ::testing::Not(HasSubstr("\"M % BLOCK_M == 0\" does not hold")));
}

// A problem a requirement on its sizes alone rules out (an empty matrix; a head dimension Triton's
// tl.arange refuses) is bad input naming the sizes, not a sweep in which nothing fits.
TEST(PlanCommandTest, AProblemNoTilingCanBuildIsExitTwoNamingItsSizes) {
  std::string out, err;
  EXPECT_EQ(RunPlan({"--device", "h200", "--graph", ExampleGraphPath("triton_matmul.pbtxt"), "--set", "M=16", "--set",
                     "N=0", "--set", "K=4096"},
                    &out, &err),
            kExitBadInput);
  EXPECT_THAT(err, HasSubstr("triton_matmul.pbtxt: requirements[0] \"M >= 1 && N >= 1 && K >= 1 && ELT >= 1\""));
  EXPECT_THAT(err, HasSubstr("at --set M=16 --set N=0 --set K=4096 --set ELT=2: no tiling makes this problem a kernel"));
  EXPECT_EQ(out, "");
  EXPECT_EQ(RunPlan({"--device", "h200", "--graph", ExampleGraphPath("triton_attention.pbtxt"), "--set", "HEAD_DIM=96"},
                    &out, &err),
            kExitBadInput);
  EXPECT_THAT(err, HasSubstr("\"pow2ceil(HEAD_DIM) == HEAD_DIM\" does not hold (tl.arange over the head dimension"));
  EXPECT_THAT(err, HasSubstr("at --set HEAD_DIM=96: no tiling"));
}

// A latency-bound estimate says how much of its latency is the DRAM's transfers: a wide decode row
// streams its weights near the bandwidth, and the idle part is what a deeper pipeline could win.
TEST(PlanCommandTest, ALatencyBoundWhySplitsTheLatencyIntoTransfersAndIdleWaits) {
  std::string out, err;
  EXPECT_EQ(RunPlan({"--device", "h200", "--graph", ExampleGraphPath("triton_matmul.pbtxt"), "--set", "M=16", "--set",
                     "N=151936", "--set", "K=5120", "--top", "1"},
                    &out, &err),
            kExitFits)
      << err;
  EXPECT_THAT(out, ::testing::ContainsRegex(
                       "why: latency-bound: the loads' latency \\([0-9.]+ us, [0-9.]+ us of it DRAM transfers, the rest "
                       "idle along the K loop\\) outlasts on-chip"));
}

// A configuration is followed in the shortlist by its occupancy twin, which may be of another
// block shape, and the shortlist says why (f32 2000 x 3840 x 2560: 32/256/64 at 4 stages runs one
// block a core by its shared memory, 32/256/32 at 4 stages two, with twice the K steps' sync waits).
TEST(PlanCommandTest, TheShortlistFollowsAConfigurationWithItsTwinAtMoreBlocksPerCore) {
  std::string out, err;
  EXPECT_EQ(RunPlan({"--device", "h200", "--graph", ExampleGraphPath("triton_matmul.pbtxt"), "--set", "ELT=4", "--set",
                     "M=2000", "--set", "N=3840", "--set", "K=2560", "--compute-dtype", "tf32", "--top", "8"},
                    &out, &err),
            kExitFits)
      << err;
  EXPECT_THAT(out, ::testing::ContainsRegex("\n +3 +32 +256 +64 +4 +4 +[0-9.]+ +>?[0-9]+  the fastest of its block shape\n"
                                            " +4 +32 +256 +32 +4 +4 +[0-9.]+ +>?[0-9]+  2 blocks/SM: "
                                            "faster if they fill each other's sync waits\n"));
}

// The JSON names why each hedge is in the shortlist; the ranking's first two open it.
TEST(PlanCommandTest, TheJsonShortlistGivesEachHedgesReason) {
  std::string out, err;
  EXPECT_EQ(RunPlan({"--device", "h200", "--graph", ExampleGraphPath("triton_matmul.pbtxt"), "--set", "ELT=4", "--set",
                     "M=2000", "--set", "N=3840", "--set", "K=2560", "--compute-dtype", "tf32", "--top", "8",
                     "--format", "json"},
                    &out, &err),
            kExitFits)
      << err;
  EXPECT_THAT(ShortlistReasons(out), ::testing::ElementsAre("", "", "block_shape", "more_blocks_per_core", "block_shape",
                                                            "more_blocks_per_core", "more_blocks_per_core", ""));
  // Each configuration's terms give the whole estimate where every block adds its own sync waits:
  // never below the ranking's, above it where co-resident blocks share such waits.
  google::protobuf::Struct json;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(out, &json).ok()) << out;
  int above = 0;
  for (const auto& config : json.fields().at("configs").list_value().values()) {
    const auto& fields = config.struct_value().fields();
    const double own = fields.at("terms_us").struct_value().fields().at("own_sync_waits_total").number_value();
    const double estimated = fields.at("estimated_us").number_value();
    EXPECT_GE(own, estimated * (1 - 1e-12));
    above += own > estimated * (1 + 1e-9) ? 1 : 0;
  }
  EXPECT_GT(above, 0);
}

// Where the ranking, which lets co-resident blocks share the mma.sync wait, picks other tiles than
// the reading where each block waits its own (f16 16 x 50,304 x 2,560: 32-row tiles of BLOCK_N 64
// and 128 at several blocks a core, against one 32/256/128 block), that reading's pick follows the
// ranking's first two, with its estimate so.
TEST(PlanCommandTest, TheShortlistHoldsThePickWhereEachBlockWaitsItsOwn) {
  const std::vector<std::string> args = {"--device", "h200", "--graph", ExampleGraphPath("triton_matmul.pbtxt"),
                                         "--set", "M=16", "--set", "N=50304", "--set", "K=2560", "--top", "5"};
  std::string out, err;
  EXPECT_EQ(RunPlan(args, &out, &err), kExitFits) << err;
  EXPECT_THAT(out, ::testing::ContainsRegex("\n +3 +32 +256 +128 +4 +4 +[0-9.]+ +>?[0-9]+  the pick if co-resident "
                                            "blocks fill none of each other's sync waits \\([0-9.]+ us so\\)\n"));
  std::vector<std::string> json_args = args;
  json_args.insert(json_args.end(), {"--format", "json"});
  EXPECT_EQ(RunPlan(json_args, &out, &err), kExitFits) << err;
  const std::vector<std::string> reasons = ShortlistReasons(out);
  ASSERT_GE(reasons.size(), 3u);
  EXPECT_EQ(reasons[2], "own_sync_waits");
}

// A size the Triton matmul's ranking was not validated on (an N that 16 does not divide: Triton
// does not specialize the stride) is ranked with a warning naming the assumption it breaks.
TEST(PlanCommandTest, ASizeOutsideTheRankingsGroundIsRankedWithAWarning) {
  std::string out, err;
  EXPECT_EQ(RunPlan({"--device", "h200", "--graph", ExampleGraphPath("triton_matmul.pbtxt"), "--set", "M=16", "--set",
                     "N=49155", "--set", "K=4096", "--top", "3"},
                    &out, &err),
            kExitFits)
      << err;
  EXPECT_THAT(out, HasSubstr("the ranking assumes \"N % 16 == 0\""));
  EXPECT_THAT(out, HasSubstr("which N = 49155 breaks"));
  EXPECT_EQ(RunPlan({"--device", "h200", "--graph", ExampleGraphPath("triton_matmul.pbtxt"), "--set", "M=16", "--set",
                     "N=49152", "--set", "K=4096", "--top", "3"},
                    &out, &err),
            kExitFits)
      << err;
  EXPECT_THAT(out, ::testing::Not(HasSubstr("the ranking assumes")));
}

// An unaligned f32 B whose co-resident blocks' K-step lines exceed the L1 the 228 KiB carve-out
// leaves (Triton's launcher prefers shared memory above 48 KiB) is charged its refetched lines,
// and the why line says so; at two stages (48 KiB, a 164 KiB carve-out) the window fits.
TEST(PlanCommandTest, AnOverflowingL1WindowIsChargedAndSaid) {
  std::string out, err;
  const std::vector<std::string> base = {"--device", "h200", "--graph", ExampleGraphPath("triton_matmul.pbtxt"),
                                         "--set", "M=16", "--set", "N=32001", "--set", "K=2048", "--set", "ELT=4",
                                         "--param", "BLOCK_M=64", "--param", "BLOCK_N=128", "--param", "BLOCK_K=32",
                                         "--param", "NUM_WARPS=4"};
  std::vector<std::string> deep = base;
  deep.insert(deep.end(), {"--param", "NUM_STAGES=4"});
  ASSERT_EQ(RunPlan(deep, &out, &err), kExitFits) << err;
  EXPECT_THAT(out, HasSubstr("L1 reuse window 40.0 KiB over the 28.0 KiB of L1 the carve-out leaves: lines fetched again"));
  deep.insert(deep.end(), {"--format", "json"});
  ASSERT_EQ(RunPlan(deep, &out, &err), kExitFits) << err;
  EXPECT_THAT(out, HasSubstr("\"l1_window\": {\"bytes_per_core\": 40960, \"l1_bytes_per_core\": 28672, \"overflows\": true}"));
  std::vector<std::string> shallow = base;
  shallow.insert(shallow.end(), {"--param", "NUM_STAGES=2"});
  ASSERT_EQ(RunPlan(shallow, &out, &err), kExitFits) << err;
  EXPECT_THAT(out, ::testing::Not(HasSubstr("L1 reuse window")));
}

// An unaligned 16-bit B is loaded synchronously each K step: the plan says how busy that leaves
// the L1; a 32-bit one is copied asynchronously and says nothing of it.
TEST(PlanCommandTest, SynchronousStepsAreChargedAndSaid) {
  std::string out, err;
  std::vector<std::string> args = {"--device", "h200", "--graph", ExampleGraphPath("triton_matmul.pbtxt"),
                                   "--set", "M=16", "--set", "N=50257", "--set", "K=1024", "--set", "ELT=2",
                                   "--param", "BLOCK_M=64", "--param", "BLOCK_N=128", "--param", "BLOCK_K=64",
                                   "--param", "NUM_WARPS=8", "--param", "NUM_STAGES=4"};
  ASSERT_EQ(RunPlan(args, &out, &err), kExitFits) << err;
  EXPECT_THAT(out, HasSubstr("synchronous loads keep the L1 busy "));
  args.insert(args.end(), {"--format", "json"});
  ASSERT_EQ(RunPlan(args, &out, &err), kExitFits) << err;
  EXPECT_THAT(out, HasSubstr("\"synchronous_steps\": {\"l1_busy_share\": "));
  args.back() = "text";
  args[11] = "ELT=4";
  ASSERT_EQ(RunPlan(args, &out, &err), kExitFits) << err;
  EXPECT_THAT(out, ::testing::Not(HasSubstr("synchronous loads")));
}

// A problem size (softmax's row length) is fixed at its value, never swept.
TEST(PlanCommandTest, ProblemSizeIsNeverSwept) {
  std::string out, err;
  EXPECT_EQ(RunPlan({"--device", "h100", "--graph", ExampleGraphPath("softmax.pbtxt")}, &out, &err), kExitFits) << err;
  EXPECT_THAT(out, HasSubstr("fixed    ROW=4096"));
  EXPECT_THAT(out, ::testing::Not(HasSubstr("ROW{")));
}

// Values pruned throughout are summarized: a long run is its first values, last value and count.
TEST(PlanCommandTest, LongValueListsAreSummarized) {
  const std::string graph = ::testing::TempDir() + "/long_axis.pbtxt";
  std::ofstream(graph) << "name: \"long_axis\"\nparameters { name: \"X\" default_value: 4 min: 1 max: 100000 }\n"
                          "buffers { name: \"b\" size_bytes: \"X * 4\" memory_space: \"smem\" role: OPERAND }\n"
                          "ops { name: \"load\" writes: \"b\" kind: \"load\" }\n"
                          "launch { num_warps: \"4\" grid: \"4\" }\n";
  std::string out, err;
  EXPECT_EQ(RunPlan({"--device", "h100", "--graph", graph}, &out, &err), kExitFits) << err;
  EXPECT_THAT(out, HasSubstr("every configuration with X=58113, 58114, 58115, ..., 100000 (41,888 values)"));
  EXPECT_THAT(out, HasSubstr(" values)"));
  EXPECT_LT(LongestLine(out), 400u) << out;
}

// A configuration estimated at no time is a graph that gives the model no work: refused, not ranked.
TEST(PlanCommandTest, ZeroEstimateIsRefusedNotRanked) {
  const std::string graph = ::testing::TempDir() + "/no_work.pbtxt";
  std::ofstream(graph) << "name: \"no_work\"\nparameters { name: \"W\" default_value: 4 min: 1 max: 8 }\n"
                          "launch { num_warps: \"W\" grid: \"4\" }\n";
  std::string out, err;
  EXPECT_EQ(RunPlan({"--device", "h100", "--graph", graph}, &out, &err), kExitBadInput);
  EXPECT_THAT(err, HasSubstr("the performance model estimates 0 us"));
  EXPECT_THAT(err, HasSubstr("give the graph flops or global_bytes"));
}

// regheavy says what it moves and computes, so its plan ranks by a time.
TEST(PlanCommandTest, RegheavyRanksByATime) {
  std::string out, err;
  EXPECT_EQ(RunPlan({"--device", "h100", "--graph", ExampleGraphPath("regheavy.pbtxt"), "--top", "1", "--format", "json"},
                    &out, &err),
            kExitFits)
      << err;
  EXPECT_THAT(out, ::testing::Not(HasSubstr("\"estimated_us\": 0,")));
}

TEST(PlanCommandTest, BadParamIsExitTwoWithAClearMessage) {
  std::string out, err;
  EXPECT_EQ(RunPlan({"--device", "h100", "--graph", ExampleGraphPath("gemm.pbtxt"), "--param", "BLOCK_M=16..x:pow2"}, &out,
                    &err),
            kExitBadInput);
  EXPECT_THAT(err, HasSubstr("--param 'BLOCK_M=16..x:pow2': 'x' is not an integer"));
  EXPECT_EQ(out, "");
  EXPECT_EQ(RunPlan({"--device", "h100", "--graph", ExampleGraphPath("gemm.pbtxt"), "--param", "M=1..4"}, &out, &err),
            kExitBadInput);
  EXPECT_THAT(err, HasSubstr("is a problem size"));
  EXPECT_EQ(RunPlan({"--device", "h100", "--graph", ExampleGraphPath("gemm.pbtxt"), "--set", "BLOCK_M=64", "--param",
                     "BLOCK_M=16..64:pow2"},
                    &out, &err),
            kExitBadInput);
  EXPECT_THAT(err, HasSubstr("already fixed"));
  EXPECT_EQ(RunPlan({"--device", "h100", "--graph", ExampleGraphPath("gemm.pbtxt"), "--format", "xml"}, &out, &err),
            kExitBadInput);
  EXPECT_THAT(err, HasSubstr("--format"));
  EXPECT_EQ(RunPlan({"--graph", ExampleGraphPath("gemm.pbtxt")}, &out, &err), kExitBadInput);
  EXPECT_THAT(err, HasSubstr("--device is required"));
  EXPECT_EQ(RunPlan({"--device", "h100", "--graph", ExampleGraphPath("gemm.pbtxt"), "--top", "-1"}, &out, &err),
            kExitBadInput);
  EXPECT_THAT(err, HasSubstr("--top"));
}


TEST(PlanCommandTest, SimulateDispatchesPlan) {
  std::ostringstream o, e;
  int code = RunSimulateCommand({"plan", "--device", "h100", "--graph", ExampleGraphPath("gemm.pbtxt"), "--set", "DTYPE=1",
                                 "--compute-dtype", "f16", "--top", "3", "--format", "json"},
                                o, e);
  EXPECT_EQ(code, kExitFits) << e.str();
  EXPECT_THAT(o.str(), HasSubstr("\"configs\": ["));
  EXPECT_THAT(o.str(), HasSubstr("\"params\": {\"BLOCK_M\": "));
  EXPECT_THAT(o.str(), HasSubstr("\"terms_us\": {\"math\": "));
  EXPECT_THAT(o.str(), HasSubstr("\"unfilled_waits\": "));
}

// The command's output is byte-identical from run to run and across --threads.
TEST(PlanCommandTest, OutputIsIdenticalAcrossThreadCounts) {
  std::string a, b, err;
  const std::vector<std::string> args = {"--device", "h100", "--graph", ExampleGraphPath("gemm.pbtxt"), "--set", "DTYPE=1",
                                         "--compute-dtype", "f16", "--top", "20"};
  std::vector<std::string> one = args, four = args;
  one.insert(one.end(), {"--threads", "1"});
  four.insert(four.end(), {"--threads", "4"});
  ASSERT_EQ(RunPlan(one, &a, &err), kExitFits) << err;
  ASSERT_EQ(RunPlan(four, &b, &err), kExitFits) << err;
  EXPECT_EQ(a, b);
}



// JSON and CSV leave every figure of the model unknown for a configuration without an
// estimate, not the empty estimate's zeros.
TEST(PlanCommandTest, UnestimatedConfigurationsShowNoFigures) {
  // JSON and CSV leave every figure of the model unknown for it, not the empty estimate's zeros.
  const std::string path = ::testing::TempDir() + "/unestimated.pbtxt";
  std::ofstream(path) << absl::StrFormat(kBlockSweepGraph, R"x(wait_cycles: "100 * (BLOCK - 2)")x");
  std::string out, err;
  ASSERT_EQ(RunPlan({"--device", "h100", "--graph", path, "--format", "json"}, &out, &err), kExitFits) << err;
  // The ranking's last configuration (the shortlist that follows lists the others again).
  const size_t last = out.find("\"rank\": 4");
  const std::string last_json = out.substr(last, out.find("\"shortlist\"") - last);
  EXPECT_THAT(last_json, HasSubstr("\"estimated_us\": null, \"score\": null"));
  EXPECT_THAT(last_json, HasSubstr("\"bound\": null, \"intensity\": null, \"grid_blocks\": null, \"waves\": null, "
                                   "\"wave_efficiency\": null, \"loads_in_flight\": null"));
  EXPECT_THAT(last_json, ::testing::Not(HasSubstr("terms_us")));
  ASSERT_EQ(RunPlan({"--device", "h100", "--graph", path, "--format", "csv"}, &out, &err), kExitFits) << err;
  // rank, BLOCK, estimated_us, score, bound, blocks_per_core, occupancy_limit, waves, ...
  EXPECT_THAT(out, HasSubstr("\n4,1,,,,"));
  const std::string last_csv = out.substr(out.find("\n4,1,") + 1);
  std::vector<std::string> fields = absl::StrSplit(last_csv.substr(0, last_csv.find('\n')), ',');
  ASSERT_GE(fields.size(), 10u);
  for (int column : {2, 3, 4, 7, 8, 9}) EXPECT_EQ(fields[column], "") << "column " << column;
}


// Issue 17: `plan` took a space of 2^36 configurations with no word of progress off a terminal
// and no way to stop but killing it. Off a terminal it reports progress every
// --progress-seconds; SIGINT stops the sweep and what was evaluated is printed, marked partial,
// exit 130.
TEST(PlanCommandTest, SigintStopsALongSweepWithAPartialResultAndProgressOffATerminal) {
  // A handler of the test's own until the sweep installs its: an early signal is harmless.
  struct sigaction ignore {};
  ignore.sa_handler = [](int) {};
  sigemptyset(&ignore.sa_mask);
  struct sigaction previous {};
  ASSERT_EQ(sigaction(SIGINT, &ignore, &previous), 0);
  std::string out, err;
  std::atomic<bool> done{false};
  int code = -1;
  std::thread plan([&] {
    code = RunPlan({"--device", "h100", "--graph", ExampleGraphPath("gemm.pbtxt"), "--param", "BLOCK_M=1..262144",
                    "--param", "BLOCK_N=1..262144", "--set", "BLOCK_K=32", "--set", "NUM_STAGES=3", "--set", "NUM_WARPS=8",
                    "--set", "SPLIT_K=1", "--set", "DTYPE=1", "--threads", "2", "--progress-seconds", "1"},
                   &out, &err);
    done = true;
  });
  const auto start = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  while (!done && std::chrono::steady_clock::now() - start < std::chrono::seconds(120)) {
    kill(getpid(), SIGINT);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  plan.join();
  sigaction(SIGINT, &previous, nullptr);
  EXPECT_EQ(code, kExitInterrupted) << err;
  EXPECT_THAT(err, HasSubstr(" of 68719476736 configurations ("));  // a progress line
  EXPECT_THAT(err, HasSubstr("plan: interrupted after "));
  EXPECT_THAT(out, HasSubstr("partial  interrupted after "));
  EXPECT_THAT(out, HasSubstr("of 68,719,476,736 configurations: the counts and the ranking cover those"));
}

TEST(PlanCommandTest, AnInterruptedSweepIsMarkedPartialInJson) {
  struct sigaction ignore {};
  ignore.sa_handler = [](int) {};
  sigemptyset(&ignore.sa_mask);
  struct sigaction previous {};
  ASSERT_EQ(sigaction(SIGINT, &ignore, &previous), 0);
  std::string out, err;
  std::atomic<bool> done{false};
  std::thread plan([&] {
    RunPlan({"--device", "h100", "--graph", ExampleGraphPath("gemm.pbtxt"), "--param", "BLOCK_M=1..262144", "--param",
             "BLOCK_N=1..262144", "--set", "BLOCK_K=32", "--set", "NUM_STAGES=3", "--set", "NUM_WARPS=8", "--set", "SPLIT_K=1",
             "--set", "DTYPE=1", "--format", "json", "--progress-seconds", "0"},
            &out, &err);
    done = true;
  });
  const auto start = std::chrono::steady_clock::now();
  while (!done && std::chrono::steady_clock::now() - start < std::chrono::seconds(120)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    kill(getpid(), SIGINT);
  }
  plan.join();
  sigaction(SIGINT, &previous, nullptr);
  EXPECT_THAT(out, HasSubstr("\"partial\": true,"));
  EXPECT_THAT(out, HasSubstr("\"evaluated\": "));
  EXPECT_THAT(err, ::testing::Not(HasSubstr("configurations (")));  // --progress-seconds 0: no progress lines
}

// Kernel families: the plain and the split-K Triton matmul given together on the H200.
class PlanFamiliesCommandTest : public ::testing::Test {
 protected:
  static std::vector<std::string> Args(std::vector<std::string> more) {
    std::vector<std::string> args = {"--device", "h200", "--graph", ExampleGraphPath("triton_matmul.pbtxt"), "--graph",
                                     ExampleGraphPath("triton_matmul_splitk.pbtxt"), "--set", "M=16", "--set",
                                     "N=4096", "--set", "K=14336"};
    args.insert(args.end(), more.begin(), more.end());
    return args;
  }
};

TEST_F(PlanFamiliesCommandTest, SeveralGraphsRankTogetherWithAFamilyColumn) {
  std::string out, err;
  ASSERT_EQ(RunPlan(Args({"--top", "3"}), &out, &err), kExitFits) << err;
  EXPECT_THAT(out, HasSubstr("\nfamilies triton_matmul_splitk "));
  EXPECT_THAT(out, HasSubstr("  rank family "));
  EXPECT_THAT(out, HasSubstr("     1 triton_matmul_splitk "));
}

TEST_F(PlanFamiliesCommandTest, ASetNoGraphHasIsExitTwoNamingIt) {
  std::string out, err;
  EXPECT_EQ(RunPlan(Args({"--set", "SPLITK=4"}), &out, &err), kExitBadInput);
  EXPECT_THAT(err, HasSubstr("--set SPLITK=4: no graph given has a parameter 'SPLITK'"));
  EXPECT_EQ(out, "");
}

TEST_F(PlanFamiliesCommandTest, TwoGraphsOfOneNameAreExitTwo) {
  std::string out, err;
  EXPECT_EQ(RunPlan({"--device", "h200", "--graph", ExampleGraphPath("triton_matmul.pbtxt"), "--graph",
                     ExampleGraphPath("triton_matmul.pbtxt")},
                    &out, &err),
            kExitBadInput);
  EXPECT_THAT(err, HasSubstr("the graph is named 'triton_matmul', as "));
  EXPECT_EQ(out, "");
}

TEST_F(PlanFamiliesCommandTest, OutputIsIdenticalAcrossThreadCounts) {
  for (const char* format : {"text", "json", "csv"}) {
    std::string one, four, err;
    ASSERT_EQ(RunPlan(Args({"--format", format, "--top", "30", "--threads", "1"}), &one, &err), kExitFits) << err;
    ASSERT_EQ(RunPlan(Args({"--format", format, "--top", "30", "--threads", "4"}), &four, &err), kExitFits) << err;
    EXPECT_EQ(one, four) << format;
  }
}

TEST_F(PlanFamiliesCommandTest, AMapOfSeveralGraphsIsExitTwo) {
  std::string out, err;
  EXPECT_EQ(RunPlan(Args({"--map", ::testing::TempDir() + "/families.svg"}), &out, &err), kExitBadInput);
  EXPECT_THAT(err, HasSubstr("--map draws one graph's space: give one --graph, not 2"));
}

// `--registers FILE`: a compiler's registers per configuration (CompiledRegisters), one fixture.
class PlanRegistersCommandTest : public ::testing::Test {
 protected:
  // A file of `text` (textproto), returned by path.
  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = ::testing::TempDir() + "/" + name;
    std::ofstream(path) << text;
    return path;
  }
  std::vector<std::string> Args(const std::vector<std::string>& more) {
    std::vector<std::string> args = {"--device", "h200", "--graph", ExampleGraphPath("triton_matmul.pbtxt"),
                                     "--set", "M=64", "--set", "N=28672", "--set", "K=8192", "--set", "ELT=4",
                                     "--compute-dtype", "tf32", "--param", "BLOCK_M=32", "--param", "BLOCK_N=256",
                                     "--param", "BLOCK_K=32", "--param", "NUM_STAGES=3,4", "--param", "NUM_WARPS=4",
                                     "--format", "json"};
    args.insert(args.end(), more.begin(), more.end());
    return args;
  }
  // ptxas's figures for 32 x 256 x 32, 3 stages, 4 warps, f32 (the H200 sweeps' compiles).
  const std::string figures_ = R"pb(graph: "triton_matmul" target: "sm_90" compiler: "Triton 3.6.0"
configs { sets: "BLOCK_M=32" sets: "BLOCK_N=256" sets: "BLOCK_K=32" sets: "NUM_STAGES=3" sets: "NUM_WARPS=4"
          sets: "ELT=4" registers: 167 })pb";
};

TEST_F(PlanRegistersCommandTest, AConfigurationItNamesHasTheCompilersRegisters) {
  std::string out, err;
  const std::string path = Write("registers.textproto", figures_);
  ASSERT_EQ(RunPlan(Args({"--registers", path}), &out, &err), kExitFits) << err;
  EXPECT_THAT(out, HasSubstr("\"registers_per_thread\": 167, \"registers_from\": \"compiler\""));
  EXPECT_THAT(out, HasSubstr("registers of 1 compiled configurations of triton_matmul from " + path +
                             " (Triton 3.6.0, keyed by BLOCK_M, BLOCK_N, BLOCK_K, NUM_STAGES, NUM_WARPS, ELT): 1 of the 2 "
                             "ranked configurations"));
}

TEST_F(PlanRegistersCommandTest, AProblemTheCompilesDidNotAssumeIsNamedInTheNote) {
  std::string out, err;
  const std::string path = Write("registers_aligned.textproto", figures_ + "\ncompiled_where: \"N % 16 == 0\"");
  std::vector<std::string> args = Args({"--registers", path});
  *std::find(args.begin(), args.end(), "N=28672") = "N=28675";
  // At 4 warps an unaligned f32 B's 4-byte copies spill this tile (rules/triton_dot.pbtxt,
  // UNALIGNED_F32_B_REGISTERS); at 8 it fits, and the table names 4 warps only.
  *std::find(args.begin(), args.end(), "NUM_WARPS=4") = "NUM_WARPS=8";
  ASSERT_EQ(RunPlan(args, &out, &err), kExitFits) << err;
  EXPECT_THAT(out, ::testing::Not(HasSubstr("registers_from")));
  EXPECT_THAT(out, HasSubstr("keyed by BLOCK_M, BLOCK_N, BLOCK_K, NUM_STAGES, NUM_WARPS, ELT, compiled where N % 16 == 0): "
                             "0 of the 2 ranked configurations"));
  EXPECT_THAT(out, HasSubstr("(2 because this problem breaks N % 16 == 0: the compiler's kernel for it is another)"));
}

TEST_F(PlanRegistersCommandTest, WithoutTheFlagTheEstimateStands) {
  std::string out, err;
  ASSERT_EQ(RunPlan(Args({}), &out, &err), kExitFits) << err;
  EXPECT_THAT(out, ::testing::Not(HasSubstr("registers_from")));
}

TEST_F(PlanRegistersCommandTest, AnotherTargetsFileIsExitTwoNamingTheFileAndField) {
  std::string out, err;
  const std::string path = Write("registers_sm80.textproto", absl::StrReplaceAll(figures_, {{"sm_90", "sm_80"}}));
  EXPECT_EQ(RunPlan(Args({"--registers", path}), &out, &err), kExitBadInput);
  EXPECT_THAT(err, HasSubstr(path + ": target: 'sm_80' is not the architecture of device 'h200'"));
  EXPECT_EQ(out, "");
}

TEST_F(PlanRegistersCommandTest, AFileForAGraphNotPlannedIsExitTwo) {
  std::string out, err;
  const std::string path = Write("registers_gemm.textproto", absl::StrReplaceAll(figures_, {{"\"triton_matmul\"", "\"gemm\""}}));
  EXPECT_EQ(RunPlan(Args({"--registers", path}), &out, &err), kExitBadInput);
  EXPECT_THAT(err, HasSubstr("--registers " + path + ": graph: 'gemm' is not a planned graph ('triton_matmul')"));
}

TEST_F(PlanRegistersCommandTest, TwoFilesForOneGraphAreExitTwoNamingBoth) {
  std::string out, err;
  const std::string first = Write("registers_a.textproto", figures_);
  const std::string second = Write("registers_b.textproto", figures_);
  EXPECT_EQ(RunPlan(Args({"--registers", first, "--registers", second}), &out, &err), kExitBadInput);
  EXPECT_THAT(err, HasSubstr("--registers " + second + ": graph: 'triton_matmul' is named by --registers " + first +
                             " too: give one file per graph"));
  EXPECT_EQ(out, "");
}

TEST_F(PlanRegistersCommandTest, AMalformedFileIsExitTwoNamingIt) {
  std::string out, err;
  const std::string path = Write("registers_bad.textproto", "graph: \"triton_matmul\" configs { registers: \"many\" }");
  EXPECT_EQ(RunPlan(Args({"--registers", path}), &out, &err), kExitBadInput);
  EXPECT_THAT(err, HasSubstr(path));
}

TEST_F(PlanRegistersCommandTest, AMissingFileIsExitTwoNamingIt) {
  std::string out, err;
  EXPECT_EQ(RunPlan(Args({"--registers", "/nonexistent/registers.textproto"}), &out, &err), kExitBadInput);
  EXPECT_THAT(err, HasSubstr("/nonexistent/registers.textproto"));
}

}  // namespace
}  // namespace scratchsim
