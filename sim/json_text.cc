#include "sim/json_text.h"

#include <cmath>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "google/protobuf/descriptor.h"

namespace scratchsim {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

std::string Scalar(const Message& message, const FieldDescriptor* field, int index) {
  const Reflection* r = message.GetReflection();
  const bool repeated = field->is_repeated();
  switch (field->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32:
      return JsonNumber(static_cast<int64_t>(repeated ? r->GetRepeatedInt32(message, field, index) : r->GetInt32(message, field)));
    case FieldDescriptor::CPPTYPE_INT64:
      return JsonNumber(repeated ? r->GetRepeatedInt64(message, field, index) : r->GetInt64(message, field));
    case FieldDescriptor::CPPTYPE_UINT32:
      return absl::StrCat(repeated ? r->GetRepeatedUInt32(message, field, index) : r->GetUInt32(message, field));
    case FieldDescriptor::CPPTYPE_UINT64:
      return absl::StrCat(repeated ? r->GetRepeatedUInt64(message, field, index) : r->GetUInt64(message, field));
    case FieldDescriptor::CPPTYPE_DOUBLE:
      return JsonNumber(repeated ? r->GetRepeatedDouble(message, field, index) : r->GetDouble(message, field));
    case FieldDescriptor::CPPTYPE_FLOAT:
      return JsonNumber(static_cast<double>(repeated ? r->GetRepeatedFloat(message, field, index) : r->GetFloat(message, field)));
    case FieldDescriptor::CPPTYPE_BOOL:
      return (repeated ? r->GetRepeatedBool(message, field, index) : r->GetBool(message, field)) ? "true" : "false";
    case FieldDescriptor::CPPTYPE_ENUM:
      return JsonString((repeated ? r->GetRepeatedEnum(message, field, index) : r->GetEnum(message, field))->name());
    case FieldDescriptor::CPPTYPE_STRING:
      return JsonString(repeated ? r->GetRepeatedString(message, field, index) : r->GetString(message, field));
    case FieldDescriptor::CPPTYPE_MESSAGE:
      break;
  }
  return "null";
}

void Print(const Message& message, int indent, std::string* out) {
  const Reflection* r = message.GetReflection();
  const auto* descriptor = message.GetDescriptor();
  const std::string pad(indent + 1, ' ');
  bool first = true;
  *out += "{";
  for (int i = 0; i < descriptor->field_count(); ++i) {
    const FieldDescriptor* field = descriptor->field(i);
    if (!field->is_repeated()) {
      if (field->has_presence() && !r->HasField(message, field)) continue;
      if (field->cpp_type() == FieldDescriptor::CPPTYPE_STRING && r->GetString(message, field).empty()) continue;
    }
    absl::StrAppend(out, first ? "\n" : ",\n", pad, JsonString(field->name()), ": ");
    first = false;
    if (!field->is_repeated()) {
      if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
        Print(r->GetMessage(message, field), indent + 1, out);
      } else {
        *out += Scalar(message, field, 0);
      }
      continue;
    }
    const int size = r->FieldSize(message, field);
    if (size == 0) {
      *out += "[]";
      continue;
    }
    *out += "[";
    for (int k = 0; k < size; ++k) {
      absl::StrAppend(out, k ? ",\n" : "\n", pad, " ");
      if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
        Print(r->GetRepeatedMessage(message, field, k), indent + 2, out);
      } else {
        *out += Scalar(message, field, k);
      }
    }
    absl::StrAppend(out, "\n", pad, "]");
  }
  if (!first) absl::StrAppend(out, "\n", std::string(indent, ' '));
  *out += "}";
}

}  // namespace

std::string JsonString(absl::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          absl::StrAppendFormat(&out, "\\u%04x", static_cast<int>(c));
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string JsonNumber(int64_t value) { return absl::StrCat(value); }

std::string JsonNumber(double value) {
  if (!std::isfinite(value)) return "null";
  for (int digits = 6; digits <= 17; ++digits) {
    std::string text = absl::StrFormat("%.*g", digits, value);
    if (std::strtod(text.c_str(), nullptr) == value) return text;
  }
  return absl::StrFormat("%.17g", value);
}

std::string MessageToJson(const google::protobuf::Message& message) {
  std::string out;
  Print(message, 0, &out);
  return out;
}

}  // namespace scratchsim
