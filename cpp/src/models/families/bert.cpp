// BERT (BertModel, BertForMaskedLM, BertForPreTraining), post-LayerNorm:
//   x = LayerNorm(word[ids] + token_type[0] + position[0 .. T))
//   per layer:  x = LayerNorm(attn(x) + x)             q, k, v, output.dense as nn.Linear (out, in)
//               x = LayerNorm(down(act(up(x))) + x)
//   pooled = tanh(pooler(x[0]))                         (when the file has a pooler)
//   logits = LayerNorm(act(transform(x))) · decoderᵀ + cls.predictions.bias      (masked-LM head)
#include "models/family.h"

namespace mha::models {

const Family& BertFamily() {
  static const Family family{
      "bert",
      "BERT",
      {{"BertForMaskedLM", Task::kMasked}, {"BertModel", Task::kNone}, {"BertForPreTraining", Task::kMasked}},
      {{&ModelConfig::vocab_size, "vocab_size", 30522, 0},
       {&ModelConfig::max_positions, "max_position_embeddings", 512, 0},
       {&ModelConfig::hidden, "hidden_size", 768, 0},
       {&ModelConfig::num_layers, "num_hidden_layers", 12, 0},
       {&ModelConfig::num_heads, "num_attention_heads", 12, 0},
       {&ModelConfig::intermediate, "intermediate_size", 3072, 0},
       {&ModelConfig::type_vocab_size, "type_vocab_size", 2, 0}},
      "layer_norm_eps",
      1e-12,
      "hidden_act",
      "gelu",
      true,
      {{"is_decoder", false, false, "BERT runs as an encoder"},
       {"add_cross_attention", false, false, "self-attention only"}},
      {{"position_embedding_type", "absolute", "absolute"}},
      NormPlacement::kPost,
      LinearLayout::kLinear,
      /*causal=*/false,
      [] {
        TensorNames n;
        n.base_prefix = "bert.";
        n.word = "embeddings.word_embeddings";
        n.position = "embeddings.position_embeddings";
        n.token_type = "embeddings.token_type_embeddings";
        n.embed_norm = "embeddings.LayerNorm";
        n.q = "encoder.layer.{l}.attention.self.query";
        n.k = "encoder.layer.{l}.attention.self.key";
        n.v = "encoder.layer.{l}.attention.self.value";
        n.attention_out = "encoder.layer.{l}.attention.output.dense";
        n.attention_norm = "encoder.layer.{l}.attention.output.LayerNorm";
        n.up = "encoder.layer.{l}.intermediate.dense";
        n.down = "encoder.layer.{l}.output.dense";
        n.ffn_norm = "encoder.layer.{l}.output.LayerNorm";
        n.pooler = "pooler.dense";
        n.head_transform = "cls.predictions.transform.dense";
        n.head_norm = "cls.predictions.transform.LayerNorm";
        n.head_weight = "cls.predictions.decoder.weight";
        n.head_bias = "cls.predictions.bias";
        n.head_bias_copies = {"cls.predictions.decoder.bias"};  // one tensor in the model, two names in a file
        n.legacy_norm_weight = "gamma";
        n.legacy_norm_bias = "beta";
        // position_ids (a buffer) and BertForPreTraining's next-sentence head
        n.skip_suffixes = {"embeddings.position_ids"};
        n.skip_prefixes = {"cls.seq_relationship."};
        return n;
      }(),
  };
  return family;
}

}  // namespace mha::models
