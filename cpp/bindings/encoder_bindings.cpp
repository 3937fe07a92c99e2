// The Embind table of the pretrained encoder (cpp/include/mha/encoder.h), in the dialect of
// boundary.h: one EncoderSession holds a tokenizer, an encoder and the buffers that cross the
// boundary in bulk. Inputs go into buffers a call sizes and returns the byte offset of
// (vocabularyBuffer, parameterBuffer, textBuffer, idsBuffer); results come out as typed memory
// views, each returned alone and sliced at once, and shapes as arrays. Every check is the
// core's; checks of JavaScript types, defaults and thrown errors live in web/lib/encoder.js.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "boundary.h"
#include "mha/encoder.h"

namespace {

using emscripten::typed_memory_view;
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

struct LayerConfig {
  double embedDim = 0;
  double numHeads = 0;
  double outDim = 0;
  double ffnDim = 0;
};

struct ModelConfig {
  double vocabSize = 0;
  double embeddingRows = 0;
  double maxTokens = 0;
  double layerNormEps = 0;
  double outputDim = 0;
};

// How many tokens the last tokenize() or fromIds() gave, and how many encode() takes of them.
struct TokenCount : Outcome {
  double count = 0;
  double kept = 0;
};

Outcome not_ready(const char* what) {
  return {static_cast<int>(mha::StatusCode::kInvalidArgument), std::string(what) + ": call configure() and loadVocabulary() first"};
}

// A layer's results by name, in the order layerResultNames() gives them.
struct LayerResultField {
  const char* name;
  mha::Tensor mha::EncoderLayerResult::*tensor;
};
constexpr LayerResultField kLayerResults[] = {
    {"weights", &mha::EncoderLayerResult::weights},
    {"headOutputs", &mha::EncoderLayerResult::head_outputs},
    {"concat", &mha::EncoderLayerResult::concat},
    {"attentionOutput", &mha::EncoderLayerResult::attention_output},
    {"residual", &mha::EncoderLayerResult::residual},
};

val layer_result_names() {
  std::vector<std::string> names;
  for (const LayerResultField& f : kLayerResults) names.emplace_back(f.name);
  return mha::bindings::string_array(names);
}

class EncoderSession {
 public:
  Outcome configure(const ModelConfig& model, const std::vector<LayerConfig>& layers) {
    mha::EncoderConfig config;
    config.vocab_size = to_int64(model.vocabSize);
    config.embedding_rows = to_int64(model.embeddingRows);
    config.max_tokens = to_int64(model.maxTokens);
    config.layer_norm_eps = model.layerNormEps;
    config.output_dim = to_int64(model.outputDim);
    for (const LayerConfig& l : layers) {
      config.layers.push_back({to_int64(l.embedDim), to_int64(l.numHeads), to_int64(l.outDim), to_int64(l.ffnDim)});
    }
    return outcome_of(mha::Encoder::Create(config, &encoder_));
  }

  // The bytes of vocab.txt go into vocabularyBuffer(n), then loadVocabulary().
  Buffer vocabularyBuffer(double count) { return buffer_of(bytes_, count); }
  Outcome loadVocabulary(double reserved) {
    const mha::Status status = mha::Tokenizer::FromVocabText(
        std::string_view(reinterpret_cast<const char*>(bytes_.data()), bytes_.size()), static_cast<int>(to_int64(reserved)), &tokenizer_);
    std::vector<uint8_t>().swap(bytes_);
    return outcome_of(status);
  }

