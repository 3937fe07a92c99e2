// Model: the GPT-2 and BERT forward passes of mha/models.h. Every linear layer is
// kernels::linear_packed on weights in nn.Linear's (out, in) layout (Conv1D's [in, out]
// transposed when loaded); every attention layer is MultiHeadAttention::forward on the
// stream, unbatched (T, E), with per-head weights.
#include <algorithm>
#include <cmath>
#include <string>

#include "mha/kernels.h"
#include "mha/models.h"
#include "models/numbers.h"

namespace mha::models {
namespace {

// t as a tensor of `shape`, its storage reused: values already there are not cleared (every
// caller overwrites them all), so a result filled again at the same size is not zeroed first.
void reshape(Tensor* t, Shape shape) {
  size_t n = 1;
  for (int64_t d : shape) n *= static_cast<size_t>(d);
  t->data.resize(n);
  t->shape = std::move(shape);
}

Tensor make_tensor(Shape shape) {
  size_t n = 1;
  for (int64_t d : shape) n *= static_cast<size_t>(d);
  Tensor t;
  t.data.assign(n, 0.0f);
  t.shape = std::move(shape);
  return t;
}

// Buffers HF checkpoints carry beside the weights, not read: GPT-2's causal mask
// (h.N.attn.bias, h.N.attn.masked_bias), BERT's position_ids, and BertForPreTraining's
// next-sentence head.
bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}
bool skip_gpt2(const std::string& name) { return ends_with(name, ".attn.bias") || ends_with(name, ".attn.masked_bias"); }
bool skip_bert(const std::string& name) {
  return ends_with(name, "embeddings.position_ids") || name.compare(0, 21, "cls.seq_relationship.") == 0;
}

// (rows, cols) row-major -> (cols, rows)
std::vector<float> transposed(const std::vector<float>& w, int64_t rows, int64_t cols) {
  std::vector<float> t(w.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) t[static_cast<size_t>(c * rows + r)] = w[static_cast<size_t>(r * cols + c)];
  return t;
}

// Takes expected tensors out of a file's map; messages name the file, the tensor and shapes.
class Take {
 public:
  Take(std::map<std::string, LoadedTensor>* tensors, const std::string& file, const std::string& architecture)
      : tensors_(tensors), file_(file), architecture_(architecture) {}

  bool has(const std::string& name) const { return tensors_->count(name) != 0; }

  Status operator()(const std::string& name, const Shape& shape, std::vector<float>* out) {
    auto it = tensors_->find(name);
    if (it == tensors_->end()) {
      return Status(StatusCode::kUnknownParameter, file_ + ": tensor '" + name + "' is missing (expected shape " +
                                                       shape_text(shape) + ")");
    }
    if (it->second.shape != shape) {
      return Status(StatusCode::kShapeMismatch, file_ + ": tensor '" + name + "' has shape " + shape_text(it->second.shape) +
                                                    ", expected " + shape_text(shape));
    }
    *out = std::move(it->second.values);
    tensors_->erase(it);
    return Status::Ok();
  }

  // Nothing left over: a tensor the architecture does not have means another model.
  Status finish() const {
    if (tensors_->empty()) return Status::Ok();
    return Status(StatusCode::kUnknownParameter, file_ + ": tensor '" + tensors_->begin()->first + "' is not part of a " +
                                                     architecture_ + (tensors_->size() > 1 ? " (nor are " +
                                                     std::to_string(tensors_->size() - 1) + " more)" : ""));
  }

 private:
  std::map<std::string, LoadedTensor>* tensors_;
  const std::string& file_;
  std::string architecture_;
};

}  // namespace

