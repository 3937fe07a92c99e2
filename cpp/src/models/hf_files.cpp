// config.json and model.safetensors as Hugging Face writes them. JSON is read without
// exceptions (the WebAssembly build has none): parse with allow_exceptions = false, and every
// field's type checked before it is read.
#include <cmath>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>

#include "mha/models.h"
#include "models/numbers.h"

namespace mha::models {
namespace {

using nlohmann::json;

Status bad(const std::string& file, const std::string& message) {
  return Status(StatusCode::kInvalidConfig, file + ": " + message);
}

// A config.json reader: each accessor names the field and the type it expected.
class Fields {
 public:
  Fields(const json& j, const std::string& file) : j_(j), file_(file) {}

  bool has(const char* name) const { return j_.contains(name) && !j_[name].is_null(); }

  Status integer(const char* name, int64_t fallback, bool required, int64_t* out) const {
    if (!has(name)) {
      if (required) return bad(file_, "field '" + std::string(name) + "' is missing");
      *out = fallback;
      return Status::Ok();
    }
    const json& v = j_[name];
    if (!v.is_number_integer()) return bad(file_, "field '" + std::string(name) + "' must be an integer");
    *out = v.get<int64_t>();
    return Status::Ok();
  }

  Status number(const char* name, double fallback, double* out) const {
    if (!has(name)) {
      *out = fallback;
      return Status::Ok();
    }
    const json& v = j_[name];
    if (!v.is_number()) return bad(file_, "field '" + std::string(name) + "' must be a number");
    *out = v.get<double>();
    return Status::Ok();
  }

  Status boolean(const char* name, bool fallback, bool* out) const {
    if (!has(name)) {
      *out = fallback;
      return Status::Ok();
    }
    const json& v = j_[name];
    if (!v.is_boolean()) return bad(file_, "field '" + std::string(name) + "' must be true or false");
    *out = v.get<bool>();
    return Status::Ok();
  }

  Status string(const char* name, const std::string& fallback, std::string* out) const {
    if (!has(name)) {
      *out = fallback;
      return Status::Ok();
    }
    const json& v = j_[name];
    if (!v.is_string()) return bad(file_, "field '" + std::string(name) + "' must be a string");
    *out = v.get<std::string>();
    return Status::Ok();
  }

  // A boolean the core supports at one value only.
  Status only(const char* name, bool fallback, bool supported, const std::string& why) const {
    bool value = fallback;
    MHA_RETURN_IF_ERROR(boolean(name, fallback, &value));
    if (value != supported) {
      return bad(file_, "field '" + std::string(name) + "' is " + (value ? "true" : "false") + ": not supported (" + why + ")");
    }
    return Status::Ok();
  }

