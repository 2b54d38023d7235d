// The pictures as a person sees them, through the command line: `simulate --timeline`,
// `--trace` and `simulate plan --map` write files that xmllint finds well-formed and headless
// Chromium renders (a screenshot with something drawn in it, the buffer names in the DOM, no
// console message, no XML error page). Each check is skipped, saying why, where its tool is
// absent (.ci/install installs both). The seed kernel's SVG and trace are golden files;
// SCRATCHSIM_UPDATE_GOLDEN=1 rewrites them and the screenshots docs/pictures.md shows.
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "sim/driver/cli.h"
#include "sim/driver/cli_test_util.h"
#include "sim/frontend.h"

namespace scratchsim {
namespace {

using ::testing::HasSubstr;

std::string Source(const std::string& relative) { return std::string(SCRATCHSIM_SOURCE_DIR) + "/" + relative; }

bool Updating() {
  const char* update = std::getenv("SCRATCHSIM_UPDATE_GOLDEN");
  return update != nullptr && std::string(update) == "1";
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A fresh directory for one test.
std::string TempDir(const std::string& name) {
  const std::string dir = absl::StrCat(::testing::TempDir(), "/scratchsim_pictures_", name, "_", getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

using CommandRun = testing::CliRun;

CommandRun Simulate(const std::vector<std::string>& args) { return testing::RunCli(args); }

bool HasFrontEnd(const std::string& name) {
  for (const auto& front_end : FrontEnds()) {
    if (front_end->name() == name) return true;
  }
  return false;
}

bool HasProgram(const std::string& name) {
  return std::system(absl::StrCat("command -v ", name, " >/dev/null 2>&1").c_str()) == 0;
}

// Runs a shell command, its output to `log`; the exit status.
int Shell(const std::string& command, const std::string& log) {
  const int status = std::system(absl::StrCat(command, " >", log, " 2>&1").c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// ---------------------------------------------------------------------------------------------
// A PNG read back (8-bit RGB or RGBA, not interlaced: what Chromium writes), to see that
// something was drawn.

struct Image {
  int width = 0;
  int height = 0;
  std::vector<uint8_t> rgb;  // 3 bytes a pixel
};

uint32_t BigEndian(const std::string& s, size_t at) {
  return (uint32_t{static_cast<uint8_t>(s[at])} << 24) | (uint32_t{static_cast<uint8_t>(s[at + 1])} << 16) |
         (uint32_t{static_cast<uint8_t>(s[at + 2])} << 8) | uint32_t{static_cast<uint8_t>(s[at + 3])};
}

bool DecodePng(const std::string& png, Image* image, std::string* why) {
  if (png.size() < 8 || png.compare(0, 8, "\x89PNG\r\n\x1a\n") != 0) {
    *why = "not a PNG";
    return false;
  }
  int channels = 0;
  std::string idat;
  for (size_t at = 8; at + 8 <= png.size();) {
    const uint32_t length = BigEndian(png, at);
    const std::string type = png.substr(at + 4, 4);
    if (at + 12 + length > png.size()) break;
    if (type == "IHDR") {
      image->width = static_cast<int>(BigEndian(png, at + 8));
      image->height = static_cast<int>(BigEndian(png, at + 12));
      const int depth = static_cast<uint8_t>(png[at + 16]), color = static_cast<uint8_t>(png[at + 17]);
      const int interlace = static_cast<uint8_t>(png[at + 20]);
      channels = color == 6 ? 4 : color == 2 ? 3 : 0;
      if (depth != 8 || channels == 0 || interlace != 0) {
        *why = absl::StrCat("unsupported PNG: depth ", depth, ", colour type ", color, ", interlace ", interlace);
        return false;
      }
    } else if (type == "IDAT") {
      idat += png.substr(at + 8, length);
    }
    at += 12 + length;
  }
  const size_t stride = static_cast<size_t>(image->width) * channels;
  std::vector<uint8_t> raw((stride + 1) * image->height);
  uLongf raw_size = raw.size();
  if (channels == 0 || uncompress(raw.data(), &raw_size, reinterpret_cast<const Bytef*>(idat.data()), idat.size()) != Z_OK ||
      raw_size != raw.size()) {
    *why = "the image data does not inflate to its size";
    return false;
  }
  std::vector<uint8_t> prior(stride, 0), row(stride);
  image->rgb.clear();
  for (int y = 0; y < image->height; ++y) {
    const uint8_t filter = raw[y * (stride + 1)];
    const uint8_t* in = &raw[y * (stride + 1) + 1];
    for (size_t x = 0; x < stride; ++x) {
      const int a = x >= static_cast<size_t>(channels) ? row[x - channels] : 0, b = prior[x];
      const int c = x >= static_cast<size_t>(channels) ? prior[x - channels] : 0;
      int predictor = 0;
      switch (filter) {
        case 0: predictor = 0; break;
        case 1: predictor = a; break;
        case 2: predictor = b; break;
        case 3: predictor = (a + b) / 2; break;
        case 4: {
          const int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
          predictor = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
          break;
        }
        default: *why = "bad PNG filter"; return false;
      }
      row[x] = static_cast<uint8_t>(in[x] + predictor);
    }
    for (int x = 0; x < image->width; ++x) {
      for (int k = 0; k < 3; ++k) image->rgb.push_back(row[x * channels + k]);
    }
    prior = row;
  }
  return true;
}

// The share of pixels that are not white, and how many colours there are (capped).
void Inspect(const Image& image, double* drawn, int* colours) {
  size_t not_white = 0;
  std::vector<uint32_t> seen;
  for (size_t i = 0; i + 2 < image.rgb.size(); i += 3) {
    const uint32_t rgb = (uint32_t{image.rgb[i]} << 16) | (uint32_t{image.rgb[i + 1]} << 8) | image.rgb[i + 2];
    if (rgb != 0xffffff) ++not_white;
    if (seen.size() < 64 && std::find(seen.begin(), seen.end(), rgb) == seen.end()) seen.push_back(rgb);
  }
  *drawn = image.rgb.empty() ? 0 : static_cast<double>(not_white) / (image.rgb.size() / 3);
  *colours = static_cast<int>(seen.size());
}

// ---------------------------------------------------------------------------------------------
// The pictures: how each is made, and what must be in it.

struct Picture {
  std::string id;                      // the file name's stem; docs/img/<id>.png where `docs`
  std::vector<std::string> args;       // FILE stands for the picture's path
  std::string front_end;               // needed, if any
  std::vector<std::string> names;      // must be in the rendered DOM
  bool docs = false;
};

std::vector<Picture> Pictures() {
  return {
      {"mlp_h100_timeline",
       {"--device", "h100", "--graph", Source("models/graphs/mlp.pbtxt"), "--timeline", "FILE"},
       "",
       {"gate_tile", "up_tile", "x_tile", "load_x", "limit 227.0 KiB"},
       true},
      {"tpu_flash_attention_v5e_timeline",
       {"--device", "tpu_v5e", "--graph", Source("models/graphs/tpu_flash_attention.pbtxt"), "--timeline", "FILE"},
       "tpu",
       {"acc_scratch", "m_scratch", "vmem"},
       true},
      {"pipelined_ttgir_h100_timeline",
       {"--device", "h100", "--ttgir", Source("backends/triton/testdata/pipelined.ttgir"), "--timeline", "FILE"},
       "triton",
       {"smem"},
       false},
      {"gemm_b200_map",
       {"plan", "--device", "b200", "--graph", Source("models/graphs/gemm.pbtxt"), "--map", "FILE", "--map-axes",
        "BLOCK_M,BLOCK_N"},
       "",
       {"BLOCK_M", "BLOCK_N", "pruned by", "#1"},
       true},
  };
}

// Makes the picture in `dir`; its path, or empty (and a failure) where the command failed.
std::string Make(const Picture& picture, const std::string& dir) {
  const std::string path = absl::StrCat(dir, "/", picture.id, ".svg");
  std::vector<std::string> args = picture.args;
  for (std::string& a : args) {
    if (a == "FILE") a = path;
  }
  const CommandRun run = Simulate(args);
  EXPECT_LE(run.code, 1) << run.err;  // 0 fits, 1 does not: either way it is drawn
  if (run.code > 1 || !std::filesystem::exists(path)) return "";
  return path;
}

class PictureTest : public ::testing::TestWithParam<Picture> {
 protected:
  void SetUp() override {
    if (!GetParam().front_end.empty() && !HasFrontEnd(GetParam().front_end)) {
      GTEST_SKIP() << "built without the " << GetParam().front_end << " front end";
    }
  }
};

TEST_P(PictureTest, IsWellFormedXml) {
  if (!HasProgram("xmllint")) GTEST_SKIP() << "xmllint not installed (Debian: libxml2-utils)";
  const std::string dir = TempDir(GetParam().id + "_xml");
  const std::string path = Make(GetParam(), dir);
  ASSERT_FALSE(path.empty());
  const std::string log = dir + "/xmllint.log";
  EXPECT_EQ(Shell(absl::StrCat("xmllint --noout '", path, "'"), log), 0) << ReadFile(log);
}

TEST_P(PictureTest, NamesEveryBufferAndOpWithoutAScript) {
  const std::string dir = TempDir(GetParam().id + "_names");
  const std::string path = Make(GetParam(), dir);
  ASSERT_FALSE(path.empty());
  const std::string svg = ReadFile(path);
  for (const std::string& name : GetParam().names) EXPECT_THAT(svg, HasSubstr(name));
  EXPECT_FALSE(absl::StrContains(svg, "<script"));
  EXPECT_FALSE(absl::StrContains(svg, "href"));  // nothing fetched: no link, no external image or font
}

TEST_P(PictureTest, RendersInHeadlessChromium) {
  if (!HasProgram("chromium")) GTEST_SKIP() << "chromium not installed (Debian: chromium)";
  const Picture& picture = GetParam();
  const std::string dir = TempDir(picture.id + "_chromium");
  const std::string path = Make(picture, dir);
  ASSERT_FALSE(path.empty());
  // The window is the picture's own size, read from its <svg> element.
  const std::string svg = ReadFile(path);
  auto attribute = [&](const std::string& name) {
    const size_t at = svg.find(absl::StrCat(" ", name, "=\""));
    return at == std::string::npos ? 0 : std::atoi(svg.c_str() + at + name.size() + 3);
  };
  const int width = attribute("width"), height = attribute("height");
  ASSERT_GT(width, 0);
  ASSERT_GT(height, 0);
  // Headless, no GPU, no sandbox (CI runs as root), no /dev/shm (small in containers), a profile
  // of its own (tests run in parallel).
  const std::string chromium = absl::StrCat(
      "timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --hide-scrollbars "
      "--no-first-run --enable-logging=stderr --v=0 --user-data-dir='",
      dir, "/profile' --window-size=", width, ",", height, " ");
  const std::string png = dir + "/screenshot.png", dom = dir + "/dom.html";
  const std::string shot_log = dir + "/screenshot.log", dom_log = dir + "/dom.log";
  ASSERT_EQ(Shell(absl::StrCat(chromium, "--screenshot='", png, "' 'file://", path, "'"), shot_log), 0)
      << ReadFile(shot_log);
  ASSERT_EQ(std::system(absl::StrCat(chromium, "--dump-dom 'file://", path, "' >'", dom, "' 2>'", dom_log, "'").c_str()),
            0)
      << ReadFile(dom_log);

  // It drew something: the screenshot is the picture's size, much of it not white, in colours.
  Image image;
  std::string why;
  ASSERT_TRUE(DecodePng(ReadFile(png), &image, &why)) << why;
  EXPECT_EQ(image.width, width);
  EXPECT_EQ(image.height, height);
  double drawn = 0;
  int colours = 0;
  Inspect(image, &drawn, &colours);
  EXPECT_GT(drawn, 0.05) << "the screenshot is mostly white";
  EXPECT_GE(colours, 8);

  // The browser read the SVG as SVG: the names are in its DOM and there is no XML error page.
  const std::string rendered = ReadFile(dom);
  EXPECT_THAT(rendered, HasSubstr("<svg"));
  EXPECT_FALSE(absl::StrContains(rendered, "parsererror")) << rendered.substr(0, 2000);
  for (const std::string& name : picture.names) EXPECT_THAT(rendered, HasSubstr(name));
  // Nothing written to the console (a script error, a failed load).
  for (const std::string& log : {shot_log, dom_log}) {
    for (absl::string_view line : absl::StrSplit(ReadFile(log), '\n')) {
      EXPECT_FALSE(absl::StrContains(line, ":CONSOLE")) << line;
    }
  }
  if (Updating() && picture.docs) {
    std::filesystem::create_directories(Source("docs/img"));
    std::filesystem::copy_file(png, Source(absl::StrCat("docs/img/", picture.id, ".png")),
                               std::filesystem::copy_options::overwrite_existing);
  }
}

INSTANTIATE_TEST_SUITE_P(Pictures, PictureTest, ::testing::ValuesIn(Pictures()),
                         [](const ::testing::TestParamInfo<Picture>& info) { return info.param.id; });

// ---------------------------------------------------------------------------------------------
// Golden files: the seed kernel (models/graphs/mlp.pbtxt on the H100).

void ExpectGolden(const std::string& produced, const std::string& golden) {
  const std::string path = Source(golden);
  if (Updating()) {
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    std::ofstream(path, std::ios::binary) << produced;
    return;
  }
  ASSERT_TRUE(std::filesystem::exists(path)) << "missing golden file " << path << " (run with SCRATCHSIM_UPDATE_GOLDEN=1)";
  EXPECT_EQ(produced, ReadFile(path)) << "golden mismatch: " << path << " (SCRATCHSIM_UPDATE_GOLDEN=1 rewrites it)";
}

TEST(PicturesGoldenTest, TimelineOfTheSeedKernel) {
  const std::string dir = TempDir("golden_timeline");
  const CommandRun run = Simulate({"--device", "h100", "--graph", Source("models/graphs/mlp.pbtxt"), "--timeline",
                            dir + "/mlp.svg"});
  ASSERT_EQ(run.code, 1) << run.err;
  ExpectGolden(ReadFile(dir + "/mlp.svg"), "tests/golden/pictures/mlp_h100_timeline.svg");
}

TEST(PicturesGoldenTest, TraceOfTheSeedKernel) {
  const std::string dir = TempDir("golden_trace");
  const CommandRun run =
      Simulate({"--device", "h100", "--graph", Source("models/graphs/mlp.pbtxt"), "--trace", dir + "/mlp.json"});
  ASSERT_EQ(run.code, 1) << run.err;
  ExpectGolden(ReadFile(dir + "/mlp.json"), "tests/golden/pictures/mlp_h100_trace.json");
}

// ---------------------------------------------------------------------------------------------
// The flags.

TEST(PictureFlagsTest, TheTraceIsJsonThatPerfettoReads) {
  const std::string dir = TempDir("trace_json");
  const CommandRun run =
      Simulate({"--device", "h100", "--graph", Source("models/graphs/mlp.pbtxt"), "--trace", dir + "/t.json"});
  ASSERT_EQ(run.code, 1) << run.err;
  google::protobuf::Struct trace;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(ReadFile(dir + "/t.json"), &trace).ok());
  // 6 ops and 6 placements (3 buffers, 2 copies each) as slices.
  int slices = 0;
  for (const auto& event : trace.fields().at("traceEvents").list_value().values()) {
    slices += event.struct_value().fields().at("ph").string_value() == "X";
  }
  EXPECT_EQ(slices, 12);
}

TEST(PictureFlagsTest, ThePrintedReportIsTheSameWithOrWithoutPictures) {
  const std::string dir = TempDir("same_report");
  const std::vector<std::string> base = {"--device", "h100", "--graph", Source("models/graphs/mlp.pbtxt"), "--format",
                                         "json"};
  std::vector<std::string> with = base;
  with.insert(with.end(), {"--timeline", dir + "/t.svg", "--trace", dir + "/t.json"});
  EXPECT_EQ(Simulate(with).out, Simulate(base).out);
}

TEST(PictureFlagsTest, TheOccupancyWhatIfHasNoPictureToDraw) {
  const CommandRun run = Simulate({"--device", "h100", "--threads", "256", "--timeline", "/tmp/never.svg"});
  EXPECT_EQ(run.code, kExitBadInput);
  EXPECT_THAT(run.err, HasSubstr("--timeline draws a kernel's buffers: give --graph FILE"));
}

TEST(PictureFlagsTest, AFileThatCannotBeWrittenIsBadInputNamingIt) {
  const CommandRun run = Simulate({"--device", "h100", "--graph", Source("models/graphs/mlp.pbtxt"), "--timeline",
                            "/nonexistent-dir/t.svg"});
  EXPECT_EQ(run.code, kExitBadInput);
  EXPECT_THAT(run.err, HasSubstr("--timeline: cannot write '/nonexistent-dir/t.svg'"));
}

TEST(PictureFlagsTest, MapAxesMustBeSweptParameters) {
  const std::string dir = TempDir("map_axes");
  const CommandRun run = Simulate({"plan", "--device", "b200", "--graph", Source("models/graphs/gemm.pbtxt"), "--map",
                            dir + "/m.svg", "--map-axes", "BLOCK_M,M"});
  EXPECT_EQ(run.code, kExitBadInput);
  EXPECT_THAT(run.err, HasSubstr("--map-axes: 'M' is not a swept parameter (swept: BLOCK_M, BLOCK_N, BLOCK_K"));
}

TEST(PictureFlagsTest, MapAxesAreTwoNames) {
  const std::string dir = TempDir("map_axes_two");
  const CommandRun run = Simulate({"plan", "--device", "b200", "--graph", Source("models/graphs/gemm.pbtxt"), "--map",
                            dir + "/m.svg", "--map-axes", "BLOCK_M"});
  EXPECT_EQ(run.code, kExitBadInput);
  EXPECT_THAT(run.err, HasSubstr("--map-axes: expected two swept parameters as X,Y"));
}

TEST(PictureFlagsTest, MapAxesWithoutAMapIsAnError) {
  const CommandRun run = Simulate({"plan", "--device", "b200", "--graph", Source("models/graphs/gemm.pbtxt"), "--map-axes",
                            "BLOCK_M,BLOCK_N"});
  EXPECT_EQ(run.code, kExitBadInput);
  EXPECT_THAT(run.err, HasSubstr("--map-axes: give --map FILE.svg too"));
}

TEST(PictureFlagsTest, TheMapDefaultsToTheFirstTwoSweptParameters) {
  const std::string dir = TempDir("map_default");
  const CommandRun run =
      Simulate({"plan", "--device", "b200", "--graph", Source("models/graphs/gemm.pbtxt"), "--map", dir + "/m.svg"});
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_THAT(ReadFile(dir + "/m.svg"), HasSubstr(": BLOCK_M by BLOCK_N, "));
}

TEST(PictureFlagsTest, PallasGraphsAreDrawnAsLowered) {
  if (!HasFrontEnd("tpu")) GTEST_SKIP() << "built without the tpu front end";
  const std::string dir = TempDir("pallas");
  const CommandRun run = Simulate({"--device", "tpu_v5e", "--graph", Source("models/graphs/tpu_flash_attention.pbtxt"),
                            "--timeline", dir + "/t.svg"});
  ASSERT_LE(run.code, 1) << run.err;
  const std::string svg = ReadFile(dir + "/t.svg");
  // the scoped limit of the lowered kernel (the peak depends on the spill estimate, golden-tested)
  EXPECT_THAT(svg, HasSubstr(" MiB, limit 16.0 MiB (default scoped limit)"));
  EXPECT_THAT(svg, HasSubstr("<title>q, copy 1 of 2\n"));  // double-buffered by the lowering
}

}  // namespace
}  // namespace scratchsim
