#include "mha/train/trainer.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace mha::train {

namespace {

constexpr uint64_t kHeldOutSeed = 0x48454C444F5554ull;  // "HELDOUT": the same for every run
constexpr uint64_t kDataStream = 0xD1B54A32D192ED03ull;

std::string key_of(const std::vector<int>& tokens) {
  return std::string(tokens.begin(), tokens.end());
}

}  // namespace

Grammar grammar_of(const TrainConfig& config) {
  return Grammar(config.min_repeat_length, config.same_number_share, config.lead_share,
                 config.reflexive_share);
}

Status check_settings(const TrainConfig& config, int held_out) {
  if (config.steps < 1 || config.batch_size < 1 || config.warmup_steps < 1 || !(config.learning_rate > 0) || held_out < 1)
    return Status(StatusCode::kInvalidArgument,
                  "expected steps, batch size, warm-up and held-out count >= 1 and a learning rate > 0");
  return Status::Ok();
}

std::vector<ParameterSpec> optimizer_specs(const ModelConfig& model_config, const TrainConfig& config) {
  std::vector<ParameterSpec> specs = parameter_specs(model_config);
  if (config.embedding_weight_decay >= 0)
    for (ParameterSpec& spec : specs)
      if (spec.name == "wte.weight" || spec.name == "wpe.weight") spec.weight_decay = config.embedding_weight_decay;
  return specs;
}

std::vector<Sentence> held_out_sentences(const Grammar& grammar, int count) {
  Rng rng(kHeldOutSeed);
  std::vector<Sentence> sentences;
  std::unordered_set<std::string> seen;
  while (static_cast<int>(sentences.size()) < count) {
    Sentence s = grammar.generate(rng);
    if (seen.insert(key_of(s.tokens)).second) sentences.push_back(std::move(s));
  }
  return sentences;
}

Status start_training(const TrainConfig& config, int held_out, TrainingRun* run) {
  MHA_RETURN_IF_ERROR(check_settings(config, held_out));
  const Grammar grammar = grammar_of(config);
  ModelConfig model_config;
  model_config.vocab_size = grammar.vocab_size();
  model_config.context = Grammar::kMaxLength;
  run->held_out = held_out_sentences(grammar, held_out);
  run->trainer = std::make_unique<Trainer>(model_config, config, run->held_out);
  return Status::Ok();
}

std::vector<QueryPlace> query_places(Relation relation) {
  switch (relation) {
    case Relation::kPrevious: return {{0, "token"}};
    case Relation::kVerbSubject: return {{0, "verb"}, {-1, "before_verb"}};
    case Relation::kPronounAntecedent: return {{0, "pronoun"}, {-1, "connective"}};
    case Relation::kModifierNoun: return {{0, "noun"}};
    case Relation::kInduction: return {{0, "repeat_token"}};
  }
  return {};
}

void fill_row(const Sentence& sentence, int context, int pad_id, int* tokens, int* targets) {
  const int n = static_cast<int>(sentence.tokens.size());
  for (int t = 0; t < context; ++t) {
    tokens[t] = t < n ? sentence.tokens[t] : pad_id;
    targets[t] = t + 1 < n ? sentence.tokens[t + 1] : -1;
  }
}

