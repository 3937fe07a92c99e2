// MultiHeadAttention: torch.nn.MultiheadAttention's explicit path (need_weights=True), plus
// grouped-query attention (num_kv_heads < num_heads, the repeat_interleave grouping of
// F.scaled_dot_product_attention(enable_gqa=True)).
//
// Shapes use PyTorch's letters: N batch, L target (query) length, S source (key) length,
// E embed_dim, H num_heads, G num_kv_heads, hd head_dim (E / H unless set), O out_dim (E unless
// set). The queries and the concatenated heads are H * hd wide (E unless head_dim is set).
//
// Rotary positions (Config::rotary), as transformers' Llama-family models apply them: after the
// in-projection, q at position l and k at position s rotated by
//   x' = x * cos(p * f) + rotate_half(x) * sin(p * f),  rotate_half(x) = [-x[hd/2:], x[:hd/2]]
// where f = [inv_freq, inv_freq] (hd values) and p the position (query l, key s, from 0); cos and
// sin in float32, multiplied by attention_scaling.
//
//   query (N, L, E)  or (L, N, E) when !batch_first, or (L, E) unbatched
//   key   (N, S, kdim) ...                            or (S, kdim)
//   value (N, S, vdim) ...                            or (S, vdim)
//   key_padding_mask (N, S) or (S) unbatched; bool: true = ignore that key; float: added
//   attn_mask (L, S) or (N*H, L, S) (index n*H + h); bool: true = not allowed; float: added
//   output (N, L, O) / (L, N, O) / (L, O); weights (N, L, S) averaged or (N, H, L, S)
//
// The order of the math is PyTorch's: in-projection with bias; q scaled by 1/sqrt(hd); masks
// added; row softmax; weights . V; heads concatenated; out-projection. Masks are merged as in
// PyTorch >= 2.0: a bool mask becomes 0 / -inf, a float mask is added as it is, and both masks
// are summed. A query row whose every key is masked has weights NaN and output NaN, as
// PyTorch's explicit path gives; ForwardOptions::fully_masked_rows_zero gives zeros instead, as
// newer PyTorch's scaled-dot-product path does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mha/status.h"