Status Model::Create(const ModelConfig& config, const LoadLimits& limits, std::unique_ptr<Model>* out) {
  if (config.hidden < 1 || config.num_heads < 1 || config.hidden % config.num_heads != 0 || config.num_layers < 1 ||
      config.vocab_size < 1 || config.max_positions < 1 || config.intermediate < 1) {
    return Status(StatusCode::kInvalidConfig, "model config: sizes must be positive and hidden a multiple of num_heads");
  }
  if (config.parameter_count() > limits.max_parameters) {
    return Status(StatusCode::kTooLarge, "the model has " + std::to_string(config.parameter_count()) +
                                             " parameters, more than the " + std::to_string(limits.max_parameters) +
                                             " the core takes");
  }
  std::unique_ptr<Model> model(new Model());
  model->config_ = config;
  model->limits_ = limits;
  model->layers_.resize(static_cast<size_t>(config.num_layers));
  for (Layer& layer : model->layers_) {
    Config attention;
    attention.embed_dim = config.hidden;
    attention.num_heads = config.num_heads;
    MHA_RETURN_IF_ERROR(MultiHeadAttention::Create(attention, 0, &layer.attention));
  }
  *out = std::move(model);
  return Status::Ok();
}

Status Model::Load(std::string_view config_json, const std::string& config_file, std::string_view safetensors,
                   const std::string& safetensors_file, const LoadLimits& limits, std::unique_ptr<Model>* out) {
  ModelConfig config;
  MHA_RETURN_IF_ERROR(ParseConfig(config_json, config_file, &config));
  std::unique_ptr<Model> model;
  Status created = Create(config, limits, &model);
  if (!created.ok()) return Status(created.code(), config_file + ": " + created.message());
  MHA_RETURN_IF_ERROR(model->LoadWeights(safetensors, safetensors_file));
  *out = std::move(model);
  return Status::Ok();
}

Status Model::LoadWeights(std::string_view safetensors, const std::string& file) {
  std::map<std::string, LoadedTensor> tensors;
  MHA_RETURN_IF_ERROR(ReadSafetensors(safetensors, file, limits_, config_.family == Family::kGpt2 ? skip_gpt2 : skip_bert,
                                      &tensors));
  loaded_ = false;
  MHA_RETURN_IF_ERROR(set_weights(&tensors, file));
  loaded_ = true;
  return Status::Ok();
}

