#include "sim/proto_io.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <fstream>
#include <set>
#include <sstream>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/stubs/common.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/unknown_field_set.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "sim/status_macros.h"

namespace scratchsim {
namespace {

class CollectingErrors : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, google::protobuf::io::ColumnNumber column,
                const std::string& message) override {
    errors_.push_back(absl::StrFormat("line %d, column %d: %s", line + 1, column + 1, message));
  }
  void AddWarning(int line, google::protobuf::io::ColumnNumber column,
                  const std::string& message) override {}
  std::string Joined() const { return absl::StrJoin(errors_, "; "); }

 private:
  std::vector<std::string> errors_;
};

// Finds a field number the schema does not know, anywhere in `message`; returns its path.
bool FindUnknownField(const google::protobuf::Message& message, std::string* path) {
  const google::protobuf::Reflection* reflection = message.GetReflection();
  const google::protobuf::UnknownFieldSet& unknown = reflection->GetUnknownFields(message);
  if (!unknown.empty()) {
    *path = absl::StrCat(message.GetDescriptor()->full_name(), " field number ",
                         unknown.field(0).number());
    return true;
  }
  std::vector<const google::protobuf::FieldDescriptor*> fields;
  reflection->ListFields(message, &fields);
  for (const google::protobuf::FieldDescriptor* field : fields) {
    if (field->cpp_type() != google::protobuf::FieldDescriptor::CPPTYPE_MESSAGE) continue;
    if (field->is_repeated()) {
      for (int i = 0; i < reflection->FieldSize(message, field); ++i) {
        if (FindUnknownField(reflection->GetRepeatedMessage(message, field, i), path)) return true;
      }
    } else if (FindUnknownField(reflection->GetMessage(message, field), path)) {
      return true;
    }
  }
  return false;
}

// Finds a string field whose bytes are not UTF-8, anywhere in `message`; returns its path
// ("buffers[3].name"). The binary parser refuses such a proto3 string; the text parser does not.
bool FindInvalidUtf8(const google::protobuf::Message& message, const std::string& prefix, std::string* path) {
  const google::protobuf::Reflection* reflection = message.GetReflection();
  std::vector<const google::protobuf::FieldDescriptor*> fields;
  reflection->ListFields(message, &fields);
  std::string scratch;
  for (const google::protobuf::FieldDescriptor* field : fields) {
    const bool is_string = field->cpp_type() == google::protobuf::FieldDescriptor::CPPTYPE_STRING &&
                           field->type() == google::protobuf::FieldDescriptor::TYPE_STRING;
    const bool is_message = field->cpp_type() == google::protobuf::FieldDescriptor::CPPTYPE_MESSAGE;
    if (!is_string && !is_message) continue;
    const int count = field->is_repeated() ? reflection->FieldSize(message, field) : 1;
    for (int i = 0; i < count; ++i) {
      const std::string here =
          field->is_repeated() ? absl::StrCat(prefix, field->name(), "[", i, "]") : absl::StrCat(prefix, field->name());
      if (is_message) {
        const google::protobuf::Message& inner = field->is_repeated() ? reflection->GetRepeatedMessage(message, field, i)
                                                                      : reflection->GetMessage(message, field);
        if (FindInvalidUtf8(inner, here + ".", path)) return true;
        continue;
      }
      const std::string& value = field->is_repeated()
                                     ? reflection->GetRepeatedStringReference(message, field, i, &scratch)
                                     : reflection->GetStringReference(message, field, &scratch);
      if (!google::protobuf::internal::IsStructurallyValidUTF8(value.data(), static_cast<int>(value.size()))) {
        *path = here;
        return true;
      }
    }
  }
  return false;
}

// Names of the string fields of `descriptor` and the messages it holds that no message declares
// with another type: where a graph takes an expression ("64", "BLOCK_M"), an integer written
// bare (shape: 64) means the same expression.
void CollectExpressionFieldNames(const google::protobuf::Descriptor* descriptor, std::set<std::string>* strings,
                                 std::set<std::string>* others, std::set<const google::protobuf::Descriptor*>* seen) {
  if (!seen->insert(descriptor).second) return;
  for (int i = 0; i < descriptor->field_count(); ++i) {
    const google::protobuf::FieldDescriptor* field = descriptor->field(i);
    if (field->cpp_type() == google::protobuf::FieldDescriptor::CPPTYPE_STRING) {
      strings->insert(field->name());
    } else {
      others->insert(field->name());
    }
    if (field->cpp_type() == google::protobuf::FieldDescriptor::CPPTYPE_MESSAGE) {
      CollectExpressionFieldNames(field->message_type(), strings, others, seen);
    }
  }
}

