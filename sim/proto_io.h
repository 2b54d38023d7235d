// Reads any scratchsim message from binary (.pb), text (.pbtxt/.textproto) or JSON (.json).
// Errors name the file and, for text and JSON, the line and field at fault.
#ifndef SCRATCHSIM_SIM_PROTO_IO_H_
#define SCRATCHSIM_SIM_PROTO_IO_H_

#include <cstdint>
#include <string>
#include "absl/strings/string_view.h"

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "google/protobuf/message.h"

namespace scratchsim {

enum class ProtoFormat { kBinary, kText, kJson };

// The format implied by `path`'s extension; unknown extensions are an error.
absl::StatusOr<ProtoFormat> FormatFromPath(absl::string_view path);

// Input files are regular files of at most MaxInputBytes() bytes (default 256 MiB, the driver's
// --max-input-mib): a directory, FIFO or device, or a larger file, is InvalidArgument naming it.
inline constexpr int64_t kDefaultMaxInputBytes = int64_t{256} << 20;
int64_t MaxInputBytes();
void SetMaxInputBytes(int64_t bytes);  // < 0: no limit
absl::StatusOr<std::string> ReadFileToString(absl::string_view path);
absl::StatusOr<std::string> ReadFileToString(absl::string_view path, int64_t max_bytes);

// Parses `contents` (named `origin` in messages) into `message`. Binary input with fields
// the schema does not know is rejected, so garbage that happens to decode is not accepted.
absl::Status ParseProto(absl::string_view contents, ProtoFormat format, absl::string_view origin,
                        google::protobuf::Message* message);
// The same, freeing `contents` as soon as it is no longer needed (before the message is built),
// so a large text or JSON file and its parse do not both hold memory at the peak.
absl::Status ParseOwnedProto(std::string contents, ProtoFormat format, absl::string_view origin,
                             google::protobuf::Message* message);

absl::Status LoadProtoFile(absl::string_view path, google::protobuf::Message* message);

// Writes `message` as text, JSON (protobuf's JSON mapping, original field names) or binary.
absl::StatusOr<std::string> SerializeProto(const google::protobuf::Message& message, ProtoFormat format);

}  // namespace scratchsim

#endif  // SCRATCHSIM_SIM_PROTO_IO_H_