Status Model::set_weights(std::map<std::string, LoadedTensor>* tensors, const std::string& file) {
  const ModelConfig& c = config_;
  const int64_t E = c.hidden, I = c.intermediate, V = c.vocab_size, P = c.max_positions;
  Take take(tensors, file, c.architecture);
  // LayerNorm weight and bias; checkpoints converted from the original BERT name them gamma and
  // beta (transformers renames them when it loads).
  const auto norm = [&](const std::string& name, Norm* n) {
    const bool legacy = !take.has(name + ".weight") && take.has(name + ".gamma");
    MHA_RETURN_IF_ERROR(take(name + (legacy ? ".gamma" : ".weight"), {E}, &n->weight));
    return take(name + (legacy ? ".beta" : ".bias"), {E}, &n->bias);
  };
  // A linear layer from a weight (out, in) and a bias (out) or none.
  const auto linear = [](Linear* lin, const std::vector<float>& weight, std::vector<float> bias, int64_t out_dim,
                         int64_t in_dim) {
    lin->out = out_dim;
    lin->in = in_dim;
    lin->packed.assign(static_cast<size_t>(kernels::packed_weight_floats(out_dim, in_dim)), 0.0f);
    kernels::pack_weight(lin->packed.data(), weight.data(), out_dim, in_dim);
    lin->bias = std::move(bias);
  };
  const auto attention = [&](Layer& layer, const std::vector<float>& in_w, const std::vector<float>& in_b,
                             const std::vector<float>& out_w, const std::vector<float>& out_b) {
    MultiHeadAttention& a = *layer.attention;
    MHA_RETURN_IF_ERROR(a.set_parameter("in_proj_weight", in_w.data(), in_w.size(), {3 * E, E}));
    MHA_RETURN_IF_ERROR(a.set_parameter("in_proj_bias", in_b.data(), in_b.size(), {3 * E}));
    MHA_RETURN_IF_ERROR(a.set_parameter("out_proj.weight", out_w.data(), out_w.size(), {E, E}));
    return a.set_parameter("out_proj.bias", out_b.data(), out_b.size(), {E});
  };
  std::vector<float> w, b, w2, b2;
  if (c.family == Family::kGpt2) {
    const std::string p = take.has("transformer.wte.weight") ? "transformer."
                          : take.has("wte.weight")            ? ""
                          : c.lm_head                         ? "transformer."
                                                              : "";
    MHA_RETURN_IF_ERROR(take(p + "wte.weight", {V, E}, &word_));
    MHA_RETURN_IF_ERROR(take(p + "wpe.weight", {P, E}, &position_));
    for (int64_t l = 0; l < c.num_layers; ++l) {
      Layer& layer = layers_[static_cast<size_t>(l)];
      const std::string h = p + "h." + std::to_string(l) + ".";
      MHA_RETURN_IF_ERROR(norm(h + "ln_1", &layer.norm1));
      // Conv1D: c_attn.weight [E, 3E] -> in_proj_weight (3E, E), rows q, k, v
      MHA_RETURN_IF_ERROR(take(h + "attn.c_attn.weight", {E, 3 * E}, &w));
      MHA_RETURN_IF_ERROR(take(h + "attn.c_attn.bias", {3 * E}, &b));
      MHA_RETURN_IF_ERROR(take(h + "attn.c_proj.weight", {E, E}, &w2));
      MHA_RETURN_IF_ERROR(take(h + "attn.c_proj.bias", {E}, &b2));
      MHA_RETURN_IF_ERROR(attention(layer, transposed(w, E, 3 * E), b, transposed(w2, E, E), b2));
      MHA_RETURN_IF_ERROR(norm(h + "ln_2", &layer.norm2));
      MHA_RETURN_IF_ERROR(take(h + "mlp.c_fc.weight", {E, I}, &w));
      MHA_RETURN_IF_ERROR(take(h + "mlp.c_fc.bias", {I}, &b));
      linear(&layer.up, transposed(w, E, I), b, I, E);
      MHA_RETURN_IF_ERROR(take(h + "mlp.c_proj.weight", {I, E}, &w));
      MHA_RETURN_IF_ERROR(take(h + "mlp.c_proj.bias", {E}, &b));
      linear(&layer.down, transposed(w, I, E), b, E, I);
    }
    MHA_RETURN_IF_ERROR(norm(p + "ln_f", &final_norm_));
    if (c.lm_head) {
      // Tied: the head is wte (a copy in the file, where one was written, is the same tensor).
      if (c.tie_word_embeddings) {
        if (take.has("lm_head.weight")) MHA_RETURN_IF_ERROR(take("lm_head.weight", {V, E}, &w));
        w = word_;
      } else {
        MHA_RETURN_IF_ERROR(take("lm_head.weight", {V, E}, &w));
      }
      linear(&lm_head_, w, {}, V, E);
    }
    return take.finish();
  }

  // BERT
  const std::string p = take.has("bert.embeddings.word_embeddings.weight") ? "bert."
                        : take.has("embeddings.word_embeddings.weight")    ? ""
                        : c.lm_head                                         ? "bert."
                                                                            : "";
  MHA_RETURN_IF_ERROR(take(p + "embeddings.word_embeddings.weight", {V, E}, &word_));
  MHA_RETURN_IF_ERROR(take(p + "embeddings.position_embeddings.weight", {P, E}, &position_));
  MHA_RETURN_IF_ERROR(take(p + "embeddings.token_type_embeddings.weight", {c.type_vocab_size, E}, &token_type_));
  MHA_RETURN_IF_ERROR(norm(p + "embeddings.LayerNorm", &embed_norm_));
  for (int64_t l = 0; l < c.num_layers; ++l) {
    Layer& layer = layers_[static_cast<size_t>(l)];
    const std::string h = p + "encoder.layer." + std::to_string(l) + ".";
    std::vector<float> in_w, in_b, part;
    for (const char* which : {"query", "key", "value"}) {
      MHA_RETURN_IF_ERROR(take(h + "attention.self." + which + ".weight", {E, E}, &part));
      in_w.insert(in_w.end(), part.begin(), part.end());
      MHA_RETURN_IF_ERROR(take(h + "attention.self." + which + ".bias", {E}, &part));
      in_b.insert(in_b.end(), part.begin(), part.end());
    }
    MHA_RETURN_IF_ERROR(take(h + "attention.output.dense.weight", {E, E}, &w2));
    MHA_RETURN_IF_ERROR(take(h + "attention.output.dense.bias", {E}, &b2));
    MHA_RETURN_IF_ERROR(attention(layer, in_w, in_b, w2, b2));
    MHA_RETURN_IF_ERROR(norm(h + "attention.output.LayerNorm", &layer.norm1));
    MHA_RETURN_IF_ERROR(take(h + "intermediate.dense.weight", {I, E}, &w));
    MHA_RETURN_IF_ERROR(take(h + "intermediate.dense.bias", {I}, &b));
    linear(&layer.up, w, b, I, E);
    MHA_RETURN_IF_ERROR(take(h + "output.dense.weight", {E, I}, &w));
    MHA_RETURN_IF_ERROR(take(h + "output.dense.bias", {E}, &b));
    linear(&layer.down, w, b, E, I);
    MHA_RETURN_IF_ERROR(norm(h + "output.LayerNorm", &layer.norm2));
  }
  has_pooler_ = take.has(p + "pooler.dense.weight");
  if (has_pooler_) {
    MHA_RETURN_IF_ERROR(take(p + "pooler.dense.weight", {E, E}, &w));
    MHA_RETURN_IF_ERROR(take(p + "pooler.dense.bias", {E}, &b));
    linear(&pooler_, w, b, E, E);
  }
  if (c.lm_head) {
    MHA_RETURN_IF_ERROR(take("cls.predictions.transform.dense.weight", {E, E}, &w));
    MHA_RETURN_IF_ERROR(take("cls.predictions.transform.dense.bias", {E}, &b));
    linear(&head_transform_, w, b, E, E);
    MHA_RETURN_IF_ERROR(norm("cls.predictions.transform.LayerNorm", &head_norm_));
    MHA_RETURN_IF_ERROR(take("cls.predictions.bias", {V}, &b));
    // decoder.bias is cls.predictions.bias (one tensor in the model); a copy in the file is read and dropped
    if (take.has("cls.predictions.decoder.bias")) MHA_RETURN_IF_ERROR(take("cls.predictions.decoder.bias", {V}, &w));
    if (c.tie_word_embeddings) {
      if (take.has("cls.predictions.decoder.weight")) MHA_RETURN_IF_ERROR(take("cls.predictions.decoder.weight", {V, E}, &w));
      w = word_;
    } else {
      MHA_RETURN_IF_ERROR(take("cls.predictions.decoder.weight", {V, E}, &w));
    }
    linear(&lm_head_, w, b, V, E);
  }
  return take.finish();
}

