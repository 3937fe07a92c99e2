#include "model_files.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

namespace mha::testing {

std::string models_file(const std::string& name) { return std::string(MHA_SOURCE_DIR) + "/tests/golden/models/" + name; }

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    ADD_FAILURE() << path << " cannot be read (written by scripts/reference/hf_reference.py)";
    return "";
  }
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

nlohmann::json read_json(const std::string& path) { return nlohmann::json::parse(read_bytes(path)); }

}  // namespace mha::testing
