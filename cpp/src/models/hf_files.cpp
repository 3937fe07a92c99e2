// config.json and model.safetensors as Hugging Face writes them. JSON is read without
// exceptions (the WebAssembly build has none): parse with allow_exceptions = false, and every
// field's type checked before it is read.
#include <cmath>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>

#include "mha/models.h"
#include "models/family.h"
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

// config.json's architectures: one name the family lists (its first when there is none).
Status architecture(const Fields& f, const json& j, const std::string& file, const Family& family, ModelConfig* c) {
  c->architecture = family.architectures[0].name;
  c->task = family.architectures[0].task;
  if (!f.has("architectures")) return Status::Ok();
  const json& a = j["architectures"];
  if (!a.is_array() || a.size() != 1 || !a[0].is_string()) {
    return bad(file, "field 'architectures' must be a list of one name");
  }
  const std::string name = a[0].get<std::string>();
  for (const ArchitectureEntry& k : family.architectures) {
    if (name == k.name) {
      c->architecture = name;
      c->task = k.task;
      return Status::Ok();
    }
  }
  std::string list;
  for (const ArchitectureEntry& k : family.architectures) list += (list.empty() ? "" : ", ") + std::string(k.name);
  return bad(file, "field 'architectures' is '" + name + "': not supported (" + list + " are)");
}

// ---------------------------------------------------------------------------------------------
// Rotary positions: rope_theta and rope_scaling (or transformers v5's rope_parameters), as
// modeling_rope_utils.py turns them into inverse frequencies, in float32 as it computes them.

// 1 / theta^(i / hd), i = 0, 2, .., hd - 2 (_compute_default_rope_parameters)
std::vector<float> default_inv_freq(double theta, int64_t hd) {
  std::vector<float> inv_freq;
  for (int64_t i = 0; i < hd; i += 2) {
    const float exponent = static_cast<float>(i) / static_cast<float>(hd);
    inv_freq.push_back(1.0f / static_cast<float>(std::pow(theta, static_cast<double>(exponent))));
  }
  return inv_freq;
}

Status parse_rotary(const Fields& f, const json& j, const std::string& file, ModelConfig* c) {
  // where the scaling is: rope_parameters (v5: rope_theta inside), or rope_scaling beside rope_theta
  const char* where = f.has("rope_parameters") ? "rope_parameters" : "rope_scaling";
  const json none = json::object();
  const json& p = f.has(where) ? j[where] : none;
  if (!p.is_object()) return bad(file, "field '" + std::string(where) + "' must be an object or null");
  const Fields scaling(p, file);
  const auto field = [&](const char* key) { return std::string(where) + "." + key; };
  double theta = 10000;
  MHA_RETURN_IF_ERROR(f.number("rope_theta", 10000, &theta));
  if (scaling.has("rope_theta")) {
    if (!p["rope_theta"].is_number()) return bad(file, "field '" + field("rope_theta") + "' must be a number");
    theta = p["rope_theta"].get<double>();
  }
  if (!(theta > 0) || !std::isfinite(theta)) return bad(file, "field 'rope_theta' must be a positive number");
  for (const Fields* fields : {&f, &scaling}) {
    double partial = 1;
    MHA_RETURN_IF_ERROR(fields->number("partial_rotary_factor", 1, &partial));
    if (partial != 1) {
      return bad(file, "field '" + std::string(fields == &f ? "partial_rotary_factor" : field("partial_rotary_factor").c_str()) +
                           "' is " + std::to_string(partial) + ": not supported yet (rotary positions on the whole head, 1, are)");
    }
  }
  // rope_type, or "type" as older configs name it
  std::string type = "default";
  const char* type_key = scaling.has("rope_type") ? "rope_type" : "type";
  MHA_RETURN_IF_ERROR(scaling.string(type_key, "default", &type));
  c->rope_type = type;
  const auto factor_of = [&](const char* key, double* out) -> Status {
    if (!scaling.has(key)) return bad(file, "field '" + field(key) + "' is missing (rope_type '" + type + "' needs it)");
    MHA_RETURN_IF_ERROR(scaling.number(key, 0, out));
    if (!(*out > 0) || !std::isfinite(*out)) return bad(file, "field '" + field(key) + "' must be a positive number");
    return Status::Ok();
  };
  std::vector<float> inv_freq = default_inv_freq(theta, c->head_dim);
  if (type == "default" || type == "dynamic") {
    // dynamic NTK changes the frequencies only for a text longer than max_position_embeddings,
    // which the runtime refuses: within it, dynamic is default
    if (type == "dynamic") {
      double factor;
      MHA_RETURN_IF_ERROR(factor_of("factor", &factor));
    }
  } else if (type == "linear") {
    double factor;
    MHA_RETURN_IF_ERROR(factor_of("factor", &factor));
    for (float& v : inv_freq) v = v / static_cast<float>(factor);
  } else if (type == "llama3") {
    // three bands by wavelength: long ones divided by factor, short ones kept, the middle
    // interpolated (_compute_llama3_parameters), in float32
    double factor, low, high, old_context;
    MHA_RETURN_IF_ERROR(factor_of("factor", &factor));
    MHA_RETURN_IF_ERROR(factor_of("low_freq_factor", &low));
    MHA_RETURN_IF_ERROR(factor_of("high_freq_factor", &high));
    MHA_RETURN_IF_ERROR(factor_of("original_max_position_embeddings", &old_context));
    if (!(high > low)) return bad(file, "field '" + field("high_freq_factor") + "' must be greater than low_freq_factor");
    const float low_wavelen = static_cast<float>(old_context / low), high_wavelen = static_cast<float>(old_context / high);
    const float two_pi = static_cast<float>(2 * M_PI);
    for (float& v : inv_freq) {
      const float wavelen = two_pi / v;
      const float scaled = wavelen > low_wavelen ? v / static_cast<float>(factor) : v;
      const float smooth = (static_cast<float>(old_context) / wavelen - static_cast<float>(low)) / static_cast<float>(high - low);
      const float smoothed = (1 - smooth) * scaled / static_cast<float>(factor) + smooth * scaled;
      const bool medium = !(wavelen < high_wavelen) && !(wavelen > low_wavelen);
      v = medium ? smoothed : scaled;
    }
  } else if (type == "yarn" || type == "longrope") {
    return bad(file, "field '" + field(type_key) + "' is '" + type + "': not supported yet (default, linear, dynamic and llama3 are)");
  } else {
    return bad(file, "field '" + field(type_key) + "' is '" + type + "': not supported (default, linear, dynamic and llama3 are)");
  }
  c->rotary.theta = theta;
  c->rotary.inv_freq = std::move(inv_freq);
  c->rotary.attention_scaling = 1;
  return Status::Ok();
}