// Rewrites `name: 64` (text) or `"name": 64` (JSON), lists included, as the quoted string the
// schema asks for, for every name CollectExpressionFieldNames finds. A lexical pass that keeps a
// stack of objects and lists; strings and comments are copied as they are.
std::string QuoteIntegersOfStringFields(absl::string_view text, const google::protobuf::Descriptor* descriptor,
                                        bool json) {
  std::set<std::string> strings, others;
  std::set<const google::protobuf::Descriptor*> seen;
  CollectExpressionFieldNames(descriptor, &strings, &others, &seen);
  struct Frame {
    bool list = false;
    std::string key;      // object: the field being written; list: the field the list belongs to
    bool value = false;   // object: after the ':' (or a text-format field name), before the value
  };
  constexpr size_t kMaxTrackedDepth = 64;
  std::vector<Frame> stack = {Frame{}};
  size_t untracked = 0;
  std::string out;
  out.reserve(text.size());
  auto is_ident = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  auto quote_here = [&] {
    const Frame& f = stack.back();
    const bool in_value = f.list || f.value;
    return in_value && strings.count(f.key) && !others.count(f.key);
  };
  auto value_done = [&] {
    if (!stack.back().list) stack.back().value = false;
  };
  size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (c == '"' || c == '\'') {
      size_t j = i + 1;
      while (j < text.size() && text[j] != c) j += text[j] == '\\' ? 2 : 1;
      j = std::min(j + 1, text.size());
      const absl::string_view literal = text.substr(i, j - i);
      Frame& f = stack.back();
      if (json && !f.list && !f.value) {
        f.key = std::string(literal.substr(1, literal.size() >= 2 ? literal.size() - 2 : 0));
      } else {
        value_done();
      }
      absl::StrAppend(&out, literal);
      i = j;
      continue;
    }
    if (c == '#' && !json) {
      const size_t j = std::min(text.find('\n', i), text.size());
      absl::StrAppend(&out, text.substr(i, j - i));
      i = j;
      continue;
    }
    // No schema nests deeper than kMaxTrackedDepth: past it the parser refuses the input anyway,
    // so only count the levels (memory stays bounded whatever the nesting).
    if ((c == '{' || c == '<' || c == '[') && stack.size() >= kMaxTrackedDepth) {
      ++untracked;
    } else if ((c == '}' || c == '>' || c == ']') && untracked > 0) {
      --untracked;
    } else if (c == '{' || c == '<') {
      stack.push_back(Frame{});
    } else if ((c == '}' || c == '>') && stack.size() > 1) {
      stack.pop_back();
      value_done();
    } else if (c == '[') {
      stack.push_back(Frame{true, stack.back().key, false});
    } else if (c == ']' && stack.size() > 1) {
      stack.pop_back();
      value_done();
    } else if (c == ':') {
      stack.back().value = true;
    } else if (c == ',' || c == ';') {
      value_done();
    }
    const bool number_start = std::isdigit(static_cast<unsigned char>(c)) ||
                              (c == '-' && i + 1 < text.size() && std::isdigit(static_cast<unsigned char>(text[i + 1])));
    if (number_start && (i == 0 || !is_ident(text[i - 1]))) {
      size_t j = i + 1;
      while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) ++j;
      const bool integer = j >= text.size() || !(is_ident(text[j]) || text[j] == '.');
      const absl::string_view number = text.substr(i, j - i);
      if (integer && quote_here()) {
        absl::StrAppend(&out, "\"", number, "\"");
      } else {
        absl::StrAppend(&out, number);
      }
      value_done();
      i = j;
      continue;
    }
    if (is_ident(c)) {
      size_t j = i;
      while (j < text.size() && is_ident(text[j])) ++j;
      const absl::string_view word = text.substr(i, j - i);
      Frame& f = stack.back();
      if (!json && !f.list && !f.value) {
        f.key = std::string(word);  // a text-format field name; ':' or '{' follows
      } else {
        value_done();  // an enum value, true/false, inf
      }
      absl::StrAppend(&out, word);
      i = j;
      continue;
    }
    out += c;
    ++i;
  }
  return out;
}

}  // namespace

absl::StatusOr<ProtoFormat> FormatFromPath(absl::string_view path) {
  if (absl::EndsWith(path, ".pb") || absl::EndsWith(path, ".binpb")) return ProtoFormat::kBinary;
  if (absl::EndsWith(path, ".pbtxt") || absl::EndsWith(path, ".textproto") ||
      absl::EndsWith(path, ".txtpb")) {
    return ProtoFormat::kText;
  }
  if (absl::EndsWith(path, ".json")) return ProtoFormat::kJson;
  return absl::InvalidArgumentError(absl::StrCat(
      path, ": unknown file extension (expected .pb, .pbtxt, .textproto or .json)"));
}

