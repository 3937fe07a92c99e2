// Head statistics: what each head's attention map looks like, in numbers.
//
// Input: per-head weights, shape (H, L, S) or (N, H, L, S), each row a distribution over the S
// keys (as MultiHeadAttention::forward returns with average_attn_weights = false). Rows that
// hold a NaN (fully masked queries) are skipped. Statistics of a head average over its rows
// (every batch item and every query row) unless named otherwise.
//
//   entropy              -sum_j p_j ln p_j, in nats (0 ln 0 = 0)
//   normalized_entropy   entropy / ln S (1 = uniform over all S keys; 0 when S = 1)
//   sparsity             share of weights below sparsity_threshold (default 0.01), in [0, 1]
//   max_attention        mean over rows of the row's largest weight
//   peak_attention       the largest single weight of the head
//   average_attention    mean of all weights (1/S for unmasked rows)
//   mean_distance        sum_j p_j |i - j|, query i against key j
//   previous_token_share p_{i, i-1}, over rows i >= 1 with i - 1 < S
//   first_token_share    p_{i, 0}
//   diagonal_share       p_{i, i}, over rows with i < S
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "mha/attention.h"
#include "mha/status.h"

namespace mha {

struct StatisticsOptions {
  double sparsity_threshold = 0.01;
};

struct HeadStatistics {
  double entropy = 0;
  double normalized_entropy = 0;
  double sparsity = 0;
  double max_attention = 0;
  double peak_attention = 0;
  double average_attention = 0;
  double mean_distance = 0;
  double previous_token_share = 0;
  double first_token_share = 0;
  double diagonal_share = 0;
  int64_t rows = 0;  // rows that entered the averages
};

// Per query row of one head (batch items in order, then rows): shape (N, H, L) flattened.
struct RowStatistics {
  double entropy = 0;
  double normalized_entropy = 0;
  double max_attention = 0;
  int64_t argmax = -1;
  double sparsity = 0;
  double mean_distance = 0;
};

Status head_statistics(const TensorView& weights, const StatisticsOptions& options,
                       std::vector<HeadStatistics>* per_head,
                       std::vector<RowStatistics>* per_row /* may be null */);

// Jensen-Shannon divergence (nats, in [0, ln 2]) between every pair of heads, averaged over
// the rows both heads have defined: out is H x H, symmetric, zero diagonal.
Status head_similarity(const TensorView& weights, std::vector<double>* jsd_hh);

// JS divergence between the matching rows of two maps of the same shape (..., L, S):
// per_row gets one value a row; returns their mean in *mean.
Status js_divergence(const TensorView& a, const TensorView& b, std::vector<double>* per_row,
                     double* mean);

// The maps a statistics call is given (a named a_name in messages; b, named b, may be null),
// against kDefaultMemoryCapBytes, before they are anywhere: kTooLarge naming the map that takes
// them past it.
Status check_maps_memory(const Shape& a, const char* a_name, const Shape* b);

}  // namespace mha