template <typename Real>
Evaluation evaluate(Model<Real>& model, const Grammar& grammar, const std::vector<Sentence>& sentences) {
  const ModelConfig& c = model.config();
  const int V = c.vocab_size, H = c.num_heads, L = c.num_layers;
  const int chunk = 64;
  struct Sum {
    double weight = 0, argmax = 0;
    int count = 0;
  };
  // [layer][head][relation][place]
  std::vector<Sum> sums(static_cast<size_t>(L) * H * kNumRelations * 2);
  auto sum_at = [&](int l, int h, int r, int place) -> Sum& {
    return sums[((static_cast<size_t>(l) * H + h) * kNumRelations + r) * 2 + place];
  };
  Evaluation result;
  double loss_sum = 0;
  int loss_count = 0, agreement_right = 0, pronoun_right = 0, pronoun_count = 0, copy_right = 0, copy_count = 0;
  std::vector<int> tokens, targets;
  for (size_t begin = 0; begin < sentences.size(); begin += chunk) {
    const int B = static_cast<int>(std::min<size_t>(chunk, sentences.size() - begin));
    int T = 2;
    for (int b = 0; b < B; ++b) T = std::max(T, static_cast<int>(sentences[begin + b].tokens.size()));
    T = std::min(T, c.context);
    tokens.assign(static_cast<size_t>(B) * T, 0);
    targets.assign(static_cast<size_t>(B) * T, -1);
    int valid = 0;
    for (int b = 0; b < B; ++b) {
      fill_row(sentences[begin + b], T, grammar.pad_id(), &tokens[b * T], &targets[b * T]);
      for (int t = 0; t < T; ++t) valid += targets[b * T + t] >= 0;
    }
    loss_sum += static_cast<double>(model.forward(tokens.data(), targets.data(), B, T)) * valid;
    loss_count += valid;
    for (int b = 0; b < B; ++b) {
      const Sentence& s = sentences[begin + b];
      auto logits_at = [&](int position) { return model.logits() + (static_cast<size_t>(b) * T + position) * V; };
      auto argmax = [V](const Real* row) { return static_cast<int>(std::max_element(row, row + V) - row); };
      const Real* verb_logits = logits_at(s.verb - 1);
      agreement_right += verb_logits[s.tokens[s.verb]] > verb_logits[s.verb_other_form];
      if (s.pronoun >= 0) {  // sentences with a reflexive object have no second clause
        pronoun_right += argmax(logits_at(s.pronoun - 1)) == s.tokens[s.pronoun];
        ++pronoun_count;
      }
      for (int k = 1; k < s.repeat_length; ++k) {
        const int position = s.repeat_start + k;
        copy_right += argmax(logits_at(position - 1)) == s.tokens[position];
        ++copy_count;
      }
      for (int l = 0; l < L; ++l) {
        const Real* att = model.attention(l);
        for (int h = 0; h < H; ++h) {
          for (const Link& link : s.links) {
            const int r = static_cast<int>(link.relation);
            std::vector<QueryPlace> places = query_places(link.relation);
            for (size_t place = 0; place < places.size(); ++place) {
              const int query = link.query + places[place].offset;
              if (query < link.key) continue;
              const Real* row = att + ((static_cast<size_t>(b) * H + h) * T + query) * T;
              const int best = static_cast<int>(std::max_element(row, row + query + 1) - row);
              Sum& sum = sum_at(l, h, r, static_cast<int>(place));
              sum.weight += row[link.key];
              sum.argmax += best == link.key;
              ++sum.count;
            }
          }
        }
      }
    }
  }
  const int n = static_cast<int>(sentences.size());
  result.sentences = n;
  result.loss = loss_count ? loss_sum / loss_count : 0;
  result.agreement = n ? static_cast<double>(agreement_right) / n : 0;
  result.pronoun = pronoun_count ? static_cast<double>(pronoun_right) / pronoun_count : 0;
  result.copy = copy_count ? static_cast<double>(copy_right) / copy_count : 0;
  for (int l = 0; l < L; ++l) {
    for (int h = 0; h < H; ++h) {
      for (int r = 0; r < kNumRelations; ++r) {
        std::vector<QueryPlace> places = query_places(static_cast<Relation>(r));
        HeadScore best;
        best.layer = l;
        best.head = h;
        best.relation = static_cast<Relation>(r);
        best.mean_weight = -1;
        for (size_t place = 0; place < places.size(); ++place) {
          const Sum& sum = sum_at(l, h, r, static_cast<int>(place));
          if (sum.count == 0) continue;
          const double mean = sum.weight / sum.count;
          if (mean > best.mean_weight) {
            best.mean_weight = mean;
            best.argmax_share = sum.argmax / sum.count;
            best.at = places[place].name;
            best.links = sum.count;
          }
        }
        if (best.mean_weight < 0) best.mean_weight = 0;
        result.heads.push_back(best);
      }
    }
  }
  return result;
}