  val parameterNames() const { return mha::bindings::string_array(encoder_ ? encoder_->parameter_names() : std::vector<std::string>()); }
  val missingParameters() const {
    return mha::bindings::string_array(encoder_ ? encoder_->missing_parameters() : std::vector<std::string>());
  }
  // A parameter's values go into parameterBuffer(name, shape), once the name and shape are
  // known to fit, then setParameter(name, shape).
  Buffer parameterBuffer(const std::string& name, const val& shape) {
    Buffer b;
    if (!ready("parameterBuffer", &b, false)) return b;
    const mha::Shape dims = integers_of(shape);
    if (!record(encoder_->check_parameter_shape(name, dims), &b)) return b;
    return buffer_of(floats_, static_cast<double>(mha::checked_numel(dims)));
  }
  Outcome setParameter(const std::string& name, const val& shape) {
    Outcome o;
    if (!ready("setParameter", &o, false)) return o;
    return outcome_of(encoder_->set_parameter(name, floats_.data(), floats_.size(), integers_of(shape)));
  }
  TensorRef attentionParameter(double layer, const std::string& name) {
    TensorRef t;
    if (ready("attentionParameter", &t, false) && record(encoder_->attention_parameter(to_int64(layer), name, &parameter_), &t)) {
      t.data = byte_offset(parameter_.data.data());
      t.shape = shape_array(parameter_.shape);
    }
    return t;
  }
  // Frees the staging buffer once the weights are in.
  void releaseStaging() { std::vector<float>().swap(floats_); }

  // Text as code points into textBuffer(n) (n UTF-16 units bound them), then tokenize(count);
  // or ids into idsBuffer(n), then fromIds(n).
  Buffer textBuffer(double units) {
    Buffer b;
    if (!record(mha::Tokenizer::check_text_size(static_cast<size_t>(std::max<int64_t>(to_int64(units), 0))), &b)) return b;
    return buffer_of(code_points_, units);
  }
  TokenCount tokenize(double count, bool truncate) {
    TokenCount r;
    if (!ready("tokenize", &r) || !in_range(count, code_points_.size(), "tokenize", &r)) return r;
    const std::u32string text(code_points_.begin(), code_points_.begin() + static_cast<size_t>(count));
    return counted(tokenizer_->tokenize(text.data(), text.size(), &tokens_), truncate);
  }
  Buffer idsBuffer(double count) { return buffer_of(ids_, count); }
  TokenCount fromIds(double count, bool truncate) {
    TokenCount r;
    if (!ready("fromIds", &r) || !in_range(count, ids_.size(), "fromIds", &r)) return r;
    return counted(tokenizer_->from_ids(ids_.data(), static_cast<size_t>(count), &tokens_), truncate);
  }
  // The last tokens: ids, piece bounds into tokenText().
  val tokenIds() { return val(typed_memory_view(tokens_.ids.size(), tokens_.ids.data())); }
  val tokenBegins() { return val(typed_memory_view(tokens_.piece_begin.size(), tokens_.piece_begin.data())); }
  val tokenEnds() { return val(typed_memory_view(tokens_.piece_end.size(), tokens_.piece_end.data())); }
  val tokenText() {
    return val(typed_memory_view(tokens_.text.size(), reinterpret_cast<const uint32_t*>(tokens_.text.data())));
  }

  // Encodes the last tokens (with truncate their first max_tokens); `ablate` is
  // [layer, head, layer, head, ...].
  Outcome encode(const val& ablate, bool truncate) {
    Outcome o;
    if (!ready("encode", &o)) return o;
    const std::vector<int64_t> pairs = integers_of(ablate);
    mha::EncodeOptions options;
    options.truncate = truncate;
    for (size_t i = 0; i + 1 < pairs.size(); i += 2) options.ablate.emplace_back(pairs[i], pairs[i + 1]);
    return outcome_of(encoder_->encode(tokens_.ids.data(), tokens_.ids.size(), options, &result_));
  }
  // A layer's result by name (layerResultNames()): its values (null for none) and its shape.
  val layerResult(double layer, const std::string& name) {
    const mha::Tensor* t = layer_tensor(layer, name);
    return t ? val(typed_memory_view(t->data.size(), t->data.data())) : val::null();
  }
  val layerShape(double layer, const std::string& name) {
    const mha::Tensor* t = layer_tensor(layer, name);
    return t ? shape_array(t->shape) : val::null();
  }
  val embedding() { return val(typed_memory_view(result_.embedding.data.size(), result_.embedding.data.data())); }

