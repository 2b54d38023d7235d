#include "sim/proto_io.h"

#include <fstream>
#include <sstream>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/unknown_field_set.h"
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

absl::StatusOr<std::string> ReadFileToString(absl::string_view path) {
  std::ifstream in{std::string(path), std::ios::binary};
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open file"));
  std::ostringstream contents;
  contents << in.rdbuf();
  if (in.bad()) return absl::DataLossError(absl::StrCat(path, ": read error"));
  return contents.str();
}

absl::Status ParseProto(absl::string_view contents, ProtoFormat format, absl::string_view origin,
                        google::protobuf::Message* message) {
  const std::string type = message->GetDescriptor()->name();
  if (contents.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(origin, ": file is empty (expected a ", type, ")"));
  }
  switch (format) {
    case ProtoFormat::kBinary: {
      if (!message->ParseFromArray(contents.data(), static_cast<int>(contents.size()))) {
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
      CollectingErrors errors;
      parser.RecordErrorsTo(&errors);
      if (!parser.ParseFromString(std::string(contents), message)) {
        return absl::InvalidArgumentError(absl::StrCat(origin, ": ", errors.Joined()));
      }
      return absl::OkStatus();
    }
    case ProtoFormat::kJson: {
      google::protobuf::util::JsonParseOptions options;
      options.ignore_unknown_fields = false;
      auto status = google::protobuf::util::JsonStringToMessage(std::string(contents), message, options);
      if (!status.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat(origin, ": invalid JSON ", type, ": ", status.message().as_string()));
      }
      return absl::OkStatus();
    }
  }
  return absl::InternalError("unreachable proto format");
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
