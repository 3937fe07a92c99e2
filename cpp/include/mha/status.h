// Status: how the core reports bad input. No exceptions cross the core's boundary; every
// fallible call returns a Status whose message names what was expected and what came.
#pragma once

#include <string>
#include <utility>

namespace mha {

enum class StatusCode : int {
  kOk = 0,
  kInvalidConfig = 1,     // embed_dim / num_heads / num_kv_heads / kdim / vdim inconsistent
  kShapeMismatch = 2,     // a tensor's shape is not the one the config asks for
  kLengthMismatch = 3,    // a buffer's length does not match its declared shape
  kInvalidDtype = 4,      // a mask of an unsupported dtype
  kUnknownParameter = 5,  // a state_dict name this module does not have
  kTooLarge = 6,          // the buffers would exceed the memory cap
  kInvalidArgument = 7,   // anything else: NaN sizes, bad head index, bad option
};

// Every code, in order.
constexpr StatusCode kStatusCodes[] = {
    StatusCode::kOk,           StatusCode::kInvalidConfig,    StatusCode::kShapeMismatch, StatusCode::kLengthMismatch,
    StatusCode::kInvalidDtype, StatusCode::kUnknownParameter, StatusCode::kTooLarge,      StatusCode::kInvalidArgument,
};

// The code's name as JavaScript's MhaError.code spells it: "OK", "INVALID_CONFIG", ...
const char* status_code_name(StatusCode code);

class Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}
  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

#define MHA_RETURN_IF_ERROR(expr)          \
  do {                                     \
    ::mha::Status status_ = (expr);        \
    if (!status_.ok()) return status_;     \
  } while (0)

}  // namespace mha
