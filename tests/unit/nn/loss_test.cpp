#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/loss.hpp>

#include "unit/support/gradcheck.hpp"

namespace dt = dimtensor;
namespace nn = dimtensor::nn;

namespace loss_test {

DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Steps);
DIMTENSOR_DIM(Vocab);
DIMTENSOR_DIM(Class);

// -log softmax(row)[label], in double, by the definition.
double naive_ce(std::vector<double> const& row, std::int64_t label) {
  double m = row[0];
  for (double v : row) m = std::max(m, v);
  double s = 0;
  for (double v : row) s += std::exp(v - m);
  return -(row[static_cast<std::size_t>(label)] - m - std::log(s));
}

TEST_CASE("mse_loss: the squared error, reduced", "[nn][loss]") {
  dt::tensor<float, Batch, Steps> const pred{{1, 2, 3}, {4, 5, 6}};
  dt::tensor<float, Batch, Steps> const target{{1, 0, 5}, {4, 8, 6.5}};
  auto const none = nn::mse_loss(pred, target, nn::reduction::none);
  static_assert(std::is_same_v<std::remove_cvref_t<decltype(none)>, dt::tensor<float, Batch, Steps>>);
  CHECK(dt::equal(none, dt::tensor<float, Batch, Steps>{{0, 4, 4}, {0, 9, 0.25}}));
  auto const mean = nn::mse_loss(pred, target);
  static_assert(std::is_same_v<std::remove_cvref_t<decltype(mean)>, dt::tensor<float>>);
  CHECK(mean.item() == Approx(17.25 / 6));
  CHECK(nn::mse_loss(pred, target, nn::reduction::sum).item() == Approx(17.25));
  SECTION("lazy operands") { CHECK(nn::mse_loss(pred * 2.0f, target * 2.0f).item() == Approx(4 * 17.25 / 6)); }
  SECTION("dynamic extents that differ") {
    dt::tensor<float, Batch, Steps> const other(Batch(2), Steps(4));
    REQUIRE_THROWS_AS(nn::mse_loss(pred, other), dt::shape_error);
    REQUIRE_THROWS_WITH(nn::mse_loss(pred, other), Catch::StartsWith("mse_loss: target: extent mismatch for "
                                                                     "dimension Steps: ") &&
                                                       Catch::Contains("3") && Catch::Contains("4"));
  }
}

TEST_CASE("mse_loss: gradients for the prediction and the target", "[nn][loss][autograd]") {
  using m_t = dt::tensor<double, Batch, Steps>;
  auto p = test_support::uniform<m_t>({2, 3}, 1);
  auto t = test_support::uniform<m_t>({2, 3}, 2);
  SECTION("none") {
    test_support::check_gradients([](auto const& a, auto const& b) { return nn::mse_loss(a, b, nn::reduction::none); },
                                  p, t);
  }
  SECTION("mean") { test_support::check_gradients([](auto const& a, auto const& b) { return nn::mse_loss(a, b); }, p, t); }
  SECTION("sum") {
    test_support::check_gradients([](auto const& a, auto const& b) { return nn::mse_loss(a, b, nn::reduction::sum); },
                                  p, t);
  }
  SECTION("the gradient has the prediction's type, and it is 2 (p - t) / n") {
    p.requires_grad_();
    nn::mse_loss(p, t).backward();
    static_assert(std::is_same_v<decltype(p.grad()), m_t>);
    for (dt::index_t i = 0; i < 6; ++i) {
      CHECK(p.grad().data()[i] == Approx(2 * (p.data()[i] - t.data()[i]) / 6));
    }
  }
}

TEST_CASE("cross_entropy: -log softmax at the label, class dim last", "[nn][loss]") {
  dt::tensor<float, Batch, Class> const logits{{1, 2, 3, 0.5f}, {-1, 4, 0, 2}, {0, 0, 0, 0}};
  dt::tensor<std::int64_t, Batch> const labels{2, 0, 3};
  std::vector<std::vector<double>> const rows{{1, 2, 3, 0.5}, {-1, 4, 0, 2}, {0, 0, 0, 0}};
  auto const none = nn::cross_entropy<Class>(logits, labels, nn::reduction::none);
  static_assert(std::is_same_v<std::remove_cvref_t<decltype(none)>, dt::tensor<float, Batch>>);
  double total = 0;
  for (dt::index_t b = 0; b < 3; ++b) {
    double const want = naive_ce(rows[b], labels(Batch(b)));
    total += want;
    CHECK(none(Batch(b)) == Approx(want).epsilon(1e-6));
  }
  CHECK(none(Batch(2)) == Approx(std::log(4.0)));
  CHECK(nn::cross_entropy<Class>(logits, labels).item() == Approx(total / 3).epsilon(1e-6));
  CHECK(nn::cross_entropy<Class>(logits, labels, nn::reduction::sum).item() == Approx(total).epsilon(1e-6));
  SECTION("int32 labels give the same") {
    dt::tensor<std::int32_t, Batch> const small{2, 0, 3};
    CHECK(dt::equal(nn::cross_entropy<Class>(logits, small, nn::reduction::none), none));
  }
}

