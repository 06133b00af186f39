#pragma once
// Test support shared by the attention module tests: one row of attention
// by loops in double precision (d2l's masked softmax, then the weighted sum
// of the values), the tolerance against it, and d2l's toy example.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <type_traits>
#include <utility>
#include <vector>

#include <dimtensor/dimtensor.hpp>

namespace test_support {

using dimtensor::index_t;

// Softmax over the scores s, those at index >= len masked first with -1e6
// as d2l's masked_softmax does.
inline std::vector<double> masked_softmax_row(std::vector<double> s, index_t len) {
  double m = -INFINITY;
  for (std::size_t k = 0; k < s.size(); ++k) {
    if (index_t(k) >= len) s[k] = -1e6;
    m = std::max(m, s[k]);
  }
  double sum = 0;
  for (auto& x : s) sum += (x = std::exp(x - m));
  for (auto& x : s) x /= sum;
  return s;
}

// One row of queries attended: the weights over the n_kv pairs (score(k)
// each, masked at index >= len) and their weighted sum of the n_value
// features of the values, value(k, j).
struct attention_row {
  std::vector<double> weights;
  std::vector<double> output;
};
template <class Score, class Value>
attention_row attend_row(index_t n_kv, index_t n_value, index_t len, Score const& score, Value const& value) {
  std::vector<double> s(static_cast<std::size_t>(n_kv));
  for (index_t k = 0; k < n_kv; ++k) s[std::size_t(k)] = score(k);
  attention_row r{masked_softmax_row(std::move(s), len), std::vector<double>(static_cast<std::size_t>(n_value), 0.0)};
  for (index_t j = 0; j < n_value; ++j)
    for (index_t k = 0; k < n_kv; ++k) r.output[std::size_t(j)] += r.weights[std::size_t(k)] * value(k, j);
  return r;
}

// Σ_k weights(b, q, k) · values(b, k, j) over the KV pairs, by loops.
template <class KV, class W, class V, class B, class Q, class J>
double weighted_value(W const& weights, V const& values, B b, Q q, J j) {
  double sum = 0;
  for (index_t k = 0; k < weights.template extent<KV>(); ++k)
    sum += double(weights(b, q, KV(k))) * double(values(b, KV(k), j));
  return sum;
}

// How far a module's output of element type T may be from the loops'.
template <class T>
double tolerance() {
  return std::is_same_v<T, float> ? 2e-5 : 1e-12;
}

// d2l's toy for an attention module (in eval mode here): keys all ones,
// values arange(40).reshape(1, 10, 4).repeat(2, 1, 1), valid_lens [2, 6].
// The keys being equal, so are the scores of a row: the weights are
// uniform over the valid pairs whatever the module's layers and the
// queries, and the outputs are [[2, 3, 4, 5]] and [[10, 11, 12, 13]].
template <class Batch, class Queries, class KVPairs, class ValueFeat, class Module, class Q, class K>
void check_book_toy(Module& attention, Q const& queries, K const& keys) {
  namespace dt = dimtensor;
  std::vector<float> v;
  for (int b = 0; b < 2; ++b)
    for (int i = 0; i < 40; ++i) v.push_back(float(i));
  auto const values = dt::from_buffer(v.data(), index_t(v.size()), Batch(2), KVPairs(10), ValueFeat(4));
  auto const valid_lens = dt::tensor<int, Batch>{2, 6};
  attention.eval();
  auto const out = attention(queries, keys, values, valid_lens);
  REQUIRE(out.extents() == std::array<index_t, 3>{2, 1, 4});
  for (index_t j = 0; j < 4; ++j) {
    CHECK(out(Batch(0), Queries(0), ValueFeat(j)) == Approx(2 + j).margin(1e-5));
    CHECK(out(Batch(1), Queries(0), ValueFeat(j)) == Approx(10 + j).margin(1e-5));
  }
  auto const& weights = attention.template attention_weights<Batch, Queries, KVPairs>();
  for (index_t k = 0; k < 10; ++k) {
    CHECK(weights(Batch(0), Queries(0), KVPairs(k)) == Approx(k < 2 ? 0.5 : 0.0).margin(1e-7));
    CHECK(weights(Batch(1), Queries(0), KVPairs(k)) == Approx(k < 6 ? 1.0 / 6 : 0.0).margin(1e-7));
  }
}

}  // namespace test_support
