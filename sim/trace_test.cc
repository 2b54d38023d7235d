#include "sim/trace.h"

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "sim/svg_text.h"

namespace scratchsim {
namespace {

using ::google::protobuf::Struct;
using ::google::protobuf::Value;

Report ParseReport(const std::string& text) {
  Report report;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &report)) << text;
  return report;
}

// a (2 copies) over ops 0..1, c over 1..2, s (program-scoped VMEM) over 0..2.
constexpr char kReport[] = R"pb(
  kernel: "k" device: "tpu_v5e" fits: true ops: "load" ops: "mma" ops: "store"
  spaces {
    space: "vmem" kind: VMEM limit_bytes: 98304 program_scoped_bytes: 512
    placements { buffer: "a" copy: 0 offset: 0 size_bytes: 1000 live_start: 0 live_end: 1 }
    placements { buffer: "a" copy: 1 offset: 1024 size_bytes: 1000 live_start: 0 live_end: 1 }
    placements { buffer: "c" copy: 0 offset: 0 size_bytes: 300 live_start: 2 live_end: 2 }
    placements { buffer: "s" copy: 0 offset: 0 size_bytes: 512 live_start: 0 live_end: 2 region: "program" }
    buffers { buffer: "a" copies: 2 bytes_per_copy: 1000 shape: "10x25xf32" dtype: "f32" }
  }
)pb";

// The trace parsed back: protobuf's JSON reader takes any JSON object as a Struct.
Struct Parse(const std::string& json) {
  Struct parsed;
  const auto status = google::protobuf::util::JsonStringToMessage(json, &parsed);
  EXPECT_TRUE(status.ok()) << status << "\n" << json;
  return parsed;
}

std::vector<const Struct*> Events(const Struct& trace, const std::string& phase) {
  std::vector<const Struct*> events;
  for (const Value& v : trace.fields().at("traceEvents").list_value().values()) {
    if (v.struct_value().fields().at("ph").string_value() == phase) events.push_back(&v.struct_value());
  }
  return events;
}

double Num(const Struct& s, const std::string& key) { return s.fields().at(key).number_value(); }
std::string Str(const Struct& s, const std::string& key) { return s.fields().at(key).string_value(); }

TEST(TraceTest, IsJsonWithATraceEventList) {
  const Struct trace = Parse(RenderTraceJson(ParseReport(kReport)));
  ASSERT_TRUE(trace.fields().contains("traceEvents"));
  EXPECT_EQ(Str(trace.fields().at("otherData").struct_value(), "kernel"), "k");
}

TEST(TraceTest, EachPlacementIsASliceOverItsLiveRange) {
  const Struct trace = Parse(RenderTraceJson(ParseReport(kReport)));
  std::vector<std::string> slices;
  for (const Struct* e : Events(trace, "X")) {
    if (Num(*e, "pid") == 0) continue;  // the ops
    slices.push_back(absl::StrCat(Str(*e, "name"), "@", Num(*e, "ts"), "+", Num(*e, "dur")));
  }
  EXPECT_THAT(slices, ::testing::ElementsAre("a@0+2", "a@0+2", "c@2+1", "s@0+3"));
}

TEST(TraceTest, SlicesCarryCopyOffsetBytesShapeAndDtype) {
  const Struct trace = Parse(RenderTraceJson(ParseReport(kReport)));
  const Struct& args = Events(trace, "X")[3]->fields().at("args").struct_value();  // after the 3 ops: a copy 0
  EXPECT_EQ(Num(args, "copy"), 0);
  EXPECT_EQ(Num(args, "offset"), 0);
  EXPECT_EQ(Num(args, "bytes"), 1000);
  EXPECT_EQ(Num(args, "copies"), 2);
  EXPECT_EQ(Str(args, "shape"), "10x25xf32");
  EXPECT_EQ(Str(args, "dtype"), "f32");
}

TEST(TraceTest, OverlappingPlacementsGetTracksOfTheirOwnAndFreedTracksAreReused) {
  const Struct trace = Parse(RenderTraceJson(ParseReport(kReport)));
  std::vector<double> tids;
  for (const Struct* e : Events(trace, "X")) {
    if (Num(*e, "pid") == 1) tids.push_back(Num(*e, "tid"));
  }
  EXPECT_THAT(tids, ::testing::ElementsAre(1, 2, 1));  // c reuses a copy 0's track once it is dead
}

TEST(TraceTest, CounterFollowsTheLiveBytes) {
  const Struct trace = Parse(RenderTraceJson(ParseReport(kReport)));
  std::vector<std::string> live;
  for (const Struct* e : Events(trace, "C")) {
    if (Str(*e, "name") != "vmem (scoped) live") continue;
    live.push_back(absl::StrCat(Num(*e, "ts"), ":", Num(e->fields().at("args").struct_value(), "bytes")));
  }
  EXPECT_THAT(live, ::testing::ElementsAre("0:2000", "2:300", "3:0"));
}