TEST_CASE("cross_entropy: the class dim in the middle", "[nn][loss]") {
  // logits [Batch=2, Class=3, Steps=2]; labels [Batch, Steps]
  dt::tensor<float, Batch, Class, Steps> const logits{{{1, 0}, {2, 5}, {0.5f, -1}}, {{3, 3}, {-2, 1}, {0, 2}}};
  dt::tensor<std::int64_t, Batch, Steps> const labels{{1, 2}, {0, 1}};
  auto const none = nn::cross_entropy<Class>(logits, labels, nn::reduction::none);
  for (dt::index_t b = 0; b < 2; ++b) {
    for (dt::index_t s = 0; s < 2; ++s) {
      std::vector<double> row;
      for (dt::index_t c = 0; c < 3; ++c) row.push_back(logits(Batch(b), Class(c), Steps(s)));
      CHECK(none(Batch(b), Steps(s)) == Approx(naive_ce(row, labels(Batch(b), Steps(s)))).epsilon(1e-6));
    }
  }
}

TEST_CASE("cross_entropy: large logits neither overflow nor lose digits", "[nn][loss]") {
  dt::tensor<float, Batch, Class> const logits{{1000, -1000, 999, 0}, {-1e30f, 0, 1e30f, 0}};
  dt::tensor<std::int64_t, Batch> const labels{2, 2};
  auto const none = nn::cross_entropy<Class>(logits, labels, nn::reduction::none);
  CHECK(none(Batch(0)) == Approx(1 + std::log1p(std::exp(-1.0))).epsilon(1e-6));
  CHECK(none(Batch(1)) == 0.0f);
}

TEST_CASE("cross_entropy: bad labels", "[nn][loss]") {
  dt::tensor<float, Batch, Class> const logits(Batch(2), Class(3));
  SECTION("out of range") {
    dt::tensor<std::int64_t, Batch> const labels{0, 3};
    REQUIRE_THROWS_AS(nn::cross_entropy<Class>(logits, labels), dt::value_error);
    REQUIRE_THROWS_WITH(nn::cross_entropy<Class>(logits, labels),
                        Catch::Contains("label 3") && Catch::Contains("Batch=1") && Catch::Contains("Class") &&
                            Catch::Contains("extent 3"));
  }
  SECTION("negative") {
    dt::tensor<std::int64_t, Batch> const labels{-1, 0};
    REQUIRE_THROWS_WITH(nn::cross_entropy<Class>(logits, labels), Catch::Contains("label -1"));
  }
  SECTION("extents") {
    dt::tensor<std::int64_t, Batch> const labels{0, 1, 2};
    REQUIRE_THROWS_AS(nn::cross_entropy<Class>(logits, labels), dt::shape_error);
    REQUIRE_THROWS_WITH(nn::cross_entropy<Class>(logits, labels),
                        Catch::Contains("cross_entropy") && Catch::Contains("Batch") && Catch::Contains("2") &&
                            Catch::Contains("3"));
  }
}

TEST_CASE("cross_entropy: gradients", "[nn][loss][autograd]") {
  using x_t = dt::tensor<double, Batch, Class, Steps>;
  auto x = test_support::uniform<x_t>({2, 4, 3}, 3, -2, 2);
  dt::tensor<std::int64_t, Batch, Steps> const labels{{0, 3, 1}, {2, 2, 0}};
  SECTION("none") {
    test_support::check_gradients(
        [&](auto const& a) { return nn::cross_entropy<Class>(a, labels, nn::reduction::none); }, x);
  }
  SECTION("mean") {
    test_support::check_gradients([&](auto const& a) { return nn::cross_entropy<Class>(a, labels); }, x);
  }
  SECTION("sum, of a lazy expression") {
    test_support::check_gradients(
        [&](auto const& a) { return nn::cross_entropy<Class>(a * 2.0, labels, nn::reduction::sum); }, x);
  }
  SECTION("class dim last") {
    using y_t = dt::tensor<double, Batch, Class>;
    auto y = test_support::uniform<y_t>({3, 5}, 4, -2, 2);
    dt::tensor<std::int64_t, Batch> const l{4, 0, 2};
    test_support::check_gradients([&](auto const& a) { return nn::cross_entropy<Class>(a, l); }, y);
  }
  SECTION("(softmax - one-hot) / N, of the logits' type, accumulating") {
    x.requires_grad_();
    nn::cross_entropy<Class>(x, labels).backward();
    static_assert(std::is_same_v<decltype(x.grad()), x_t>);
    auto const once = x.grad().clone();
    auto const p = dt::softmax<Class>(x.detach());
    for (dt::index_t b = 0; b < 2; ++b) {
      for (dt::index_t c = 0; c < 4; ++c) {
        for (dt::index_t s = 0; s < 3; ++s) {
          double const hot = labels(Batch(b), Steps(s)) == c ? 1 : 0;
          CHECK(once(Batch(b), Class(c), Steps(s)) == Approx((p(Batch(b), Class(c), Steps(s)) - hot) / 6));
        }
      }
    }
    nn::cross_entropy<Class>(x, labels).backward();
    CHECK(dt::allclose(x.grad(), once * 2.0));
  }
  SECTION("no_grad records nothing") {
    x.requires_grad_();
    dt::autograd::no_grad const guard;
    CHECK_FALSE(nn::cross_entropy<Class>(x, labels).requires_grad());
  }
}