namespace mha {

using Shape = std::vector<int64_t>;

// Rotary position embeddings on q and k (the halves convention, not interleaved pairs).
struct Rotary {
  double theta = 0;             // 0 and no inv_freq: no rotary positions
  std::vector<float> inv_freq;  // hd / 2 frequencies; empty: 1 / theta^(2i / hd), as float32
  float attention_scaling = 1;  // cos and sin are multiplied by it
  bool enabled() const { return theta > 0 || !inv_freq.empty(); }
};

struct Config {
  int64_t embed_dim = 0;
  int64_t num_heads = 1;
  int64_t num_kv_heads = 0;  // 0 means num_heads; must divide num_heads
  int64_t kdim = 0;          // 0 means embed_dim
  int64_t vdim = 0;          // 0 means embed_dim
  bool bias = true;
  bool add_bias_kv = false;
  bool add_zero_attn = false;
  bool batch_first = false;
  // The out-projection's width: W_O is (out_dim, embed_dim), its bias (out_dim), the output's
  // last dimension out_dim. Not set: embed_dim, as nn.MultiheadAttention has it.
  std::optional<int64_t> out_dim;
  // Each head's width; 0 means embed_dim / num_heads (which must then divide evenly).
  int64_t head_dim = 0;
  // Rotary positions on q and k between the in-projection and the scores (even head_dim; not
  // with add_bias_kv or add_zero_attn).
  Rotary rotary;
};

// Product of a shape's dimensions, or -1 if one is negative or the product passes 2^53.
int64_t checked_numel(const Shape& shape);

// A borrowed float buffer with its declared shape; length is the number of floats actually
// supplied, checked against the shape's product.
struct TensorView {
  const float* data = nullptr;
  size_t length = 0;
  Shape shape;
};

enum class MaskDtype : int { kNone = 0, kBool = 1, kFloat = 2 };

struct MaskView {
  MaskDtype dtype = MaskDtype::kNone;
  const void* data = nullptr;  // const uint8_t* (0/1) for kBool, const float* for kFloat
  size_t length = 0;
  Shape shape;
};

// An owned float tensor, row-major. An empty shape with no data means "not returned".
struct Tensor {
  std::vector<float> data;
  Shape shape;
  bool present() const { return !shape.empty(); }
};

struct ForwardOptions {
  bool need_weights = true;
  bool average_attn_weights = true;
  bool is_causal = false;             // used only when no attn_mask is given
  bool return_head_outputs = false;   // head_i before concatenation: (N, H, L, hd) / (H, L, hd)
  bool return_concat = false;         // Concat(head_1..head_H): (N, L, E) / (L, N, E) / (L, E)
  bool skip_out_proj = false;         // output = the concatenation (W_O skipped), E wide
  std::vector<int64_t> ablate_heads;  // these heads are zeroed before W_O
  bool fully_masked_rows_zero = false;
};

struct ForwardResult {
  Tensor output;
  Tensor weights;       // present when need_weights
  Tensor head_outputs;  // present when return_head_outputs
  Tensor concat;        // present when return_concat (after ablation)
};

// The cap on the memory one forward call takes (check_call_memory); beyond it forward() fails
// with kTooLarge instead of exhausting memory.
constexpr size_t kDefaultMemoryCapBytes = size_t{1} << 30;

// A forward call's inputs without their data: their shapes, the masks' dtypes (kNone: no mask),
// and which inputs are one buffer (the key the query's, the value the key's).
struct CallShapes {
  Shape query, key, value, key_padding_mask, attn_mask;
  MaskDtype key_padding_mask_dtype = MaskDtype::kNone;
  MaskDtype attn_mask_dtype = MaskDtype::kNone;
  bool key_is_query = false;
  bool value_is_key = false;
};

// The keys and values one self-attention module has seen, for computing a text one step at a
// time: row p holds position p's keys of the G key/value heads (after the rotary positions, where
// the module has them), unexpanded: (capacity, G * hd) each, `length` rows filled.
struct KvCache {
  int64_t length = 0;
  std::vector<float> keys, values;
  void clear() { length = 0; }
};

// How a packed module (CreatePacked) stores in_proj_weight and out_proj.weight: float32, or the
// 16-bit words of a float16 / bfloat16 file, widened exactly as the GEMM reads them.
enum class PackedStorage { kFloat32, kFloat16, kBfloat16 };

class MultiHeadAttention {
 public:
  // Validates the config (PyTorch's wording where it has one) and initialises the parameters
  // as PyTorch does, from `seed`.
  static Status Create(const Config& config, uint64_t seed, std::unique_ptr<MultiHeadAttention>* out);
  // A module whose in_proj_weight and out_proj.weight are held only in the GEMM's packed layout
  // (kernels::pack_weight), for weights read once from a file: they take their memory once, and
  // start at zero rather than drawn at random. Fill them in place through packed_storage();
  // get_parameter unpacks on demand, set_parameter packs. Needs one fused in-projection
  // (kdim = vdim = embed_dim) and no bias_k / bias_v; any num_kv_heads and head_dim: the
  // in-projection is then [W_q; W_k; W_v] ((H + 2G) * hd, E) in one packing, whatever the
  // parameters' names (q/k/v_proj_weight when G < H).
  static Status CreatePacked(const Config& config, std::unique_ptr<MultiHeadAttention>* out,
                             PackedStorage storage = PackedStorage::kFloat32);
  // A packed module's storage: "in_proj_weight" and "out_proj.weight" packed
  // (kernels::packed_weight_floats of their shapes), "in_proj_bias" and "out_proj.bias" as they
  // are; nullptr for another name or a module made by Create.
  float* packed_storage(const std::string& name);
  // A 16-bit packed module's weights ("in_proj_weight", "out_proj.weight"); nullptr otherwise.
  uint16_t* packed_storage16(const std::string& name);
  // The bytes the parameters take (packed copies included).
  size_t parameter_bytes() const;
  // Use `other`'s scratch from now on: modules that never run at once (a model's layers, run one
  // after another) then hold one workspace, as large as the largest call's, instead of one each.
  void share_workspace(const MultiHeadAttention& other) { workspace_ = other.workspace_; }

