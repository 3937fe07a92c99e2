// The Embind table of Hugging Face checkpoints (cpp/include/mha/models.h), in the dialect of
// boundary.h: one ModelSession holds a model and the buffers that cross the boundary in bulk;
// it takes ids (tokenizer.json is read in JavaScript, web/lib/tokenizer.js). Inputs go into buffers a call sizes and returns the byte
// offset of (weightsBuffer, idsBuffer); results come out as TensorRefs (byte offset and shape,
// sliced at once); lists of integers (the heads to switch off) cross as arrays. Every fallible
// call returns an Outcome or a result that carries one. Files, checks of JavaScript types,
// defaults and thrown errors live in web/lib/models.js.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "boundary.h"
#include "mha/kernels.h"
#include "mha/models.h"

namespace {

using emscripten::val;
using mha::bindings::Buffer;
using mha::bindings::byte_offset;
using mha::bindings::integers_of;
using mha::bindings::Outcome;
using mha::bindings::outcome_of;
using mha::bindings::record;
using mha::bindings::shape_array;
using mha::bindings::TensorRef;
using mha::bindings::to_int64;

Outcome invalid(const std::string& message) { return {static_cast<int>(mha::StatusCode::kInvalidArgument), message}; }
// A JavaScript number as it prints there: 3, 2.5, -1, NaN.
std::string number_text(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", value);
  return std::isnan(value) ? "NaN" : text;
}

// A result's outcome set to INVALID_ARGUMENT with `message`.
void set_invalid(Outcome* out, const std::string& message) { *out = invalid(message); }

class ModelSession {
 public:
  // A model streamed in: begin() parses config.json and plans the memory (refusing, with the
  // numbers, what will not fit) before any weight; then model.safetensors chunk by chunk, each
  // into chunkBuffer(n) and read by feed(n) straight into the kernels' layout; then finish().
  // fileBytes: the file's size, 0 when not known.
  Outcome begin(const std::string& config_json, const std::string& config_file, const std::string& weights_file,
                double file_bytes, double max_file_bytes, double max_memory_bytes) {
    mha::models::LoadLimits limits;
    limits.max_file_bytes = static_cast<uint64_t>(std::max<int64_t>(to_int64(max_file_bytes), 0));
    limits.max_memory_bytes = static_cast<uint64_t>(std::max<int64_t>(to_int64(max_memory_bytes), 0));
    model_.reset();
    pending_.reset();
    mha::models::ModelConfig config;
    mha::Status s = mha::models::ParseConfig(config_json, config_file, &config);
    if (!s.ok()) return outcome_of(s);
    s = mha::models::Model::Create(config, limits, &pending_);
    if (!s.ok()) return outcome_of(mha::Status(s.code(), config_file + ": " + s.message()));
    s = pending_->BeginWeights(weights_file, static_cast<uint64_t>(std::max<int64_t>(to_int64(file_bytes), 0)));
    if (!s.ok()) pending_.reset();
    return outcome_of(s);
  }
  Buffer chunkBuffer(double bytes) { return buffer_of(chunk_, bytes); }
  Outcome feed(double bytes) {
    if (!pending_) return invalid("no load is under way (begin first)");
    const int64_t n = to_int64(bytes);
    if (n < 0 || static_cast<size_t>(n) > chunk_.size()) return invalid("feed: " + number_text(bytes) + " bytes, the chunk holds " + std::to_string(chunk_.size()));
    const mha::Status s = pending_->FeedWeights(chunk_.data(), static_cast<size_t>(n));
    if (!s.ok()) end_load();
    return outcome_of(s);
  }
  Outcome finish() {
    if (!pending_) return invalid("no load is under way (begin first)");
    const mha::Status s = pending_->FinishWeights();
    if (s.ok()) model_ = std::move(pending_);
    end_load();
    return outcome_of(s);
  }
  // Bytes the weights take in the module (the kernels' layout).
  double weightBytes() const { return model_ ? static_cast<double>(model_->weight_bytes()) : 0; }

