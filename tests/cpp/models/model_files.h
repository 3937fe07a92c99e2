// The golden models of scripts/reference/hf_reference.py (tests/golden/models/), read for the
// tests.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace mha::testing {

// MHA_SOURCE_DIR/tests/golden/models/<name>
std::string models_file(const std::string& name);
// The file's bytes; fails the calling test (ADD_FAILURE) and returns "" when it cannot be read.
std::string read_bytes(const std::string& path);
nlohmann::json read_json(const std::string& path);

}  // namespace mha::testing