absl::StatusOr<std::string> ReadFileToString(absl::string_view path, int64_t max_bytes) {
  // A directory, FIFO or device would read as empty, block, or never end: only regular files.
  std::error_code error;
  const std::filesystem::file_status status = std::filesystem::status(std::string(path), error);
  if (error || !std::filesystem::exists(status)) return absl::NotFoundError(absl::StrCat(path, ": cannot open file"));
  if (std::filesystem::is_directory(status)) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": is a directory, not a file"));
  }
  if (!std::filesystem::is_regular_file(status)) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": is not a regular file (a device, FIFO or socket)"));
  }
  const uintmax_t size = std::filesystem::file_size(std::string(path), error);
  if (!error && max_bytes >= 0 && size > static_cast<uintmax_t>(max_bytes)) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", size, " bytes is larger than the input limit of ",
                                                   max_bytes, " bytes (raise it with --max-input-mib)"));
  }
  std::ifstream in{std::string(path), std::ios::binary};
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open file"));
  // Straight into one string of the file's size: the input is held once, not copied.
  std::string contents(error ? 0 : static_cast<size_t>(size), '\0');
  in.read(contents.data(), static_cast<std::streamsize>(contents.size()));
  contents.resize(static_cast<size_t>(in.gcount()));
  if (in.bad()) return absl::DataLossError(absl::StrCat(path, ": read error"));
  if (in && in.peek() != std::char_traits<char>::eof()) {
    return absl::DataLossError(absl::StrCat(path, ": the file grew while it was read"));
  }
  return contents;
}

absl::StatusOr<std::string> ReadFileToString(absl::string_view path) { return ReadFileToString(path, MaxInputBytes()); }

