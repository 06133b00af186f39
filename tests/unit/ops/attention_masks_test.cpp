// Tests of the masks of ops/masking.hpp in scaled_dot_product_attention
// and masked_softmax: key masks (left padding, any pattern, per query),
// additive masks broadcast by name, causal masking (with fewer queries than
// keys, as with a cache) and all of them with valid lengths.  The
// outputs against a reference written here with loops (the rule of
// ops/masking.hpp, nothing from the library's masking); the gradients of
// the fused kernels against autograd through the composed path
// (masked_softmax under the same masking); every path of the CPU kernels
// (BLAS, register tiles, chunks past 1,024 keys) and Thrust's generic
// kernels; extents that differ; rows whose every key is masked.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <dimtensor/dimtensor.hpp>
#if defined(DIMTENSOR_HAS_THRUST) && DIMTENSOR_HAS_THRUST
#include <dimtensor/backends/thrust.hpp>
#endif

namespace ops_attention_masks_test {

DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Heads);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(Feat);

namespace dt = dimtensor;
using dt::index_t;

template <class A, class B>
double max_diff(A const& a, B const& b) {
  auto const x = dt::to<dt::cpu>(dt::eval(a));
  auto const y = dt::to<dt::cpu>(dt::eval(b));
  return static_cast<double>(dt::max(dt::abs(x - y)).item());
}

/// The inputs of one case, on the CPU: q, k, v [Batch, Heads, Queries or
/// KVPairs, Feat], a key mask [Batch, KVPairs] (keep), an additive mask
/// [Heads, Queries, KVPairs] (add), lengths [Batch].
template <class T>
struct inputs {
  dt::tensor<T, Batch, Heads, Queries, Feat> q;
  dt::tensor<T, Batch, Heads, KVPairs, Feat> k, v;
  dt::tensor<T, Batch, Heads, Queries, Feat> g;
  dt::tensor<bool, Batch, KVPairs> keep;
  dt::tensor<T, Heads, Queries, KVPairs> add;
  dt::tensor<std::int64_t, Batch> lens;
};

/// Random inputs: batch entry 0 left-padded by @p pad keys, entry 1 with
/// every third key masked; the additive mask's entries random, some at
/// the lowest value (masked).
template <class T>
inputs<T> make_inputs(index_t b, index_t h, index_t nq, index_t nk, index_t d, index_t pad, std::uint64_t seed) {
  dt::generator gen(seed);
  inputs<T> in{dt::randn<T>(gen, Batch(b), Heads(h), Queries(nq), Feat(d)),
               dt::randn<T>(gen, Batch(b), Heads(h), KVPairs(nk), Feat(d)),
               dt::randn<T>(gen, Batch(b), Heads(h), KVPairs(nk), Feat(d)),
               dt::randn<T>(gen, Batch(b), Heads(h), Queries(nq), Feat(d)),
               dt::tensor<bool, Batch, KVPairs>(Batch(b), KVPairs(nk)),
               dt::randn<T>(gen, Heads(h), Queries(nq), KVPairs(nk)),
               dt::tensor<std::int64_t, Batch>(Batch(b))};
  for (index_t e = 0; e < b; ++e) {
    for (index_t j = 0; j < nk; ++j) in.keep.data()[e * nk + j] = e % 2 == 0 ? j >= pad : j % 3 != 1;
    in.lens.data()[e] = e % 2 == 0 ? nk : nk - 1;
  }
  for (index_t x = 0; x < h * nq * nk; x += 7) in.add.data()[x] = std::numeric_limits<T>::lowest();
  return in;
}

