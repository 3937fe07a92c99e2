// Head statistics and head-to-head similarity over attention maps (definitions in the header).
#include "mha/statistics.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "mha/format.h"

namespace mha {

namespace {

// An element count held in a double, as text; it may be far beyond int64_t (a shape's product
// is only compared with the data's length, never converted back to an integer unchecked).
std::string count_str(double count) { return format_g17(count); }

struct MapShape {
  int64_t N = 1, H = 0, L = 0, S = 0;
};

Status read_map_shape(const char* what, const TensorView& weights, MapShape* out) {
  const Shape& shape = weights.shape;
  if (shape.size() != 3 && shape.size() != 4) {
    return Status(StatusCode::kShapeMismatch, std::string(what) + ": expected per-head weights of shape (H, L, S) or (N, H, L, S), got " +
                                                  std::to_string(shape.size()) + "-D");
  }
  MapShape m;
  if (shape.size() == 4) m.N = shape[0];
  m.H = shape[shape.size() - 3];
  m.L = shape[shape.size() - 2];
  m.S = shape[shape.size() - 1];
  if (m.N <= 0 || m.H <= 0 || m.L <= 0 || m.S <= 0) {
    return Status(StatusCode::kShapeMismatch, std::string(what) + ": every dimension must be at least 1");
  }
  const double numel = double(m.N) * m.H * m.L * m.S;
  if (numel != double(weights.length)) {
    return Status(StatusCode::kLengthMismatch, std::string(what) + ": data has " + std::to_string(weights.length) +
                                                   " values but the shape needs " + count_str(numel));
  }
  if (weights.data == nullptr) return Status(StatusCode::kInvalidArgument, std::string(what) + ": data is missing");
  *out = m;
  return Status::Ok();
}

bool row_defined(const float* p, int64_t S) {
  for (int64_t j = 0; j < S; ++j)
    if (std::isnan(p[j])) return false;
  return true;
}

double row_entropy(const float* p, int64_t S) {
  double h = 0;
  for (int64_t j = 0; j < S; ++j)
    if (p[j] > 0) h -= double(p[j]) * std::log(double(p[j]));
  return h;
}

// JS(p, q) = 1/2 KL(p || m) + 1/2 KL(q || m), m = (p + q) / 2, in nats.
double row_js_divergence(const float* p, const float* q, int64_t S) {
  double js = 0;
  for (int64_t j = 0; j < S; ++j) {
    const double a = std::max(0.0f, p[j]), b = std::max(0.0f, q[j]);
    const double m = 0.5 * (a + b);
    if (a > 0) js += 0.5 * a * std::log(a / m);
    if (b > 0) js += 0.5 * b * std::log(b / m);
  }
  return std::max(0.0, js);
}

}  // namespace

Status head_statistics(const TensorView& weights, const StatisticsOptions& options,
                       std::vector<HeadStatistics>* per_head, std::vector<RowStatistics>* per_row) {
  MapShape m;
  MHA_RETURN_IF_ERROR(read_map_shape("weights", weights, &m));
  if (!(options.sparsity_threshold >= 0 && options.sparsity_threshold <= 1)) {
    return Status(StatusCode::kInvalidArgument, "sparsity_threshold must be between 0 and 1, got " +
                                                    format_g17(options.sparsity_threshold));
  }
  const double log_s = std::log(double(m.S));
  per_head->assign(static_cast<size_t>(m.H), HeadStatistics());
  if (per_row) per_row->assign(static_cast<size_t>(m.N * m.H * m.L), RowStatistics());
  std::vector<int64_t> previous_rows(m.H, 0), diagonal_rows(m.H, 0);
  for (int64_t n = 0; n < m.N; ++n) {
    for (int64_t h = 0; h < m.H; ++h) {
      HeadStatistics& hs = (*per_head)[h];
      for (int64_t i = 0; i < m.L; ++i) {
        const float* p = weights.data + ((n * m.H + h) * m.L + i) * m.S;
        RowStatistics rs;
        if (!row_defined(p, m.S)) {
          rs.argmax = -1;
          rs.entropy = rs.normalized_entropy = rs.max_attention = rs.sparsity = rs.mean_distance = std::nan("");
          if (per_row) (*per_row)[(n * m.H + h) * m.L + i] = rs;
          continue;
        }
        int64_t below = 0;
        double distance = 0, sum = 0;
        rs.max_attention = -1;
        for (int64_t j = 0; j < m.S; ++j) {
          if (p[j] < options.sparsity_threshold) ++below;
          distance += double(p[j]) * double(std::abs(i - j));
          sum += p[j];
          if (p[j] > rs.max_attention) {
            rs.max_attention = p[j];
            rs.argmax = j;
          }
        }
        rs.entropy = row_entropy(p, m.S);
        rs.normalized_entropy = m.S > 1 ? rs.entropy / log_s : 0.0;
        rs.sparsity = double(below) / double(m.S);
        rs.mean_distance = distance;
        if (per_row) (*per_row)[(n * m.H + h) * m.L + i] = rs;

        hs.rows += 1;
        hs.entropy += rs.entropy;
        hs.normalized_entropy += rs.normalized_entropy;
        hs.sparsity += rs.sparsity;
        hs.max_attention += rs.max_attention;
        hs.peak_attention = std::max(hs.peak_attention, rs.max_attention);
        hs.average_attention += sum / double(m.S);
        hs.mean_distance += distance;
        hs.first_token_share += p[0];
        if (i >= 1 && i - 1 < m.S) {
          hs.previous_token_share += p[i - 1];
          previous_rows[h] += 1;
        }
        if (i < m.S) {
          hs.diagonal_share += p[i];
          diagonal_rows[h] += 1;
        }
      }
    }
  }
  for (int64_t h = 0; h < m.H; ++h) {
    HeadStatistics& hs = (*per_head)[h];
    if (hs.rows == 0) {
      const double nan = std::nan("");
      hs.entropy = hs.normalized_entropy = hs.sparsity = hs.max_attention = hs.peak_attention = nan;
      hs.average_attention = hs.mean_distance = hs.previous_token_share = hs.first_token_share = hs.diagonal_share = nan;
      continue;
    }
    const double rows = double(hs.rows);
    hs.entropy /= rows;
    hs.normalized_entropy /= rows;
    hs.sparsity /= rows;
    hs.max_attention /= rows;
    hs.average_attention /= rows;
    hs.mean_distance /= rows;
    hs.first_token_share /= rows;
    hs.previous_token_share = previous_rows[h] ? hs.previous_token_share / double(previous_rows[h]) : 0.0;
    hs.diagonal_share = diagonal_rows[h] ? hs.diagonal_share / double(diagonal_rows[h]) : 0.0;
  }
  return Status::Ok();
}

Status head_similarity(const TensorView& weights, std::vector<double>* jsd_hh) {
  MapShape m;
  MHA_RETURN_IF_ERROR(read_map_shape("weights", weights, &m));
  jsd_hh->assign(static_cast<size_t>(m.H * m.H), 0.0);
  for (int64_t a = 0; a < m.H; ++a) {
    for (int64_t b = a + 1; b < m.H; ++b) {
      double total = 0;
      int64_t rows = 0;
      for (int64_t n = 0; n < m.N; ++n) {
        for (int64_t i = 0; i < m.L; ++i) {
          const float* p = weights.data + ((n * m.H + a) * m.L + i) * m.S;
          const float* q = weights.data + ((n * m.H + b) * m.L + i) * m.S;
          if (!row_defined(p, m.S) || !row_defined(q, m.S)) continue;
          total += row_js_divergence(p, q, m.S);
          ++rows;
        }
      }
      const double value = rows ? total / double(rows) : std::nan("");
      (*jsd_hh)[a * m.H + b] = (*jsd_hh)[b * m.H + a] = value;
    }
  }
  return Status::Ok();
}

Status js_divergence(const TensorView& a, const TensorView& b, std::vector<double>* per_row, double* mean) {
  if (a.shape != b.shape) {
    return Status(StatusCode::kShapeMismatch, "js_divergence: the two maps must have the same shape");
  }
  if (a.shape.empty()) return Status(StatusCode::kShapeMismatch, "js_divergence: expected maps of shape (..., L, S), got a scalar");
  const int64_t S = a.shape.back();
  double numel = 1;
  for (int64_t d : a.shape) {
    if (d <= 0) return Status(StatusCode::kShapeMismatch, "js_divergence: every dimension must be at least 1");
    numel *= double(d);
  }
  if (numel != double(a.length) || numel != double(b.length)) {
    return Status(StatusCode::kLengthMismatch, "js_divergence: data has " + std::to_string(a.length) + " and " +
                                                   std::to_string(b.length) + " values but the shape needs " + count_str(numel));
  }
  if (a.data == nullptr || b.data == nullptr) return Status(StatusCode::kInvalidArgument, "js_divergence: data is missing");
  const int64_t rows = int64_t(numel) / S;
  per_row->assign(static_cast<size_t>(rows), 0.0);
  double total = 0;
  int64_t defined = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const float* p = a.data + r * S;
    const float* q = b.data + r * S;
    if (!row_defined(p, S) || !row_defined(q, S)) {
      (*per_row)[r] = std::nan("");
      continue;
    }
    (*per_row)[r] = row_js_divergence(p, q, S);
    total += (*per_row)[r];
    ++defined;
  }
  *mean = defined ? total / double(defined) : std::nan("");
  return Status::Ok();
}

Status check_maps_memory(const Shape& a, const char* a_name, const Shape* b) {
  const double cap = static_cast<double>(kDefaultMemoryCapBytes);
  const double a_count = double(std::max<int64_t>(checked_numel(a), 0));
  const double b_count = b ? double(std::max<int64_t>(checked_numel(*b), 0)) : 0;
  const bool a_fails = a_count * sizeof(float) > cap;
  if (!a_fails && (a_count + b_count) * sizeof(float) <= cap) return Status::Ok();
  // "weights: 10 values (40 bytes) would take the statistics' inputs past the memory cap of 16 bytes"
  const double count = a_fails ? a_count : b_count;
  return Status(StatusCode::kTooLarge, std::string(a_fails ? a_name : "b") + ": " + format_g17(count) + " values (" +
                                           format_g17(count * sizeof(float)) +
                                           " bytes) would take the statistics' inputs past the memory cap of " +
                                           format_g17(cap) + " bytes");
}

}  // namespace mha