namespace {

absl::Status CannotWrite(absl::string_view path, absl::string_view why) {
  return absl::PermissionDeniedError(absl::StrCat("cannot write '", path, "': ", why));
}

// Why an existing path that is not a regular file cannot be an output.
std::string NotRegularFile(const struct stat& st) {
  if (S_ISDIR(st.st_mode)) return "is a directory, not a regular file";
  if (S_ISFIFO(st.st_mode)) return "is a FIFO, not a regular file";
  return "is not a regular file (a device or socket)";
}

// Writes all of `contents` to `fd`, retrying short writes.
bool WriteAll(int fd, absl::string_view contents) {
  while (!contents.empty()) {
    const ssize_t n = ::write(fd, contents.data(), contents.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    contents.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// The file a write to `path` replaces: `path` with its symbolic links followed, one after the
// other, to a name that need not exist yet (so a link to a file not yet written is kept and the
// file it names is made, and two outputs that reach one file are one). A loop, or a chain of
// more links than the kernel follows, is an error saying so.
absl::StatusOr<std::string> OutputTarget(absl::string_view path) {
  constexpr int kMaxLinks = 40;  // Linux's MAXSYMLINKS
  std::string target(path);
  for (int links = 0;; ++links) {
    struct stat st {};
    if (::lstat(target.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return target;
    if (links == kMaxLinks) return absl::InvalidArgumentError("too many levels of symbolic links (a loop?)");
    std::string link(static_cast<size_t>(st.st_size > 0 ? st.st_size : 4096) + 1, '\0');
    const ssize_t n = ::readlink(target.c_str(), link.data(), link.size());
    if (n < 0 || static_cast<size_t>(n) >= link.size()) {
      return absl::InvalidArgumentError(absl::StrCat("cannot read the symbolic link '", target, "'"));
    }
    link.resize(static_cast<size_t>(n));
    const std::filesystem::path parent = std::filesystem::path(target).parent_path();
    target = link.front() == '/' || parent.empty() ? link : (parent / link).string();
  }
}

}  // namespace

absl::Status WriteStringToFile(absl::string_view path, absl::string_view contents) {
  // Replace the file a link names, not the link.
  absl::StatusOr<std::string> resolved = OutputTarget(path);
  if (!resolved.ok()) return CannotWrite(path, resolved.status().message());
  const std::string& target = *resolved;
  struct stat existing {};
  const bool exists = ::stat(target.c_str(), &existing) == 0;
  if (exists && !S_ISREG(existing.st_mode)) return CannotWrite(path, NotRegularFile(existing));
  const std::filesystem::path target_path(target);
  const std::string dir = target_path.has_parent_path() ? target_path.parent_path().string() : ".";
  // O_EXCL on a name of our own: never another's file, and the umask applies as to any new file.
  std::string temp;
  int fd = -1;
  for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
    temp = absl::StrCat(dir, "/.", target_path.filename().string(), ".", ::getpid(), ".", attempt, ".tmp");
    fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) return CannotWrite(path, std::strerror(errno));
  bool ok = WriteAll(fd, contents);
  // An existing file keeps its permissions.
  if (ok && exists) ok = ::fchmod(fd, existing.st_mode & 07777) == 0;
  int saved = errno;
  if (::close(fd) != 0 && ok) {
    ok = false;
    saved = errno;
  }
  if (ok && ::rename(temp.c_str(), target.c_str()) != 0) {
    ok = false;
    saved = errno;
  }
  if (!ok) {
    ::unlink(temp.c_str());
    return CannotWrite(path, std::strerror(saved));
  }
  return absl::OkStatus();
}

namespace {

// A file's identity: (st_dev, st_ino) of the file a write to the path reaches (its links
// followed) where it exists, else its directory's and its name.
struct FileIdentity {
  bool exists = false;
  dev_t dev = 0;
  ino_t ino = 0;
  std::string name;
  bool operator==(const FileIdentity&) const = default;
};

std::optional<FileIdentity> IdentityOf(const std::string& named) {
  absl::StatusOr<std::string> target = OutputTarget(named);
  if (!target.ok()) return std::nullopt;
  const std::string& path = *target;
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) return FileIdentity{true, st.st_dev, st.st_ino, ""};
  const std::filesystem::path p(path);
  const std::string dir = p.has_parent_path() ? p.parent_path().string() : ".";
  if (::stat(dir.c_str(), &st) != 0) return std::nullopt;  // the write will say why
  return FileIdentity{false, st.st_dev, st.st_ino, p.filename().string()};
}

}  // namespace

absl::Status CheckOutputPaths(const std::vector<FlagPath>& outputs, const std::vector<FlagPath>& inputs) {
  std::vector<std::pair<FileIdentity, const FlagPath*>> seen;
  for (const FlagPath& output : outputs) {
    const std::string named = absl::StrCat("--", output.flag, " ", output.path);
    if (output.path.empty()) return absl::InvalidArgumentError(absl::StrCat("--", output.flag, ": give a file name"));
    struct stat st {};
    if (::stat(output.path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
      return absl::InvalidArgumentError(absl::StrCat(named, ": ", NotRegularFile(st), "; give a file to write"));
    }
    if (absl::StatusOr<std::string> target = OutputTarget(output.path); !target.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(named, ": ", target.status().message()));
    }
    const std::optional<FileIdentity> id = IdentityOf(output.path);
    if (!id.has_value()) continue;
    for (const FlagPath& input : inputs) {
      const std::optional<FileIdentity> input_id = input.path.empty() ? std::nullopt : IdentityOf(input.path);
      if (id->exists && input_id.has_value() && *input_id == *id) {
        return absl::InvalidArgumentError(absl::StrCat(named, ": is the same file as the input --", input.flag, " ",
                                                       input.path, "; writing it would destroy the input"));
      }
    }
    for (const auto& [other_id, other] : seen) {
      if (other_id == *id) {
        return absl::InvalidArgumentError(absl::StrCat(named, ": is the same file as --", other->flag, " ", other->path,
                                                       "; give each output its own file"));
      }
    }
    seen.emplace_back(*id, &output);
  }
  return absl::OkStatus();
}

namespace {
int64_t max_input_bytes = kDefaultMaxInputBytes;
}  // namespace

int64_t MaxInputBytes() { return max_input_bytes; }
void SetMaxInputBytes(int64_t bytes) { max_input_bytes = bytes; }

namespace {

// ParseProto after the text formats' integers of string fields are quoted (`quoted`).
absl::Status ParseQuotedProto(absl::string_view quoted, ProtoFormat format, absl::string_view origin,
                              google::protobuf::Message* message) {
  const std::string type = message->GetDescriptor()->name();
  switch (format) {
    case ProtoFormat::kBinary: {
      if (!message->ParseFromArray(quoted.data(), static_cast<int>(quoted.size()))) {
        return absl::InvalidArgumentError(
            absl::StrCat(origin, ": not a valid binary ", type, " (protobuf wire format)"));
      }
      std::string unknown;
      if (FindUnknownField(*message, &unknown)) {
        return absl::InvalidArgumentError(absl::StrCat(
            origin, ": not a valid binary ", type, ": unknown field (", unknown, ")"));
      }
      return absl::OkStatus();
    }
    case ProtoFormat::kText: {
      google::protobuf::TextFormat::Parser parser;
      parser.SetRecursionLimit(64);
      CollectingErrors errors;
      parser.RecordErrorsTo(&errors);
      google::protobuf::io::ArrayInputStream input(quoted.data(), static_cast<int>(quoted.size()));
      if (!parser.Parse(&input, message)) {
        return absl::InvalidArgumentError(absl::StrCat(origin, ": ", errors.Joined()));
      }
      // As the binary and JSON parsers do: a string field holds UTF-8.
      std::string field;
      if (FindInvalidUtf8(*message, "", &field)) {
        return absl::InvalidArgumentError(absl::StrCat(origin, ": field '", field, "' is not valid UTF-8"));
      }
      return absl::OkStatus();
    }
    case ProtoFormat::kJson: {
      google::protobuf::util::JsonParseOptions options;
      options.ignore_unknown_fields = false;
      auto status = google::protobuf::util::JsonStringToMessage(
          google::protobuf::StringPiece(quoted.data(), quoted.size()), message, options);
      if (!status.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat(origin, ": invalid JSON ", type, ": ", status.message().as_string()));
      }
      return absl::OkStatus();
    }
  }
  return absl::InternalError("unreachable proto format");
}

// What SkipStringLiteral returns for a string that does not close on its line.
constexpr size_t kNoEnd = absl::string_view::npos;
constexpr size_t kMaxJsonNesting = 100;  // protobuf's own recursion limit for JSON
size_t SkipStringLiteral(absl::string_view text, size_t i);

// A key as protobuf's JSON parser matches it to a field: "compute_dtype" and "computeDtype" name
// the same one (snake_case becomes lowerCamelCase).
std::string JsonFieldKey(absl::string_view key) {
  std::string out;
  bool upper = false;
  for (char c : key) {
    if (c == '_') {
      upper = true;
      continue;
    }
    out.push_back(upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c);
    upper = false;
  }
  return out;
}

absl::Status EmptyFileError(absl::string_view origin, const google::protobuf::Message& message) {
  return absl::InvalidArgumentError(
      absl::StrCat(origin, ": file is empty (expected a ", message.GetDescriptor()->name(), ")"));
}

}  // namespace

// Two things protobuf's JSON parser lets through, in one pass (a set of keys per open object):
// - the last of two equal keys in one object wins, where the text format refuses a non-repeated
//   field given twice: JSON is held to the same;
// - arrays nested in arrays are not counted against its depth limit (ten million '[' cost 3 GB
//   and 27 s, or abort under a memory limit): objects and arrays together are held to
//   kMaxJsonNesting levels, and where keys are field names an array in an array is refused
//   outright (the parser flattened `"buffers": [[[]]]` to no buffers).
absl::Status CheckJsonStructure(absl::string_view text, absl::string_view origin, bool keys_are_field_names) {
  std::vector<std::optional<std::set<std::string>>> open;  // nullopt: an array
  int line = 1;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') {
      ++line;
    } else if (c == '{' || c == '[') {
      if (open.size() >= kMaxJsonNesting) {
        return absl::InvalidArgumentError(absl::StrCat(origin, ": line ", line, ": objects and arrays nested more than ",
                                                       kMaxJsonNesting, " levels deep"));
      }
      // No field of scratchsim's messages holds a list of lists; the parser flattened one
      // (`"buffers": [[[]]]` read as no buffers).
      if (c == '[' && keys_are_field_names && !open.empty() && !open.back().has_value()) {
        return absl::InvalidArgumentError(
            absl::StrCat(origin, ": line ", line, ": an array inside an array (no field holds a list of lists)"));
      }
      if (c == '{') {
        open.emplace_back(std::set<std::string>());
      } else {
        open.emplace_back(std::nullopt);
      }
    } else if ((c == '}' || c == ']') && !open.empty()) {
      open.pop_back();
    } else if (c == '"') {
      const size_t end = SkipStringLiteral(text, i);
      if (end == kNoEnd) return absl::OkStatus();  // the parser reports it
      size_t next = end;
      while (next < text.size() && (text[next] == ' ' || text[next] == '\t' || text[next] == '\r')) ++next;
      const absl::string_view key = text.substr(i + 1, end - i - 2);
      if (next < text.size() && text[next] == ':' && !open.empty() && open.back().has_value() &&
          !open.back()->insert(keys_are_field_names ? JsonFieldKey(key) : std::string(key)).second) {
        return absl::InvalidArgumentError(absl::StrCat(origin, ": line ", line, ": key \"", key.substr(0, 80),
                                                       "\" given twice in one object (the same field)"));
      }
      i = end - 1;
    }
  }
  return absl::OkStatus();
}

