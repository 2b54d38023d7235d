#include "sim/timeline.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "sim/simulator.h"
#include "sim/test_util.h"

namespace scratchsim {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing::ShippedDevice;

Report ParseReport(const std::string& text) {
  Report report;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &report)) << text;
  return report;
}

// Two buffers in shared memory, one double-buffered, over 3 ops; 160 KiB against a 96 KiB limit.
constexpr char kOverLimit[] = R"pb(
  kernel: "k" device: "h100" fits: false ops: "load" ops: "mma" ops: "store"
  spaces {
    space: "smem" kind: SHARED_MEMORY peak_bytes: 163840 limit_bytes: 98304 limit_name: "test limit"
    placements { buffer: "a_tile" copy: 0 offset: 0 size_bytes: 65536 live_start: 0 live_end: 1 }
    placements { buffer: "a_tile" copy: 1 offset: 65536 size_bytes: 65536 live_start: 0 live_end: 1 }
    placements { buffer: "c_acc" copy: 0 offset: 131072 size_bytes: 32768 live_start: 1 live_end: 2 }
    buffers { buffer: "a_tile" copies: 2 bytes_per_copy: 65536 shape: "128x256xf16" dtype: "f16" }
    buffers { buffer: "c_acc" copies: 1 bytes_per_copy: 32768 shape: "64x128xf32" dtype: "f32" }
  }
)pb";

std::string Render(const std::string& report_text, const std::string& device = "h100", TimelineOptions options = {}) {
  return RenderTimelineSvg(ParseReport(report_text), ShippedDevice(device), options);
}

int Count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(TimelineTest, IsOneSvgDocumentWithoutScriptsOrExternalReferences) {
  const std::string svg = Render(kOverLimit);
  EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
  EXPECT_EQ(svg.substr(svg.size() - 7), "</svg>\n");
  EXPECT_THAT(svg, Not(HasSubstr("<script")));
  EXPECT_THAT(svg, Not(HasSubstr("href")));
  EXPECT_THAT(svg, Not(HasSubstr("http://www.w3.org/1999")));  // no xlink, no XHTML
}

TEST(TimelineTest, EachCopyIsARectangleWithAHoverTitle) {
  const std::string svg = Render(kOverLimit);
  EXPECT_THAT(svg, HasSubstr("<title>a_tile, copy 0 of 2\n128x256xf16 (f16)\n65536 B (64.0 KiB) at offset 0..65535\n"
                             "live ops 0..1 (load .. mma)</title>"));
  EXPECT_THAT(svg, HasSubstr("<title>a_tile, copy 1 of 2\n128x256xf16 (f16)\n65536 B (64.0 KiB) at offset "
                             "65536..131071\nlive ops 0..1 (load .. mma)</title>"));
  EXPECT_THAT(svg, HasSubstr("<title>c_acc\n64x128xf32 (f32)\n32768 B (32.0 KiB) at offset 131072..163839\n"
                             "live ops 1..2 (mma .. store)</title>"));
}

TEST(TimelineTest, RectangleSpansTheLiveRangeAtTheOffset) {
  TimelineOptions options;
  options.plot_width = 300;  // 100 px per op
  options.plot_height = 340;
  const std::string svg = Render(kOverLimit, "h100", options);
  // x from op 1 (84 + 100) for two ops; y below the 88 px of headers on a scale to the capacity
  // (233472 B) and a sixteenth: 32768 B * 340 / 248064 px high.
  EXPECT_THAT(svg, HasSubstr("<rect x=\"184\" y=\"203.4\" width=\"200\" height=\"44.9\""));
}

TEST(TimelineTest, LabelsOnlyWhereTheNameFits) {
  TimelineOptions wide;
  EXPECT_THAT(Render(kOverLimit, "h100", wide), HasSubstr(">a_tile #1</text>"));
  TimelineOptions narrow;
  narrow.plot_width = 90;  // 30 px per op: no name fits
  EXPECT_THAT(Render(kOverLimit, "h100", narrow), Not(HasSubstr(">a_tile #1</text>")));
}

TEST(TimelineTest, LimitAndCapacityAreHorizontalLines) {
  const std::string svg = Render(kOverLimit);
  EXPECT_THAT(svg, HasSubstr(">limit 96.0 KiB (test limit)</text>"));
  EXPECT_THAT(svg, HasSubstr(">capacity 228.0 KiB per core</text>"));  // the H100's shared memory per SM
  EXPECT_EQ(Count(svg, "stroke=\"#c0392b\" stroke-width=\"1.6\""), 1);
}

