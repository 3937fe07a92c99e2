// A pretrained sentence encoder run by the core: Universal Sentence Encoder lite (and encoders
// shaped like it), its tokenizer and its transformer, every attention layer an
// mha::MultiHeadAttention.
//
// Tokenizer (SentencePiece unigram, as the model's own TF.js tokenizer cuts text):
//   text -> NFKC (the caller's: String.prototype.normalize, as the reference's)
//   -> "▁" + text with every space as "▁" -> best path over the pieces (Viterbi)
//   -> ids, a run of unknown code points merged into one unknown piece (id 0)
//
// Encoder, T tokens (T <= max_tokens), widths E_l (attention), out_l (residual after layer l):
//   x = embedding[ids] + (embedding[ids] + timing)                                 (T, E_0)
//       timing[t] = [sin(t·f_k) for k] ++ [cos(t·f_k) for k], f = timing.inv_timescales
//   per layer l:
//     a   = MultiHeadAttention_l(LayerNorm1_l(x))    weights (H, T, T), heads (H, T, hd),
//                                                     concat (T, E_l), output o (T, out_l):
//         o = concat · W_Oᵀ + b_O, W_O (out_l, E_l) (the attention's out_dim is out_l)
//     x   = o + (out_l == E_l ? x : x · W_Rᵀ + b_R)        (the residual widened when needed)
//     x   = x + linear2(relu(linear1(LayerNorm2_l(x))))                            (T, out_l)
//   embedding = l2_normalize(tanh(pooler(mean_t x)))                               (output_dim)
// LayerNorm(v) = (v - mean) / sqrt(var + eps) · weight + bias over the last dimension.
// Parameters carry PyTorch's names and layouts (nn.Linear weight (out, in)); see
// parameter_names(). Heads switched off (ablation) are zeroed before W_O, as in
// MultiHeadAttention.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mha/attention.h"
#include "mha/status.h"

namespace mha {

// ---------------------------------------------------------------------------------------------
// Tokenizer

// The tokens of one text. Piece i is text[piece_begin[i], piece_end[i]) (which pieces make a
// word is read off these texts in JavaScript: web/lib/encoder.js, wordsOfPieces).
struct Tokens {
  std::vector<int32_t> ids;
  std::u32string text;  // what the pieces are cut from: "▁" + the input, spaces as "▁"
  std::vector<int32_t> piece_begin;
  std::vector<int32_t> piece_end;
  std::string piece_utf8(size_t i) const;  // a lone surrogate is written as its 3-byte form
};

class Tokenizer {
 public:
  static constexpr char32_t kWordBoundary = U'\u2581';  // "▁"
  static constexpr int32_t kUnknownId = 0;
  // Texts longer than this are refused.
  static constexpr size_t kMaxCodePoints = size_t{1} << 24;

  // vocab.txt: line i holds the score of piece i, a tab, and the piece in UTF-8. The first
  // `reserved` pieces (unknown, control symbols) are never matched.
  static Status FromVocabText(std::string_view text, int reserved, std::unique_ptr<Tokenizer>* out);

  size_t vocab_size() const { return pieces_.size(); }
  const std::u32string& piece(int32_t id) const { return pieces_[static_cast<size_t>(id)]; }

  // A text of `count` code points (or of `count` UTF-16 units, which bound them) against
  // kMaxCodePoints: kTooLarge past it. tokenize() makes the same check.
  static Status check_text_size(size_t count);
  // Any code points up to 0x10FFFF, lone surrogates included, already in NFKC (a text that is
  // not is cut as it is).
  Status tokenize(const char32_t* code_points, size_t count, Tokens* out) const;
  // Well-formed UTF-8 in NFKC (anything else is refused with the offset of the first bad byte).
  Status tokenize_utf8(std::string_view text, Tokens* out) const;
  // The pieces of given ids (each 0 <= id < vocab_size()) and their text.
  Status from_ids(const int32_t* ids, size_t count, Tokens* out) const;

 private:
  Tokenizer() = default;
  struct Node {
    uint32_t first_edge = 0;
    uint32_t num_edges = 0;
    int32_t id = -1;  // the piece ending here, or -1
  };
  struct Edge {
    char32_t code_point;
    uint32_t child;
  };
  void build_trie(int reserved);
  void viterbi(const std::u32string& text, std::vector<int32_t>* chosen) const;

