// The Embind table of the training core (cpp/include/mha/train): one TrainSession holds the
// grammar, a model and its optimizer. Buffers cross in bulk through typed_memory_views; errors
// come back as status codes with a message. Checks and thrown errors live in web/lib/train.js.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "mha/train/trainer.h"

namespace {

using emscripten::typed_memory_view;
using emscripten::val;
using namespace mha::train;

class TrainSession {
 public:
  // TrainConfig's defaults, the set-up of `npm run train`: {learningRate, steps, batchSize, warmup}.
  static val defaults() {
    const TrainConfig config;
    val d = val::object();
    d.set("learningRate", config.learning_rate);
    d.set("steps", config.steps);
    d.set("batchSize", config.batch_size);
    d.set("warmup", config.warmup_steps);
    return d;
  }

  // Fresh random weights from the seed; returns 0 or a mha::StatusCode.
  int init(double seed, double learning_rate, double steps, double batch_size, double warmup, double held_out) {
    TrainConfig config;
    config.seed = static_cast<uint64_t>(seed);
    config.learning_rate = learning_rate;
    config.min_learning_rate = learning_rate / 10;
    config.steps = static_cast<int>(steps);
    config.batch_size = static_cast<int>(batch_size);
    config.warmup_steps = static_cast<int>(warmup);
    if (config.steps < 1 || config.batch_size < 1 || config.warmup_steps < 1 || !(learning_rate > 0) || held_out < 1)
      return fail(mha::StatusCode::kInvalidArgument,
                  "expected steps, batch size, warm-up and held-out count >= 1 and a learning rate > 0");
    model_config_ = ModelConfig();
    model_config_.vocab_size = grammar_.vocab_size();
    model_config_.context = Grammar::kMaxLength;
    held_out_ = held_out_sentences(grammar_, static_cast<int>(held_out));
    trainer_ = std::make_unique<Trainer>(model_config_, config, held_out_);
    return 0;
  }

  std::string error() const { return error_; }
  std::string vocabulary() const {
    std::string words;
    for (const Word& w : grammar_.vocabulary()) words += w.text + "\n";
    return words;
  }
  // Each word's category (category_name), one per line in vocabulary() order.
  std::string categories() const {
    std::string names;
    for (const Word& w : grammar_.vocabulary()) names += std::string(category_name(w.category)) + "\n";
    return names;
  }
  int vocabSize() const { return grammar_.vocab_size(); }
  int context() const { return model_config_.context; }
  int numLayers() const { return model_config_.num_layers; }
  int numHeads() const { return model_config_.num_heads; }
  int numRelations() const { return kNumRelations; }
  std::string relationName(int r) const { return relation_name(static_cast<Relation>(r)); }
  double labelThreshold() const { return kLabelThreshold; }

  // n training steps; returns their mean loss (NaN before init).
  double step(int n) {
    if (!trainer_) return fail_nan();
    double sum = 0;
    for (int i = 0; i < n; ++i) sum += trainer_->step();
    return n > 0 ? sum / n : 0;
  }
  int stepsDone() const { return trainer_ ? trainer_->steps_done() : 0; }
  double learningRate() const { return trainer_ ? trainer_->current_learning_rate() : 0; }
  void setLearningRate(double peak) {
    if (trainer_) trainer_->set_learning_rate(peak);
  }

  // Held-out evaluation into result(): [loss, agreement, pronoun, copy, sentences] then, per
  // layer, head and relation: mean_weight, argmax_share, query place (0 = the link's query,
  // 1 = the token before it).
  int evaluate() {
    if (!trainer_) return fail(mha::StatusCode::kInvalidArgument, "evaluate: call init() first");
    Evaluation e = mha::train::evaluate(trainer_->model(), grammar_, held_out_);
    result_ = {static_cast<float>(e.loss), static_cast<float>(e.agreement), static_cast<float>(e.pronoun),
               static_cast<float>(e.copy), static_cast<float>(e.sentences)};
    for (const HeadScore& h : e.heads) {
      result_.push_back(static_cast<float>(h.mean_weight));
      result_.push_back(static_cast<float>(h.argmax_share));
      result_.push_back(std::string(h.at) == "before_verb" || std::string(h.at) == "connective" ? 1.0f : 0.0f);
    }
    return 0;
  }

  // A sentence of the grammar from its own seed: tokens into tokens(), links into links()
  // (relation, query, key triples). Returns its length.
  int sentence(double seed) {
    Rng rng(static_cast<uint64_t>(seed));
    set_sentence(grammar_.generate(rng));
    return static_cast<int>(tokens_.size());
  }
  // Free text in the vocabulary; returns its length or -1 (error() says which word).
  int parse(std::string text) {
    Sentence s;
    mha::Status status = grammar_.parse(text, &s);
    if (!status.ok()) {
      fail(status.code(), status.message());
      return -1;
    }
    set_sentence(s);
    return static_cast<int>(tokens_.size());
  }
  val tokens() { return val(typed_memory_view(tokens_.size(), tokens_.data())); }
  val links() { return val(typed_memory_view(links_.size(), links_.data())); }