  const Config& config() const { return config_; }  // resolved: num_kv_heads, kdim, vdim, out_dim set
  int64_t head_dim() const { return head_dim_; }
  int64_t kv_dim() const { return config_.num_kv_heads * head_dim_; }
  int64_t query_dim() const { return config_.num_heads * head_dim_; }  // q's width and the concatenation's
  int64_t out_dim() const { return *config_.out_dim; }
  // in_proj_weight (3E x E) when kdim = vdim = E, G = H and hd = E / H; else q/k/v_proj_weight.
  bool packed_in_proj() const { return packed_in_proj_; }

  // PyTorch state_dict names this module has, in PyTorch's order.
  std::vector<std::string> parameter_names() const;
  Status parameter_shape(const std::string& name, Shape* shape) const;
  Status set_parameter(const std::string& name, const float* data, size_t length, const Shape& shape);
  Status get_parameter(const std::string& name, Tensor* out) const;
  // PyTorch's _reset_parameters: xavier_uniform_ on in_proj_weight (or on each of q/k/v),
  // zero in_proj_bias and out_proj.bias, nn.Linear's kaiming_uniform_(a=sqrt(5)) on
  // out_proj.weight, xavier_normal_ on bias_k and bias_v. Deterministic from the seed.
  void reset_parameters(uint64_t seed);

  void set_memory_cap(size_t bytes) { memory_cap_bytes_ = bytes; }
  size_t memory_cap() const { return memory_cap_bytes_; }

  // The checks set_parameter makes, without setting anything (so that a whole state_dict can
  // be checked before any of it is set); check_parameter_shape, those of the name and shape alone.
  Status check_parameter(const std::string& name, const float* data, size_t length, const Shape& shape) const;
  Status check_parameter_shape(const std::string& name, const Shape& shape) const;

  // The memory a forward call with these inputs and options takes, in bytes: its inputs, its
  // workspace and its outputs, against the memory cap (kTooLarge past it, the message naming
  // each part). The shapes are checked as forward() checks them, so that a call can be refused
  // before its data is anywhere; forward() makes the same check.
  Status check_call_memory(const CallShapes& shapes, const ForwardOptions& options) const;

  // Five steps, each a private function of its own:
  //   1. validate  every shape, length, dtype, value and option, and the memory the call
  //                takes (check_call_memory), before anything is touched; resolves N, L, S
  //                and how to project
  //   2. plan      the workspace: one offset per scratch buffer, and the thread schedule
  //   3. project   inputs to batch-first order; q, k, v by the in-projection (fused, per
  //                head or separate)
  //   4. attend    head by head: masks, scaled q . k^T, softmax, weights . V
  //   5. assemble  head outputs, ablation, concatenation, out-projection, weights
  Status forward(const TensorView& query, const TensorView& key, const TensorView& value,
                 const MaskView& key_padding_mask, const MaskView& attn_mask,
                 const ForwardOptions& options, ForwardResult* result);

  // Causal self-attention of R new positions, cache->length .. cache->length + R - 1, over the
  // cache and themselves; their keys and values are appended to the cache first. A packed
  // module (CreatePacked) with one fused in-projection, no bias_k, no zero attention.
  //   x (R, E) the new rows; window > 0: query i sees key j when i - window < j <= i
  //   output (R, O); weights (H, R, S), S = the cache's length after the append
  // Equal to forward() on all S positions with is_causal (and the window's mask), rows
  // S - R .. S - 1, to float rounding (tests/cpp/models/kv_cache_test.cpp).
  Status forward_cached(const float* x, int64_t R, int64_t window, KvCache* cache, std::vector<float>* output,
                        std::vector<float>* weights);