// out[T, E] = (in - mean) / sqrt(var + eps) * weight + bias per row; sums in double.
void Model::layer_norm(float* out, const float* in, const Norm& norm, int64_t T) const {
  const int64_t E = config_.hidden;
  for (int64_t t = 0; t < T; ++t) {
    const float* x = in + t * E;
    double mean = 0;
    for (int64_t i = 0; i < E; ++i) mean += x[i];
    mean /= static_cast<double>(E);
    double var = 0;
    for (int64_t i = 0; i < E; ++i) var += (x[i] - mean) * (x[i] - mean);
    var /= static_cast<double>(E);
    const double inv = 1.0 / std::sqrt(var + config_.layer_norm_eps);
    for (int64_t i = 0; i < E; ++i) {
      out[t * E + i] = static_cast<float>((x[i] - mean) * inv * norm.weight[static_cast<size_t>(i)] + norm.bias[static_cast<size_t>(i)]);
    }
  }
}

// gelu_new / gelu_pytorch_tanh: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) in float (kernels::gelu_tanh);
// gelu: 0.5 x (1 + erf(x / sqrt 2)), relu: max(x, 0), silu: x sigmoid(x), in double.
void Model::activate(float* x, int64_t n) const {
  if (config_.activation == Activation::kGeluTanh) {
    kernels::gelu_tanh(x, n);  // in float, vectorised: the MLP's activation is T * I values a layer
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    const double v = x[i];
    switch (config_.activation) {
      case Activation::kGeluTanh: break;  // above
      case Activation::kGeluErf: x[i] = static_cast<float>(0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)))); break;
      case Activation::kRelu: x[i] = v > 0 ? x[i] : 0.0f; break;
      case Activation::kSilu: x[i] = static_cast<float>(v / (1.0 + std::exp(-v))); break;
    }
  }
}