absl::Status ParseProto(absl::string_view contents, ProtoFormat format, absl::string_view origin,
                        google::protobuf::Message* message) {
  if (contents.empty()) return EmptyFileError(origin, *message);
  if (format == ProtoFormat::kBinary) return ParseQuotedProto(contents, format, origin, message);
  if (format == ProtoFormat::kJson) RETURN_IF_ERROR(CheckJsonStructure(contents, origin, true));
  return ParseQuotedProto(
      QuoteIntegersOfStringFields(contents, message->GetDescriptor(), format == ProtoFormat::kJson), format, origin,
      message);
}

namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;

bool IsSpace(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }
bool IsIdentifierChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// The index past the string literal that opens at text[i] (its quote); kNoEnd when it does not
// close on its line (neither format lets a string span lines: the parser reports it).
size_t SkipStringLiteral(absl::string_view text, size_t i) {
  const char quote = text[i];
  for (size_t j = i + 1; j < text.size(); ++j) {
    if (text[j] == '\n') return kNoEnd;
    if (text[j] == '\\') {
      ++j;
      continue;
    }
    if (text[j] == quote) return j + 1;
  }
  return kNoEnd;
}

// Where text-format input may be cut: offsets just past a top-level field whose value closed a
// bracket at depth 0 (and a ',' or ';' after it), at least `piece_bytes` apart, the last the end.
// nullopt where cutting could change the result: unbalanced brackets, an unterminated string, a
// non-repeated top-level field named twice (the whole parse refuses it; pieces would merge it),
// '[' where a field name goes (extension and Any syntax).
std::optional<std::vector<size_t>> TextPieceEnds(absl::string_view text, const Descriptor* descriptor,
                                                 size_t piece_bytes) {
  std::vector<size_t> ends;
  std::set<const FieldDescriptor*> singular;
  size_t depth = 0, last = 0, i = 0;
  bool value_next = false;  // at depth 0: a ':' (and maybe a '-') was read, a value follows
  while (i < text.size()) {
    const char c = text[i];
    if (IsSpace(c)) {
      ++i;
    } else if (c == '#') {
      i = text.find('\n', i);
      if (i == kNoEnd) i = text.size();
    } else if (c == '"' || c == '\'') {
      i = SkipStringLiteral(text, i);
      if (i == kNoEnd) return std::nullopt;
      if (depth == 0) value_next = false;
    } else if (c == '{' || c == '<' || c == '[') {
      if (depth == 0 && c == '[' && !value_next) return std::nullopt;
      ++depth;
      ++i;
    } else if (c == '}' || c == '>' || c == ']') {
      if (depth == 0) return std::nullopt;
      ++i;
      if (--depth > 0) continue;
      value_next = false;
      size_t j = i;
      while (j < text.size() && IsSpace(text[j])) ++j;
      if (j < text.size() && (text[j] == ',' || text[j] == ';')) i = j + 1;
      if (i - last >= piece_bytes) {
        ends.push_back(i);
        last = i;
      }
    } else if (depth > 0) {
      ++i;
    } else if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
      // A number, exponent and suffix included (1.5e-3, 0x1F, 2.0f): a value, never a name.
      ++i;
      while (i < text.size() && (IsIdentifierChar(text[i]) || text[i] == '.' ||
                                 ((text[i] == '-' || text[i] == '+') && (text[i - 1] == 'e' || text[i - 1] == 'E')))) {
        ++i;
      }
      value_next = false;
    } else if (IsIdentifierChar(c)) {
      size_t j = i;
      while (j < text.size() && IsIdentifierChar(text[j])) ++j;
      if (!value_next) {
        const FieldDescriptor* field = descriptor->FindFieldByName(std::string(text.substr(i, j - i)));
        if (field != nullptr && !field->is_repeated() && !singular.insert(field).second) return std::nullopt;
      }
      value_next = false;
      i = j;
    } else {
      if (c == ':') value_next = true;
      else if (c != '-') value_next = false;
      ++i;
    }
  }
  if (depth != 0) return std::nullopt;
  if (ends.empty() || ends.back() != text.size()) ends.push_back(text.size());
  return ends;
}