template Evaluation evaluate<float>(Model<float>&, const Grammar&, const std::vector<Sentence>&);

template <typename Real>
Status attention_maps(Model<Real>& model, const std::vector<int>& tokens, std::vector<float>* maps) {
  const ModelConfig& c = model.config();
  const int T = static_cast<int>(tokens.size());
  std::vector<int> targets(T, -1);
  model.forward(tokens.data(), targets.data(), 1, T);
  maps->clear();
  maps->reserve(static_cast<size_t>(c.num_layers) * c.num_heads * T * T);
  ForwardOptions options;
  options.is_causal = true;
  options.average_attn_weights = false;
  std::vector<float> input(static_cast<size_t>(T) * c.d_model);
  for (int l = 0; l < c.num_layers; ++l) {
    std::unique_ptr<MultiHeadAttention> attention;
    MHA_RETURN_IF_ERROR(model.attention_module(l, &attention));
    const Real* x = model.attention_input(l);  // (T, C)
    for (size_t i = 0; i < input.size(); ++i) input[i] = static_cast<float>(x[i]);
    const TensorView query{input.data(), input.size(), {T, c.d_model}};
    ForwardResult result;
    MHA_RETURN_IF_ERROR(attention->forward(query, query, query, MaskView(), MaskView(), options, &result));
    maps->insert(maps->end(), result.weights.data.begin(), result.weights.data.end());  // (H, T, T)
  }
  return Status::Ok();
}

template Status attention_maps<float>(Model<float>&, const std::vector<int>&, std::vector<float>*);

template <typename Real>
std::vector<float> next_token_probabilities(Model<Real>& model, const std::vector<int>& tokens) {
  const int T = static_cast<int>(tokens.size());
  std::vector<int> targets(T, -1);
  model.forward(tokens.data(), targets.data(), 1, T);
  const Real* probs = model.probabilities();
  return std::vector<float>(probs, probs + static_cast<size_t>(T) * model.config().vocab_size);
}

template std::vector<float> next_token_probabilities<float>(Model<float>&, const std::vector<int>&);

Trainer::Trainer(const ModelConfig& model_config, const TrainConfig& config, const std::vector<Sentence>& held_out)
    : grammar_(grammar_of(config)),
      config_(config),
      model_(model_config),
      optimizer_(optimizer_specs(model_config, config), AdamWConfig{0.9, config.beta2, 1e-8, config.weight_decay}),
      data_rng_(config.seed ^ kDataStream) {
  model_.initialize(config.seed, config.init);
  for (const Sentence& s : held_out) held_out_keys_.insert(key_of(s.tokens));
  const int B = config.batch_size, T = model_config.context;
  tokens_.resize(static_cast<size_t>(B) * T);
  targets_.resize(static_cast<size_t>(B) * T);
  lengths_.resize(B);
}

double Trainer::current_learning_rate() const {
  return learning_rate(steps_done_, config_.warmup_steps, config_.steps, config_.learning_rate,
                       config_.min_learning_rate());
}

double Trainer::step() {
  const int B = config_.batch_size;
  batch_.clear();
  int T = 2;
  for (int b = 0; b < B; ++b) {
    Sentence s = grammar_.generate(data_rng_);
    while (held_out_keys_.count(key_of(s.tokens))) s = grammar_.generate(data_rng_);
    T = std::max(T, static_cast<int>(s.tokens.size()));
    batch_.push_back(std::move(s));
  }
  T = std::min(T, model_.config().context);
  // Each row is computed up to its last position with a target (the sentence's last token has
  // none, and causal attention makes the positions before it the same without it): padding
  // and that last token are left out.
  for (int b = 0; b < B; ++b) {
    fill_row(batch_[b], T, grammar_.pad_id(), &tokens_[b * T], &targets_[b * T]);
    lengths_[b] = std::min(T, static_cast<int>(batch_[b].tokens.size()) - 1);
  }
  const double loss = model_.forward(tokens_.data(), targets_.data(), B, T, lengths_.data());
  model_.backward();
  if (config_.grad_clip > 0) clip_grad_norm(model_.gradients(), config_.grad_clip);
  optimizer_.update(model_.parameters(), model_.gradients(), current_learning_rate());
  ++steps_done_;
  return loss;
}