/// The rule of ops/masking.hpp with loops: each row's keys up to its
/// valid length (its causal limit within it); none: d2l's uniform weights
/// over every key; else the softmax of score / √d + additive over the kept
/// keys among them, or uniform weights over them when none is kept.
template <class T>
std::vector<double> reference(inputs<T> const& in, bool use_keep, bool use_add, bool use_lens, bool causal) {
  index_t const b = in.q.template extent<Batch>(), h = in.q.template extent<Heads>();
  index_t const nq = in.q.template extent<Queries>(), nk = in.k.template extent<KVPairs>();
  index_t const d = in.q.template extent<Feat>();
  std::vector<double> out(static_cast<std::size_t>(b * h * nq * d), 0.0);
  double const lowest_half = -static_cast<double>(std::numeric_limits<T>::max()) / 2;
  for (index_t e = 0; e < b; ++e) {
    for (index_t x = 0; x < h; ++x) {
      for (index_t i = 0; i < nq; ++i) {
        index_t len = use_lens ? in.lens.data()[e] : nk;
        if (causal) len = std::clamp<index_t>(i + nk - nq + 1, 0, len);
        std::vector<double> w(static_cast<std::size_t>(nk), 0.0);
        if (len == 0) {
          std::fill(w.begin(), w.end(), 1.0 / static_cast<double>(nk));
        } else {
          std::vector<bool> read(static_cast<std::size_t>(len), true);
          std::vector<double> s(static_cast<std::size_t>(len), 0.0);
          for (index_t j = 0; j < len; ++j) {
            double dot = 0;
            for (index_t f = 0; f < d; ++f) {
              dot += static_cast<double>(in.q.data()[((e * h + x) * nq + i) * d + f]) *
                     static_cast<double>(in.k.data()[((e * h + x) * nk + j) * d + f]);
            }
            s[j] = dot / std::sqrt(static_cast<double>(d));
            double const a = use_add ? static_cast<double>(in.add.data()[(x * nq + i) * nk + j]) : 0.0;
            if (a <= lowest_half) read[j] = false;
            s[j] += a;
            if (use_keep && !in.keep.data()[e * nk + j]) read[j] = false;
          }
          bool const any = std::find(read.begin(), read.end(), true) != read.end();
          double top = -std::numeric_limits<double>::infinity();
          for (index_t j = 0; j < len; ++j) {
            if (read[j]) top = std::max(top, s[j]);
          }
          double sum = 0;
          for (index_t j = 0; j < len; ++j) {
            w[j] = !any ? 1.0 : read[j] ? std::exp(s[j] - top) : 0.0;
            sum += w[j];
          }
          for (index_t j = 0; j < len; ++j) w[j] /= sum;
        }
        for (index_t j = 0; j < nk; ++j) {
          for (index_t f = 0; f < d; ++f) {
            out[((e * h + x) * nq + i) * d + f] += w[j] * static_cast<double>(in.v.data()[((e * h + x) * nk + j) * d + f]);
          }
        }
      }
    }
  }
  return out;
}

/// The attention output on backend @p B against the reference, and its
/// gradients against autograd through masked_softmax under the same masking.
template <class B, class T>
void check_case(inputs<T> const& in, bool use_keep, bool use_add, bool use_lens, bool causal, double tol,
                bool gradients = true) {
  auto const to_b = [](auto const& x) { return dt::to<B>(x); };
  auto mb = dt::causal<Queries>(dt::masking_of<KVPairs>(std::optional(to_b(in.lens))), causal);
  if (!use_lens) mb.lengths.reset();
  auto mbm = mb.key_mask(to_b(in.keep)).additive_mask(to_b(in.add));
  if (!use_keep) mbm.keep.reset();
  if (!use_add) mbm.additive.reset();
  auto q = to_b(in.q), k = to_b(in.k), v = to_b(in.v);
  auto const g = to_b(in.g);
  {
    dt::autograd::no_grad const no_grad;
    auto const ref = reference(in, use_keep, use_add, use_lens, causal);
    auto const worst = [&ref](auto const& out) {
      double w = 0;
      for (std::size_t x = 0; x < ref.size(); ++x) w = std::max(w, std::abs(static_cast<double>(out.data()[x]) - ref[x]));
      return w;
    };
    // The fused kernels, and the composed path (masked_softmax).
    CHECK(worst(dt::to<dt::cpu>(dt::scaled_dot_product_attention<Queries, KVPairs, Feat>(q, k, v, mbm))) <= tol);
    index_t const d = q.template extent<Feat>();
    auto const scores = dt::contract<Feat>(q, k) / static_cast<T>(std::sqrt(static_cast<double>(d)));
    CHECK(worst(dt::to<dt::cpu>(dt::contract<KVPairs>(dt::masked_softmax<KVPairs>(scores, mbm), v))) <= tol);
  }
  if (!gradients) return;
  q.requires_grad_();
  k.requires_grad_();
  v.requires_grad_();
  dt::sum(dt::scaled_dot_product_attention<Queries, KVPairs, Feat>(q, k, v, mbm) * g).backward();
  auto const gq = q.grad().clone(), gk = k.grad().clone(), gv = v.grad().clone();
  q.zero_grad();
  k.zero_grad();
  v.zero_grad();
  index_t const d = q.template extent<Feat>();
  auto const scores = dt::contract<Feat>(q, k) / static_cast<T>(std::sqrt(static_cast<double>(d)));
  dt::sum(dt::contract<KVPairs>(dt::masked_softmax<KVPairs>(scores, mbm), v) * g).backward();
  CHECK(max_diff(gq, q.grad()) <= tol);
  CHECK(max_diff(gk, k.grad()) <= tol);
  CHECK(max_diff(gv, v.grad()) <= tol);
}