  std::vector<std::u32string> pieces_;
  std::vector<double> scores_;
  std::vector<int32_t> utf16_lengths_;  // what the reference steps back by on each piece
  std::vector<Node> nodes_;             // nodes_[0] is the root
  std::vector<Edge> edges_;             // each node's edges, sorted by code point
};

// ---------------------------------------------------------------------------------------------
// Encoder

struct EncoderLayerConfig {
  int64_t embed_dim = 0;  // E: the attention's width
  int64_t num_heads = 0;
  int64_t out_dim = 0;    // the residual stream's width after the layer (W_O maps E -> out)
  int64_t ffn_dim = 0;
};

struct EncoderConfig {
  int64_t vocab_size = 0;      // ids are < vocab_size
  int64_t embedding_rows = 0;  // rows of embeddings.weight, >= vocab_size
  int64_t max_tokens = 0;
  double layer_norm_eps = 1e-6;
  int64_t output_dim = 0;      // the sentence embedding's width (the pooler's)
  std::vector<EncoderLayerConfig> layers;
};

struct EncodeOptions {
  std::vector<std::pair<int64_t, int64_t>> ablate;  // (layer, head) pairs switched off
  bool truncate = false;  // more than max_tokens ids: encode the first max_tokens, not refuse
};

struct EncoderLayerResult {
  Tensor weights;           // (H, T, T)
  Tensor head_outputs;      // (H, T, hd)
  Tensor concat;            // (T, E), after ablation
  Tensor attention_output;  // (T, out): concat · W_Oᵀ + b_O
  Tensor residual;          // (T, out): the residual stream after the layer
};

struct EncodeResult {
  std::vector<EncoderLayerResult> layers;
  Tensor embedding;  // (output_dim), L2-normalised
};

class Encoder {
 public:
  // Validates the config; every parameter starts unset (encode() refuses until all are set).
  static Status Create(const EncoderConfig& config, std::unique_ptr<Encoder>* out);

  const EncoderConfig& config() const { return config_; }
  int64_t head_dim(size_t layer) const;

  // Every parameter's PyTorch name, in the order of the forward pass.
  std::vector<std::string> parameter_names() const;
  Status parameter_shape(const std::string& name, Shape* shape) const;
  // The name and the shape set_parameter checks, before any data.
  Status check_parameter_shape(const std::string& name, const Shape& shape) const;
  Status set_parameter(const std::string& name, const float* data, size_t length, const Shape& shape);
  Status get_parameter(const std::string& name, Tensor* out) const;
  // Names not set yet (empty when the encoder can run).
  std::vector<std::string> missing_parameters() const;
  // A layer's attention parameter by nn.MultiheadAttention's name: in_proj_weight, in_proj_bias,
  // out_proj.weight (W_O, (out, E)), out_proj.bias.
  Status attention_parameter(int64_t layer, const std::string& name, Tensor* out) const;

  // How many of `count` tokens encode() takes: all of them, or with truncate at most max_tokens.
  size_t tokens_kept(size_t count, bool truncate) const;
  // ids[0 .. count), each 0 <= id < vocab_size; count <= max_tokens unless options.truncate
  // (then the first max_tokens are encoded).
  Status encode(const int32_t* ids, size_t count, const EncodeOptions& options, EncodeResult* result);

 private:
  Encoder() = default;
  struct Linear {
    std::vector<float> weight;      // (out, in)
    std::vector<float> bias;        // (out)
    std::vector<float> packed;      // weight packed for kernels::linear_packed
    std::vector<float> transposed;  // (in, out), for inputs that are mostly 0 (keep_transposed)
    int64_t out = 0, in = 0;
    bool keep_transposed = false;
  };
  struct LayerState {
    std::unique_ptr<MultiHeadAttention> attention;  // in_proj and out_proj (out, E)
    Linear residual_proj;                           // when out != E
    Linear linear1, linear2;
    std::vector<float> norm1_weight, norm1_bias, norm2_weight, norm2_bias;
  };
  struct Slot {  // where a named parameter lives
    std::vector<float>* data = nullptr;
    Linear* linear = nullptr;      // set when the slot is a Linear's weight or bias (packed on change)
    MultiHeadAttention* attention = nullptr;
    std::string attention_name;    // the name inside MultiHeadAttention
    Shape shape;
  };

  Status find(const std::string& name, Slot* slot) const;
  Status validate(const int32_t* ids, size_t count, const EncodeOptions& options) const;
  void embed(const int32_t* ids, int64_t T, std::vector<float>* x) const;
  Status run_layer(size_t l, const std::vector<int64_t>& ablated, int64_t T, std::vector<float>* x,
                   EncoderLayerResult* out);
  void pool(const std::vector<float>& x, int64_t T, Tensor* embedding) const;

  EncoderConfig config_;
  std::vector<float> embeddings_;       // (embedding_rows, E_0)
  std::vector<float> inv_timescales_;   // (E_0 / 2)
  std::vector<LayerState> layers_;
  Linear pooler_;
  std::map<std::string, bool> set_;     // every parameter name -> whether it was set
  // scratch reused across calls
  std::vector<float> normed_, ffn_hidden_, ffn_out_, widened_;
};

}  // namespace mha