  // config as JSON-able fields
  val config() const {
    val c = val::object();
    if (!model_) return c;
    const mha::models::ModelConfig& m = model_->config();
    c.set("name", m.display_name());
    c.set("architecture", m.architecture);
    c.set("causal", m.causal());
    c.set("task", m.task == mha::models::Task::kNextToken ? "next-token" : m.task == mha::models::Task::kMasked ? "masked" : "none");
    c.set("preNorm", m.pre_norm());
    c.set("conv1d", m.conv1d());
    c.set("attentionOutputName", m.attention_output_name());
    c.set("vocabSize", static_cast<double>(m.vocab_size));
    c.set("maxPositions", static_cast<double>(m.max_positions));
    c.set("hidden", static_cast<double>(m.hidden));
    c.set("numLayers", static_cast<double>(m.num_layers));
    c.set("numHeads", static_cast<double>(m.num_heads));
    c.set("numKvHeads", static_cast<double>(m.num_kv_heads));
    c.set("headDim", static_cast<double>(m.head_dim));
    c.set("intermediate", static_cast<double>(m.intermediate));
    c.set("layerNormEps", m.layer_norm_eps);
    c.set("activation", m.activation_name);
    c.set("tieWordEmbeddings", m.tie_word_embeddings);
    c.set("lmHead", m.lm_head);
    c.set("pooler", model_->has_pooler());
    c.set("parameters", static_cast<double>(m.parameter_count()));
    return c;
  }

  // Ids go into idsBuffer(n); run() and headImportance() take them.
  Buffer idsBuffer(double count) { return buffer_of(ids_, count); }

  // Runs the ids; `ablate` is [layer, head, layer, head, ...], the heads switched off;
  // `headOutputs`: keep each layer's head outputs, concatenation and attention output too;
  // `weightsLayer`: the layer whose weights are kept (-1 every one, -2 none); `pooledSize`: S > 0,
  // every layer's weights max-pooled to (H, S, S) too.
  Outcome run(const val& ablate, bool headOutputs, double weightsLayer, double pooledSize) {
    if (!model_) return invalid("no model is loaded");
    const std::vector<int64_t> pairs = integers_of(ablate);
    if (pairs.size() % 2 != 0) return invalid("ablate: expected [layer, head] pairs, got " + std::to_string(pairs.size()) + " numbers");
    mha::models::RunOptions options;
    for (size_t i = 0; i + 1 < pairs.size(); i += 2) options.ablate.emplace_back(pairs[i], pairs[i + 1]);
    options.head_outputs = headOutputs;
    options.weights_layer = to_int64(weightsLayer);
    options.pooled_size = to_int64(pooledSize);
    if (static_cast<double>(options.weights_layer) != weightsLayer) return invalid("weightsLayer " + number_text(weightsLayer) + ": expected a whole number");
    if (static_cast<double>(options.pooled_size) != pooledSize) return invalid("pooledSize " + number_text(pooledSize) + ": expected a whole number");
    return outcome_of(model_->Run(ids_.data(), ids_.size(), options, &result_));
  }

  // Writing on (a causal model): the ids appended to the text the model holds in its key/value
  // cache (from >= 0: after its first `from` positions, the rest dropped), computing the new
  // positions only; then extendWeights(l) (H, R, S) and extendLogits() (R, vocab) give the new rows.
  // A refused step leaves the text as it was.
  Outcome extend(double from) {
    if (!model_) return invalid("no model is loaded");
    if (from >= 0 && from != static_cast<double>(to_int64(from))) return invalid("from: " + number_text(from) + " is not a whole number");
    return outcome_of(model_->Extend(ids_.data(), ids_.size(), from >= 0 ? to_int64(from) : -1, &extended_));
  }
  double cachedLength() const { return model_ ? static_cast<double>(model_->cached_length()) : 0; }
  TensorRef extendWeights(double layer) {
    TensorRef t;
    if (!(layer >= 0 && layer < static_cast<double>(extended_.weights.size()) && layer == static_cast<double>(to_int64(layer)))) {
      set_invalid(&t, "layer " + number_text(layer) + ": the last extend has " + std::to_string(extended_.weights.size()) + " layers");
      return t;
    }
    ref(extended_.weights[static_cast<size_t>(layer)], &t);
    return t;
  }
  TensorRef extendLogits() { return result_ref(extended_.logits, "logits (the model has no LM head)"); }

