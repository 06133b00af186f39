// Gradients of softmax, log_softmax, masked_softmax and sequence_mask,
// against central finite differences, and the backward kernels' parallel
// paths against naive loops.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <optional>
#include <type_traits>
#include <vector>

#include <dimtensor/dimtensor.hpp>
#include <dimtensor/ops/masked_softmax.hpp>
#include <dimtensor/ops/sequence_mask.hpp>
#include <dimtensor/ops/softmax.hpp>

#include "unit/support/gradcheck.hpp"

namespace dt = dimtensor;
using test_support::check_gradients;
using test_support::uniform;

namespace softmax_grad_test {

DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);

using scores = dt::tensor<double, Batch, Queries, KVPairs>;
using lens_1d = dt::tensor<std::int64_t, Batch>;
using lens_2d = dt::tensor<std::int64_t, Batch, Queries>;

// The input gradient of softmax (or log_softmax) along `axis` of the
// contiguous [A, B, C] tensor x for the result gradient g, by naive loops in
// double: softmax dx = y (g - sum(g y)); log_softmax dx = g - y sum(g).
template <class X, class G>
std::vector<double> reference_backward(X const& x, G const& g, int axis, bool log) {
  auto const& e = x.extents();
  std::vector<double> dx(static_cast<std::size_t>(x.size()));
  dt::index_t const stride[3] = {e[1] * e[2], e[2], 1};
  dt::index_t const n = e[axis];
  int const a = axis == 0 ? 1 : 0;
  int const b = axis == 2 ? 1 : 2;
  for (dt::index_t i = 0; i < e[a]; ++i) {
    for (dt::index_t k = 0; k < e[b]; ++k) {
      dt::index_t const base = i * stride[a] + k * stride[b];
      auto at = [&](dt::index_t j) { return static_cast<std::size_t>(base + j * stride[axis]); };
      double m = -INFINITY;
      for (dt::index_t j = 0; j < n; ++j) m = std::max(m, static_cast<double>(x.data()[at(j)]));
      double s = 0.0;
      for (dt::index_t j = 0; j < n; ++j) s += std::exp(static_cast<double>(x.data()[at(j)]) - m);
      double dot = 0.0;
      double gsum = 0.0;
      for (dt::index_t j = 0; j < n; ++j) {
        double const y = std::exp(static_cast<double>(x.data()[at(j)]) - m) / s;
        dot += static_cast<double>(g.data()[at(j)]) * y;
        gsum += static_cast<double>(g.data()[at(j)]);
      }
      for (dt::index_t j = 0; j < n; ++j) {
        double const y = std::exp(static_cast<double>(x.data()[at(j)]) - m) / s;
        double const gj = static_cast<double>(g.data()[at(j)]);
        dx[at(j)] = log ? gj - y * gsum : y * (gj - dot);
      }
    }
  }
  return dx;
}

template <class X>
void check_close(X const& got, std::vector<double> const& want, double tol) {
  REQUIRE(got.is_contiguous());
  REQUIRE(static_cast<std::size_t>(got.size()) == want.size());
  for (std::size_t k = 0; k < want.size(); ++k) {
    INFO("element " << k);
    CHECK(std::abs(static_cast<double>(got.data()[k]) - want[k]) <= tol * (1.0 + std::abs(want[k])));
  }
}

TEST_CASE("softmax and log_softmax along the last, a middle and the first dim", "[autograd][softmax_grad]") {
  auto x = uniform<scores>({2, 3, 4}, 1, -2.0, 2.0);
  check_gradients([](auto const& a) { return dt::softmax<KVPairs>(a); }, x);
  check_gradients([](auto const& a) { return dt::softmax<Queries>(a); }, x);
  check_gradients([](auto const& a) { return dt::softmax<Batch>(a); }, x);
  check_gradients([](auto const& a) { return dt::log_softmax<KVPairs>(a); }, x);
  check_gradients([](auto const& a) { return dt::log_softmax<Queries>(a); }, x);
  check_gradients([](auto const& a) { return dt::log_softmax<Batch>(a); }, x);

  SECTION("a lazy operand: softmax<D>(x * 2.0 + y)") {
    auto y = uniform<scores>({2, 3, 4}, 2);
    check_gradients([](auto const& a, auto const& b) { return dt::softmax<KVPairs>(a * 2.0 + b); }, x, y);
    check_gradients([](auto const& a, auto const& b) { return dt::softmax<Queries>(a * 2.0 + b); }, x, y);
    check_gradients([](auto const& a, auto const& b) { return dt::log_softmax<Queries>(dt::tanh(a) * b); }, x, y);
  }
  SECTION("a non-contiguous operand and a composition") {
    check_gradients([](auto const& a) { return dt::softmax<Batch>(dt::transpose<Batch, KVPairs>(a)); }, x);
    check_gradients([](auto const& a) { return dt::softmax<KVPairs>(a) * dt::log_softmax<Queries>(a); }, x);
  }
  SECTION("large logits: the gradient stays finite") {
    auto big = uniform<scores>({1, 2, 3}, 3, 500.0, 520.0);
    check_gradients([](auto const& a) { return dt::log_softmax<KVPairs>(a); }, big);
  }
}

