// mha_golden: the native engine of the golden cases. It runs the calls golden_native.js sends
// (one per case file) through mha::MultiHeadAttention and writes back what came out; reading
// the case files and comparing with PyTorch's values are golden_common.js's, for every engine.
//
//   node tests/golden/golden_native.js [--json] [--runner build/<preset>/mha_golden] DIR|FILE...
//
// Calls on stdin, results on stdout, one frame each, in order until stdin ends. A frame is a
// uint32 (little-endian) n, n bytes of a JSON header, then the header's "data_bytes" bytes:
//   call    {"config": {embed_dim, num_heads, num_kv_heads, kdim, vdim, bias, add_bias_kv,
//                       add_zero_attn, batch_first} (a null or missing value: the default),
//            "parameters": [{"name", "shape", "offset"}],
//            "inputs": {"query", "key", "value", "key_padding_mask", "attn_mask"}: each
//                      {"shape", "dtype": "float32" | "bool", "offset"}, the masks may be null,
//            "options": {"need_weights", "average_attn_weights", "is_causal"},
//            "data_bytes"}
//           data: float32 values, and bool masks one byte a value, at their byte offsets
//   result  {"output": {"shape"}, "weights": {"shape"} or null, "data_bytes"}, data: the output's
//           float32 values then the weights'; or {"error": "forward: ...", "data_bytes": 0}
// Exit status 0 when every frame was read and answered, 2 for a frame that could not be read.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "mha/attention.h"