const char* key_of(const Family& family, int64_t ModelConfig::*field) {
  for (const SizeField& s : family.sizes) {
    if (s.field == field) return s.key;
  }
  return "?";
}

}  // namespace

int64_t ModelConfig::parameter_count() const {
  const TensorNames& n = family->names;
  const int64_t E = hidden, I = intermediate, qd = num_heads * head_dim, kv = num_kv_heads * head_dim;
  const int64_t norm = family->norm == NormKind::kRmsNorm ? E : 2 * E;
  const bool gated = family->feed_forward == FeedForward::kGated;
  int64_t count = vocab_size * E + (family->positions == Positions::kLearned ? max_positions * E : 0);
  if (!n.token_type.empty()) count += type_vocab_size * E;
  if (!n.embed_norm.empty()) count += norm;
  const int64_t per_layer = (qd + 2 * kv) * E + E * qd + (qkv_bias ? qd + 2 * kv : 0) + (out_bias ? E : 0) +
                            (gated ? 3 : 2) * E * I + (mlp_bias ? (gated ? 2 : 1) * I + E : 0) + 2 * norm;
  count += num_layers * per_layer;
  if (!n.final_norm.empty()) count += norm;
  if (task == Task::kMasked) count += E * E + E + 2 * E + vocab_size;  // transform, its norm, the bias
  if (lm_head && !tie_word_embeddings) count += vocab_size * E;
  return count;
}

bool ModelConfig::causal() const { return family->causal; }
std::string ModelConfig::display_name() const { return family->display_name; }
bool ModelConfig::pre_norm() const { return family->norm_placement == NormPlacement::kPre; }
bool ModelConfig::conv1d() const { return family->linear_layout == LinearLayout::kConv1D; }
std::string ModelConfig::attention_output_name() const { return family->names.attention_out; }