TEST_CASE("softmax backward kernels: parallel rows and float against naive loops", "[autograd][softmax_grad]") {
  // 64 * 32 * 32 elements: above the parallel grain, so threads split the rows.
  auto x = uniform<scores>({64, 32, 32}, 4, -3.0, 3.0);
  auto g = uniform<scores>({64, 32, 32}, 5);
  x.requires_grad_();
  for (bool log : {false, true}) {
    SECTION(log ? "log_softmax" : "softmax") {
      SECTION("along the last dim (inner 1)") {
        (log ? dt::log_softmax<KVPairs>(x) : dt::softmax<KVPairs>(x)).backward(g);
        check_close(x.grad(), reference_backward(x, g, 2, log), 1e-12);
      }
      SECTION("along a middle dim (inner 32)") {
        (log ? dt::log_softmax<Queries>(x) : dt::softmax<Queries>(x)).backward(g);
        check_close(x.grad(), reference_backward(x, g, 1, log), 1e-12);
      }
      SECTION("float, along both") {
        using fscores = dt::tensor<float, Batch, Queries, KVPairs>;
        fscores xf = dt::cast<float>(x.detach());
        fscores const gf = dt::cast<float>(g);
        xf.requires_grad_();
        (log ? dt::log_softmax<KVPairs>(xf) : dt::softmax<KVPairs>(xf)).backward(gf);
        check_close(xf.grad(), reference_backward(xf, gf, 2, log), 1e-5);
        xf.zero_grad();
        (log ? dt::log_softmax<Queries>(xf) : dt::softmax<Queries>(xf)).backward(gf);
        check_close(xf.grad(), reference_backward(xf, gf, 1, log), 1e-5);
      }
    }
  }
}

TEST_CASE("softmax gradients: exact type, accumulation, no_grad", "[autograd][softmax_grad]") {
  auto x = uniform<scores>({2, 2, 3}, 6);
  x.requires_grad_();
  static_assert(std::is_same_v<decltype(x.grad()), scores>);
  auto const g = uniform<scores>({2, 2, 3}, 7);
  dt::softmax<Queries>(x).backward(g);
  scores const once = x.grad().clone();
  dt::softmax<Queries>(x).backward(g);
  for (dt::index_t k = 0; k < x.size(); ++k) CHECK(x.grad().data()[k] == Approx(2.0 * once.data()[k]));

  dt::autograd::no_grad const guard;
  CHECK_FALSE(dt::softmax<KVPairs>(x).requires_grad());
  CHECK_FALSE(dt::log_softmax<KVPairs>(x).requires_grad());
  CHECK_FALSE(dt::masked_softmax<KVPairs>(x, lens_1d{1, 2}).requires_grad());
  CHECK_FALSE(dt::sequence_mask<KVPairs>(x, lens_1d{1, 2}).requires_grad());
}

