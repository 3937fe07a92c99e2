#include "mha/status.h"

namespace mha {

const char* status_code_name(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "OK";
    case StatusCode::kInvalidConfig: return "INVALID_CONFIG";
    case StatusCode::kShapeMismatch: return "SHAPE_MISMATCH";
    case StatusCode::kLengthMismatch: return "LENGTH_MISMATCH";
    case StatusCode::kInvalidDtype: return "INVALID_DTYPE";
    case StatusCode::kUnknownParameter: return "UNKNOWN_PARAMETER";
    case StatusCode::kTooLarge: return "TOO_LARGE";
    case StatusCode::kInvalidArgument: return "INVALID_ARGUMENT";
  }
  return "UNKNOWN";
}

}  // namespace mha
