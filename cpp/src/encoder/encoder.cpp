// Encoder::encode reads like the header's list of steps: validate, embed, each layer (norm,
// attend, add, feed forward), pool. Attention is MultiHeadAttention::forward on the normalised
// stream (self-attention, unbatched (T, E), per-head weights), its W_O (out, E) the layer's:
// out_dim is the layer's out_dim.
#include "mha/encoder.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "encoder/encoder_kernels.h"
#include "mha/kernels.h"

namespace mha {
namespace {

// linear2 takes the ReLU's output: when at least this share of it is 0 (over 90% is, in the
// model), only its nonzero values are multiplied out (encoder::sparse_input_linear), else the
// dense GEMM runs.
constexpr double kSparseInputZeroShare = 0.5;

Status invalid_config(const std::string& message) { return Status(StatusCode::kInvalidConfig, message); }

std::string shape_text(const Shape& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

size_t numel(const Shape& shape) { return static_cast<size_t>(checked_numel(shape)); }

Tensor make_tensor(Shape shape) {
  Tensor t;
  t.data.assign(numel(shape), 0.0f);
  t.shape = std::move(shape);
  return t;
}

}  // namespace

int64_t Encoder::head_dim(size_t layer) const {
  return config_.layers[layer].embed_dim / config_.layers[layer].num_heads;
}

Status Encoder::Create(const EncoderConfig& config, std::unique_ptr<Encoder>* out) {
  const auto& layers = config.layers;
  if (config.vocab_size < 1 || config.embedding_rows < config.vocab_size) {
    return invalid_config("expected 1 <= vocab_size <= embedding_rows, got " + std::to_string(config.vocab_size) + " and " +
                          std::to_string(config.embedding_rows));
  }
  if (config.max_tokens < 1) return invalid_config("max_tokens must be positive, got " + std::to_string(config.max_tokens));
  if (!(config.layer_norm_eps > 0)) return invalid_config("layer_norm_eps must be positive");
  if (layers.empty()) return invalid_config("expected at least one layer");
  if (config.output_dim < 1) return invalid_config("output_dim must be positive");
  if (layers[0].embed_dim % 2 != 0) return invalid_config("the first layer's width must be even (sine and cosine halves)");
  for (size_t l = 0; l < layers.size(); ++l) {
    const EncoderLayerConfig& c = layers[l];
    const std::string which = "layer " + std::to_string(l) + ": ";
    if (c.embed_dim < 1 || c.num_heads < 1 || c.embed_dim % c.num_heads != 0) {
      return invalid_config(which + "embed_dim must be a positive multiple of num_heads, got " + std::to_string(c.embed_dim) +
                            " and " + std::to_string(c.num_heads));
    }
    if (c.out_dim < 1 || c.ffn_dim < 1) return invalid_config(which + "out_dim and ffn_dim must be positive");
    if (l > 0 && c.embed_dim != layers[l - 1].out_dim) {
      return invalid_config(which + "embed_dim " + std::to_string(c.embed_dim) + " must equal the previous layer's out_dim " +
                            std::to_string(layers[l - 1].out_dim));
    }
  }
  std::unique_ptr<Encoder> encoder(new Encoder());
  encoder->config_ = config;
  encoder->layers_.resize(layers.size());
  for (size_t l = 0; l < layers.size(); ++l) {
    Config attention;
    attention.embed_dim = layers[l].embed_dim;
    attention.num_heads = layers[l].num_heads;
    attention.out_dim = layers[l].out_dim;
    MHA_RETURN_IF_ERROR(MultiHeadAttention::Create(attention, 0, &encoder->layers_[l].attention));
  }
  for (size_t l = 0; l < layers.size(); ++l) {
    const EncoderLayerConfig& c = layers[l];
    LayerState& s = encoder->layers_[l];
    s.residual_proj.out = c.out_dim;
    s.residual_proj.in = c.embed_dim;
    s.linear1.out = c.ffn_dim;
    s.linear1.in = c.out_dim;
    s.linear2.out = c.out_dim;
    s.linear2.in = c.ffn_dim;
    s.linear2.keep_transposed = true;
  }
  encoder->pooler_.out = config.output_dim;
  encoder->pooler_.in = layers.back().out_dim;
  for (const std::string& name : encoder->parameter_names()) encoder->set_[name] = false;
  *out = std::move(encoder);
  return Status::Ok();
}

std::vector<std::string> Encoder::parameter_names() const {
  std::vector<std::string> names = {"embeddings.weight", "timing.inv_timescales"};
  for (size_t l = 0; l < config_.layers.size(); ++l) {
    const std::string p = "layers." + std::to_string(l) + ".";
    for (const char* n : {"norm1.weight", "norm1.bias", "self_attn.in_proj_weight", "self_attn.in_proj_bias",
                          "self_attn.out_proj.weight", "self_attn.out_proj.bias"}) {
      names.push_back(p + n);
    }
    if (config_.layers[l].out_dim != config_.layers[l].embed_dim) {
      names.push_back(p + "residual_proj.weight");
      names.push_back(p + "residual_proj.bias");
    }
    for (const char* n : {"norm2.weight", "norm2.bias", "linear1.weight", "linear1.bias", "linear2.weight", "linear2.bias"}) {
      names.push_back(p + n);
    }
  }
  names.push_back("pooler.dense.weight");
  names.push_back("pooler.dense.bias");
  return names;
}

// Where `name` lives and its shape. A Linear's weight or bias is repacked when set.
Status Encoder::find(const std::string& name, Slot* slot) const {
  auto* self = const_cast<Encoder*>(this);  // the slot points into this encoder's storage
  const auto plain = [&](std::vector<float>* data, Shape shape) {
    *slot = {data, nullptr, nullptr, "", std::move(shape)};
    return Status::Ok();
  };
  const auto linear = [&](Linear* lin, bool weight) {
    *slot = {weight ? &lin->weight : &lin->bias, lin, nullptr, "", weight ? Shape{lin->out, lin->in} : Shape{lin->out}};
    return Status::Ok();
  };
  const int64_t E0 = config_.layers[0].embed_dim;
  if (name == "embeddings.weight") return plain(&self->embeddings_, {config_.embedding_rows, E0});
  if (name == "timing.inv_timescales") return plain(&self->inv_timescales_, {E0 / 2});
  if (name == "pooler.dense.weight" || name == "pooler.dense.bias") return linear(&self->pooler_, name == "pooler.dense.weight");
  for (size_t l = 0; l < config_.layers.size(); ++l) {
    const std::string prefix = "layers." + std::to_string(l) + ".";
    if (name.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string rest = name.substr(prefix.size());
    const EncoderLayerConfig& c = config_.layers[l];
    LayerState& s = self->layers_[l];
    const bool widens = c.out_dim != c.embed_dim;
    if (rest == "norm1.weight") return plain(&s.norm1_weight, {c.embed_dim});
    if (rest == "norm1.bias") return plain(&s.norm1_bias, {c.embed_dim});
    if (rest == "norm2.weight") return plain(&s.norm2_weight, {c.out_dim});
    if (rest == "norm2.bias") return plain(&s.norm2_bias, {c.out_dim});
    if (rest == "linear1.weight" || rest == "linear1.bias") return linear(&s.linear1, rest == "linear1.weight");
    if (rest == "linear2.weight" || rest == "linear2.bias") return linear(&s.linear2, rest == "linear2.weight");
    if (widens && (rest == "residual_proj.weight" || rest == "residual_proj.bias")) {
      return linear(&s.residual_proj, rest == "residual_proj.weight");
    }
    const std::string attention_prefix = "self_attn.";
    if (rest.compare(0, attention_prefix.size(), attention_prefix) == 0) {
      const std::string inner = rest.substr(attention_prefix.size());
      Shape shape;
      if (inner != "bias_k" && inner != "bias_v" && s.attention->parameter_shape(inner, &shape).ok()) {
        *slot = {nullptr, nullptr, s.attention.get(), inner, shape};
        return Status::Ok();
      }
    }
  }
  std::string names;
  for (const std::string& n : parameter_names()) names += (names.empty() ? "" : ", ") + n;
  return Status(StatusCode::kUnknownParameter, "the encoder has no parameter '" + name + "'; it has " + names);
}

Status Encoder::parameter_shape(const std::string& name, Shape* shape) const {
  Slot slot;
  MHA_RETURN_IF_ERROR(find(name, &slot));
  *shape = slot.shape;
  return Status::Ok();
}

Status Encoder::check_parameter_shape(const std::string& name, const Shape& shape) const {
  Shape expected;
  MHA_RETURN_IF_ERROR(parameter_shape(name, &expected));
  if (shape != expected) {
    return Status(StatusCode::kShapeMismatch, "parameter '" + name + "': expected shape " + shape_text(expected) + ", got " +
                                                  shape_text(shape));
  }
  return Status::Ok();
}

Status Encoder::set_parameter(const std::string& name, const float* data, size_t length, const Shape& shape) {
  MHA_RETURN_IF_ERROR(check_parameter_shape(name, shape));
  Slot slot;
  find(name, &slot);
  if (length != numel(shape) || (length > 0 && data == nullptr)) {
    return Status(StatusCode::kLengthMismatch, "parameter '" + name + "': shape " + shape_text(shape) + " needs " +
                                                   std::to_string(numel(shape)) + " values, got " + std::to_string(length));
  }
  for (size_t i = 0; i < length; ++i) {
    if (!std::isfinite(data[i])) {
      return Status(StatusCode::kInvalidArgument, "parameter '" + name + "': value " + std::to_string(i) + " is not finite");
    }
  }
  if (slot.attention != nullptr) {
    MHA_RETURN_IF_ERROR(slot.attention->set_parameter(slot.attention_name, data, length, shape));
  } else {
    slot.data->assign(data, data + length);
  }
  if (slot.linear != nullptr && !slot.linear->weight.empty()) {
    Linear& lin = *slot.linear;
    lin.packed.assign(static_cast<size_t>(kernels::packed_weight_floats(lin.out, lin.in)), 0.0f);
    kernels::pack_weight(lin.packed.data(), lin.weight.data(), lin.out, lin.in);
    if (lin.keep_transposed) {
      lin.transposed.resize(lin.weight.size());
      for (int64_t o = 0; o < lin.out; ++o)
        for (int64_t i = 0; i < lin.in; ++i) lin.transposed[i * lin.out + o] = lin.weight[o * lin.in + i];
    }
  }
  set_[name] = true;
  return Status::Ok();
}

Status Encoder::get_parameter(const std::string& name, Tensor* out) const {
  Slot slot;
  MHA_RETURN_IF_ERROR(find(name, &slot));
  if (!set_.at(name)) return Status(StatusCode::kInvalidArgument, "parameter '" + name + "' has not been set");
  if (slot.attention != nullptr) return slot.attention->get_parameter(slot.attention_name, out);
  out->data = *slot.data;
  out->shape = slot.shape;
  return Status::Ok();
}

Status Encoder::attention_parameter(int64_t layer, const std::string& name, Tensor* out) const {
  if (layer < 0 || layer >= static_cast<int64_t>(config_.layers.size())) {
    return Status(StatusCode::kInvalidArgument, "layer " + std::to_string(layer) + " is out of range; expected a layer from 0 to " +
                                                    std::to_string(config_.layers.size() - 1));
  }
  Shape shape;
  MHA_RETURN_IF_ERROR(layers_[static_cast<size_t>(layer)].attention->parameter_shape(name, &shape));
  return get_parameter("layers." + std::to_string(layer) + ".self_attn." + name, out);
}

std::vector<std::string> Encoder::missing_parameters() const {
  std::vector<std::string> missing;
  for (const std::string& name : parameter_names()) {
    if (!set_.at(name)) missing.push_back(name);
  }
  return missing;
}

Status Encoder::validate(const int32_t* ids, size_t count, const EncodeOptions& options) const {
  const std::vector<std::string> missing = missing_parameters();
  if (!missing.empty()) {
    return Status(StatusCode::kInvalidArgument, "the encoder's weights are not loaded: " + std::to_string(missing.size()) +
                                                    " parameters unset, the first '" + missing[0] + "'");
  }
  const std::string max = std::to_string(config_.max_tokens);
  if (tokens_kept(count, options.truncate) > static_cast<size_t>(config_.max_tokens)) {
    return Status(StatusCode::kTooLarge, std::to_string(count) + " tokens; the model takes at most " + max +
                                             ". Shorten the text, or pass truncate to use its first " + max + " tokens");
  }
  for (size_t i = 0; i < tokens_kept(count, options.truncate); ++i) {
    if (ids[i] < 0 || ids[i] >= config_.vocab_size) {
      return Status(StatusCode::kInvalidArgument, "ids[" + std::to_string(i) + "] is " + std::to_string(ids[i]) +
                                                      "; expected an id from 0 to " + std::to_string(config_.vocab_size - 1));
    }
  }
  for (const auto& [layer, head] : options.ablate) {
    if (layer < 0 || layer >= static_cast<int64_t>(config_.layers.size())) {
      return Status(StatusCode::kInvalidArgument, "ablate: layer " + std::to_string(layer) +
                                                      " is out of range; expected a layer from 0 to " +
                                                      std::to_string(config_.layers.size() - 1));
    }
    const int64_t heads = config_.layers[static_cast<size_t>(layer)].num_heads;
    if (head < 0 || head >= heads) {
      return Status(StatusCode::kInvalidArgument, "ablate: head " + std::to_string(head) + " of layer " + std::to_string(layer) +
                                                      " is out of range; expected 0 to " + std::to_string(heads - 1));
    }
  }
  return Status::Ok();
}

void Encoder::embed(const int32_t* ids, int64_t T, std::vector<float>* x) const {
  const int64_t E0 = config_.layers[0].embed_dim;
  x->assign(static_cast<size_t>(T * E0), 0.0f);
  encoder::embed_with_timing(x->data(), embeddings_.data(), inv_timescales_.data(), ids, T, E0);
}

// x (T, E) in, (T, out) out.
Status Encoder::run_layer(size_t l, const std::vector<int64_t>& ablated, int64_t T, std::vector<float>* x,
                          EncoderLayerResult* out) {
  const EncoderLayerConfig& c = config_.layers[l];
  LayerState& s = layers_[l];
  const int64_t E = c.embed_dim, D = c.out_dim, F = c.ffn_dim;
  const bool widens = D != E;
  // 1. LayerNorm before attention: normed_ (T, E)
  normed_.resize(static_cast<size_t>(T * E));
  encoder::layer_norm(normed_.data(), x->data(), s.norm1_weight.data(), s.norm1_bias.data(), config_.layer_norm_eps, T, E);
  // 2. Self-attention: weights (H, T, T), head outputs (H, T, hd), concat (T, E), output (T, D)
  const TensorView stream{normed_.data(), normed_.size(), {T, E}};
  ForwardOptions options;
  options.need_weights = true;
  options.average_attn_weights = false;
  options.return_head_outputs = true;
  options.return_concat = true;
  options.ablate_heads = ablated;
  ForwardResult attended;
  MHA_RETURN_IF_ERROR(s.attention->forward(stream, stream, stream, MaskView(), MaskView(), options, &attended));
  out->weights = std::move(attended.weights);
  out->head_outputs = std::move(attended.head_outputs);
  out->concat = std::move(attended.concat);
  out->attention_output = std::move(attended.output);  // (T, D): concat · W_Oᵀ + b_O
  // 3. Residual add, the residual widened to D when needed: x (T, D)
  if (widens) {
    widened_.resize(static_cast<size_t>(T * D));
    kernels::linear_packed(widened_.data(), x->data(), s.residual_proj.packed.data(), s.residual_proj.bias.data(), T, D, E);
    x->swap(widened_);
  }
  encoder::add_inplace(x->data(), out->attention_output.data.data(), T * D);
  // 4. Feed forward on the normalised stream: x += linear2(relu(linear1(LayerNorm2(x))))
  normed_.resize(static_cast<size_t>(T * D));
  encoder::layer_norm(normed_.data(), x->data(), s.norm2_weight.data(), s.norm2_bias.data(), config_.layer_norm_eps, T, D);
  ffn_hidden_.resize(static_cast<size_t>(T * F));
  kernels::linear_packed(ffn_hidden_.data(), normed_.data(), s.linear1.packed.data(), s.linear1.bias.data(), T, F, D);
  encoder::relu_inplace(ffn_hidden_.data(), T * F);
  ffn_out_.resize(static_cast<size_t>(T * D));
  if (encoder::zero_share(ffn_hidden_.data(), T * F) >= kSparseInputZeroShare) {
    encoder::sparse_input_linear(ffn_out_.data(), ffn_hidden_.data(), s.linear2.transposed.data(), s.linear2.bias.data(), T, D, F);
  } else {
    kernels::linear_packed(ffn_out_.data(), ffn_hidden_.data(), s.linear2.packed.data(), s.linear2.bias.data(), T, D, F);
  }
  encoder::add_inplace(x->data(), ffn_out_.data(), T * D);
  out->residual.data = *x;
  out->residual.shape = {T, D};
  return Status::Ok();
}

void Encoder::pool(const std::vector<float>& x, int64_t T, Tensor* embedding) const {
  const int64_t D = config_.layers.back().out_dim, P = config_.output_dim;
  std::vector<float> mean(static_cast<size_t>(D));
  encoder::mean_rows(mean.data(), x.data(), T, D);
  *embedding = make_tensor({P});
  kernels::linear_packed(embedding->data.data(), mean.data(), pooler_.packed.data(), pooler_.bias.data(), 1, P, D);
  encoder::tanh_inplace(embedding->data.data(), P);
  encoder::l2_normalize_inplace(embedding->data.data(), P);
}

size_t Encoder::tokens_kept(size_t count, bool truncate) const {
  return truncate ? std::min(count, static_cast<size_t>(config_.max_tokens)) : count;
}

Status Encoder::encode(const int32_t* ids, size_t count, const EncodeOptions& options, EncodeResult* result) {
  // 1. Validate
  MHA_RETURN_IF_ERROR(validate(ids, count, options));
  const int64_t T = static_cast<int64_t>(tokens_kept(count, options.truncate));
  EncodeResult r;
  r.layers.resize(config_.layers.size());
  // 2. Embed: x (T, E_0)
  std::vector<float> x;
  embed(ids, T, &x);
  // 3. Layers (no tokens: empty results, and the stream stays empty)
  for (size_t l = 0; l < config_.layers.size(); ++l) {
    const EncoderLayerConfig& c = config_.layers[l];
    if (T == 0) {
      const int64_t H = c.num_heads, hd = c.embed_dim / c.num_heads;
      r.layers[l] = {make_tensor({H, 0, 0}), make_tensor({H, 0, hd}), make_tensor({0, c.embed_dim}),
                     make_tensor({0, c.out_dim}), make_tensor({0, c.out_dim})};
      continue;
    }
    std::vector<int64_t> ablated;
    for (const auto& [layer, head] : options.ablate) {
      if (layer == static_cast<int64_t>(l)) ablated.push_back(head);
    }
    MHA_RETURN_IF_ERROR(run_layer(l, ablated, T, &x, &r.layers[l]));
  }
  // 4. Pool: mean over tokens, dense, tanh, L2
  pool(x, T, &r.embedding);
  *result = std::move(r);
  return Status::Ok();
}

}  // namespace mha