TEST_CASE("masked_softmax: softmax's gradient, 0 for the masked scores", "[autograd][softmax_grad]") {
  auto x = uniform<scores>({2, 3, 4}, 8, -2.0, 2.0);

  SECTION("1-D valid_lens [Batch], with a row of valid length 0") {
    lens_1d const lens{0, 3};
    check_gradients([&](auto const& a) { return dt::masked_softmax<KVPairs>(a, lens); }, x);
    x.requires_grad_();
    x.zero_grad();
    dt::masked_softmax<KVPairs>(x, lens).backward(uniform<scores>({2, 3, 4}, 9));
    scores const gx = x.grad();
    for (dt::index_t q = 0; q < 3; ++q) {
      for (dt::index_t k = 0; k < 4; ++k) CHECK(gx(Batch(0), Queries(q), KVPairs(k)) == 0.0);
      CHECK(gx(Batch(1), Queries(q), KVPairs(3)) == 0.0);
      CHECK(gx(Batch(1), Queries(q), KVPairs(0)) != 0.0);
    }
  }
  SECTION("2-D valid_lens [Batch, Queries], int32") {
    dt::tensor<std::int32_t, Batch, Queries> const lens{{1, 3, 4}, {0, 2, 2}};
    check_gradients([&](auto const& a) { return dt::masked_softmax<KVPairs>(a, lens); }, x);
  }
  SECTION("rank-0 valid_lens") {
    dt::tensor<std::int64_t> const lens = dt::full(std::int64_t{2});
    check_gradients([&](auto const& a) { return dt::masked_softmax<KVPairs>(a, lens); }, x);
  }
  SECTION("masking a middle dim: valid_lens [Batch, KVPairs]") {
    dt::tensor<std::int64_t, Batch, KVPairs> const lens{{1, 3, 0, 2}, {3, 3, 2, 1}};
    check_gradients([&](auto const& a) { return dt::masked_softmax<Queries>(a, lens); }, x);
  }
  SECTION("without valid_lens: plain softmax") {
    check_gradients([](auto const& a) { return dt::masked_softmax<KVPairs>(a); }, x);
    check_gradients([](auto const& a) { return dt::masked_softmax<KVPairs>(a, std::nullopt); }, x);
    std::optional<lens_1d> none;
    std::optional<lens_1d> const some = lens_1d{2, 1};
    check_gradients([&](auto const& a) { return dt::masked_softmax<KVPairs>(a, none); }, x);
    check_gradients([&](auto const& a) { return dt::masked_softmax<KVPairs>(a, some); }, x);
  }
  SECTION("a lazy operand") {
    auto y = uniform<scores>({2, 3, 4}, 10);
    lens_1d const lens{2, 4};
    check_gradients([&](auto const& a, auto const& b) { return dt::masked_softmax<KVPairs>(a * 2.0 + b, lens); }, x,
                    y);
  }
  SECTION("parallel rows against a naive reference with the mask applied") {
    auto big = uniform<scores>({64, 32, 32}, 11, -3.0, 3.0);
    auto g = uniform<scores>({64, 32, 32}, 12);
    lens_1d lens(dt::uninitialized, {64});
    for (dt::index_t b = 0; b < 64; ++b) lens.data()[b] = b % 33;
    big.requires_grad_();
    dt::masked_softmax<KVPairs>(big, lens).backward(g);
    // Unmasked reference on the scores with the masked ones at -1e6, then zeros where masked.
    scores filled = big.detach().clone();
    for (dt::index_t b = 0; b < 64; ++b) {
      for (dt::index_t q = 0; q < 32; ++q) {
        for (dt::index_t k = lens.data()[b]; k < 32; ++k) filled.data()[(b * 32 + q) * 32 + k] = -1e6;
      }
    }
    std::vector<double> want = reference_backward(filled, g, 2, false);
    for (dt::index_t b = 0; b < 64; ++b) {
      for (dt::index_t q = 0; q < 32; ++q) {
        for (dt::index_t k = lens.data()[b]; k < 32; ++k) want[static_cast<std::size_t>((b * 32 + q) * 32 + k)] = 0.0;
      }
    }
    check_close(big.grad(), want, 1e-12);
  }
}

TEST_CASE("sequence_mask: the kept elements pass the gradient, the replaced get 0", "[autograd][softmax_grad]") {
  auto x = uniform<scores>({2, 3, 4}, 13);
  lens_1d const lens{1, 4};
  check_gradients([&](auto const& a) { return dt::sequence_mask<KVPairs>(a, lens, -1.0); }, x);
  check_gradients([&](auto const& a) { return dt::sequence_mask(a, lens); }, x);
  lens_2d const lens2{{0, 2, 4}, {3, 1, 2}};
  check_gradients([&](auto const& a) { return dt::sequence_mask<KVPairs>(a, lens2, 5.0); }, x);
  dt::tensor<std::int64_t, Batch, KVPairs> const lens_mid{{1, 3, 0, 2}, {3, 3, 2, 1}};
  check_gradients([&](auto const& a) { return dt::sequence_mask<Queries>(a, lens_mid); }, x);
  auto y = uniform<scores>({2, 3, 4}, 14);
  check_gradients([&](auto const& a, auto const& b) { return dt::exp(dt::sequence_mask<KVPairs>(a * b, lens)); }, x,
                  y);

  SECTION("hand-computed") {
    dt::tensor<double, Batch, KVPairs> m{{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}};
    m.requires_grad_();
    dt::sequence_mask(m, lens_1d{2, 1}, -7.0).backward(dt::tensor<double, Batch, KVPairs>{{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}});
    static_assert(std::is_same_v<decltype(m.grad()), dt::tensor<double, Batch, KVPairs>>);
    CHECK(dt::equal(m.grad(), dt::tensor<double, Batch, KVPairs>{{1.0, 2.0, 0.0}, {4.0, 0.0, 0.0}}));
  }
}

}  // namespace softmax_grad_test
