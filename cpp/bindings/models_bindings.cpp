// The Embind table of Hugging Face checkpoints (cpp/include/mha/models.h, mha/hf_tokenizer.h):
// one ModelSession holds a model, its tokenizer and the buffers that cross the boundary in bulk
// (typed memory views: one set() in, one slice() out). Every fallible call returns a
// ModelStatus { code, message } (code 0 is success, else a mha::StatusCode). Files, checks,
// defaults and thrown errors live in web/lib/models.js.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <memory>
#include <string>
#include <vector>

#include "mha/hf_tokenizer.h"
#include "mha/models.h"
#include "boundary.h"

namespace {

using emscripten::typed_memory_view;
using emscripten::val;

struct ModelStatus {
  int code = 0;
  std::string message;
};

ModelStatus status_of(const mha::Status& status) { return {static_cast<int>(status.code()), status.message()}; }

class ModelSession {
 public:
  // The bytes of model.safetensors go here (JS sets them), then load() reads them.
  val weightsBuffer(double bytes) {
    weights_.assign(static_cast<size_t>(bytes), 0);
    return val(typed_memory_view(weights_.size(), weights_.data()));
  }

  ModelStatus load(const std::string& config_json, const std::string& config_file, const std::string& weights_file,
                   double max_file_bytes, double max_parameters) {
    mha::models::LoadLimits limits;
    limits.max_file_bytes = static_cast<size_t>(max_file_bytes);
    limits.max_parameters = static_cast<int64_t>(max_parameters);
    std::unique_ptr<mha::models::Model> model;
    const mha::Status s = mha::models::Model::Load(
        config_json, config_file, std::string_view(reinterpret_cast<const char*>(weights_.data()), weights_.size()),
        weights_file, limits, &model);
    std::vector<uint8_t>().swap(weights_);  // the floats are in the model now
    if (!s.ok()) return status_of(s);
    model_ = std::move(model);
    return {};
  }

  ModelStatus loadTokenizer(const std::string& json, const std::string& file) {
    std::unique_ptr<mha::models::HfTokenizer> tokenizer;
    const mha::Status s = mha::models::HfTokenizer::FromJson(json, file, &tokenizer);
    if (!s.ok()) return status_of(s);
    tokenizer_ = std::move(tokenizer);
    return {};
  }

  // config as JSON-able fields
  val config() const {
    val c = val::object();
    if (!model_) return c;
    const mha::models::ModelConfig& m = model_->config();
    c.set("family", m.family == mha::models::Family::kGpt2 ? "gpt2" : "bert");
    c.set("architecture", m.architecture);
    c.set("vocabSize", static_cast<double>(m.vocab_size));
    c.set("maxPositions", static_cast<double>(m.max_positions));
    c.set("hidden", static_cast<double>(m.hidden));
    c.set("numLayers", static_cast<double>(m.num_layers));
    c.set("numHeads", static_cast<double>(m.num_heads));
    c.set("intermediate", static_cast<double>(m.intermediate));
    c.set("layerNormEps", m.layer_norm_eps);
    c.set("activation", m.activation_name);
    c.set("tieWordEmbeddings", m.tie_word_embeddings);
    c.set("lmHead", m.lm_head);
    c.set("pooler", model_->has_pooler());
    c.set("parameters", static_cast<double>(m.parameter_count()));
    return c;
  }

  bool hasTokenizer() const { return tokenizer_ != nullptr; }
  std::string tokenizerKind() const {
    if (!tokenizer_) return "";
    return tokenizer_->kind() == mha::models::HfTokenizer::Kind::kByteLevelBpe ? "bpe" : "wordpiece";
  }
  std::string token(double id) const { return tokenizer_ ? tokenizer_->token(static_cast<int32_t>(id)) : ""; }
  double tokenId(const std::string& token) const { return tokenizer_ ? tokenizer_->token_id(token) : -1; }