 private:
  MultiHeadAttention() = default;
  static Status Make(const Config& config, bool packed_only, PackedStorage storage,
                     std::unique_ptr<MultiHeadAttention>* out);
  // The fused in-projection (N*L, E) -> (N*L, 3E) and the out-projection (N*L, E) -> (N*L, O)
  // on the packed weights, float32 or 16-bit.
  void in_projection(float* out, const float* in, const float* bias, int64_t rows) const;
  void out_projection(float* out, const float* in, const float* bias, int64_t rows) const;
  void unpack_in_proj(float* out) const;  // [W_q; W_k; W_v] ((H + 2G) hd, E) from its packing
  int64_t fused_rows() const { return query_dim() + 2 * kv_dim(); }
  void rotary_tables(int64_t positions);  // rotary_cos_, rotary_sin_ for positions 0 .. positions-1
  // x (rows, hd) at row stride ld, row r at position first + r, rotated in place
  void rotate(float* x, int64_t ld, int64_t rows, int64_t first = 0) const;
  void widen_storage();                   // a 16-bit packed module's weights to float32

  struct Call;       // a validated call: its inputs, N, L, S, S_total and projection
  struct Workspace;  // a call's scratch offsets in workspace_, and its thread schedule
  struct Projected;  // q, k, v after the in-projection, with their row strides
  Status validate(const TensorView& query, const TensorView& key, const TensorView& value,
                  const MaskView& key_padding_mask, const MaskView& attn_mask,
                  const ForwardOptions& options, Call* call) const;
  Status resolve(const CallShapes& shapes, const ForwardOptions& options, Call* call) const;
  Status check_memory(const CallShapes& shapes, const Call& call) const;
  Workspace layout(const Call& call) const;
  Workspace plan(const Call& call);
  void pack_weights(const Call& call);
  Projected project(const Call& call, const Workspace& ws);
  void attend(const Call& call, const Workspace& ws, const Projected& qkv);
  void attend_head(const Call& call, const Workspace& ws, const Projected& qkv, const float* attn_add,
                   const float* key_add, int64_t pair, int slot) const;
  void assemble(const Call& call, const Workspace& ws, ForwardResult* result) const;

  Config config_;
  int64_t head_dim_ = 0;
  bool packed_in_proj_ = true;
  bool fusable_ = true;       // kdim = vdim = E: self-attention can project q, k, v in one GEMM
  bool packed_only_ = false;  // CreatePacked: in_proj_weight_ and out_proj_weight_ stay empty
  PackedStorage storage_ = PackedStorage::kFloat32;
  std::vector<uint16_t> packed16_in_proj_weight_, packed16_out_proj_weight_;  // storage_ 16-bit
  size_t memory_cap_bytes_ = kDefaultMemoryCapBytes;

  // Parameters, row-major, as PyTorch stores them. in_proj_weight_ holds q_proj_weight (H*hd, E),
  // then k_proj_weight (G*hd, kdim), then v_proj_weight (G*hd, vdim) back to back: when packed
  // this is exactly PyTorch's in_proj_weight (3E, E), and one GEMM projects q, k and v.
  std::vector<float> in_proj_weight_;
  std::vector<float> in_proj_bias_;     // (H*hd + 2*G*hd), or empty when !bias
  std::vector<float> bias_k_;           // (G*hd), or empty when !add_bias_kv
  std::vector<float> bias_v_;
  std::vector<float> out_proj_weight_;  // (O, H*hd)
  std::vector<float> out_proj_bias_;    // (O), or empty when !bias

  // Scratch reused across calls, so that steady-state forwards do not allocate; shared with
  // other modules by share_workspace.
  std::shared_ptr<std::vector<float>> workspace_ = std::make_shared<std::vector<float>>();
  // in_proj_weight (when packed) and out_proj.weight packed for the GEMM (kernels::pack_weight),
  // rebuilt by the first forward after a parameter changes.
  std::vector<float> packed_in_proj_weight_;
  std::vector<float> packed_out_proj_weight_;
  bool packed_weights_stale_ = true;
  // The same in-projection regrouped per head, [W_q,h; W_k,h; W_v,h] (3*hd, E) each, packed, and
  // its bias [b_q,h; b_k,h; b_v,h]: self-attention without weights projects one head at a time.
  std::vector<float> packed_in_proj_per_head_;
  std::vector<float> in_proj_bias_per_head_;
  // cos and sin of p * f, (positions, hd), for Config::rotary
  std::vector<float> rotary_cos_, rotary_sin_;
};

}  // namespace mha