TEST(TimelineTest, ThePartOverTheLimitIsHatched) {
  TimelineOptions options;
  options.plot_width = 300;
  options.plot_height = 340;
  // The limit (96 KiB) at 428 - 98304 * 340 / 248064 px: a_tile #1 and c_acc reach above it.
  const std::string svg = Render(kOverLimit, "h100", options);
  EXPECT_THAT(svg, HasSubstr("<g fill=\"url(#over)\" pointer-events=\"none\">\n"
                             "<rect x=\"84\" y=\"248.4\" width=\"200\" height=\"44.9\"/>\n"
                             "<rect x=\"184\" y=\"203.4\" width=\"200\" height=\"44.9\"/>\n</g>"));
  std::string fits = kOverLimit;
  fits.replace(fits.find("limit_bytes: 98304"), 18, "limit_bytes: 232448");
  EXPECT_THAT(Render(fits), Not(HasSubstr("fill=\"url(#over)\"")));
}

TEST(TimelineTest, LinesFarAboveTheDataAreNamedNotDrawn) {
  const std::string svg = Render(R"pb(
    kernel: "k" device: "tpu_v5e" fits: true
    spaces { space: "vmem" kind: VMEM limit_bytes: 16777216 limit_name: "scoped VMEM limit"
             placements { buffer: "q" offset: 0 size_bytes: 4096 live_start: 0 live_end: 0 } })pb",
                                 "tpu_v5e");
  EXPECT_THAT(svg, HasSubstr("; limit 16.0 MiB (scoped VMEM limit) off the scale; capacity 128.0 MiB off the scale"));
  EXPECT_THAT(svg, Not(HasSubstr("per core</text>")));
  EXPECT_THAT(svg, Not(HasSubstr("stroke-dasharray=\"7 4\"")));
}

TEST(TimelineTest, ProgramScopedVmemHasAPanelOfItsOwn) {
  const std::string svg = Render(R"pb(
    kernel: "k" device: "tpu_v5e" fits: true
    spaces { space: "vmem" kind: VMEM limit_bytes: 16777216 limit_name: "scoped VMEM limit"
             program_scoped_bytes: 1024 instruction_scoped_bytes: 4096
             placements { buffer: "q" offset: 0 size_bytes: 4096 live_start: 0 live_end: 0 }
             placements { buffer: "acc" offset: 0 size_bytes: 1024 live_start: 0 live_end: 0 region: "program" } })pb",
                                 "tpu_v5e");
  EXPECT_THAT(svg, HasSubstr(">vmem (scoped): top 4.0 KiB"));
  EXPECT_THAT(svg, HasSubstr(">vmem (program-scoped): top 1.0 KiB"));
  EXPECT_THAT(svg, HasSubstr("acc\n1024 B (1.0 KiB) at offset 0..1023\nlive ops 0..0\nprogram-scoped</title>"));
}

TEST(TimelineTest, StaticSharedMemoryIsSaidOnHover) {
  const std::string svg = Render(R"pb(
    kernel: "k" device: "h100" fits: true
    spaces { space: "smem" limit_bytes: 232448
             placements { buffer: "s" offset: 0 size_bytes: 1024 live_start: 0 live_end: 0 region: "static" } })pb");
  EXPECT_THAT(svg, HasSubstr("static __shared__ (laid out first)</title>"));
}

TEST(TimelineTest, AnImportedBuffersSourceIsSaidOnHover) {
  const std::string svg = Render(R"pb(
    kernel: "k" device: "h100" fits: true
    spaces { space: "smem" limit_bytes: 232448
             placements { buffer: "b0_a" offset: 0 size_bytes: 1024 live_start: 0 live_end: 0 }
             buffers { buffer: "b0_a" copies: 1 bytes_per_copy: 1024 shape: "2x16x16xf16" source: "a at k.py:12" } })pb");
  EXPECT_THAT(svg, HasSubstr("<title>b0_a\n2x16x16xf16\nsource: a at k.py:12\n1024 B"));
}

TEST(TimelineTest, NamesAreEscaped) {
  const std::string svg = Render(R"pb(
    kernel: "a<b>&\"c\"" device: "h100" fits: true
    spaces { space: "smem" limit_bytes: 232448
             placements { buffer: "x<&>'\"" offset: 0 size_bytes: 1024 live_start: 0 live_end: 0 } })pb");
  EXPECT_THAT(svg, HasSubstr("x&lt;&amp;&gt;&apos;&quot;"));
  EXPECT_THAT(svg, HasSubstr("a&lt;b&gt;&amp;&quot;c&quot;"));
  EXPECT_THAT(svg, Not(HasSubstr("x<&")));
}

TEST(TimelineTest, TheLegendNamesEachBufferOnce) {
  const std::string svg = Render(kOverLimit);
  EXPECT_THAT(svg, HasSubstr(">a_tile  128x256xf16 x2  128.0 KiB</text>"));
  EXPECT_THAT(svg, HasSubstr(">c_acc  64x128xf32  32.0 KiB</text>"));
}