// The index past the JSON value that starts at text[i]; kNoEnd where it is not one.
size_t SkipJsonValue(absl::string_view text, size_t i) {
  if (i >= text.size()) return kNoEnd;
  if (text[i] == '"') return SkipStringLiteral(text, i);
  if (text[i] == '{' || text[i] == '[') {
    size_t depth = 0;
    while (i < text.size()) {
      const char c = text[i];
      if (c == '"') {
        i = SkipStringLiteral(text, i);
        if (i == kNoEnd) return kNoEnd;
        continue;
      }
      if (c == '{' || c == '[') ++depth;
      if (c == '}' || c == ']') {
        if (depth == 0) return kNoEnd;
        if (--depth == 0) return i + 1;
      }
      ++i;
    }
    return kNoEnd;
  }
  const size_t start = i;
  while (i < text.size() && !IsSpace(text[i]) && text[i] != ',' && text[i] != '}' && text[i] != ']') ++i;
  return i > start ? i : kNoEnd;
}

size_t SkipSpace(absl::string_view text, size_t i) {
  while (i < text.size() && IsSpace(text[i])) ++i;
  return i;
}

// After a JSON list element or object member: kMore with `*i` past a ',' and the space after it,
// kEnd with `*i` at `close`, kBad otherwise.
enum class ItemEnd { kMore, kEnd, kBad };
ItemEnd AfterItem(absl::string_view text, size_t* i, char close) {
  *i = SkipSpace(text, *i);
  if (*i < text.size() && text[*i] == ',') {
    *i = SkipSpace(text, *i + 1);
    return ItemEnd::kMore;
  }
  return *i < text.size() && text[*i] == close ? ItemEnd::kEnd : ItemEnd::kBad;
}

// A JSON object cut in pieces: every member that is not a list, as one object parsed first, then
// each list's elements in objects {"key": [...]} of about piece_bytes.
struct JsonPieces {
  std::string others = "{";
  struct List {
    absl::string_view key;  // the member's name as written, quotes included
    size_t first = 0, last = 0;  // its elements: elements[first, last)
  };
  std::vector<List> lists;
  std::vector<std::pair<size_t, size_t>> elements;  // [begin, end) in the input
};