 private:
  // Whether configure() (and, unless !tokens, loadVocabulary()) has run; else *out says so.
  bool ready(const char* what, Outcome* out, bool tokens = true) const {
    if (encoder_ && (!tokens || tokenizer_)) return true;
    *out = not_ready(what);
    return false;
  }
  template <typename T>
  static Buffer buffer_of(std::vector<T>& buffer, double count) {
    buffer.resize(static_cast<size_t>(std::max<int64_t>(to_int64(count), 0)));
    Buffer b;
    b.data = byte_offset(buffer.data());
    return b;
  }
  static bool in_range(double count, size_t have, const char* what, Outcome* out) {
    if (count >= 0 && count <= static_cast<double>(have)) return true;
    *out = {static_cast<int>(mha::StatusCode::kInvalidArgument),
            std::string(what) + ": count " + std::to_string(count) + " is not between 0 and " + std::to_string(have)};
    return false;
  }
  TokenCount counted(const mha::Status& status, bool truncate) {
    TokenCount r;
    if (!record(status, &r)) return r;
    r.count = static_cast<double>(tokens_.ids.size());
    r.kept = static_cast<double>(encoder_->tokens_kept(tokens_.ids.size(), truncate));
    return r;
  }
  const mha::Tensor* layer_tensor(double layer, const std::string& name) const {
    if (layer < 0 || layer >= static_cast<double>(result_.layers.size())) return nullptr;
    for (const LayerResultField& f : kLayerResults) {
      if (name == f.name) return &(result_.layers[static_cast<size_t>(layer)].*f.tensor);
    }
    return nullptr;
  }

  std::unique_ptr<mha::Tokenizer> tokenizer_;
  std::unique_ptr<mha::Encoder> encoder_;
  std::vector<uint8_t> bytes_;
  std::vector<float> floats_;
  std::vector<uint32_t> code_points_;
  std::vector<int32_t> ids_;
  mha::Tokens tokens_;
  mha::Tensor parameter_;
  mha::EncodeResult result_;
};

}  // namespace

EMSCRIPTEN_BINDINGS(mha_encoder) {
  using emscripten::value_object;
  using mha::bindings::with_outcome;
  mha::bindings::register_boundary();
  value_object<LayerConfig>("EncoderLayerConfig")
      .field("embedDim", &LayerConfig::embedDim)
      .field("numHeads", &LayerConfig::numHeads)
      .field("outDim", &LayerConfig::outDim)
      .field("ffnDim", &LayerConfig::ffnDim);
  value_object<ModelConfig>("EncoderConfig")
      .field("vocabSize", &ModelConfig::vocabSize)
      .field("embeddingRows", &ModelConfig::embeddingRows)
      .field("maxTokens", &ModelConfig::maxTokens)
      .field("layerNormEps", &ModelConfig::layerNormEps)
      .field("outputDim", &ModelConfig::outputDim);
  with_outcome(value_object<TokenCount>("TokenCount")).field("count", &TokenCount::count).field("kept", &TokenCount::kept);
  emscripten::register_vector<LayerConfig>("EncoderLayerConfigList");
  emscripten::class_<EncoderSession>("EncoderSession")
      .constructor<>()
      .function("configure", &EncoderSession::configure)
      .function("vocabularyBuffer", &EncoderSession::vocabularyBuffer)
      .function("loadVocabulary", &EncoderSession::loadVocabulary)
      .function("parameterNames", &EncoderSession::parameterNames)
      .function("missingParameters", &EncoderSession::missingParameters)
      .function("parameterBuffer", &EncoderSession::parameterBuffer)
      .function("setParameter", &EncoderSession::setParameter)
      .function("attentionParameter", &EncoderSession::attentionParameter)
      .function("releaseStaging", &EncoderSession::releaseStaging)
      .function("textBuffer", &EncoderSession::textBuffer)
      .function("tokenize", &EncoderSession::tokenize)
      .function("idsBuffer", &EncoderSession::idsBuffer)
      .function("fromIds", &EncoderSession::fromIds)
      .function("tokenIds", &EncoderSession::tokenIds)
      .function("tokenBegins", &EncoderSession::tokenBegins)
      .function("tokenEnds", &EncoderSession::tokenEnds)
      .function("tokenText", &EncoderSession::tokenText)
      .function("encode", &EncoderSession::encode)
      .function("layerResult", &EncoderSession::layerResult)
      .function("layerShape", &EncoderSession::layerShape)
      .function("embedding", &EncoderSession::embedding);
  emscripten::function("layerResultNames", &layer_result_names);
}