double Trainer::steps(int count) {
  double sum = 0;
  for (int i = 0; i < count; ++i) sum += step();
  return count > 0 ? sum / count : 0;
}

// IEEE 754 binary16 conversion, round to nearest even.
uint16_t float_to_half(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t abs = x & 0x7FFFFFFFu;
  if (abs >= 0x7F800000u) return static_cast<uint16_t>(sign | (abs > 0x7F800000u ? 0x7E00u : 0x7C00u));
  if (abs >= 0x477FF000u) return static_cast<uint16_t>(sign | 0x7C00u);  // rounds past 65504
  if (abs < 0x38800000u) {                                                  // subnormal half
    if (abs < 0x33000000u) return static_cast<uint16_t>(sign);
    const uint32_t mantissa = (abs & 0x7FFFFFu) | 0x800000u;
    const int shift = 113 - static_cast<int>(abs >> 23) + 13;
    uint32_t half = mantissa >> shift;
    const uint32_t rest = mantissa & ((1u << shift) - 1);
    const uint32_t halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (half & 1u))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = ((abs - 0x38000000u) >> 13);
  const uint32_t rest = abs & 0x1FFFu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;
  return static_cast<uint16_t>(sign | half);
}

float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1Fu;
  uint32_t mantissa = h & 0x3FFu;
  uint32_t x;
  if (exponent == 0) {
    if (mantissa == 0) {
      x = sign;
    } else {
      int e = -1;
      do {
        ++e;
        mantissa <<= 1;
      } while ((mantissa & 0x400u) == 0);
      x = sign | (static_cast<uint32_t>(127 - 15 - e) << 23) | ((mantissa & 0x3FFu) << 13);
    }
  } else if (exponent == 31) {
    x = sign | 0x7F800000u | (mantissa << 13);
  } else {
    x = sign | ((exponent + 112) << 23) | (mantissa << 13);
  }
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

void round_to_half(std::vector<float>& values) {
  for (float& v : values) v = half_to_float(float_to_half(v));
}

namespace {

void put_u32(std::vector<uint8_t>& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

uint32_t get_u32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
         (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[3]) << 24);
}

}  // namespace

std::vector<uint8_t> encode_weights(const Model<float>& model, uint64_t seed, int steps) {
  const ModelConfig& c = model.config();
  std::vector<uint8_t> out = {'M', 'H', 'A', 'W'};
  put_u32(out, 1);
  for (int v : {c.vocab_size, c.context, c.d_model, c.num_heads, c.num_layers}) put_u32(out, static_cast<uint32_t>(v));
  std::string header = "{\"seed\":" + std::to_string(seed) + ",\"steps\":" + std::to_string(steps) + ",\"parameters\":[";
  for (size_t i = 0; i < model.specs().size(); ++i) {
    const ParameterSpec& spec = model.specs()[i];
    header += (i ? "," : "") + std::string("{\"name\":\"") + spec.name + "\",\"shape\":[";
    for (size_t d = 0; d < spec.shape.size(); ++d) header += (d ? "," : "") + std::to_string(spec.shape[d]);
    header += "]}";
  }
  header += "]}";
  while ((out.size() + 4 + header.size()) % 2) header += ' ';
  put_u32(out, static_cast<uint32_t>(header.size()));
  out.insert(out.end(), header.begin(), header.end());
  for (float v : model.parameters()) {
    const uint16_t h = float_to_half(v);
    out.push_back(static_cast<uint8_t>(h & 0xFF));
    out.push_back(static_cast<uint8_t>(h >> 8));
  }
  return out;
}