// nullopt where cutting could change the result: not one object, a member named twice (also
// by its other spelling), an escaped name, anything the scan cannot follow.
std::optional<JsonPieces> CutJson(absl::string_view text, const Descriptor* descriptor, size_t piece_bytes) {
  JsonPieces out;
  std::set<const FieldDescriptor*> fields;
  std::set<std::string> names;
  size_t i = SkipSpace(text, 0);
  if (i >= text.size() || text[i] != '{') return std::nullopt;
  i = SkipSpace(text, i + 1);
  if (i < text.size() && text[i] == '}') return std::nullopt;  // empty: nothing to cut
  while (true) {
    if (i >= text.size() || text[i] != '"') return std::nullopt;
    const size_t key_end = SkipStringLiteral(text, i);
    if (key_end == kNoEnd) return std::nullopt;
    const absl::string_view key = text.substr(i, key_end - i);
    const std::string name(key.substr(1, key.size() - 2));
    if (absl::StrContains(name, '\\') || !names.insert(name).second) return std::nullopt;
    const FieldDescriptor* field = descriptor->FindFieldByName(name);
    for (int f = 0; field == nullptr && f < descriptor->field_count(); ++f) {
      if (descriptor->field(f)->json_name() == name) field = descriptor->field(f);
    }
    if (field != nullptr && !fields.insert(field).second) return std::nullopt;
    i = SkipSpace(text, key_end);
    if (i >= text.size() || text[i] != ':') return std::nullopt;
    i = SkipSpace(text, i + 1);
    if (i < text.size() && text[i] == '[' && SkipSpace(text, i + 1) < text.size() && text[SkipSpace(text, i + 1)] != ']') {
      JsonPieces::List list{key, out.elements.size(), 0};
      i = SkipSpace(text, i + 1);
      while (true) {
        const size_t end = SkipJsonValue(text, i);
        if (end == kNoEnd) return std::nullopt;
        out.elements.push_back({i, end});
        i = end;
        const ItemEnd next = AfterItem(text, &i, ']');
        if (next == ItemEnd::kEnd) break;
        if (next == ItemEnd::kBad) return std::nullopt;
      }
      ++i;
      list.last = out.elements.size();
      // Elements in groups of about piece_bytes, each group a list of its own.
      size_t bytes = 0, first = list.first;
      for (size_t e = list.first; e < list.last; ++e) {
        bytes += out.elements[e].second - out.elements[e].first;
        if (bytes >= piece_bytes || e + 1 == list.last) {
          out.lists.push_back({key, first, e + 1});
          first = e + 1;
          bytes = 0;
        }
      }
    } else {
      const size_t end = SkipJsonValue(text, i);
      if (end == kNoEnd) return std::nullopt;
      if (out.others.size() > 1) out.others += ',';
      absl::StrAppend(&out.others, key, ":", text.substr(i, end - i));
      i = end;
    }
    const ItemEnd next = AfterItem(text, &i, '}');
    if (next == ItemEnd::kEnd) break;
    if (next == ItemEnd::kBad) return std::nullopt;
  }
  if (SkipSpace(text, i + 1) != text.size()) return std::nullopt;
  out.others += '}';
  return out;
}

// The line of text[offset], for messages.
int LineAt(absl::string_view text, size_t offset) {
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + std::min(offset, text.size()), '\n'));
}

absl::Status NotFollowed(absl::string_view text, absl::string_view origin, size_t at, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(origin, ": line ", LineAt(text, at), ": not JSON: ", what));
}

// The items of the JSON object or array that opens at text[i] ('{' or '['), in order: a key
// (an object's; empty for an array) and the value's [begin, end). Stops at the first error
// `item` returns. Returns the index past the closing bracket.
absl::StatusOr<size_t> ForEachJsonItem(
    absl::string_view text, absl::string_view origin, size_t i,
    const std::function<absl::Status(absl::string_view key, size_t begin, size_t end)>& item) {
  const char close = text[i] == '{' ? '}' : ']';
  i = SkipSpace(text, i + 1);
  if (i < text.size() && text[i] == close) return i + 1;
  while (true) {
    absl::string_view key;
    if (close == '}') {
      if (i >= text.size() || text[i] != '"') return NotFollowed(text, origin, i, "expected a key in quotes");
      const size_t key_end = SkipStringLiteral(text, i);
      if (key_end == kNoEnd) return NotFollowed(text, origin, i, "a key that does not close on its line");
      key = text.substr(i, key_end - i);
      i = SkipSpace(text, key_end);
      if (i >= text.size() || text[i] != ':') return NotFollowed(text, origin, i, "expected ':' after a key");
      i = SkipSpace(text, i + 1);
    }
    const size_t end = SkipJsonValue(text, i);
    if (end == kNoEnd) return NotFollowed(text, origin, i, "expected a value");
    RETURN_IF_ERROR(item(key, i, end));
    i = end;
    const ItemEnd next = AfterItem(text, &i, close);
    if (next == ItemEnd::kEnd) return i + 1;
    if (next == ItemEnd::kBad) return NotFollowed(text, origin, i, absl::StrCat("expected ',' or '", std::string(1, close), "'"));
  }
}

}  // namespace

absl::Status ForEachJsonMember(absl::string_view text, absl::string_view origin,
                               const std::function<absl::Status(absl::string_view key, absl::string_view value)>& member) {
  size_t i = SkipSpace(text, 0);
  if (i >= text.size() || text[i] != '{') return NotFollowed(text, origin, i, "the file is not one JSON object");
  ASSIGN_OR_RETURN(const size_t end,
                   ForEachJsonItem(text, origin, i, [&](absl::string_view quoted, size_t begin, size_t end) -> absl::Status {
                     // The key as the parser reads it: escapes decoded.
                     std::string key(quoted.substr(1, quoted.size() - 2));
                     if (absl::StrContains(key, '\\')) {
                       google::protobuf::Value decoded;
                       if (!google::protobuf::util::JsonStringToMessage(std::string(quoted), &decoded).ok()) {
                         return NotFollowed(text, origin, begin, "a key with a bad escape");
                       }
                       key = decoded.string_value();
                     }
                     return member(key, text.substr(begin, end - begin));
                   }));
  if (SkipSpace(text, end) != text.size()) return NotFollowed(text, origin, end, "more after the object");
  return absl::OkStatus();
}