TEST(TraceTest, TheLimitIsACounterToo) {
  const Struct trace = Parse(RenderTraceJson(ParseReport(kReport)));
  int limits = 0;
  for (const Struct* e : Events(trace, "C")) {
    if (Str(*e, "name") == "vmem (scoped) limit") {
      EXPECT_EQ(Num(e->fields().at("args").struct_value(), "bytes"), 98304);
      ++limits;
    }
  }
  EXPECT_EQ(limits, 2);  // at the start and past the end
}

TEST(TraceTest, ProgramScopedVmemIsAProcessOfItsOwn) {
  const Struct trace = Parse(RenderTraceJson(ParseReport(kReport)));
  std::vector<std::string> processes;
  for (const Struct* e : Events(trace, "M")) {
    if (Str(*e, "name") == "process_name") processes.push_back(Str(e->fields().at("args").struct_value(), "name"));
  }
  EXPECT_THAT(processes, ::testing::ElementsAre("ops", "vmem (scoped)", "vmem (program-scoped)"));
}

TEST(TraceTest, OpsAreNamedOnATrackOfTheirOwn) {
  const Struct trace = Parse(RenderTraceJson(ParseReport(kReport)));
  std::vector<std::string> ops;
  for (const Struct* e : Events(trace, "X")) {
    if (Num(*e, "pid") == 0) ops.push_back(Str(*e, "name"));
  }
  EXPECT_THAT(ops, ::testing::ElementsAre("load", "mma", "store"));
}

TEST(TraceTest, NamesAreJsonEscaped) {
  Report report = ParseReport(kReport);
  report.mutable_spaces(0)->mutable_placements(0)->set_buffer("we\"ird\\\n");
  const Struct trace = Parse(RenderTraceJson(report));
  EXPECT_EQ(Str(*Events(trace, "X")[3], "name"), "we\"ird\\\n");
}

TEST(TraceTest, AReportWithoutPlacementsIsAnEmptyTrace) {
  const Struct trace = Parse(RenderTraceJson(ParseReport("kernel: \"k\"")));
  EXPECT_TRUE(Events(trace, "X").empty());
}

// `n` placements of growing size over `n` ops, each live over its own op and the next.
Report ManyPlacements(int n) {
  Report report;
  report.set_kernel("k");
  report.set_device("h100");
  SpaceReport* space = report.add_spaces();
  space->set_space("smem");
  space->set_limit_bytes(232448);
  for (int i = 0; i < n; ++i) {
    report.add_ops(absl::StrCat("op", i));
    Placement* p = space->add_placements();
    p->set_buffer(absl::StrCat("b", i));
    p->set_size_bytes(16 + i);
    p->set_offset(0);
    p->set_live_start(i);
    p->set_live_end(std::min(i + 1, n - 1));
  }
  return report;
}

// F15 (issue 37): a million buffers traced to 288 MB. Beyond kMaxTraceSlices slices the largest
// placements stay slices of their own, the rest and the ops are merged into spans, and the trace
// says what it merged.
TEST(TraceTest, ATraceOfMoreSlicesThanTheBoundIsSummarised) {
  const std::string json = RenderTraceJson(ManyPlacements(200000));
  const Struct trace = Parse(json);
  EXPECT_LE(Events(trace, "X").size(), static_cast<size_t>(kMaxTraceSlices));
  EXPECT_LE(Events(trace, "C").size(), static_cast<size_t>(kMaxTraceSlices) / 2);
  EXPECT_THAT(Str(trace.fields().at("otherData").struct_value(), "summarised"),
              ::testing::StartsWith("200000 ops and 167232 placements merged into spans of "));
  bool largest = false, merged = false, ops = false;
  for (const Struct* e : Events(trace, "X")) {
    largest = largest || Str(*e, "name") == "b199998";  // the largest (199999 lives one position)
    merged = merged || absl::EndsWith(Str(*e, "name"), " placements merged");
    ops = ops || absl::StartsWith(Str(*e, "name"), "ops 0..");
  }
  EXPECT_TRUE(largest);
  EXPECT_TRUE(merged);
  EXPECT_TRUE(ops);
  EXPECT_LT(json.size(), size_t{32} << 20);
}

// Up to the bound every op and placement is a slice of its own.
TEST(TraceTest, ATraceAtTheBoundKeepsEverySlice) {
  const Struct trace = Parse(RenderTraceJson(ManyPlacements(kMaxTraceSlices / 2)));
  EXPECT_EQ(Events(trace, "X").size(), static_cast<size_t>(kMaxTraceSlices));
  EXPECT_FALSE(trace.fields().at("otherData").struct_value().fields().contains("summarised"));
}

}  // namespace
}  // namespace scratchsim