Status Model::validate(const int32_t* ids, size_t count, const RunOptions& options) const {
  const ModelConfig& c = config_;
  if (!loaded_) return Status(StatusCode::kInvalidArgument, "the model's weights are not loaded");
  if (count < 1) return Status(StatusCode::kInvalidArgument, "no tokens: the model needs at least one");
  if (count > static_cast<size_t>(c.max_positions)) {
    return Status(StatusCode::kTooLarge, std::to_string(count) + " tokens: the model takes at most " +
                                             std::to_string(c.max_positions));
  }
  for (size_t i = 0; i < count; ++i) {
    if (ids[i] < 0 || ids[i] >= c.vocab_size) {
      return Status(StatusCode::kInvalidArgument, "id " + std::to_string(i) + " is " + std::to_string(ids[i]) +
                                                      "; expected 0 to " + std::to_string(c.vocab_size - 1));
    }
  }
  for (const auto& [layer, head] : options.ablate) {
    if (layer < 0 || layer >= c.num_layers || head < 0 || head >= c.num_heads) {
      return Status(StatusCode::kInvalidArgument, "ablate: (layer " + std::to_string(layer) + ", head " + std::to_string(head) +
                                                      ") is out of range; the model has " + std::to_string(c.num_layers) +
                                                      " layers of " + std::to_string(c.num_heads) + " heads");
    }
  }
  return Status::Ok();
}

// x (T, E) = GPT-2: wte[ids] + wpe[t]; BERT: LayerNorm((word[ids] + token_type[0]) + position[t])
void Model::embed(const int32_t* ids, int64_t T, std::vector<float>* x) const {
  const int64_t E = config_.hidden;
  const bool gpt2 = config_.family == Family::kGpt2;
  x->assign(static_cast<size_t>(T * E), 0.0f);
  for (int64_t t = 0; t < T; ++t) {
    const float* word = word_.data() + ids[t] * E;
    const float* position = position_.data() + t * E;
    for (int64_t i = 0; i < E; ++i) {
      // BERT in modeling_bert.py's order of additions
      (*x)[static_cast<size_t>(t * E + i)] = gpt2 ? word[i] + position[i] : (word[i] + token_type_[static_cast<size_t>(i)]) + position[i];
    }
  }
  if (!gpt2) layer_norm(x->data(), x->data(), embed_norm_, T);
}

