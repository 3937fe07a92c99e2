// Training the decoder on the grammar, and measuring what it learned: accuracy where the
// grammar fixes the next token, and every head of every layer scored on every relation.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "mha/status.h"
#include "mha/train/grammar.h"
#include "mha/train/model.h"

namespace mha::train {

struct TrainConfig {
  uint64_t seed = 1;
  int steps = 8000;
  int batch_size = 32;
  double learning_rate = 5e-3;  // the peak; the cosine schedule ends at min_learning_rate()
  int warmup_steps = 100;
  double weight_decay = 0.01;  // AdamW's decoupled decay (at 0.1 the pronoun and verb heads fade: docs/training.md)
  double embedding_weight_decay = -1;  // weight decay on wte and wpe (< 0: weight_decay, as the matrices)
  int min_repeat_length = 2;     // the repeat's shortest length (see Grammar)
  double same_number_share = Grammar::kSameNumberShare;  // share of modifier nouns of the subject's number (see Grammar)
  double lead_share = Grammar::kLeadShare;  // share of sentences opening with a time phrase (see Grammar)
  double reflexive_share = Grammar::kReflexiveShare;  // share of sentences with a reflexive object (see Grammar)
  double grad_clip = 1.0;
  double beta2 = 0.95;  // AdamW's second-moment decay
  // See Initialization: fan-in scales, positions as evenly spaced sinusoids in channels of
  // their own (docs/training.md has the measured effect).
  Initialization init = [] {
    Initialization i;
    i.fan_in_scale = true;
    i.positions = Initialization::Positions::kEvenSinusoid;
    i.split_channels = true;
    return i;
  }();

  double min_learning_rate() const { return learning_rate / 10; }
};

// The grammar the config trains on (its repeat length, same-number share and lead share).
Grammar grammar_of(const TrainConfig& config);

// A set-up the trainer can run: steps, batch size and warm-up >= 1, a learning rate > 0, and
// held_out >= 1 held-out sentences.
Status check_settings(const TrainConfig& config, int held_out);

// The parameters as AdamW sees them: parameter_specs(), with the embeddings' weight decay at
// config.embedding_weight_decay when that is >= 0.
std::vector<ParameterSpec> optimizer_specs(const ModelConfig& model_config, const TrainConfig& config);

// The held-out sentences: one fixed stream, the same for every seed. The trainer never sees
// a sentence of this set (its token sequence is excluded from the training stream).
std::vector<Sentence> held_out_sentences(const Grammar& grammar, int count);

class Trainer;

// What a training run starts from, made from its config: the held-out sentences and a trainer
// (the grammar of the config, a model sized for its vocabulary and longest sentence, AdamW).
struct TrainingRun {
  std::vector<Sentence> held_out;
  std::unique_ptr<Trainer> trainer;
};

// check_settings, then the run, `held_out` sentences held out: the set-up of `npm run train`
// (train_main.cpp) and of the train view (TrainSession) alike.
Status start_training(const TrainConfig& config, int held_out, TrainingRun* run);

// Queries where a relation is measured: the link's own query position (offset 0) and, for the
// verb and the pronoun, the token before it (offset -1: where the model must predict the verb's
// number, or the pronoun, and so needs the subject or the antecedent).
struct QueryPlace {
  int offset;
  const char* name;
};
std::vector<QueryPlace> query_places(Relation relation);

struct HeadScore {
  int layer = 0;
  int head = 0;
  Relation relation = Relation::kPrevious;
  const char* at = "";       // the query place with the higher mean weight
  double mean_weight = 0;    // mean attention weight on the true key
  double argmax_share = 0;   // share of queries whose largest weight is on the true key
  int links = 0;
};

struct Evaluation {
  double loss = 0;
  double agreement = 0;  // main verb: p(right form) > p(same verb, other number)
  double pronoun = 0;    // argmax over the vocabulary at the connective is the right pronoun
                         // (over the sentences with a second clause)
  double copy = 0;       // argmax at repeat tokens 0 .. n-2 is the next token of the repeat
  int sentences = 0;
  std::vector<HeadScore> heads;  // layer-major, then head, then relation
};

template <typename Real>
Evaluation evaluate(Model<Real>& model, const Grammar& grammar, const std::vector<Sentence>& sentences);

// One sentence's attention maps, (layers, H, T, T) for its T tokens, computed by the core:
// each layer's Model::attention_module on that layer's input (causal, weights per head).
template <typename Real>
Status attention_maps(Model<Real>& model, const std::vector<int>& tokens, std::vector<float>* maps);

// Next-token probabilities after each token of one sentence: (T, V), the softmax of the logits.
template <typename Real>
std::vector<float> next_token_probabilities(Model<Real>& model, const std::vector<int>& tokens);

class Trainer {
 public:
  Trainer(const ModelConfig& model_config, const TrainConfig& config, const std::vector<Sentence>& held_out);

  // One AdamW step on a fresh batch; returns the batch's loss (before the update).
  double step();
  // `count` steps; returns their mean loss (0 for none).
  double steps(int count);
  int steps_done() const { return steps_done_; }
  double current_learning_rate() const;
  void set_learning_rate(double peak) { config_.learning_rate = peak; }

  Model<float>& model() { return model_; }
  const Grammar& grammar() const { return grammar_; }
  const TrainConfig& config() const { return config_; }

 private:
  Grammar grammar_;
  TrainConfig config_;
  Model<float> model_;
  AdamW<float> optimizer_;
  Rng data_rng_;
  std::unordered_set<std::string> held_out_keys_;
  std::vector<Sentence> batch_;
  std::vector<int> tokens_, targets_, lengths_;
  int steps_done_ = 0;
};

// Batch rows: tokens padded with <pad>, targets the next token, -1 past the sentence's end.
void fill_row(const Sentence& sentence, int context, int pad_id, int* tokens, int* targets);

// Weights file, little-endian: "MHAW", uint32 version (1), int32 vocab_size, context, d_model,
// num_heads, num_layers, uint32 n and n bytes of JSON (seed, steps, parameter names and
// shapes: informational), then every parameter as IEEE float16 in parameter_specs() order.
std::vector<uint8_t> encode_weights(const Model<float>& model, uint64_t seed, int steps);
Status decode_weights(const uint8_t* data, size_t size, ModelConfig* config, std::vector<float>* parameters);
// Replaces the model's weights with a weights file's, which must be of the model's config.
Status load_weights(const uint8_t* data, size_t size, Model<float>* model);
float half_to_float(uint16_t h);
uint16_t float_to_half(float f);
void round_to_half(std::vector<float>& values);

// The JSON line of `npm run train -- --json`; cpu_seconds < 0 leaves that field out.
std::string evaluation_json(const Evaluation& evaluation, uint64_t seed, int steps, double seconds,
                            double cpu_seconds = -1);

}  // namespace mha::train