Status decode_weights(const uint8_t* data, size_t size, ModelConfig* config, std::vector<float>* parameters) {
  const size_t fixed = 4 + 4 + 5 * 4 + 4;
  if (size < fixed || std::memcmp(data, "MHAW", 4) != 0)
    return Status(StatusCode::kInvalidArgument, "weights file: expected the \"MHAW\" magic and a " +
                                                    std::to_string(fixed) + "-byte header, got " +
                                                    std::to_string(size) + " bytes");
  const uint32_t version = get_u32(data + 4);
  if (version != 1)
    return Status(StatusCode::kInvalidArgument, "weights file: expected version 1, got " + std::to_string(version));
  ModelConfig c;
  c.vocab_size = static_cast<int>(get_u32(data + 8));
  c.context = static_cast<int>(get_u32(data + 12));
  c.d_model = static_cast<int>(get_u32(data + 16));
  c.num_heads = static_cast<int>(get_u32(data + 20));
  c.num_layers = static_cast<int>(get_u32(data + 24));
  MHA_RETURN_IF_ERROR(validate(c));
  const size_t header = get_u32(data + 28);
  const size_t count = parameter_count(c);
  const size_t expected = fixed + header + 2 * count;
  if (size != expected)
    return Status(StatusCode::kLengthMismatch, "weights file: expected " + std::to_string(expected) +
                                                   " bytes for " + std::to_string(count) +
                                                   " float16 parameters, got " + std::to_string(size));
  const uint8_t* p = data + fixed + header;
  parameters->resize(count);
  for (size_t i = 0; i < count; ++i)
    (*parameters)[i] = half_to_float(static_cast<uint16_t>(p[2 * i] | (p[2 * i + 1] << 8)));
  *config = c;
  return Status::Ok();
}

Status load_weights(const uint8_t* data, size_t size, Model<float>* model) {
  ModelConfig config;
  std::vector<float> parameters;
  MHA_RETURN_IF_ERROR(decode_weights(data, size, &config, &parameters));
  const ModelConfig& want = model->config();
  if (config.vocab_size != want.vocab_size || config.context != want.context || config.d_model != want.d_model ||
      config.num_heads != want.num_heads || config.num_layers != want.num_layers)
    return Status(StatusCode::kShapeMismatch,
                  "loadWeights: expected vocabulary " + std::to_string(want.vocab_size) + ", context " +
                      std::to_string(want.context) + ", d_model " + std::to_string(want.d_model) + ", " +
                      std::to_string(want.num_heads) + " heads, " + std::to_string(want.num_layers) +
                      " layers; the file has " + std::to_string(config.vocab_size) + ", " +
                      std::to_string(config.context) + ", " + std::to_string(config.d_model) + ", " +
                      std::to_string(config.num_heads) + ", " + std::to_string(config.num_layers));
  model->parameters() = parameters;
  return Status::Ok();
}

std::string evaluation_json(const Evaluation& e, uint64_t seed, int steps, double seconds, double cpu_seconds) {
  char buffer[256];
  std::string json = "{\"seed\":" + std::to_string(seed) + ",\"steps\":" + std::to_string(steps);
  if (cpu_seconds >= 0) {
    std::snprintf(buffer, sizeof buffer, ",\"cpu_seconds\":%.2f", cpu_seconds);
    json += buffer;
  }
  std::snprintf(buffer, sizeof buffer,
                ",\"seconds\":%.2f,\"loss\":%.4f,\"accuracy\":{\"agreement\":%.4f,\"pronoun\":%.4f,\"copy\":%.4f},"
                "\"heads\":[",
                seconds, e.loss, e.agreement, e.pronoun, e.copy);
  json += buffer;
  for (size_t i = 0; i < e.heads.size(); ++i) {
    const HeadScore& h = e.heads[i];
    std::snprintf(buffer, sizeof buffer,
                  "%s{\"layer\":%d,\"head\":%d,\"relation\":\"%s\",\"at\":\"%s\",\"mean_weight\":%.4f,\"argmax_share\":%.4f}",
                  i ? "," : "", h.layer, h.head, relation_name(h.relation), h.at, h.mean_weight, h.argmax_share);
    json += buffer;
  }
  json += "]}";
  return json;
}

}  // namespace mha::train