TEST_CASE("masked_softmax_ce_loss: d2l's check", "[nn][loss]") {
  // loss(torch.ones(3, 4, 10), torch.ones((3, 4), dtype=torch.long), torch.tensor([4, 2, 0]))
  // gives tensor([2.3026, 1.1513, 0.0000]).
  auto const pred = dt::ones<float>(Batch(3), Steps(4), Vocab(10));
  auto const label = dt::ones<std::int64_t>(Batch(3), Steps(4));
  dt::tensor<std::int64_t, Batch> const valid_len{4, 2, 0};
  auto const l = nn::masked_softmax_ce_loss<Steps, Vocab>(pred, label, valid_len);
  static_assert(std::is_same_v<std::remove_cvref_t<decltype(l)>, dt::tensor<float, Batch>>);
  CHECK(l(Batch(0)) == Approx(std::log(10.0)));
  CHECK(l(Batch(1)) == Approx(std::log(10.0) / 2));
  CHECK(l(Batch(2)) == 0.0f);
  SECTION("a valid length past Steps") {
    dt::tensor<std::int64_t, Batch> const bad{4, 5, 0};
    REQUIRE_THROWS_AS((nn::masked_softmax_ce_loss<Steps, Vocab>(pred, label, bad)), dt::value_error);
    REQUIRE_THROWS_WITH(
        (nn::masked_softmax_ce_loss<Steps, Vocab>(pred, label, bad)),
        Catch::StartsWith("masked_softmax_ce_loss: ") && Catch::Contains("5") && Catch::Contains("Steps"));
  }
  SECTION("lengths of another batch") {
    dt::tensor<std::int64_t, Batch> const two{4, 2};
    REQUIRE_THROWS_AS((nn::masked_softmax_ce_loss<Steps, Vocab>(pred, label, two)), dt::shape_error);
    REQUIRE_THROWS_WITH((nn::masked_softmax_ce_loss<Steps, Vocab>(pred, label, two)),
                        Catch::StartsWith("masked_softmax_ce_loss: valid_len: extent mismatch for dimension Batch: "
                                          "3 (label) vs 2 (valid_len)"));
  }
}

TEST_CASE("masked_softmax_ce_loss: values and gradients", "[nn][loss][autograd]") {
  using p_t = dt::tensor<double, Batch, Steps, Vocab>;
  auto pred = test_support::uniform<p_t>({3, 4, 5}, 5, -2, 2);
  dt::tensor<std::int64_t, Batch, Steps> const label{{0, 1, 2, 3}, {4, 4, 0, 1}, {2, 3, 1, 0}};
  dt::tensor<std::int64_t, Batch> const valid_len{4, 1, 3};
  auto const l = nn::masked_softmax_ce_loss<Steps, Vocab>(pred, label, valid_len);
  for (dt::index_t b = 0; b < 3; ++b) {
    double want = 0;
    for (dt::index_t s = 0; s < valid_len(Batch(b)); ++s) {
      std::vector<double> row;
      for (dt::index_t v = 0; v < 5; ++v) row.push_back(pred(Batch(b), Steps(s), Vocab(v)));
      want += naive_ce(row, label(Batch(b), Steps(s)));
    }
    CHECK(l(Batch(b)) == Approx(want / 4));
  }
  test_support::check_gradients(
      [&](auto const& p) { return nn::masked_softmax_ce_loss<Steps, Vocab>(p, label, valid_len); }, pred);
  SECTION("masked positions get no gradient") {
    pred.zero_grad();
    dt::sum(nn::masked_softmax_ce_loss<Steps, Vocab>(pred, label, valid_len)).backward();
    for (dt::index_t v = 0; v < 5; ++v) CHECK(pred.grad()(Batch(1), Steps(2), Vocab(v)) == 0.0);
  }
}

}  // namespace loss_test