  // Head importance of the ids (a next-token model): (L, H).
  TensorRef headImportance() {
    TensorRef t;
    if (!model_) {
      set_invalid(&t, "no model is loaded");
      return t;
    }
    if (record(model_->HeadImportance(ids_.data(), ids_.size(), &importance_), &t)) ref(importance_, &t);
    return t;
  }

  // The last run's results: a layer's weights (H, T, T) or residual stream (T, E), the hidden
  // state (T, E), logits (T, vocab) with an LM head, pooled (E) with a pooler.
  TensorRef layerWeights(double layer) { return layer_ref(layer, &mha::models::LayerResult::weights, "weights (run with weightsLayer -1 or this layer)"); }
  TensorRef layerResidual(double layer) { return layer_ref(layer, &mha::models::LayerResult::residual, "residual stream"); }
  // With run(…, pooledSize): a layer's weights max-pooled (H, S, S).
  TensorRef layerPooled(double layer) { return layer_ref(layer, &mha::models::LayerResult::pooled, "pooled weights (run with pooledSize)"); }
  // With run(…, headOutputs): a layer's head outputs (H, T, hd), Concat(head_1 … head_H) (T, E)
  // and attention output (T, E).
  TensorRef layerHeadOutputs(double layer) { return layer_ref(layer, &mha::models::LayerResult::head_outputs, kNoHeadOutputs); }
  TensorRef layerConcat(double layer) { return layer_ref(layer, &mha::models::LayerResult::concat, kNoHeadOutputs); }
  TensorRef layerAttentionOutput(double layer) { return layer_ref(layer, &mha::models::LayerResult::attention_output, kNoHeadOutputs); }
  // Bytes the last run's results hold in the module (every layer's tensors, hidden, logits, pooled).
  double resultBytes() const {
    const auto bytes = [](const mha::Tensor& t) { return static_cast<double>(t.data.capacity() * sizeof(float)); };
    double total = bytes(result_.hidden) + bytes(result_.logits) + bytes(result_.pooled);
    for (const auto& l : result_.layers) {
      total += bytes(l.weights) + bytes(l.head_outputs) + bytes(l.concat) + bytes(l.attention_output) + bytes(l.residual) + bytes(l.pooled);
    }
    return total;
  }

  // A parameter of a layer's attention in nn.MultiheadAttention's names (out_proj.weight (E, E), …).
  TensorRef attentionParameter(double layer, const std::string& name) {
    TensorRef t;
    if (!model_) {
      set_invalid(&t, "no model is loaded");
      return t;
    }
    if (!(layer >= 0 && layer == static_cast<double>(to_int64(layer)))) {
      set_invalid(&t, "layer " + number_text(layer) + ": expected a whole number >= 0");
      return t;
    }
    if (record(model_->AttentionParameter(to_int64(layer), name, &parameter_), &t)) ref(parameter_, &t);
    return t;
  }
  TensorRef hidden() { return result_ref(result_.hidden, "hidden"); }
  TensorRef logits() { return result_ref(result_.logits, "logits (the model has no LM head)"); }
  TensorRef pooled() { return result_ref(result_.pooled, "pooled (the model has no pooler)"); }

  void dispose() {
    model_.reset();
    end_load();
    result_ = mha::models::RunResult();
    extended_ = mha::models::ExtendResult();
    importance_ = mha::Tensor();
    parameter_ = mha::Tensor();
  }

