// Backend conformance, tensors: the operations as a program calls them, on
// tensors of every backend (basic_tensor<Backend, T, Dims...>, moved there
// with to<Backend>): a fused elementwise expression with broadcasting and a
// strided operand, softmax and log_softmax along the last and a middle dim,
// masked_softmax (and its check of the valid lengths), bmm and contract,
// sum, mean, max and argmax along a dim, concat, index_select (and its
// index check), transpose + contiguous, and gradients through backward():
// softmax(x * w) against hand-derived gradients, and a graph of softmax,
// index_select, concat, contract, max, mean and masked_softmax against
// finite differences, both also against the CPU backend's gradients.
// Expected values come from plain loops over the host inputs.
#include "unit/backends/conformance/conformance.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

#include <dimtensor/dimtensor.hpp>

#include "unit/support/gradcheck.hpp"
#include "unit/support/softmax_reference.hpp"

namespace tensor_conformance {

namespace dt = dimtensor;
using conformance::first_difference;
using dt::index_t;

DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(Hidden);
DIMTENSOR_DIM(Out);
DIMTENSOR_DIM(Steps);
DIMTENSOR_DIM(Embed);
DIMTENSOR_DIM(Vocab);

/// The elements of @p x (a tensor of any backend and layout) in row-major
/// order, read on the host.
template <class X>
std::vector<double> elements(X const& x) {
  dt::autograd::no_grad const quiet;
  auto const h = dt::to<dt::cpu>(x).contiguous();
  std::vector<double> v(static_cast<std::size_t>(h.size()));
  for (index_t i = 0; i < h.size(); ++i) v[static_cast<std::size_t>(i)] = static_cast<double>(h.data()[i]);
  return v;
}

TEMPLATE_TEST_CASE("conformance: tensors, fused elementwise expressions with broadcasting",
                   "[backends][conformance][tensor]", CONFORMANCE_TEST_BACKENDS) {
  using B = TestType;
  auto& gen = dt::manual_seed(11);
  auto const x = dt::rand<float>(gen, Batch(3), Queries(4), Hidden(5));
  auto const bias = dt::rand<float>(gen, Hidden(5));
  auto const column = dt::rand<float>(gen, Queries(4), Hidden::fixed<1>{});
  auto const xb = dt::to<B>(x);
  STATIC_REQUIRE(std::is_same_v<typename std::remove_cvref_t<decltype(xb)>::backend, B>);

  // The bias broadcasts over Batch and Queries, the column over Batch and Hidden.
  dt::basic_tensor<B, float, Batch, Queries, Hidden> const y =
      dt::tanh(xb * 2.0f + dt::to<B>(bias)) - dt::exp(-xb) * dt::to<B>(column);
  std::vector<double> want;
  for (index_t b = 0; b < 3; ++b) {
    for (index_t q = 0; q < 4; ++q) {
      for (index_t h = 0; h < 5; ++h) {
        double const v = x(Batch(b), Queries(q), Hidden(h));
        want.push_back(std::tanh(v * 2 + bias(Hidden(h))) - std::exp(-v) * column(Queries(q), Hidden(0)));
      }
    }
  }
  CHECK(first_difference(elements(y), want, 1e-6) == "");

  // A transposed (strided) operand, read row by row.
  dt::basic_tensor<B, float, Batch, Hidden, Queries> const t = dt::transpose<Queries, Hidden>(xb) * 3.0f + 1.0f;
  want.clear();
  for (index_t b = 0; b < 3; ++b) {
    for (index_t h = 0; h < 5; ++h) {
      for (index_t q = 0; q < 4; ++q) want.push_back(x(Batch(b), Queries(q), Hidden(h)) * 3.0f + 1.0f);
    }
  }
  CHECK(first_difference(elements(t), want) == "");

  // Integers, exactly.
  dt::basic_tensor<B, std::int64_t, Batch, Hidden> const i{{1, 2, 3}, {4, 5, 6}};
  dt::basic_tensor<B, std::int64_t, Hidden> const j{10, 20, 30};
  dt::basic_tensor<B, std::int64_t, Batch, Hidden> const k = i * 3 - j;
  CHECK(first_difference(elements(k), std::vector<double>{-7, -14, -21, 2, -5, -12}) == "");
}

TEMPLATE_TEST_CASE("conformance: tensors, cast to an integer type checks every element on the backend",
                   "[backends][conformance][tensor]", CONFORMANCE_TEST_BACKENDS) {
  using B = TestType;
  dt::basic_tensor<B, float, Batch, Hidden> const x{{2.5f, -3.5f}, {7.9f, std::nanf("")}};
  REQUIRE_THROWS_WITH(dt::cast<std::int64_t>(x),
                      Catch::StartsWith("cast<int64>: element 3 (row-major) of [Batch=2, Hidden=2]: nan"));
  // A strided view is read in its own order.
  REQUIRE_THROWS_WITH(dt::cast<std::int32_t>(dt::transpose<Batch, Hidden>(x)),
                      Catch::StartsWith("cast<int32>: element 3 (row-major) of [Hidden=2, Batch=2]: nan"));
  auto const fine = dt::eval(dt::cast<std::int32_t>(dt::slice<Batch>(x, 0, 1)));  // toward zero
  CHECK(first_difference(elements(fine), std::vector<double>{2, -3}) == "");
}

TEMPLATE_TEST_CASE("conformance: tensors, softmax and log_softmax along the last and a middle dim",
                   "[backends][conformance][tensor]", CONFORMANCE_TEST_BACKENDS) {
  using B = TestType;
  auto& gen = dt::manual_seed(12);
  auto const x = dt::uniform<double>(gen, -6, 6, Batch(2), Queries(5), Hidden(19));
  auto const xb = dt::to<B>(x);
  auto const all = [](index_t, index_t) { return index_t{1000}; };
  CHECK(first_difference(elements(dt::softmax<Hidden>(xb)), test_support::softmax_reference(x, 2, false, all),
                         1e-12) == "");
  CHECK(first_difference(elements(dt::softmax<Queries>(xb)), test_support::softmax_reference(x, 1, false, all),
                         1e-12) == "");
  CHECK(first_difference(elements(dt::log_softmax<Queries>(xb)), test_support::softmax_reference(x, 1, true, all),
                         1e-12) == "");
  auto const xf = dt::uniform<float>(gen, -6, 6, Batch(3), Queries(40), Hidden(2));
  CHECK(first_difference(elements(dt::softmax<Queries>(dt::to<B>(xf))),
                         test_support::softmax_reference(xf, 1, false, all), 1e-6) == "");
}

TEMPLATE_TEST_CASE("conformance: tensors, masked_softmax and its check of the valid lengths",
                   "[backends][conformance][tensor]", CONFORMANCE_TEST_BACKENDS) {
  using B = TestType;
  auto& gen = dt::manual_seed(13);
  auto const scores = dt::uniform<float>(gen, -3, 3, Batch(2), Queries(3), KVPairs(6));
  auto const sb = dt::to<B>(scores);

  dt::tensor<std::int64_t, Batch> const lens{2, 6};
  CHECK(first_difference(elements(dt::masked_softmax<KVPairs>(sb, dt::to<B>(lens))),
                         test_support::softmax_reference(scores, 2, false,
                                                         [&](index_t b, index_t) { return lens(Batch(b)); }),
                         1e-6) == "");
  dt::tensor<std::int32_t, Batch, Queries> const lens2{{0, 1, 6}, {3, 3, 5}};
  CHECK(first_difference(elements(dt::masked_softmax<KVPairs>(sb, dt::to<B>(lens2))),
                         test_support::softmax_reference(
                             scores, 2, false, [&](index_t b, index_t q) { return lens2(Batch(b), Queries(q)); }),
                         1e-6) == "");

  dt::tensor<std::int64_t, Batch> const too_long{2, 7};
  CHECK_THROWS_AS(dt::masked_softmax<KVPairs>(sb, dt::to<B>(too_long)), dt::value_error);
  dt::tensor<std::int32_t, Batch, Queries> const negative{{0, 1, 6}, {3, -1, 5}};
  CHECK_THROWS_WITH(dt::masked_softmax<KVPairs>(sb, dt::to<B>(negative)),
                    Catch::Contains("valid length -1 at valid_lens[Batch=1, Queries=1]"));
}

TEMPLATE_TEST_CASE("conformance: tensors, bmm and contract", "[backends][conformance][tensor]",
                   CONFORMANCE_TEST_BACKENDS) {
  using B = TestType;
  auto& gen = dt::manual_seed(14);
  auto const q = dt::uniform<float>(gen, -1, 1, Batch(2), Queries(3), Hidden(4));
  auto const k = dt::uniform<float>(gen, -1, 1, Batch(2), KVPairs(5), Hidden(4));
  auto const w = dt::uniform<float>(gen, -1, 1, Out(3), Hidden(4));
  auto const qb = dt::to<B>(q);
  auto const kb = dt::to<B>(k);

  std::vector<double> scores;
  for (index_t b = 0; b < 2; ++b) {
    for (index_t i = 0; i < 3; ++i) {
      for (index_t j = 0; j < 5; ++j) {
        double s = 0;
        for (index_t h = 0; h < 4; ++h) {
          s += double{q(Batch(b), Queries(i), Hidden(h))} * k(Batch(b), KVPairs(j), Hidden(h));
        }
        scores.push_back(s);
      }
    }
  }
  CHECK(first_difference(elements(dt::bmm(qb, dt::transpose<KVPairs, Hidden>(kb))), scores, 1e-6) == "");
  CHECK(first_difference(elements(dt::contract<Hidden>(qb, kb)), scores, 1e-6) == "");

  // A weight without batch dims applies to every batch element.
  std::vector<double> projected;
  for (index_t b = 0; b < 2; ++b) {
    for (index_t i = 0; i < 3; ++i) {
      for (index_t o = 0; o < 3; ++o) {
        double s = 0;
        for (index_t h = 0; h < 4; ++h) s += double{q(Batch(b), Queries(i), Hidden(h))} * w(Out(o), Hidden(h));
        projected.push_back(s);
      }
    }
  }
  CHECK(first_difference(elements(dt::contract<Hidden>(qb, dt::to<B>(w))), projected, 1e-6) == "");

  // Integers go through the reference kernel.
  dt::basic_tensor<B, std::int64_t, Batch, Queries, Hidden> const qi{{{1, 2}, {3, 4}}};
  dt::basic_tensor<B, std::int64_t, Batch, Hidden, KVPairs> const ki{{{5, 6, 7}, {8, 9, 10}}};
  CHECK(first_difference(elements(dt::bmm(qi, ki)), std::vector<double>{21, 24, 27, 47, 54, 61}) == "");
}

TEMPLATE_TEST_CASE("conformance: tensors, sum, mean, max and argmax along a dim", "[backends][conformance][tensor]",
                   CONFORMANCE_TEST_BACKENDS) {
  using B = TestType;
  auto& gen = dt::manual_seed(15);
  auto const x = dt::uniform<float>(gen, -5, 5, Batch(3), Queries(40), Hidden(5));
  auto const xb = dt::to<B>(x);
  std::vector<double> sums, maxima, means, argmaxes;
  double total = 0;
  for (index_t b = 0; b < 3; ++b) {
    for (index_t h = 0; h < 5; ++h) {
      double s = 0;
      double m = -INFINITY;
      for (index_t q = 0; q < 40; ++q) {
        s += x(Batch(b), Queries(q), Hidden(h));
        m = std::max(m, double{x(Batch(b), Queries(q), Hidden(h))});
      }
      sums.push_back(s);
      maxima.push_back(m);
      total += s;
    }
    for (index_t q = 0; q < 40; ++q) {
      double s = 0;
      index_t best = 0;
      for (index_t h = 0; h < 5; ++h) {
        s += x(Batch(b), Queries(q), Hidden(h));
        if (x(Batch(b), Queries(q), Hidden(h)) > x(Batch(b), Queries(q), Hidden(best))) best = h;
      }
      means.push_back(s / 5);
      argmaxes.push_back(static_cast<double>(best));
    }
  }
  CHECK(first_difference(elements(dt::sum<Queries>(xb)), sums, 1e-6) == "");
  CHECK(first_difference(elements(dt::mean<Hidden>(xb)), means, 1e-6) == "");
  CHECK(first_difference(elements(dt::max<Queries>(xb)), maxima) == "");
  CHECK(first_difference(elements(dt::argmax<Hidden>(xb)), argmaxes) == "");
  CHECK(dt::sum(xb).item() == Approx(total).epsilon(1e-6));

  // Integer sums are int64.
  dt::basic_tensor<B, std::int32_t, Batch, Hidden> const i{{2000000000, 2000000000}, {-7, 3}};
  auto const si = dt::sum<Hidden>(i);
  STATIC_REQUIRE(std::is_same_v<typename std::remove_cvref_t<decltype(si)>::value_type, std::int64_t>);
  CHECK(first_difference(elements(si), std::vector<double>{4000000000.0, -4}) == "");
}

TEMPLATE_TEST_CASE("conformance: tensors, concat, index_select, transpose + contiguous",
                   "[backends][conformance][tensor]", CONFORMANCE_TEST_BACKENDS) {
  using B = TestType;
  auto& gen = dt::manual_seed(16);
  auto const a = dt::uniform<double>(gen, -1, 1, Batch(2), Steps(2), Embed(3));
  auto const c = dt::uniform<double>(gen, -1, 1, Batch(2), Steps(3), Embed(3));
  auto const ab = dt::to<B>(a);

  std::vector<double> joined;
  for (index_t b = 0; b < 2; ++b) {
    for (index_t s = 0; s < 5; ++s) {
      for (index_t e = 0; e < 3; ++e) {
        joined.push_back(s < 2 ? a(Batch(b), Steps(s), Embed(e)) : c(Batch(b), Steps(s - 2), Embed(e)));
      }
    }
  }
  CHECK(first_difference(elements(dt::concat<Steps>(ab, dt::to<B>(c))), joined) == "");

  auto const weight = dt::uniform<double>(gen, -1, 1, Vocab(5), Embed(3));
  dt::tensor<std::int64_t, Batch, Steps> const tokens{{4, 0, 2}, {1, 1, 3}};
  std::vector<double> picked;
  for (index_t b = 0; b < 2; ++b) {
    for (index_t s = 0; s < 3; ++s) {
      for (index_t e = 0; e < 3; ++e) picked.push_back(weight(Vocab(tokens(Batch(b), Steps(s))), Embed(e)));
    }
  }
  auto const wb = dt::to<B>(weight);
  CHECK(first_difference(elements(dt::index_select<Vocab>(wb, dt::to<B>(tokens))), picked) == "");
  dt::tensor<std::int32_t, Steps> const too_big{0, 5};
  CHECK_THROWS_AS(dt::index_select<Vocab>(wb, dt::to<B>(too_big)), dt::value_error);
  dt::tensor<std::int64_t, Steps> const negative{-1};
  CHECK_THROWS_AS(dt::index_select<Vocab>(wb, dt::to<B>(negative)), dt::value_error);

  auto const t = dt::transpose<Batch, Embed>(ab);
  CHECK_FALSE(t.is_contiguous());
  auto const tc = t.contiguous();
  CHECK(tc.is_contiguous());
  std::vector<double> transposed;
  for (index_t e = 0; e < 3; ++e) {
    for (index_t s = 0; s < 2; ++s) {
      for (index_t b = 0; b < 2; ++b) transposed.push_back(a(Batch(b), Steps(s), Embed(e)));
    }
  }
  CHECK(first_difference(elements(tc), transposed) == "");
}

namespace {

/// The gradients of sum(softmax<Hidden>(x * w) * r) on backend B, for x, w
/// and r drawn from one seed (fresh tensors each call).
template <class B>
std::vector<std::vector<double>> softmax_gradients() {
  auto& gen = dt::manual_seed(17);
  auto x = dt::to<B>(dt::uniform<double>(gen, -2, 2, Batch(2), Hidden(4)));
  auto w = dt::to<B>(dt::uniform<double>(gen, -2, 2, Hidden(4)));
  auto const r = dt::to<B>(dt::uniform<double>(gen, -1, 1, Batch(2), Hidden(4)));
  x.requires_grad_();
  w.requires_grad_();
  auto const loss = dt::sum(dt::softmax<Hidden>(x * w) * r);
  loss.backward();
  return {elements(x.grad()), elements(w.grad())};
}

/// The gradients of a graph through softmax, index_select (a repeated
/// index), concat, contract, max, mean and masked_softmax on backend B,
/// checked against central finite differences on B.
template <class B>
std::vector<std::vector<double>> graph_gradients() {
  auto& gen = dt::manual_seed(18);
  auto x = dt::to<B>(dt::uniform<double>(gen, -1, 1, Batch(3), Hidden(4)));
  auto w = dt::to<B>(dt::uniform<double>(gen, -1, 1, Hidden(4)));
  auto e = dt::to<B>(dt::uniform<double>(gen, -1, 1, Vocab(3), Hidden(4)));
  auto const m = dt::to<B>(dt::uniform<double>(gen, -1, 1, Out(2), Hidden(8)));
  auto const tokens = dt::to<B>(dt::tensor<std::int64_t, Batch>{2, 0, 2});
  auto const lens = dt::to<B>(dt::tensor<std::int64_t, Batch>{1, 2, 4});
  auto const f = [&](auto const& x_, auto const& w_, auto const& e_) {
    auto const h = dt::concat<Hidden>(dt::softmax<Hidden>(x_ * w_), dt::index_select<Vocab>(e_, tokens));
    return dt::contract<Hidden>(h * dt::max<Hidden>(h, dt::keep_dim) - dt::mean<Hidden>(h, dt::keep_dim), m);
  };
  test_support::check_gradients(f, x, w, e);
  std::vector<std::vector<double>> out = {elements(x.grad()), elements(w.grad()), elements(e.grad())};

  auto s = dt::to<B>(dt::uniform<double>(gen, -1, 1, Batch(3), Hidden(4)));
  test_support::check_gradients([&](auto const& s_) { return dt::masked_softmax<Hidden>(s_, lens); }, s);
  out.push_back(elements(s.grad()));
  return out;
}

}  // namespace

TEMPLATE_TEST_CASE("conformance: tensors, gradients through backward()", "[backends][conformance][tensor]",
                   CONFORMANCE_TEST_BACKENDS) {
  using B = TestType;

  SECTION("softmax(x * w): hand-derived gradients, and the CPU backend's") {
    auto const got = softmax_gradients<B>();
    // z = x w, s = softmax(z) along Hidden, L = Σ s r:
    // dL/dz = s (r - Σ_h s r), dL/dx = dL/dz · w, dL/dw = Σ_b dL/dz · x.
    auto& gen = dt::manual_seed(17);
    auto const x = dt::uniform<double>(gen, -2, 2, Batch(2), Hidden(4));
    auto const w = dt::uniform<double>(gen, -2, 2, Hidden(4));
    auto const r = dt::uniform<double>(gen, -1, 1, Batch(2), Hidden(4));
    std::vector<double> dx, dw(4, 0.0);
    for (index_t b = 0; b < 2; ++b) {
      double m = -INFINITY;
      for (index_t h = 0; h < 4; ++h) m = std::max(m, x(Batch(b), Hidden(h)) * w(Hidden(h)));
      std::vector<double> s(4);
      double total = 0;
      for (index_t h = 0; h < 4; ++h) {
        s[static_cast<std::size_t>(h)] = std::exp(x(Batch(b), Hidden(h)) * w(Hidden(h)) - m);
        total += s[static_cast<std::size_t>(h)];
      }
      double sr = 0;
      for (index_t h = 0; h < 4; ++h) {
        s[static_cast<std::size_t>(h)] /= total;
        sr += s[static_cast<std::size_t>(h)] * r(Batch(b), Hidden(h));
      }
      for (index_t h = 0; h < 4; ++h) {
        double const dz = s[static_cast<std::size_t>(h)] * (r(Batch(b), Hidden(h)) - sr);
        dx.push_back(dz * w(Hidden(h)));
        dw[static_cast<std::size_t>(h)] += dz * x(Batch(b), Hidden(h));
      }
    }
    CHECK(first_difference(got[0], dx, 1e-12) == "");
    CHECK(first_difference(got[1], dw, 1e-12) == "");
    auto const on_cpu = softmax_gradients<dt::cpu>();
    CHECK(first_difference(got[0], on_cpu[0], 1e-12) == "");
    CHECK(first_difference(got[1], on_cpu[1], 1e-12) == "");
  }

  SECTION("softmax, index_select, concat, contract, max, mean, masked_softmax: finite differences, and the CPU "
          "backend's") {
    auto const got = graph_gradients<B>();
    auto const on_cpu = graph_gradients<dt::cpu>();
    REQUIRE(got.size() == on_cpu.size());
    for (std::size_t k = 0; k < got.size(); ++k) {
      INFO("operand " << k);
      CHECK(first_difference(got[k], on_cpu[k], 1e-12) == "");
    }
  }
}

}  // namespace tensor_conformance