absl::Status ForEachJsonElement(absl::string_view text, absl::string_view origin,
                                const std::function<absl::Status(size_t index, absl::string_view element)>& element) {
  size_t i = SkipSpace(text, 0);
  if (i >= text.size() || text[i] != '[') return NotFollowed(text, origin, i, "not a JSON array");
  size_t index = 0;
  ASSIGN_OR_RETURN(const size_t end, ForEachJsonItem(text, origin, i, [&](absl::string_view, size_t begin, size_t end) {
                     return element(index++, text.substr(begin, end - begin));
                   }));
  if (SkipSpace(text, end) != text.size()) return NotFollowed(text, origin, end, "more after the array");
  return absl::OkStatus();
}

absl::Status ParseProtoInPieces(absl::string_view contents, ProtoFormat format, absl::string_view origin,
                                size_t piece_bytes, google::protobuf::Message* message,
                                const std::function<void(google::protobuf::Message*)>& take) {
  // Across the pieces too: a key given twice may lie in two of them.
  if (format == ProtoFormat::kJson) RETURN_IF_ERROR(CheckJsonStructure(contents, origin, true));
  std::unique_ptr<google::protobuf::Message> piece(message->New());
  auto add = [&](absl::string_view text) {
    piece->Clear();
    if (!ParseProto(text, format, origin, piece.get()).ok()) return false;
    take(piece.get());
    message->MergeFrom(*piece);
    return true;
  };
  auto whole = [&]() -> absl::Status {
    piece->Clear();
    RETURN_IF_ERROR(ParseProto(contents, format, origin, piece.get()));
    take(piece.get());
    message->MergeFrom(*piece);
    return absl::OkStatus();
  };
  if (format == ProtoFormat::kBinary || contents.size() <= piece_bytes) return whole();
  const google::protobuf::Descriptor* descriptor = message->GetDescriptor();
  bool cut = false, parsed = true;
  if (format == ProtoFormat::kText) {
    if (std::optional<std::vector<size_t>> ends = TextPieceEnds(contents, descriptor, std::max<size_t>(piece_bytes, 1))) {
      cut = true;
      size_t begin = 0;
      for (size_t end : *ends) {
        if (!(parsed = add(contents.substr(begin, end - begin)))) break;
        begin = end;
      }
    }
  } else if (std::optional<JsonPieces> pieces = CutJson(contents, descriptor, std::max<size_t>(piece_bytes, 1))) {
    cut = true;
    parsed = pieces->others.size() <= 2 || add(pieces->others);
    std::string text;
    for (size_t p = 0; parsed && p < pieces->lists.size(); ++p) {
      const JsonPieces::List& list = pieces->lists[p];
      text.clear();
      absl::StrAppend(&text, "{", list.key, ":[");
      for (size_t e = list.first; e < list.last; ++e) {
        if (e > list.first) text += ',';
        const auto [begin, end] = pieces->elements[e];
        text.append(contents.data() + begin, end - begin);
      }
      text += "]}";
      parsed = add(text);
    }
  }
  if (cut && parsed) return absl::OkStatus();
  // Not cut, or a piece failed: the whole parse decides, and its errors are the messages.
  message->Clear();
  take(nullptr);
  return whole();
}

absl::Status LoadProtoFile(absl::string_view path, google::protobuf::Message* message) {
  ASSIGN_OR_RETURN(ProtoFormat format, FormatFromPath(path));
  ASSIGN_OR_RETURN(std::string contents, ReadFileToString(path));
  return ParseProto(contents, format, path, message);
}

absl::StatusOr<std::string> SerializeProto(const google::protobuf::Message& message, ProtoFormat format) {
  std::string out;
  switch (format) {
    case ProtoFormat::kBinary:
      if (!message.SerializeToString(&out)) return absl::InternalError("cannot serialize message");
      return out;
    case ProtoFormat::kText:
      if (!google::protobuf::TextFormat::PrintToString(message, &out)) {
        return absl::InternalError("cannot print message");
      }
      return out;
    case ProtoFormat::kJson: {
      google::protobuf::util::JsonPrintOptions options;
      options.add_whitespace = true;
      options.preserve_proto_field_names = true;
      options.always_print_primitive_fields = true;
      auto status = google::protobuf::util::MessageToJsonString(message, &out, options);
      if (!status.ok()) return absl::InternalError(status.message().as_string());
      return out;
    }
  }
  return absl::InternalError("unreachable proto format");
}

}  // namespace scratchsim
