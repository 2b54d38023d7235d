// Tests of the small shared pieces: dtypes, proto I/O, JSON and XML text and the flag parser.
#include <fstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/graph.pb.h"
#include "sim/dtype.h"
#include "sim/flags.h"
#include "sim/json_text.h"
#include "sim/proto_io.h"
#include "sim/svg_text.h"

namespace scratchsim {
namespace {

using ::testing::HasSubstr;

TEST(JsonTextTest, EscapesQuotesBackslashesAndControlCharacters) {
  EXPECT_EQ(JsonString("plain"), "\"plain\"");
  EXPECT_EQ(JsonString("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(JsonString("x\ny\tz"), "\"x\\ny\\tz\"");
  EXPECT_EQ(JsonString(std::string("\x01", 1)), "\"\\u0001\"");
}

TEST(XmlTextTest, EscapesMarkupAndReplacesControlCharacters) {
  EXPECT_EQ(XmlEscape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&apos;");
  EXPECT_EQ(XmlEscape("x\ny\tz\r"), "x\ny\tz\r");
  EXPECT_EQ(XmlEscape(std::string("\x01", 1)), "?");
}

// A name of a megabyte is cut: a picture's size stays bounded by its element count.
TEST(XmlTextTest, LongTextIsCut) {
  EXPECT_EQ(XmlEscape(std::string(1 << 20, 'n')), std::string(kMaxSvgTextBytes, 'n') + "...");
  EXPECT_EQ(XmlEscape(std::string(kMaxSvgTextBytes, 'n')), std::string(kMaxSvgTextBytes, 'n'));
}

// Issue 37, F6: U+FFFE in a buffer's name made the timeline ill-formed XML. Noncharacters, C1
// controls and malformed UTF-8 become '?'; every other character stays as it is.
TEST(XmlTextTest, ReplacesWhatXmlDoesNotAllowAndKeepsTheRest) {
  EXPECT_EQ(XmlEscape("a\xEF\xBF\xBE" "b"), "a?b");             // U+FFFE
  EXPECT_EQ(XmlEscape("a\xEF\xBF\xBF" "b"), "a?b");             // U+FFFF
  EXPECT_EQ(XmlEscape("\xEF\xB7\x90"), "?");                 // U+FDD0
  EXPECT_EQ(XmlEscape("\xF0\x9F\xBF\xBE"), "?");             // U+1FFFE
  EXPECT_EQ(XmlEscape("\xC2\x85"), "?");                     // U+0085, a C1 control
  EXPECT_EQ(XmlEscape("\x7F"), "?");
  EXPECT_EQ(XmlEscape("\xED\xA0\x80"), "?");                 // a surrogate
  EXPECT_EQ(XmlEscape("x\xFFy\xC3"), "x?y?");                // malformed bytes
  EXPECT_EQ(XmlEscape("\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80 \xEF\xBF\xBD"),
            "\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80 \xEF\xBF\xBD");  // é € 😀 U+FFFD stay
}

TEST(DtypeTest, Widths) {
  EXPECT_EQ(*DtypeBits("bf16"), 16);
  EXPECT_EQ(*DtypeBits("f8e4m3"), 8);
  EXPECT_EQ(*DtypeBits("i4"), 4);
  EXPECT_EQ(*DtypeBits("i1"), 8);
  EXPECT_THAT(DtypeBits("f12").status().message(), HasSubstr("unknown dtype 'f12' (known: f64, f32"));
}

TEST(ProtoIoTest, RoundTripsEveryFormat) {
  KernelGraph graph;
  graph.set_name("k");
  graph.add_buffers()->set_name("a");
  for (ProtoFormat format : {ProtoFormat::kBinary, ProtoFormat::kText, ProtoFormat::kJson}) {
    auto text = SerializeProto(graph, format);
    ASSERT_TRUE(text.ok());
    KernelGraph back;
    ASSERT_TRUE(ParseProto(*text, format, "x", &back).ok());
    EXPECT_EQ(back.buffers(0).name(), "a");
  }
}

TEST(ProtoIoTest, FormatFromExtension) {
  EXPECT_EQ(*FormatFromPath("a.pb"), ProtoFormat::kBinary);
  EXPECT_EQ(*FormatFromPath("a.textproto"), ProtoFormat::kText);
  EXPECT_EQ(*FormatFromPath("a.json"), ProtoFormat::kJson);
  EXPECT_FALSE(FormatFromPath("a.yaml").ok());
}

TEST(ProtoIoTest, BinaryWithUnknownFieldsIsRejected) {
  // Field 99, varint 1: valid wire format, but not a KernelGraph field.
  std::string bytes = "\x98\x06\x01";
  KernelGraph graph;
  auto status = ParseProto(bytes, ProtoFormat::kBinary, "g.pb", &graph);
  EXPECT_THAT(status.message(), HasSubstr("g.pb: not a valid binary KernelGraph: unknown field"));
}

TEST(ProtoIoTest, TextErrorsNameTheLine) {
  KernelGraph graph;
  auto status = ParseProto("name: \"k\"\nbuffers { nme: \"a\" }\n", ProtoFormat::kText, "g.pbtxt", &graph);
  EXPECT_THAT(status.message(), HasSubstr("g.pbtxt: line 2"));
}

// Where the graph takes an expression, a bare integer is the same expression: shape: 64 is
// shape: "64", in lists and in JSON too. Integer fields stay integers.
TEST(ProtoIoTest, IntegersAreAcceptedWhereExpressionsAre) {
  KernelGraph text;
  ASSERT_TRUE(ParseProto(R"pb(
    parameters { name: "B" default_value: 64 }  # default_value is an integer field: untouched
    buffers { name: "a" shape: [64, "B"] shape: 2 copies: 3 dtype: "f16" }  # shape: 7 in a comment
    launch { num_warps: 4 }
  )pb", ProtoFormat::kText, "t.pbtxt", &text).ok());
  EXPECT_THAT(text.buffers(0).shape(), ::testing::ElementsAre("64", "B", "2"));
  EXPECT_EQ(text.buffers(0).copies(), "3");
  EXPECT_EQ(text.launch().num_warps(), "4");
  EXPECT_EQ(text.parameters(0).default_value(), 64);
  KernelGraph json;
  ASSERT_TRUE(ParseProto(R"({"buffers": [{"name": "a", "shape": [64, "B"], "copies": 3}], "launch": {"num_warps": 8},
                             "parameters": [{"name": "B", "default_value": 64}]})",
                         ProtoFormat::kJson, "t.json", &json).ok());
  EXPECT_THAT(json.buffers(0).shape(), ::testing::ElementsAre("64", "B"));
  EXPECT_EQ(json.buffers(0).copies(), "3");
  EXPECT_EQ(json.launch().num_warps(), "8");
}

// ParseProtoInPieces: the whole parse's result, a piece at a time (docs/performance.md).
class ParseInPiecesTest : public ::testing::Test {
 protected:
  // Parses `text` in pieces of `piece_bytes`, the pieces' buffers moved out and counted; returns
  // the status, with the merged message and the buffers taken in `graph_` and `taken_`.
  absl::Status Pieces(absl::string_view text, ProtoFormat format, size_t piece_bytes = 1) {
    graph_.Clear();
    taken_.Clear();
    pieces_ = restarts_ = 0;
    return ParseProtoInPieces(text, format, "in.graph", piece_bytes, &graph_, [this](google::protobuf::Message* m) {
      if (m == nullptr) {
        taken_.Clear();
        ++restarts_;
        return;
      }
      ++pieces_;
      auto* piece = static_cast<KernelGraph*>(m);
      for (Buffer& b : *piece->mutable_buffers()) *taken_.add_buffers() = std::move(b);
      piece->clear_buffers();
    });
  }
  // What ParseProto makes of `text`, its buffers where Pieces puts them.
  std::string Whole(absl::string_view text, ProtoFormat format) {
    KernelGraph whole;
    EXPECT_TRUE(ParseProto(text, format, "in.graph", &whole).ok());
    KernelGraph merged = graph_;
    *merged.mutable_buffers() = taken_.buffers();
    EXPECT_EQ(merged.SerializeAsString(), whole.SerializeAsString());
    return whole.DebugString();
  }
  KernelGraph graph_, taken_;
  int pieces_ = 0, restarts_ = 0;
};

TEST_F(ParseInPiecesTest, TextCutBetweenTopLevelFieldsGivesTheWholeParse) {
  const std::string text = R"pb(
    name: "k" "2"  # a comment with { and "
    buffers { name: "a{" shape: [64, "B"] dtype: 'f16' },
    parameters < name: "B" default_value: -3 >;
    buffers: [ { name: "b" shape: 2 }, { name: "c" } ]
    launch { num_warps: 4 }
    doc: "}" flops: "1e5" buffers { name: "d" copies: 3 }
  )pb";
  ASSERT_TRUE(Pieces(text, ProtoFormat::kText).ok());
  EXPECT_GE(pieces_, 5);
  EXPECT_EQ(restarts_, 0);
  EXPECT_EQ(taken_.buffers_size(), 4);
  Whole(text, ProtoFormat::kText);
}

TEST_F(ParseInPiecesTest, JsonCutBetweenListElementsGivesTheWholeParse) {
  const std::string text = R"({"name": "k", "buffers": [{"name": "a]", "shape": [64, "B"]}, {"name": "b", "copies": 3}],
      "parameters": [{"name": "B", "default_value": 64}], "launch": {"num_warps": 8}, "ops": []})";
  ASSERT_TRUE(Pieces(text, ProtoFormat::kJson).ok());
  EXPECT_GE(pieces_, 4);
  EXPECT_EQ(restarts_, 0);
  Whole(text, ProtoFormat::kJson);
}

