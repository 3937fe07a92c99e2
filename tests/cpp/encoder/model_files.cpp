#include "model_files.h"

#include "models/numbers.h"

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

namespace mha::testing {
namespace {

Status missing(const std::string& file, const std::string& why) {
  return Status(StatusCode::kInvalidArgument, file + ": " + why + " (make it with: node scripts/build/build-model.js)");
}

bool read_file(const std::string& file, std::string* bytes) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return false;
  bytes->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return true;
}

using mha::models::half_to_float;

EncoderConfig config_from_json(const nlohmann::json& j) {
  EncoderConfig c;
  c.vocab_size = j.at("vocab_size");
  c.embedding_rows = j.at("embedding_rows");
  c.max_tokens = j.at("max_tokens");
  c.layer_norm_eps = j.at("layer_norm_eps");
  c.output_dim = j.at("output_dim");
  for (const auto& l : j.at("layers")) c.layers.push_back({l.at("embed_dim"), l.at("num_heads"), l.at("out_dim"), l.at("ffn_dim")});
  return c;
}

}  // namespace

std::string model_file(const std::string& name) { return std::string(MHA_SOURCE_DIR) + "/web/models/use-lite/" + name; }

Status load_tokenizer(std::unique_ptr<Tokenizer>* out) {
  const std::string file = model_file("vocab.txt");
  std::string text;
  if (!read_file(file, &text)) return missing(file, "cannot be read");
  return Tokenizer::FromVocabText(text, 6, out);
}

Status load_encoder(const std::string& safetensors_name, std::unique_ptr<Encoder>* out) {
  const std::string file = model_file(safetensors_name);
  std::string bytes;
  if (!read_file(file, &bytes)) return missing(file, "cannot be read");
  if (bytes.size() < 8) return missing(file, "shorter than a safetensors header");
  uint64_t header_length = 0;
  std::memcpy(&header_length, bytes.data(), 8);
  if (header_length > bytes.size() - 8) return missing(file, "truncated header");
  const nlohmann::json header = nlohmann::json::parse(bytes.substr(8, header_length), nullptr, false);
  if (header.is_discarded()) return missing(file, "the header is not JSON");
  const nlohmann::json config = nlohmann::json::parse(header.at("__metadata__").at("config").get<std::string>());
  std::unique_ptr<Encoder> encoder;
  MHA_RETURN_IF_ERROR(Encoder::Create(config_from_json(config), &encoder));
  const char* data = bytes.data() + 8 + header_length;
  std::vector<float> values;
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") continue;
    const std::string dtype = entry.at("dtype");
    const Shape shape = entry.at("shape").get<Shape>();
    const size_t begin = entry.at("data_offsets")[0], end = entry.at("data_offsets")[1];
    if (end > bytes.size() - 8 - header_length) return missing(file, "tensor " + name + " runs past the end");
    if (dtype == "F32") {
      values.resize((end - begin) / 4);
      std::memcpy(values.data(), data + begin, end - begin);
    } else if (dtype == "F16") {
      values.resize((end - begin) / 2);
      for (size_t i = 0; i < values.size(); ++i) {
        uint16_t h;
        std::memcpy(&h, data + begin + 2 * i, 2);
        values[i] = half_to_float(h);
      }
    } else {
      return missing(file, "tensor " + name + " has dtype " + dtype);
    }
    MHA_RETURN_IF_ERROR(encoder->set_parameter(name, values.data(), values.size(), shape));
  }
  *out = std::move(encoder);
  return Status::Ok();
}

}  // namespace mha::testing