/// Every combination of the four parts.
template <class B, class T>
void check_combinations(index_t nq, index_t nk, index_t d, double tol) {
  auto const in = make_inputs<T>(2, 2, nq, nk, d, 2, 17);
  for (int c = 1; c < 16; ++c) {
    bool const keep = c & 1, add = c & 2, lens = c & 4, causal = c & 8;
    INFO("key mask " << keep << ", additive " << add << ", lengths " << lens << ", causal " << causal);
    check_case<B>(in, keep, add, lens, causal, tol);
  }
}

TEST_CASE("attention masks: the CPU's kernels, every combination", "[ops][attention][masks]") {
  SECTION("float, register tiles") { check_combinations<dt::cpu, float>(5, 9, 16, 2e-5); }
  SECTION("float, BLAS path (features not whole vectors)") { check_combinations<dt::cpu, float>(5, 9, 6, 2e-5); }
  SECTION("double") { check_combinations<dt::cpu, double>(5, 9, 8, 1e-12); }
  SECTION("as many queries as keys") { check_combinations<dt::cpu, double>(6, 6, 4, 1e-12); }
  SECTION("more queries than keys: causal rows with no keys") { check_combinations<dt::cpu, double>(7, 4, 4, 1e-12); }
}

TEST_CASE("attention masks: the CPU's chunked path past 1,024 keys", "[ops][attention][masks]") {
  auto const in = make_inputs<float>(2, 1, 3, 1100, 16, 600, 23);  // entry 0: its first chunk all padding
  check_case<dt::cpu>(in, true, true, true, true, 2e-5, false);
  check_case<dt::cpu>(in, true, false, false, false, 2e-5, false);
}

#if defined(DIMTENSOR_HAS_THRUST) && DIMTENSOR_HAS_THRUST
TEST_CASE("attention masks: Thrust's generic kernels, every combination", "[ops][attention][masks]") {
  SECTION("float") { check_combinations<dt::thrust_cpp, float>(5, 9, 16, 2e-5); }
  SECTION("double") { check_combinations<dt::thrust_cpp, double>(5, 9, 8, 1e-12); }
  SECTION("more queries than keys") { check_combinations<dt::thrust_cpp, double>(7, 4, 4, 1e-12); }
}
#endif

TEST_CASE("attention masks: a row whose every key is masked gets uniform weights", "[ops][attention][masks]") {
  auto in = make_inputs<double>(1, 1, 2, 4, 4, 0, 5);
  for (index_t j = 0; j < 4; ++j) in.keep.data()[j] = false;
  auto const m = dt::masking_of<KVPairs>().key_mask(in.keep);
  auto const out = dt::scaled_dot_product_attention<Queries, KVPairs, Feat>(in.q, in.k, in.v, m);
  auto const mean = dt::mean<KVPairs>(in.v);
  for (index_t i = 0; i < 2; ++i) {
    for (index_t f = 0; f < 4; ++f) {
      CHECK(out(Batch(0), Heads(0), Queries(i), Feat(f)) == Approx(mean(Batch(0), Heads(0), Feat(f))).epsilon(1e-12));
    }
  }
  CHECK(std::isfinite(dt::sum(out).item()));
}

TEST_CASE("attention masks: a mask's extents must be the scores'", "[ops][attention][masks]") {
  auto const in = make_inputs<float>(2, 2, 3, 5, 4, 1, 3);
  dt::tensor<bool, Batch, KVPairs> const keep(Batch(2), KVPairs(4));
  auto const m = dt::masking_of<KVPairs>().key_mask(keep);
  auto const call = [&] { return dt::scaled_dot_product_attention<Queries, KVPairs, Feat>(in.q, in.k, in.v, m); };
  CHECK_THROWS_WITH(call(), Catch::Contains("key_mask") && Catch::Contains("KVPairs: 5 (scores) vs 4 (key_mask)"));
  dt::tensor<float, Heads, Queries, KVPairs> const add(Heads(2), Queries(4), KVPairs(5));
  auto const a = dt::masking_of<KVPairs>().additive_mask(add);
  auto const soft = [&] { return dt::masked_softmax<KVPairs>(dt::contract<Feat>(in.q, in.k), a); };
  CHECK_THROWS_WITH(soft(), Catch::Contains("additive_mask") && Catch::Contains("Queries: 3 (scores) vs 4 (additive_mask)"));
}

}  // namespace ops_attention_masks_test