  ModelStatus encode(const std::string& text) {
    if (!tokenizer_) return {static_cast<int>(mha::StatusCode::kInvalidArgument), "no tokenizer.json is loaded"};
    return status_of(tokenizer_->encode(text, &ids_));
  }

  // ids: the encoded ones after encode(), or set by JS before run()
  val ids(double count) {
    if (count >= 0) ids_.resize(static_cast<size_t>(count));
    return val(typed_memory_view(ids_.size(), ids_.data()));
  }
  // (layer, head) pairs, flat
  val ablate(double count) {
    ablate_.resize(static_cast<size_t>(count));
    return val(typed_memory_view(ablate_.size(), ablate_.data()));
  }

  ModelStatus run() {
    if (!model_) return {static_cast<int>(mha::StatusCode::kInvalidArgument), "no model is loaded"};
    mha::models::RunOptions options;
    for (size_t i = 0; i + 1 < ablate_.size(); i += 2) options.ablate.emplace_back(ablate_[i], ablate_[i + 1]);
    return status_of(model_->Run(ids_.data(), ids_.size(), options, &result_));
  }

  // Head importance of the ids (GPT-2): (L, H), read with importance()
  ModelStatus headImportance() {
    if (!model_) return {static_cast<int>(mha::StatusCode::kInvalidArgument), "no model is loaded"};
    return status_of(model_->HeadImportance(ids_.data(), ids_.size(), &importance_));
  }
  val importance() { return view(importance_); }

  // The last run's results: weights (H, T, T) of a layer, residual (T, E), hidden, logits, pooled.
  val layerWeights(double layer) { return view(result_.layers.at(static_cast<size_t>(layer)).weights); }
  val layerResidual(double layer) { return view(result_.layers.at(static_cast<size_t>(layer)).residual); }
  val hidden() { return view(result_.hidden); }
  val logits() { return view(result_.logits); }
  val pooled() { return view(result_.pooled); }

  void dispose() {
    model_.reset();
    tokenizer_.reset();
    result_ = mha::models::RunResult();
  }

 private:
  static val view(mha::Tensor& t) { return val(typed_memory_view(t.data.size(), t.data.data())); }

  std::unique_ptr<mha::models::Model> model_;
  std::unique_ptr<mha::models::HfTokenizer> tokenizer_;
  std::vector<uint8_t> weights_;
  std::vector<int32_t> ids_;
  std::vector<int32_t> ablate_;
  mha::models::RunResult result_;
  mha::Tensor importance_;
};

}  // namespace

EMSCRIPTEN_BINDINGS(mha_models) {
  mha::bindings::register_status_codes();
  emscripten::value_object<ModelStatus>("ModelStatus").field("code", &ModelStatus::code).field("message", &ModelStatus::message);
  emscripten::class_<ModelSession>("ModelSession")
      .constructor<>()
      .function("weightsBuffer", &ModelSession::weightsBuffer)
      .function("load", &ModelSession::load)
      .function("loadTokenizer", &ModelSession::loadTokenizer)
      .function("config", &ModelSession::config)
      .function("hasTokenizer", &ModelSession::hasTokenizer)
      .function("tokenizerKind", &ModelSession::tokenizerKind)
      .function("token", &ModelSession::token)
      .function("tokenId", &ModelSession::tokenId)
      .function("encode", &ModelSession::encode)
      .function("ids", &ModelSession::ids)
      .function("ablate", &ModelSession::ablate)
      .function("run", &ModelSession::run)
      .function("layerWeights", &ModelSession::layerWeights)
      .function("layerResidual", &ModelSession::layerResidual)
      .function("hidden", &ModelSession::hidden)
      .function("logits", &ModelSession::logits)
      .function("pooled", &ModelSession::pooled)
      .function("headImportance", &ModelSession::headImportance)
      .function("importance", &ModelSession::importance)
      .function("dispose", &ModelSession::dispose);
}