 private:
  const json& j_;
  const std::string& file_;
};

Status parse_activation(const std::string& name, const char* field, const std::string& file, ModelConfig* c) {
  c->activation_name = name;
  if (name == "gelu_new" || name == "gelu_pytorch_tanh" || name == "gelu_fast") {
    c->activation = Activation::kGeluTanh;
  } else if (name == "gelu") {
    c->activation = Activation::kGeluErf;
  } else if (name == "relu") {
    c->activation = Activation::kRelu;
  } else if (name == "silu" || name == "swish") {
    c->activation = Activation::kSilu;
  } else {
    return bad(file, "field '" + std::string(field) + "' is '" + name +
                         "': not supported (gelu_new, gelu_pytorch_tanh, gelu_fast, gelu, relu, silu, swish are)");
  }
  return Status::Ok();
}

Status architecture(const Fields& f, const json& j, const std::string& file, const std::vector<std::string>& known,
                    ModelConfig* c) {
  c->architecture = known[0];
  if (!f.has("architectures")) return Status::Ok();
  const json& a = j["architectures"];
  if (!a.is_array() || a.size() != 1 || !a[0].is_string()) {
    return bad(file, "field 'architectures' must be a list of one name");
  }
  const std::string name = a[0].get<std::string>();
  for (const std::string& k : known) {
    if (name == k) {
      c->architecture = name;
      return Status::Ok();
    }
  }
  std::string list;
  for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
  return bad(file, "field 'architectures' is '" + name + "': not supported (" + list + " are)");
}

Status parse_gpt2(const Fields& f, const json& j, const std::string& file, ModelConfig* c) {
  c->family = Family::kGpt2;
  MHA_RETURN_IF_ERROR(architecture(f, j, file, {"GPT2LMHeadModel", "GPT2Model"}, c));
  c->lm_head = c->architecture == "GPT2LMHeadModel";
  // GPT2Config's defaults where a field is absent
  MHA_RETURN_IF_ERROR(f.integer("vocab_size", 50257, false, &c->vocab_size));
  MHA_RETURN_IF_ERROR(f.integer("n_positions", 1024, false, &c->max_positions));
  MHA_RETURN_IF_ERROR(f.integer("n_embd", 768, false, &c->hidden));
  MHA_RETURN_IF_ERROR(f.integer("n_layer", 12, false, &c->num_layers));
  MHA_RETURN_IF_ERROR(f.integer("n_head", 12, false, &c->num_heads));
  MHA_RETURN_IF_ERROR(f.integer("n_inner", 4 * c->hidden, false, &c->intermediate));
  MHA_RETURN_IF_ERROR(f.number("layer_norm_epsilon", 1e-5, &c->layer_norm_eps));
  std::string activation;
  MHA_RETURN_IF_ERROR(f.string("activation_function", "gelu_new", &activation));
  MHA_RETURN_IF_ERROR(parse_activation(activation, "activation_function", file, c));
  MHA_RETURN_IF_ERROR(f.boolean("tie_word_embeddings", true, &c->tie_word_embeddings));
  MHA_RETURN_IF_ERROR(f.only("scale_attn_weights", true, true, "attention scores are scaled by 1/sqrt(head_dim)"));
  MHA_RETURN_IF_ERROR(f.only("scale_attn_by_inverse_layer_idx", false, false, "no layer-wise scaling of attention scores"));
  MHA_RETURN_IF_ERROR(f.only("reorder_and_upcast_attn", false, false, "attention runs in float32 in the usual order"));
  MHA_RETURN_IF_ERROR(f.only("add_cross_attention", false, false, "self-attention only"));
  return Status::Ok();
}

Status parse_bert(const Fields& f, const json& j, const std::string& file, ModelConfig* c) {
  c->family = Family::kBert;
  MHA_RETURN_IF_ERROR(architecture(f, j, file, {"BertForMaskedLM", "BertModel", "BertForPreTraining"}, c));
  c->lm_head = c->architecture != "BertModel";
  MHA_RETURN_IF_ERROR(f.integer("vocab_size", 30522, false, &c->vocab_size));
  MHA_RETURN_IF_ERROR(f.integer("max_position_embeddings", 512, false, &c->max_positions));
  MHA_RETURN_IF_ERROR(f.integer("hidden_size", 768, false, &c->hidden));
  MHA_RETURN_IF_ERROR(f.integer("num_hidden_layers", 12, false, &c->num_layers));
  MHA_RETURN_IF_ERROR(f.integer("num_attention_heads", 12, false, &c->num_heads));
  MHA_RETURN_IF_ERROR(f.integer("intermediate_size", 3072, false, &c->intermediate));
  MHA_RETURN_IF_ERROR(f.integer("type_vocab_size", 2, false, &c->type_vocab_size));
  MHA_RETURN_IF_ERROR(f.number("layer_norm_eps", 1e-12, &c->layer_norm_eps));
  std::string activation;
  MHA_RETURN_IF_ERROR(f.string("hidden_act", "gelu", &activation));
  MHA_RETURN_IF_ERROR(parse_activation(activation, "hidden_act", file, c));
  MHA_RETURN_IF_ERROR(f.boolean("tie_word_embeddings", true, &c->tie_word_embeddings));
  std::string positions;
  MHA_RETURN_IF_ERROR(f.string("position_embedding_type", "absolute", &positions));
  if (positions != "absolute") {
    return bad(file, "field 'position_embedding_type' is '" + positions + "': not supported (absolute is)");
  }
  MHA_RETURN_IF_ERROR(f.only("is_decoder", false, false, "BERT runs as an encoder"));
  MHA_RETURN_IF_ERROR(f.only("add_cross_attention", false, false, "self-attention only"));
  if (c->type_vocab_size < 1) return bad(file, "field 'type_vocab_size' must be at least 1");
  return Status::Ok();
}

}  // namespace

int64_t ModelConfig::parameter_count() const {
  const int64_t E = hidden, I = intermediate;
  int64_t n = vocab_size * E + max_positions * E;
  const int64_t per_layer = 4 * E * E + 4 * E + 2 * E * I + I + E + 4 * E;
  n += num_layers * per_layer;
  if (family == Family::kBert) n += type_vocab_size * E + 2 * E + (lm_head ? E * E + 3 * E + vocab_size : 0);
  if (family == Family::kGpt2) n += 2 * E;
  if (lm_head && !tie_word_embeddings) n += vocab_size * E;
  return n;
}

Status ParseConfig(std::string_view json_text, const std::string& file, ModelConfig* out) {
  const json j = json::parse(json_text.begin(), json_text.end(), nullptr, false);
  if (j.is_discarded()) return bad(file, "not valid JSON");
  if (!j.is_object()) return bad(file, "expected a JSON object");
  const Fields f(j, file);
  std::string model_type;
  MHA_RETURN_IF_ERROR(f.string("model_type", "", &model_type));
  ModelConfig c;
  if (model_type == "gpt2") {
    MHA_RETURN_IF_ERROR(parse_gpt2(f, j, file, &c));
  } else if (model_type == "bert") {
    MHA_RETURN_IF_ERROR(parse_bert(f, j, file, &c));
  } else if (model_type.empty()) {
    return bad(file, "field 'model_type' is missing (gpt2 and bert are supported)");
  } else {
    return bad(file, "field 'model_type' is '" + model_type + "': not supported (gpt2 and bert are)");
  }
  const auto positive = [&](int64_t v, const char* gpt2_name, const char* bert_name) -> Status {
    if (v < 1 || v > (int64_t{1} << 31)) {
      return bad(file, "field '" + std::string(c.family == Family::kGpt2 ? gpt2_name : bert_name) +
                           "' must be a positive integer, got " + std::to_string(v));
    }
    return Status::Ok();
  };
  MHA_RETURN_IF_ERROR(positive(c.vocab_size, "vocab_size", "vocab_size"));
  MHA_RETURN_IF_ERROR(positive(c.max_positions, "n_positions", "max_position_embeddings"));
  MHA_RETURN_IF_ERROR(positive(c.hidden, "n_embd", "hidden_size"));
  MHA_RETURN_IF_ERROR(positive(c.num_layers, "n_layer", "num_hidden_layers"));
  MHA_RETURN_IF_ERROR(positive(c.num_heads, "n_head", "num_attention_heads"));
  MHA_RETURN_IF_ERROR(positive(c.intermediate, "n_inner", "intermediate_size"));
  if (c.hidden % c.num_heads != 0) {
    return bad(file, std::string("field '") + (c.family == Family::kGpt2 ? "n_embd" : "hidden_size") + "' (" +
                         std::to_string(c.hidden) + ") must be a multiple of '" +
                         (c.family == Family::kGpt2 ? "n_head" : "num_attention_heads") + "' (" +
                         std::to_string(c.num_heads) + ")");
  }
  if (!(c.layer_norm_eps > 0) || !std::isfinite(c.layer_norm_eps)) {
    return bad(file, std::string("field '") + (c.family == Family::kGpt2 ? "layer_norm_epsilon" : "layer_norm_eps") +
                         "' must be a positive number");
  }
  *out = c;
  return Status::Ok();
}

Status ReadSafetensors(std::string_view bytes, const std::string& file, const LoadLimits& limits,
                       bool (*skip)(const std::string& name), std::map<std::string, LoadedTensor>* out) {
  const auto fail = [&](const std::string& message) { return Status(StatusCode::kInvalidArgument, file + ": " + message); };
  if (bytes.size() > limits.max_file_bytes) {
    return Status(StatusCode::kTooLarge, file + ": " + std::to_string(bytes.size()) + " bytes, more than the " +
                                             std::to_string(limits.max_file_bytes) + " the loader takes");
  }
  if (bytes.size() < 8) return fail("shorter than a safetensors header (8 bytes)");
  uint64_t header_length = 0;
  for (int i = 7; i >= 0; --i) header_length = header_length << 8 | static_cast<unsigned char>(bytes[static_cast<size_t>(i)]);
  if (header_length > bytes.size() - 8 || header_length > (uint64_t{100} << 20)) {
    return fail("header length " + std::to_string(header_length) + " runs past the end of the file");
  }
  const std::string_view header_text = bytes.substr(8, header_length);
  const json header = json::parse(header_text.begin(), header_text.end(), nullptr, false);
  if (header.is_discarded() || !header.is_object()) return fail("the header is not a JSON object");
  const std::string_view data = bytes.substr(8 + header_length);
  std::map<std::string, LoadedTensor> tensors;
  for (auto it = header.begin(); it != header.end(); ++it) {
    const std::string& name = it.key();
    if (name == "__metadata__" || (skip != nullptr && skip(name))) continue;
    const json& entry = it.value();
    const std::string where = "tensor '" + name + "'";
    if (!entry.is_object() || !entry.contains("dtype") || !entry["dtype"].is_string() || !entry.contains("shape") ||
        !entry["shape"].is_array() || !entry.contains("data_offsets") || !entry["data_offsets"].is_array() ||
        entry["data_offsets"].size() != 2 || !entry["data_offsets"][0].is_number_unsigned() ||
        !entry["data_offsets"][1].is_number_unsigned()) {
      return fail(where + ": expected {dtype, shape, data_offsets: [begin, end]}");
    }
    LoadedTensor t;
    t.dtype = entry["dtype"].get<std::string>();
    size_t width = 0;
    if (t.dtype == "F32") width = 4;
    else if (t.dtype == "F16" || t.dtype == "BF16") width = 2;
    else return fail(where + " has dtype " + t.dtype + " (F32, F16 and BF16 are read)");
    uint64_t count = 1;
    for (const json& d : entry["shape"]) {
      if (!d.is_number_unsigned()) return fail(where + ": a dimension of its shape is not a non-negative integer");
      const uint64_t v = d.get<uint64_t>();
      if (v != 0 && count > (uint64_t{1} << 40) / v) return fail(where + ": its shape holds more values than any file can");
      count *= v;
      t.shape.push_back(static_cast<int64_t>(v));
    }
    const uint64_t begin = entry["data_offsets"][0].get<uint64_t>(), end = entry["data_offsets"][1].get<uint64_t>();
    if (begin > end || end > data.size()) {
      return fail(where + ": data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) + "] run past the " +
                  std::to_string(data.size()) + " bytes of data");
    }
    if (end - begin != count * width) {
      return fail(where + ": shape " + shape_text(t.shape) + " of " + t.dtype + " needs " + std::to_string(count * width) +
                  " bytes, its data_offsets hold " + std::to_string(end - begin));
    }
    const unsigned char* p = reinterpret_cast<const unsigned char*>(data.data() + begin);
    t.values.resize(static_cast<size_t>(count));
    for (size_t i = 0; i < t.values.size(); ++i) {
      float v;
      if (width == 4) {
        const uint32_t bits = uint32_t{p[4 * i]} | uint32_t{p[4 * i + 1]} << 8 | uint32_t{p[4 * i + 2]} << 16 |
                              uint32_t{p[4 * i + 3]} << 24;
        std::memcpy(&v, &bits, 4);
      } else {
        const uint16_t h = static_cast<uint16_t>(p[2 * i] | p[2 * i + 1] << 8);
        v = t.dtype == "F16" ? half_to_float(h) : bfloat16_to_float(h);
      }
      if (!std::isfinite(v)) return fail(where + ": value " + std::to_string(i) + " is " + (std::isnan(v) ? "NaN" : "infinite"));
      t.values[i] = v;
    }
    tensors.emplace(name, std::move(t));
  }
  *out = std::move(tensors);
  return Status::Ok();
}

}  // namespace mha::models