// One layer on x (T, E), in place: GPT-2 pre-LayerNorm, BERT post-LayerNorm.
Status Model::run_layer(int64_t l, const std::vector<int64_t>& ablated, bool head_outputs, int64_t T, std::vector<float>* x,
                        LayerResult* out) {
  const int64_t E = config_.hidden, I = config_.intermediate;
  const bool gpt2 = config_.family == Family::kGpt2;
  Layer& layer = layers_[static_cast<size_t>(l)];
  normed_.resize(x->size());
  up_.resize(static_cast<size_t>(T * I));
  down_.resize(x->size());
  ForwardOptions fo;
  fo.need_weights = true;
  fo.average_attn_weights = false;
  fo.is_causal = gpt2;
  fo.return_head_outputs = head_outputs;
  fo.return_concat = head_outputs;
  fo.ablate_heads = ablated;
  const float* attention_in = x->data();
  if (gpt2) {
    layer_norm(normed_.data(), x->data(), layer.norm1, T);
    attention_in = normed_.data();
  }
  const TensorView stream{attention_in, static_cast<size_t>(T * E), {T, E}};
  ForwardResult attended;
  MHA_RETURN_IF_ERROR(layer.attention->forward(stream, stream, stream, MaskView(), MaskView(), fo, &attended));
  const std::vector<float>& a = attended.output.data;
  for (size_t i = 0; i < x->size(); ++i) (*x)[i] += a[i];
  if (gpt2) {
    layer_norm(normed_.data(), x->data(), layer.norm2, T);
  } else {
    layer_norm(x->data(), x->data(), layer.norm1, T);
    normed_ = *x;
  }
  kernels::linear_packed(up_.data(), normed_.data(), layer.up.packed.data(), layer.up.bias.data(), T, I, E);
  activate(up_.data(), T * I);
  kernels::linear_packed(down_.data(), up_.data(), layer.down.packed.data(), layer.down.bias.data(), T, E, I);
  for (size_t i = 0; i < x->size(); ++i) (*x)[i] += down_[i];
  if (!gpt2) layer_norm(x->data(), x->data(), layer.norm2, T);
  out->weights = std::move(attended.weights);
  out->head_outputs = head_outputs ? std::move(attended.head_outputs) : Tensor();
  out->concat = head_outputs ? std::move(attended.concat) : Tensor();
  out->attention_output = head_outputs ? std::move(attended.output) : Tensor();
  out->residual.data = *x;
  out->residual.shape = {T, E};
  return Status::Ok();
}

// hidden, logits and pooled from the last layer's x (T, E).
void Model::heads(const std::vector<float>& x, int64_t T, RunResult* r) {
  const ModelConfig& c = config_;
  const int64_t E = c.hidden, V = c.vocab_size;
  reshape(&r->hidden, {T, E});
  if (!c.lm_head) r->logits = Tensor();
  if (!has_pooler_) r->pooled = Tensor();
  if (c.family == Family::kGpt2) {
    layer_norm(r->hidden.data.data(), x.data(), final_norm_, T);
    if (c.lm_head) {
      reshape(&r->logits, {T, V});
      kernels::linear_packed(r->logits.data.data(), r->hidden.data.data(), lm_head_.packed.data(), nullptr, T, V, E);
    }
    return;
  }
  r->hidden.data = x;
  if (has_pooler_) {
    reshape(&r->pooled, {E});
    kernels::linear_packed(r->pooled.data.data(), x.data(), pooler_.packed.data(), pooler_.bias.data(), 1, E, E);
    for (float& v : r->pooled.data) v = std::tanh(v);
  }
  if (c.lm_head) {
    normed_.resize(x.size());
    kernels::linear_packed(normed_.data(), x.data(), head_transform_.packed.data(), head_transform_.bias.data(), T, E, E);
    activate(normed_.data(), T * E);
    layer_norm(normed_.data(), normed_.data(), head_norm_, T);
    reshape(&r->logits, {T, V});
    kernels::linear_packed(r->logits.data.data(), normed_.data(), lm_head_.packed.data(), lm_head_.bias.data(), T, V, E);
  }
}

Status Model::Run(const int32_t* ids, size_t count, const RunOptions& options, RunResult* result) {
  MHA_RETURN_IF_ERROR(validate(ids, count, options));
  const int64_t T = static_cast<int64_t>(count);
  // *result's storage is reused: a model run again at the same length allocates and clears
  // nothing of its (T, vocab) logits
  RunResult& r = *result;
  r.layers.resize(static_cast<size_t>(config_.num_layers));
  std::vector<float> x;
  embed(ids, T, &x);
  for (int64_t l = 0; l < config_.num_layers; ++l) {
    std::vector<int64_t> ablated;
    for (const auto& [layer, head] : options.ablate) {
      if (layer == l) ablated.push_back(head);
    }
    MHA_RETURN_IF_ERROR(run_layer(l, ablated, options.head_outputs, T, &x, &r.layers[static_cast<size_t>(l)]));
  }
  heads(x, T, &r);
  return Status::Ok();
}