Status ParseConfig(std::string_view json_text, const std::string& file, ModelConfig* out) {
  const json j = json::parse(json_text.begin(), json_text.end(), nullptr, false);
  if (j.is_discarded()) return bad(file, "not valid JSON");
  if (!j.is_object()) return bad(file, "expected a JSON object");
  const Fields f(j, file);
  std::string model_type;
  MHA_RETURN_IF_ERROR(f.string("model_type", "", &model_type));
  std::string known;
  for (const Family* k : Families()) known += (known.empty() ? "" : ", ") + std::string(k->model_type);
  if (model_type.empty()) return bad(file, "field 'model_type' is missing (" + known + " are supported)");
  const Family* family = FindFamily(model_type);
  if (family == nullptr) return bad(file, "field 'model_type' is '" + model_type + "': not supported (" + known + " are)");
  ModelConfig c;
  c.family = family;
  MHA_RETURN_IF_ERROR(architecture(f, j, file, *family, &c));
  c.lm_head = c.task != Task::kNone;
  for (const SizeField& s : family->sizes) {
    const int64_t fallback = s.hidden_times > 0 ? c.hidden * s.hidden_times : s.fallback;
    MHA_RETURN_IF_ERROR(f.integer(s.key, fallback, false, &(c.*s.field)));
    const int64_t v = c.*s.field;
    if (v < s.minimum || v > (int64_t{1} << 31)) {
      return bad(file, "field '" + std::string(s.key) + "' must be " +
                           (s.minimum == 1 ? std::string("a positive integer") : "an integer >= " + std::to_string(s.minimum)) +
                           ", got " + std::to_string(v));
    }
  }
  MHA_RETURN_IF_ERROR(f.number(family->layer_norm_eps_key, family->layer_norm_eps_fallback, &c.layer_norm_eps));
  std::string activation;
  MHA_RETURN_IF_ERROR(f.string(family->activation_key, family->activation_fallback, &activation));
  MHA_RETURN_IF_ERROR(parse_activation(activation, family->activation_key, file, &c));
  MHA_RETURN_IF_ERROR(f.boolean("tie_word_embeddings", family->tie_word_embeddings_fallback, &c.tie_word_embeddings));
  for (const FixedFlag& flag : family->fixed_flags) MHA_RETURN_IF_ERROR(f.only(flag.key, flag.fallback, flag.supported, flag.why));
  for (const FixedText& text : family->fixed_texts) {
    std::string value;
    MHA_RETURN_IF_ERROR(f.string(text.key, text.fallback, &value));
    if (value != text.supported) {
      return bad(file, "field '" + std::string(text.key) + "' is '" + value + "': not supported (" + text.supported + " is)");
    }
  }
  // grouped-query attention and the head width, where the family reads them
  c.num_kv_heads = c.num_heads;
  if (family->num_kv_heads_key != nullptr) {
    const int64_t fallback = family->num_kv_heads_fallback > 0 ? family->num_kv_heads_fallback : c.num_heads;
    MHA_RETURN_IF_ERROR(f.integer(family->num_kv_heads_key, fallback, false, &c.num_kv_heads));
    if (c.num_kv_heads < 1 || c.num_heads % c.num_kv_heads != 0) {
      return bad(file, "field '" + std::string(family->num_kv_heads_key) + "' (" + std::to_string(c.num_kv_heads) +
                           ") must divide '" + key_of(*family, &ModelConfig::num_heads) + "' (" + std::to_string(c.num_heads) + ")");
    }
  }
  c.head_dim = 0;
  if (family->head_dim_key != nullptr) {
    MHA_RETURN_IF_ERROR(f.integer(family->head_dim_key, 0, false, &c.head_dim));
    if (f.has(family->head_dim_key) && (c.head_dim < 1 || c.head_dim > 65536)) {
      return bad(file, "field '" + std::string(family->head_dim_key) + "' must be a positive integer, got " + std::to_string(c.head_dim));
    }
  }
  if (c.head_dim == 0 && c.hidden % c.num_heads != 0) {
    return bad(file, std::string("field '") + key_of(*family, &ModelConfig::hidden) + "' (" + std::to_string(c.hidden) +
                         ") must be a multiple of '" + key_of(*family, &ModelConfig::num_heads) + "' (" +
                         std::to_string(c.num_heads) + ")");
  }
  if (c.head_dim == 0) c.head_dim = c.hidden / c.num_heads;
  if (!(c.layer_norm_eps > 0) || !std::isfinite(c.layer_norm_eps)) {
    return bad(file, std::string("field '") + family->layer_norm_eps_key + "' must be a positive number");
  }
  // biases, fixed by the family or set by a config.json boolean
  const struct {
    const BiasTrait& trait;
    bool* value;
  } biases[] = {{family->qkv_bias, &c.qkv_bias}, {family->out_bias, &c.out_bias}, {family->mlp_bias, &c.mlp_bias}};
  for (const auto& b : biases) {
    *b.value = b.trait.fallback;
    if (b.trait.key != nullptr) MHA_RETURN_IF_ERROR(f.boolean(b.trait.key, b.trait.fallback, b.value));
  }
  if (family->positions == Positions::kRotary) {
    if (c.head_dim % 2 != 0) {
      return bad(file, "rotary positions need an even head width, got " + std::to_string(c.head_dim));
    }
    MHA_RETURN_IF_ERROR(parse_rotary(f, j, file, &c));
  }
  // sliding windows (modeling_mistral.py, modeling_qwen2.py): key j seen from query i when i - W < j <= i
  c.sliding_window = 0;
  c.window_from_layer = 0;
  if (family->window != WindowRule::kNone) {
    bool use = true;
    if (family->window == WindowRule::kUpperLayers) {
      MHA_RETURN_IF_ERROR(f.boolean("use_sliding_window", false, &use));
      MHA_RETURN_IF_ERROR(f.integer("max_window_layers", c.num_layers, false, &c.window_from_layer));
      if (c.window_from_layer < 0) return bad(file, "field 'max_window_layers' must be a non-negative integer");
    }
    // absent: the family's default; null: none
    if (use && (f.has("sliding_window") || !j.contains("sliding_window"))) {
      MHA_RETURN_IF_ERROR(f.integer("sliding_window", family->window_fallback, false, &c.sliding_window));
      if (c.sliding_window < 1) return bad(file, "field 'sliding_window' must be a positive integer or null");
    }
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
