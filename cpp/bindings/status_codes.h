// The StatusCode enum as both Embind modules give it to JavaScript: Module.StatusCode.<NAME>
// .value for each of status_code_name's names (OK, INVALID_CONFIG, ...). web/lib/errors.js
// reads the names from there.
#pragma once

#include <emscripten/bind.h>

#include "mha/status.h"

namespace mha::bindings {

inline void register_status_codes() {
  emscripten::enum_<StatusCode> codes("StatusCode");
  for (StatusCode code : kStatusCodes) codes.value(status_code_name(code), code);
}

}  // namespace mha::bindings