// log p(ids[t + 1] | ids[..t]) for t < T - 1 from the last layer's stream x (T, E): ln_f and the
// LM head on the first T - 1 positions only (the last has no next token to predict), then
// logits[t, ids[t + 1]] - log sum_v e^logits[t, v]. logits: scratch, (T - 1, vocab).
void Model::next_token_logprobs(const std::vector<float>& x, const int32_t* ids, int64_t T, std::vector<float>* logits,
                                std::vector<double>* out) {
  const int64_t E = config_.hidden, V = config_.vocab_size, rows = T - 1;
  normed_.resize(static_cast<size_t>(rows * E));
  layer_norm(normed_.data(), x.data(), final_norm_, rows);
  logits->resize(static_cast<size_t>(rows * V));
  kernels::linear_packed(logits->data(), normed_.data(), lm_head_.packed.data(), nullptr, rows, V, E);
  out->resize(static_cast<size_t>(rows));
  for (int64_t t = 0; t < rows; ++t) {
    const float* row = logits->data() + t * V;
    (*out)[static_cast<size_t>(t)] = row[ids[t + 1]] - kernels::log_sum_exp(row, V);
  }
}

Status Model::AttentionParameter(int64_t layer, const std::string& name, Tensor* out) const {
  if (!loaded_) return Status(StatusCode::kInvalidArgument, "the model has no weights yet");
  if (layer < 0 || layer >= config_.num_layers) {
    return Status(StatusCode::kInvalidArgument, "layer " + std::to_string(layer) + ": the model has " + std::to_string(config_.num_layers) + " layers");
  }
  return layers_[static_cast<size_t>(layer)].attention->get_parameter(name, out);
}

Status Model::HeadImportance(const int32_t* ids, size_t count, Tensor* importance) {
  const ModelConfig& c = config_;
  if (c.family != Family::kGpt2 || !c.lm_head) {
    return Status(StatusCode::kInvalidArgument, "head importance needs a causal LM head (GPT2LMHeadModel); this is a " +
                                                    c.architecture);
  }
  MHA_RETURN_IF_ERROR(validate(ids, count, RunOptions()));
  if (count < 2) return Status(StatusCode::kInvalidArgument, "head importance needs at least two tokens (a next token to predict)");
  const int64_t T = static_cast<int64_t>(count), L = c.num_layers, H = c.num_heads;
  // The stream entering each layer, unablated: switching off a head in layer l changes nothing
  // below it, so each of the L * H runs starts at its layer l from here.
  std::vector<std::vector<float>> entering(static_cast<size_t>(L));
  std::vector<float> x, logits;
  embed(ids, T, &x);
  LayerResult scratch;
  for (int64_t l = 0; l < L; ++l) {
    entering[static_cast<size_t>(l)] = x;
    MHA_RETURN_IF_ERROR(run_layer(l, {}, false, T, &x, &scratch));
  }
  std::vector<double> baseline, ablated;
  next_token_logprobs(x, ids, T, &logits, &baseline);
  *importance = make_tensor({L, H});
  for (int64_t l = 0; l < L; ++l) {
    for (int64_t h = 0; h < H; ++h) {
      x = entering[static_cast<size_t>(l)];
      MHA_RETURN_IF_ERROR(run_layer(l, {h}, false, T, &x, &scratch));
      for (int64_t k = l + 1; k < L; ++k) MHA_RETURN_IF_ERROR(run_layer(k, {}, false, T, &x, &scratch));
      next_token_logprobs(x, ids, T, &logits, &ablated);
      double drop = 0;
      for (size_t t = 0; t < ablated.size(); ++t) drop += baseline[t] - ablated[t];
      importance->data[static_cast<size_t>(l * H + h)] = static_cast<float>(drop / static_cast<double>(ablated.size()));
    }
  }
  return Status::Ok();
}

}  // namespace mha::models