TEST(TimelineTest, FewOpsAreNamedOnTheAxis) {
  const std::string svg = Render(kOverLimit);
  EXPECT_THAT(svg, HasSubstr(">mma<title>op 1: mma</title></text>"));
}

// 100,000 placements of 2 ops each in a 10,000-op graph: the small ones are merged, the file
// stays far below 5 MB, and every placement still counts.
Report ManyPlacements(int n) {
  Report report;
  report.set_kernel("many");
  report.set_device("h100");
  SpaceReport* space = report.add_spaces();
  space->set_space("smem");
  space->set_limit_bytes(232448);
  for (int i = 0; i < n; ++i) {
    Placement* p = space->add_placements();
    p->set_buffer(absl::StrCat("b", i));
    p->set_offset((i % 50) * 4096);
    p->set_size_bytes(4096);
    p->set_live_start(i / 10);
    p->set_live_end(i / 10 + 1);
  }
  // A few large long-lived ones that stay visible.
  for (int i = 0; i < 3; ++i) {
    Placement* p = space->add_placements();
    p->set_buffer(absl::StrCat("big", i));
    p->set_offset(204800 + i * 8192);
    p->set_size_bytes(8192);
    p->set_live_start(0);
    p->set_live_end(n / 10);
  }
  return report;
}

TEST(TimelineTest, WhatCannotBeSeenIsMergedIntoOneShape) {
  const std::string svg = RenderTimelineSvg(ManyPlacements(100000), ShippedDevice("h100"));
  EXPECT_LT(svg.size(), 5u << 20);
  EXPECT_EQ(Count(svg, "<path "), 1);
  EXPECT_THAT(svg, HasSubstr("<title>100000 placements (409600000 B (390.6 MiB) in all) too small"));
  EXPECT_THAT(svg, HasSubstr("big2\n8192 B"));  // still drawn one by one
  EXPECT_THAT(svg, HasSubstr("100003 placements of 100003 buffers (100000 too small to see"));
}

TEST(TimelineTest, EvenTheWorstCaseStaysUnder5MB) {
  // 100,000 placements with long names in 100 rows: 10,000 ten ops wide (visible, more than the
  // budget: as many as it allows drawn one by one and titled), 90,000 one op wide (merged).
  Report report;
  report.set_kernel("worst");
  SpaceReport* space = report.add_spaces();
  space->set_space("smem");
  space->set_limit_bytes(232448);
  for (int i = 0; i < 100000; ++i) {
    Placement* p = space->add_placements();
    p->set_buffer(absl::StrCat("a_rather_long_buffer_name_to_make_titles_heavy_", i));
    p->set_offset((i % 100) * 8192);
    p->set_size_bytes(8192);
    const int start = i < 10000 ? 10 * (i / 100) : 1000 + (i - 10000) / 100;
    p->set_live_start(start);
    p->set_live_end(i < 10000 ? start + 9 : start);
  }
  const std::string svg = RenderTimelineSvg(report, ShippedDevice("h100"));
  EXPECT_LT(svg.size(), 5u << 20);
  EXPECT_EQ(Count(svg, "</title></rect>"), TimelineOptions().max_shapes);
  EXPECT_EQ(Count(svg, "<path "), 1);
}

TEST(TimelineTest, FewPlacementsAreNeverMerged) {
  EXPECT_THAT(Render(kOverLimit), Not(HasSubstr("<path ")));
}

TEST(TimelineTest, IsDeterministic) { EXPECT_EQ(Render(kOverLimit), Render(kOverLimit)); }

TEST(TimelineTest, DrawsASimulatedReport) {
  const CompiledGraph mlp = testing::CompileExampleGraph("mlp.pbtxt");
  const DeviceModel h100 = ShippedDevice("h100");
  absl::StatusOr<std::vector<int64_t>> values = BindParameters(mlp, {});
  ASSERT_TRUE(values.ok());
  SimulateOptions options;
  options.keep_buffers = true;
  options.suggest = false;
  absl::StatusOr<Report> report = Simulate(mlp, h100, *values, options);
  ASSERT_TRUE(report.ok()) << report.status();
  const std::string svg = RenderTimelineSvg(*report, h100);
  EXPECT_EQ(Count(svg, "</title></rect>"), 6);  // 3 buffers, 2 copies each
  EXPECT_THAT(svg, HasSubstr("<title>x_tile, copy 1 of 2\n16x16xf32 (f32)\n1024 B (1.0 KiB) at offset 525312..526335"));
  EXPECT_THAT(svg, HasSubstr(">DOES NOT FIT</tspan>"));
}

}  // namespace
}  // namespace scratchsim