 private:
  template <typename T>
  static Buffer buffer_of(std::vector<T>& buffer, double count) {
    const int64_t n = to_int64(count);
    Buffer b;
    if (n < 0) {
      set_invalid(&b, "a buffer of " + number_text(count) + " elements: expected a whole number >= 0");
      return b;
    }
    buffer.resize(static_cast<size_t>(n));
    b.data = byte_offset(buffer.data());
    return b;
  }
  static void ref(const mha::Tensor& tensor, TensorRef* out) {
    out->data = byte_offset(tensor.data.data());
    out->shape = shape_array(tensor.shape);
  }
  static constexpr const char* kNoHeadOutputs = "head outputs (run with headOutputs)";
  TensorRef layer_ref(double layer, mha::Tensor mha::models::LayerResult::*which, const char* what) {
    TensorRef t;
    if (!(layer >= 0 && layer < static_cast<double>(result_.layers.size()) && layer == static_cast<double>(to_int64(layer)))) {
      set_invalid(&t, "layer " + number_text(layer) + ": the last run has " + std::to_string(result_.layers.size()) + " layers");
      return t;
    }
    const mha::Tensor& tensor = result_.layers[static_cast<size_t>(layer)].*which;
    if (tensor.shape.empty()) {
      set_invalid(&t, "layer " + number_text(layer) + ": the last run kept no " + what);
      return t;
    }
    ref(tensor, &t);
    return t;
  }
  TensorRef result_ref(const mha::Tensor& tensor, const char* what) {
    TensorRef t;
    if (tensor.shape.empty()) {
      set_invalid(&t, std::string("no ") + what + " in the last run");
      return t;
    }
    ref(tensor, &t);
    return t;
  }

  void end_load() {
    pending_.reset();
    std::vector<uint8_t>().swap(chunk_);
  }

  std::unique_ptr<mha::models::Model> model_;
  std::unique_ptr<mha::models::Model> pending_;  // being loaded
  std::vector<uint8_t> chunk_;
  std::vector<int32_t> ids_;
  mha::models::RunResult result_;
  mha::models::ExtendResult extended_;
  mha::Tensor importance_;
  mha::Tensor parameter_;
};

}  // namespace

EMSCRIPTEN_BINDINGS(mha_models) {
  mha::bindings::register_boundary();
  emscripten::function("numThreads", &mha::kernels::num_threads);
  emscripten::class_<ModelSession>("ModelSession")
      .constructor<>()
      .function("begin", &ModelSession::begin)
      .function("chunkBuffer", &ModelSession::chunkBuffer)
      .function("feed", &ModelSession::feed)
      .function("finish", &ModelSession::finish)
      .function("weightBytes", &ModelSession::weightBytes)
      .function("config", &ModelSession::config)
      .function("idsBuffer", &ModelSession::idsBuffer)
      .function("run", &ModelSession::run)
      .function("extend", &ModelSession::extend)
      .function("cachedLength", &ModelSession::cachedLength)
      .function("extendWeights", &ModelSession::extendWeights)
      .function("extendLogits", &ModelSession::extendLogits)
      .function("headImportance", &ModelSession::headImportance)
      .function("layerWeights", &ModelSession::layerWeights)
      .function("layerResidual", &ModelSession::layerResidual)
      .function("layerPooled", &ModelSession::layerPooled)
      .function("resultBytes", &ModelSession::resultBytes)
      .function("layerHeadOutputs", &ModelSession::layerHeadOutputs)
      .function("layerConcat", &ModelSession::layerConcat)
      .function("layerAttentionOutput", &ModelSession::layerAttentionOutput)
      .function("attentionParameter", &ModelSession::attentionParameter)
      .function("hidden", &ModelSession::hidden)
      .function("logits", &ModelSession::logits)
      .function("pooled", &ModelSession::pooled)
      .function("dispose", &ModelSession::dispose);
}
