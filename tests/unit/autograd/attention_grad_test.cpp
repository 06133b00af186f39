// Gradients through the attention modules, end to end, against central
// finite differences in double on small sizes: additive attention,
// scaled dot-product attention, multi-head attention (the named form and
// d2l's forward_d2l), Nadaraya-Watson pooling (with a learned kernel
// width) — with respect to queries, keys, values and every parameter, with
// and without valid_lens, and with dropout active (its generator reseeded
// on every call, so that every call draws the same mask).
#include <catch2/catch.hpp>

#include <optional>
#include <type_traits>

#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/attention.hpp>
#include <dimtensor/nn/parameters.hpp>

#include "unit/support/gradcheck.hpp"

namespace attention_grad_test {

namespace dt = dimtensor;
using test_support::check_gradients;
using test_support::uniform;

DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(QueryFeat);
DIMTENSOR_DIM(KeyFeat);
DIMTENSOR_DIM(ValueFeat);
DIMTENSOR_DIM(Hidden);
DIMTENSOR_DIM(Feat);
DIMTENSOR_DIM(Train);
DIMTENSOR_DIM(Test);

using queries_t = dt::tensor<double, Batch, Queries, QueryFeat>;
using keys_t = dt::tensor<double, Batch, KVPairs, KeyFeat>;
using values_t = dt::tensor<double, Batch, KVPairs, ValueFeat>;
using lens_1d = dt::tensor<int, Batch>;
using lens_2d = dt::tensor<int, Batch, Queries>;

// A looser check than the default: a few more operations between the
// operands and the sum than in the single-op tests.
test_support::gradcheck_options options() {
  test_support::gradcheck_options o;
  o.atol = 1e-7;
  o.rtol = 1e-5;
  return o;
}

TEST_CASE("additive attention: gradients of queries, keys, values and W_k, W_q, w_v", "[autograd][attention]") {
  dt::generator gen(3);
  dt::nn::additive_attention<Queries, KVPairs, QueryFeat, KeyFeat, Hidden, double> m(KeyFeat(3), QueryFeat(2),
                                                                                      Hidden(4), 0.0, gen);
  auto q = uniform<queries_t>({2, 2, 2}, 1);
  auto k = uniform<keys_t>({2, 4, 3}, 2);
  auto v = uniform<values_t>({2, 4, 3}, 3);
  auto const run = [&](auto const&... lens) {
    check_gradients(
        options(),
        [&](auto const& qq, auto const& kk, auto const& vv, auto const&...) { return m(qq, kk, vv, lens...); }, q,
        k, v, m.W_k.weight, m.W_q.weight, m.w_v.weight);
  };
  SECTION("without valid_lens") { run(); }
  SECTION("valid_lens [Batch]") { run(lens_1d{2, 3}); }
  SECTION("valid_lens [Batch, Queries]") { run(lens_2d{{1, 4}, {2, 3}}); }
  SECTION("valid_lens as std::optional") { run(std::optional<lens_1d>(lens_1d{4, 1})); }
  SECTION("the kept weights are detached") {
    auto const out = m(q, k, v, lens_1d{2, 3});
    CHECK(out.requires_grad());
    CHECK_FALSE(m.attention_weights<Batch, Queries, KVPairs>().requires_grad());
  }
  SECTION("dropout in training mode") {
    dt::nn::additive_attention<Queries, KVPairs, QueryFeat, KeyFeat, Hidden, double> d(KeyFeat(3), QueryFeat(2),
                                                                                        Hidden(4), 0.4, gen);
    check_gradients(
        options(),
        [&](auto const& qq, auto const& kk, auto const& vv, auto const&...) {
          d.dropout.gen().seed(42);
          return d(qq, kk, vv, lens_1d{3, 4});
        },
        q, k, v, d.W_k.weight, d.W_q.weight, d.w_v.weight);
  }
}

TEST_CASE("dot-product attention: gradients of queries, keys and values", "[autograd][attention]") {
  dt::nn::dot_product_attention<Queries, KVPairs, Feat, double> m;
  auto q = uniform<dt::tensor<double, Batch, Queries, Feat>>({2, 3, 4}, 4);
  auto k = uniform<dt::tensor<double, Batch, KVPairs, Feat>>({2, 5, 4}, 5);
  auto v = uniform<values_t>({2, 5, 2}, 6);
  auto const f = [&](auto const&... lens) {
    return [&m, lens...](auto const& qq, auto const& kk, auto const& vv) { return m(qq, kk, vv, lens...); };
  };
  check_gradients(options(), f(), q, k, v);
  check_gradients(options(), f(lens_1d{2, 5}), q, k, v);
  check_gradients(options(), f(lens_2d{{1, 2, 5}, {3, 4, 2}}), q, k, v);
  SECTION("dropout in training mode") {
    dt::nn::dot_product_attention<Queries, KVPairs, Feat, double> d(0.5);
    check_gradients(
        options(),
        [&](auto const& qq, auto const& kk, auto const& vv) {
          d.dropout.gen().seed(7);
          return d(qq, kk, vv, lens_1d{4, 3});
        },
        q, k, v);
  }
}

TEST_CASE("multi-head attention: gradients in both forms, every parameter", "[autograd][attention]") {
  auto const bias = GENERATE(false, true);
  dt::generator gen(9);
  dt::nn::multi_head_attention<Queries, KVPairs, Hidden, QueryFeat, KeyFeat, ValueFeat, double> m(
      KeyFeat(3), QueryFeat(2), ValueFeat(3), Hidden(4), dt::nn::Heads(2), 0.0, bias, gen);
  auto q = uniform<queries_t>({2, 2, 2}, 7);
  auto k = uniform<keys_t>({2, 3, 3}, 8);
  auto v = uniform<values_t>({2, 3, 3}, 9);
  auto const check = [&](auto const& forward) {
    if (bias) {
      check_gradients(options(), forward, q, k, v, m.W_q.weight, m.W_k.weight, m.W_v.weight, m.W_o.weight,
                      m.W_q.bias, m.W_k.bias, m.W_v.bias, m.W_o.bias);
    } else {
      check_gradients(options(), forward, q, k, v, m.W_q.weight, m.W_k.weight, m.W_v.weight, m.W_o.weight);
    }
  };
  auto const named = [&](auto const&... lens) {
    return [&m, lens...](auto const& qq, auto const& kk, auto const& vv, auto const&...) {
      return m(qq, kk, vv, lens...);
    };
  };
  auto const d2l = [&](auto const&... lens) {
    return [&m, lens...](auto const& qq, auto const& kk, auto const& vv, auto const&...) {
      return m.forward_d2l(qq, kk, vv, lens...);
    };
  };
  SECTION("named form") {
    check(named());
    check(named(lens_1d{2, 3}));
    check(named(lens_2d{{1, 3}, {2, 1}}));
  }
  SECTION("d2l's form") {
    check(d2l());
    check(d2l(lens_1d{2, 3}));
    check(d2l(lens_2d{{1, 3}, {2, 1}}));
  }
  SECTION("both forms give the same gradients") {
    lens_1d const lens{3, 2};
    auto const g = uniform<dt::tensor<double, Batch, Queries, Hidden>>({2, 2, 4}, 10);
    q.requires_grad_();
    m(q, k, v, lens).backward(g);
    auto const named_q = q.grad().clone();
    auto const named_w = m.W_q.weight.grad().clone();
    q.zero_grad();
    dt::nn::zero_grad(m);
    m.forward_d2l(q, k, v, lens).backward(g);
    for (dt::index_t i = 0; i < q.size(); ++i) CHECK(q.grad().data()[i] == Approx(named_q.data()[i]).margin(1e-14));
    for (dt::index_t i = 0; i < named_w.size(); ++i) {
      CHECK(m.W_q.weight.grad().data()[i] == Approx(named_w.data()[i]).margin(1e-14));
    }
  }
}

TEST_CASE("Nadaraya-Watson: gradients of queries, keys, values and a learned width", "[autograd][attention]") {
  auto x = uniform<dt::tensor<double, Test>>({3}, 11, 0.0, 2.0);
  auto keys = uniform<dt::tensor<double, Train>>({5}, 12, 0.0, 2.0);
  auto values = uniform<dt::tensor<double, Train>>({5}, 13);
  check_gradients(
      options(), [](auto const& a, auto const& b, auto const& c) { return dt::nn::nadaraya_watson<Train>(a, b, c); },
      x, keys, values);
  check_gradients(
      options(),
      [](auto const& a, auto const& b, auto const& c) { return dt::nn::nadaraya_watson<Train>(a, b, c, 1.7); }, x,
      keys, values);
  SECTION("keys and values [Queries, KV] and a rank-0 width (NWKernelRegression)") {
    auto row_keys = uniform<dt::tensor<double, Test, Train>>({3, 4}, 14, 0.0, 2.0);
    auto row_values = uniform<dt::tensor<double, Test, Train>>({3, 4}, 15);
    auto w = uniform<dt::tensor<double>>({}, 16, 0.5, 1.5);
    check_gradients(
        options(),
        [](auto const& a, auto const& b, auto const& c, auto const& ww) {
          return dt::nn::nadaraya_watson<Train>(a, b, c, ww);
        },
        x, row_keys, row_values, w);
  }
}

}  // namespace attention_grad_test