TEST_F(ParseInPiecesTest, InputWithinOnePieceIsParsedWhole) {
  ASSERT_TRUE(Pieces("buffers { name: \"a\" } buffers { name: \"b\" }", ProtoFormat::kText, 1 << 20).ok());
  EXPECT_EQ(pieces_, 1);
  Whole("buffers { name: \"a\" } buffers { name: \"b\" }", ProtoFormat::kText);
}

TEST_F(ParseInPiecesTest, ANonRepeatedFieldGivenTwiceIsTheWholeParsesError) {
  // Pieces would merge the two names; the whole parse refuses them, so it decides.
  const absl::Status status = Pieces("name: \"a\" buffers { name: \"x\" }\nname: \"\"", ProtoFormat::kText);
  EXPECT_THAT(status.message(), HasSubstr("in.graph: line 2"));
  EXPECT_THAT(status.message(), HasSubstr("name"));
  // JSON is held to the same (issue 37, F14; protobuf's parser took the last of two equal keys),
  // across pieces too.
  const std::string json = R"({"name": "a", "buffers": [{"name": "x"}], "name": "b"})";
  const absl::Status json_status = Pieces(json, ProtoFormat::kJson);
  EXPECT_THAT(json_status.message(), HasSubstr("in.graph: line 1: key \"name\" given twice in one object"));
}