  // Attention maps of the current model on tokens(): (layers, H, T, T) into result().
  int attention() {
    if (!trainer_) return fail(mha::StatusCode::kInvalidArgument, "attention: call init() first");
    if (tokens_.empty()) return fail(mha::StatusCode::kInvalidArgument, "attention: expected a sentence first");
    result_ = attention_maps(trainer_->model(), tokens_);
    return 0;
  }
  // Next-token probabilities after each token of tokens(): (T, V) into result().
  int predictions() {
    if (!trainer_ || tokens_.empty()) return fail(mha::StatusCode::kInvalidArgument, "predictions: expected init() and a sentence");
    const int T = static_cast<int>(tokens_.size()), V = model_config_.vocab_size;
    std::vector<int> targets(T, -1);
    trainer_->model().forward(tokens_.data(), targets.data(), 1, T);
    const float* logits = trainer_->model().logits();
    result_.assign(static_cast<size_t>(T) * V, 0.0f);
    for (int t = 0; t < T; ++t) {
      const float* row = logits + static_cast<size_t>(t) * V;
      float max = row[0], sum = 0;
      for (int v = 1; v < V; ++v) max = std::max(max, row[v]);
      for (int v = 0; v < V; ++v) sum += (result_[static_cast<size_t>(t) * V + v] = std::exp(row[v] - max));
      for (int v = 0; v < V; ++v) result_[static_cast<size_t>(t) * V + v] /= sum;
    }
    return 0;
  }
  val result() { return val(typed_memory_view(result_.size(), result_.data())); }

  // Weights file bytes (cpp/include/mha/train/trainer.h): write n bytes into bytes(n), then
  // loadWeights(); or saveWeights() and read bytes().
  val bytes(int n) {
    if (n >= 0) bytes_.resize(static_cast<size_t>(n));
    return val(typed_memory_view(bytes_.size(), bytes_.data()));
  }
  int loadWeights() {
    if (!trainer_) return fail(mha::StatusCode::kInvalidArgument, "loadWeights: call init() first");
    ModelConfig config;
    std::vector<float> parameters;
    mha::Status status = decode_weights(bytes_.data(), bytes_.size(), &config, &parameters);
    if (!status.ok()) return fail(status.code(), status.message());
    if (config.vocab_size != model_config_.vocab_size || config.context != model_config_.context ||
        config.d_model != model_config_.d_model || config.num_heads != model_config_.num_heads ||
        config.num_layers != model_config_.num_layers)
      return fail(mha::StatusCode::kShapeMismatch,
                  "loadWeights: expected vocabulary " + std::to_string(model_config_.vocab_size) + ", context " +
                      std::to_string(model_config_.context) + ", d_model " + std::to_string(model_config_.d_model) +
                      ", " + std::to_string(model_config_.num_heads) + " heads, " +
                      std::to_string(model_config_.num_layers) + " layers; the file has " +
                      std::to_string(config.vocab_size) + ", " + std::to_string(config.context) + ", " +
                      std::to_string(config.d_model) + ", " + std::to_string(config.num_heads) + ", " +
                      std::to_string(config.num_layers));
    trainer_->model().parameters() = parameters;
    return 0;
  }
  int saveWeights() {
    if (!trainer_) return fail(mha::StatusCode::kInvalidArgument, "saveWeights: call init() first");
    bytes_ = encode_weights(trainer_->model(), trainer_->config().seed, trainer_->steps_done());
    return 0;
  }

 private:
  int fail(mha::StatusCode code, const std::string& message) {
    error_ = message;
    return static_cast<int>(code);
  }
  double fail_nan() {
    error_ = "call init() first";
    return std::numeric_limits<double>::quiet_NaN();
  }
  void set_sentence(const Sentence& s) {
    tokens_ = s.tokens;
    links_.clear();
    for (const Link& link : s.links) {
      links_.push_back(static_cast<int>(link.relation));
      links_.push_back(link.query);
      links_.push_back(link.key);
    }
  }

  Grammar grammar_;
  ModelConfig model_config_;
  std::vector<Sentence> held_out_;
  std::unique_ptr<Trainer> trainer_;
  std::vector<int> tokens_, links_;
  std::vector<float> result_;
  std::vector<uint8_t> bytes_;
  std::string error_;
};

}  // namespace

EMSCRIPTEN_BINDINGS(mha_train) {
  emscripten::class_<TrainSession>("TrainSession")
      .constructor<>()
      .class_function("defaults", &TrainSession::defaults)
      .function("init", &TrainSession::init)
      .function("error", &TrainSession::error)
      .function("vocabulary", &TrainSession::vocabulary)
      .function("categories", &TrainSession::categories)
      .function("vocabSize", &TrainSession::vocabSize)
      .function("context", &TrainSession::context)
      .function("numLayers", &TrainSession::numLayers)
      .function("numHeads", &TrainSession::numHeads)
      .function("numRelations", &TrainSession::numRelations)
      .function("relationName", &TrainSession::relationName)
      .function("labelThreshold", &TrainSession::labelThreshold)
      .function("step", &TrainSession::step)
      .function("stepsDone", &TrainSession::stepsDone)
      .function("learningRate", &TrainSession::learningRate)
      .function("setLearningRate", &TrainSession::setLearningRate)
      .function("evaluate", &TrainSession::evaluate)
      .function("sentence", &TrainSession::sentence)
      .function("parse", &TrainSession::parse)
      .function("tokens", &TrainSession::tokens)
      .function("links", &TrainSession::links)
      .function("attention", &TrainSession::attention)
      .function("predictions", &TrainSession::predictions)
      .function("result", &TrainSession::result)
      .function("bytes", &TrainSession::bytes)
      .function("loadWeights", &TrainSession::loadWeights)
      .function("saveWeights", &TrainSession::saveWeights);
}