namespace {

using nlohmann::json;

// A call that cannot be made (a step refused, or a header that is not a call).
struct CallError {
  std::string message;
};

bool read_bytes(void* out, size_t count) { return std::fread(out, 1, count, stdin) == count; }

void write_frame(const json& header, const std::vector<float>& data) {
  const std::string text = header.dump();
  const uint32_t n = static_cast<uint32_t>(text.size());
  const unsigned char length[4] = {static_cast<unsigned char>(n), static_cast<unsigned char>(n >> 8),
                                   static_cast<unsigned char>(n >> 16), static_cast<unsigned char>(n >> 24)};
  std::fwrite(length, 1, 4, stdout);
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fwrite(data.data(), sizeof(float), data.size(), stdout);
  std::fflush(stdout);
}

// A tensor of a call: its shape and where its values lie in the call's data.
struct Slot {
  bool present = false;
  bool is_bool = false;
  mha::Shape shape;
  const unsigned char* data = nullptr;
  size_t count = 0;
};

Slot slot_of(const json& tensor, const std::vector<unsigned char>& data, const std::string& what) {
  Slot s;
  if (tensor.is_null()) return s;
  s.present = true;
  s.shape = tensor.at("shape").get<mha::Shape>();
  s.is_bool = tensor.value("dtype", std::string("float32")) == "bool";
  const int64_t count = mha::checked_numel(s.shape);
  const size_t offset = tensor.at("offset").get<size_t>();
  const size_t bytes = static_cast<size_t>(count) * (s.is_bool ? 1 : sizeof(float));
  if (count < 0 || offset > data.size() || bytes > data.size() - offset) throw CallError{what + ": outside the call's data"};
  s.data = data.data() + offset;
  s.count = static_cast<size_t>(count);
  return s;
}

// Float values are copied out of the byte stream (it gives no alignment).
std::vector<float> floats_of(const Slot& s) {
  std::vector<float> values(s.count);
  if (s.count > 0) std::memcpy(values.data(), s.data, s.count * sizeof(float));
  return values;
}

struct Input {
  Slot slot;
  std::vector<float> floats;
  mha::TensorView view() const { return {floats.data(), floats.size(), slot.shape}; }
  mha::MaskView mask() const {
    mha::MaskView m;
    if (!slot.present) return m;
    m.shape = slot.shape;
    m.dtype = slot.is_bool ? mha::MaskDtype::kBool : mha::MaskDtype::kFloat;
    m.data = slot.is_bool ? static_cast<const void*>(slot.data) : floats.data();
    m.length = slot.count;
    return m;
  }
};

Input input_of(const json& inputs, const char* name, const std::vector<unsigned char>& data) {
  Input in;
  in.slot = slot_of(inputs.contains(name) ? inputs.at(name) : json(nullptr), data, name);
  if (in.slot.present && !in.slot.is_bool) in.floats = floats_of(in.slot);
  return in;
}

int64_t int_or(const json& obj, const char* key, int64_t fallback) {
  return obj.contains(key) && !obj.at(key).is_null() ? obj.at(key).get<int64_t>() : fallback;
}
bool bool_or(const json& obj, const char* key, bool fallback) {
  return obj.contains(key) && !obj.at(key).is_null() ? obj.at(key).get<bool>() : fallback;
}

mha::Config config_of(const json& cfg) {
  mha::Config config;
  config.embed_dim = int_or(cfg, "embed_dim", 0);
  config.num_heads = int_or(cfg, "num_heads", 1);
  config.num_kv_heads = int_or(cfg, "num_kv_heads", 0);
  config.kdim = int_or(cfg, "kdim", 0);
  config.vdim = int_or(cfg, "vdim", 0);
  config.bias = bool_or(cfg, "bias", true);
  config.add_bias_kv = bool_or(cfg, "add_bias_kv", false);
  config.add_zero_attn = bool_or(cfg, "add_zero_attn", false);
  config.batch_first = bool_or(cfg, "batch_first", false);
  return config;
}

// Makes one call; its result frame's header, and the values after it.
json run_call(const json& call, const std::vector<unsigned char>& data, std::vector<float>* values) {
  std::unique_ptr<mha::MultiHeadAttention> attention;
  mha::Status status = mha::MultiHeadAttention::Create(config_of(call.at("config")), 0, &attention);
  if (!status.ok()) throw CallError{"Create: " + status.message()};
  for (const json& p : call.at("parameters")) {
    const std::string name = p.at("name").get<std::string>();
    const Slot s = slot_of(p, data, name);
    const std::vector<float> v = floats_of(s);
    status = attention->set_parameter(name, v.data(), v.size(), s.shape);
    if (!status.ok()) throw CallError{"set_parameter(\"" + name + "\"): " + status.message()};
  }
  const json& inputs = call.at("inputs");
  const Input query = input_of(inputs, "query", data), key = input_of(inputs, "key", data), value = input_of(inputs, "value", data);
  const Input key_padding_mask = input_of(inputs, "key_padding_mask", data), attn_mask = input_of(inputs, "attn_mask", data);
  const json& o = call.at("options");
  mha::ForwardOptions options;
  options.need_weights = bool_or(o, "need_weights", true);
  options.average_attn_weights = bool_or(o, "average_attn_weights", true);
  options.is_causal = bool_or(o, "is_causal", false);
  mha::ForwardResult result;
  status = attention->forward(query.view(), key.view(), value.view(), key_padding_mask.mask(), attn_mask.mask(), options, &result);
  if (!status.ok()) throw CallError{"forward: " + status.message()};
  *values = result.output.data;
  values->insert(values->end(), result.weights.data.begin(), result.weights.data.end());
  return {{"output", {{"shape", result.output.shape}}},
          {"weights", result.weights.present() ? json{{"shape", result.weights.shape}} : json(nullptr)},
          {"data_bytes", values->size() * sizeof(float)}};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1) {
    std::fprintf(stderr, "mha_golden: reads calls on stdin and takes no arguments; run it through node tests/golden/golden_native.js\n");
    return 2;
  }
  for (;;) {
    unsigned char length[4];
    const size_t got = std::fread(length, 1, 4, stdin);
    if (got == 0) return 0;
    const uint32_t n = length[0] | (length[1] << 8) | (length[2] << 16) | (uint32_t(length[3]) << 24);
    std::string text(n, '\0');
    if (got != 4 || !read_bytes(text.data(), n)) {
      std::fprintf(stderr, "mha_golden: a call's header is cut short\n");
      return 2;
    }
    json call;
    std::vector<unsigned char> data;
    try {
      call = json::parse(text);
      data.resize(call.at("data_bytes").get<size_t>());
    } catch (const json::exception& e) {
      std::fprintf(stderr, "mha_golden: a call's header is not a call: %s\n", e.what());
      return 2;
    }
    if (!read_bytes(data.data(), data.size())) {
      std::fprintf(stderr, "mha_golden: a call's data is cut short\n");
      return 2;
    }
    std::vector<float> values;
    json header;
    try {
      header = run_call(call, data, &values);
    } catch (const CallError& e) {
      header = {{"error", e.message}, {"data_bytes", 0}};
      values.clear();
    } catch (const json::exception& e) {
      header = {{"error", std::string("malformed call: ") + e.what()}, {"data_bytes", 0}};
      values.clear();
    }
    write_frame(header, values);
  }
}