TEST_F(ParseInPiecesTest, AnErrorInALaterPieceNamesItsLineInTheWholeFile) {
  const absl::Status status =
      Pieces("buffers { name: \"a\" }\nbuffers { name: \"b\" }\nbuffers { nme: \"c\" }\n", ProtoFormat::kText);
  EXPECT_THAT(status.message(), HasSubstr("in.graph: line 3"));
  EXPECT_EQ(restarts_, 1);
  EXPECT_EQ(taken_.buffers_size(), 0);  // what the pieces gave was dropped
}

TEST_F(ParseInPiecesTest, UncuttableInputIsParsedWhole) {
  for (const char* text : {"buffers { name: \"a\" ", "buffers { name: \"a\n\" }", "[ext] { }", "buffers } {"}) {
    EXPECT_FALSE(Pieces(text, ProtoFormat::kText).ok()) << text;
  }
  for (const char* text : {"[1, 2]", "{\"buffers\": [{\"name\": \"a\"},]}", "{\"buffers\": [{}]} x", "{\"na\\u006de\": \"a\"}"}) {
    const absl::Status status = Pieces(text, ProtoFormat::kJson);
    KernelGraph whole;
    EXPECT_EQ(status.ok(), ParseProto(text, ProtoFormat::kJson, "in.graph", &whole).ok()) << text;
  }
}

// Found by the graph_loader fuzz target: the text parser took bytes that are not UTF-8 into a
// string field, which the binary form (a graph's buffers and ops on the wire) then refused as
// "not a valid binary KernelGraph". Text is held to what binary and JSON are held to.
TEST(ProtoIoTest, TextWithAStringThatIsNotUtf8IsRefusedNamingTheField) {
  KernelGraph graph;
  const absl::Status status =
      ParseProto("# `simu\nops { name: \"min_bloc\325s_per\" writes: \"b\" }\n", ProtoFormat::kText, "g.pbtxt", &graph);
  EXPECT_THAT(status.message(), HasSubstr("g.pbtxt: field 'ops[0].name' is not valid UTF-8"));
  EXPECT_TRUE(ParseProto("# caf\351 in a comment is no field\nname: \"caf\303\251\"\n", ProtoFormat::kText, "g.pbtxt",
                         &graph).ok());
}

TEST(ProtoIoTest, OnlyRegularFilesAreRead) {
  EXPECT_THAT(ReadFileToString(::testing::TempDir()).status().message(), ::testing::HasSubstr("is a directory"));
  EXPECT_THAT(ReadFileToString("/dev/zero").status().message(), ::testing::HasSubstr("is not a regular file"));
  EXPECT_EQ(ReadFileToString("/no/such/file").status().code(), absl::StatusCode::kNotFound);
}

TEST(ProtoIoTest, FilesAboveTheInputLimitAreRefused) {
  const std::string path = ::testing::TempDir() + "/big.pbtxt";
  std::ofstream(path) << std::string(2048, ' ');
  EXPECT_THAT(ReadFileToString(path, 1024).status().message(),
              ::testing::HasSubstr("2048 bytes is larger than the input limit of 1024 bytes"));
  EXPECT_TRUE(ReadFileToString(path, 4096).ok());
}

TEST(FlagsTest, ValuesListsAndSwitches) {
  FlagSpec spec;
  spec.values = {"device"};
  spec.lists = {"set"};
  spec.switches = {"help"};
  auto flags = ParsedFlags::Parse(spec, {"--device=h100", "--set", "A=1", "--set=B=2", "--help", "extra"});
  ASSERT_TRUE(flags.ok()) << flags.status();
  EXPECT_EQ(flags->Get("device"), "h100");
  EXPECT_THAT(flags->GetList("set"), ::testing::ElementsAre("A=1", "B=2"));
  EXPECT_TRUE(flags->Has("help"));
  EXPECT_THAT(flags->positional(), ::testing::ElementsAre("extra"));
}

TEST(FlagsTest, Errors) {
  FlagSpec spec;
  spec.values = {"device", "threads"};
  spec.switches = {"help"};
  EXPECT_THAT(ParsedFlags::Parse(spec, {"--nope"}).status().message(), HasSubstr("unknown flag --nope"));
  EXPECT_THAT(ParsedFlags::Parse(spec, {"--device"}).status().message(), HasSubstr("--device needs a value"));
  EXPECT_THAT(ParsedFlags::Parse(spec, {"--device=a", "--device=b"}).status().message(), HasSubstr("more than once"));
  EXPECT_THAT(ParsedFlags::Parse(spec, {"--help=1"}).status().message(), HasSubstr("takes no value"));
  auto flags = ParsedFlags::Parse(spec, {"--threads=lots"});
  ASSERT_TRUE(flags.ok());
  EXPECT_THAT(flags->GetInt("threads", 0).status().message(), HasSubstr("is not an integer"));
}


// Nesting deeper than any schema is refused by the parser; the integer-quoting pass before it
// keeps no state per level past 64, so 10 MB of '{' cost no more than their text.
TEST(ProtoIoTest, TenMillionNestedBracesAreRefused) {
  KernelGraph graph;
  const std::string text = "launch " + std::string(10'000'000, '{');
  const absl::Status status = ParseProto(text, ProtoFormat::kText, "deep.pbtxt", &graph);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), ::testing::HasSubstr("deep.pbtxt: line 1"));
}

}  // namespace
}  // namespace scratchsim
