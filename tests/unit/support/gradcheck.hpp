#pragma once
// Gradient checks against central finite differences, in double precision.
//
// check_gradients(f, x, y, …): f maps the double tensors x, y, … (each
// contiguous with its own storage) to a tensor or a lazy expression.  With a
// fixed random weighting r of f's result, the scalar L = sum(f(x, y, …) * r)
// is differentiated twice: by backward (f(…).backward(r)) and by central
// differences, one element at a time, under no_grad.  Every element of every
// operand must agree within atol + rtol * |numeric|.
//
// f must be deterministic (a function with dropout seeds its generator
// inside f) and smooth at the point (keep inputs away from the kinks of
// relu, abs, max and the like).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstddef>
#include <random>
#include <string>
#include <type_traits>

#include <dimtensor/dimtensor.hpp>

namespace test_support {

struct gradcheck_options {
  double step = 1e-6;
  double atol = 1e-7;
  double rtol = 1e-6;
  unsigned seed = 20261129;
};

// A tensor of x's type and extents, uniform in [lo, hi), from a seeded engine.
template <class X>
X uniform_like(X const& x, unsigned seed, double lo = -1.0, double hi = 1.0) {
  X out(dimtensor::uninitialized, x.extents());
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  for (dimtensor::index_t i = 0; i < out.size(); ++i) out.data()[i] = static_cast<typename X::value_type>(dist(rng));
  return out;
}

// A double tensor of the given extents, uniform in [lo, hi): the usual operand.
template <class X>
X uniform(typename X::extents_type const& ext, unsigned seed, double lo = -1.0, double hi = 1.0) {
  return uniform_like(X(ext), seed, lo, hi);
}

namespace detail {

template <class Y, class R>
double weighted_sum(Y const& y, R const& r) {
  auto const yy = dimtensor::eval(y).contiguous();
  double total = 0.0;
  for (dimtensor::index_t i = 0; i < yy.size(); ++i) total += static_cast<double>(yy.data()[i]) * r.data()[i];
  return total;
}

template <class F, class X, class R, class... All>
void check_one(F const& f, X& x, std::size_t which, R const& r, gradcheck_options const& o, All&... all) {
  REQUIRE(x.is_contiguous());
  X const analytic = x.has_grad() ? x.grad() : X(x.extents());
  REQUIRE(analytic.extents() == x.extents());
  dimtensor::autograd::no_grad const guard;
  for (dimtensor::index_t i = 0; i < x.size(); ++i) {
    auto& e = x.data()[i];
    auto const saved = e;
    e = saved + o.step;
    double const up = weighted_sum(f(all...), r);
    e = saved - o.step;
    double const down = weighted_sum(f(all...), r);
    e = saved;
    double const numeric = (up - down) / (2 * o.step);
    double const got = analytic.data()[i];
    INFO("operand " << which << ", element " << i << ": backward " << got << ", finite differences " << numeric);
    CHECK(std::abs(got - numeric) <= o.atol + o.rtol * std::abs(numeric));
  }
}

}  // namespace detail

template <class F, class... X>
void check_gradients(gradcheck_options const& o, F const& f, X&... xs) {
  static_assert((std::is_same_v<typename X::value_type, double> && ...), "gradient checks run in double");
  (xs.requires_grad_(), ...);
  (xs.zero_grad(), ...);
  auto y = dimtensor::eval(f(xs...));
  using Y = decltype(y);
  Y const r = uniform_like(Y(y.extents()), o.seed);
  REQUIRE(y.requires_grad());
  y.backward(r);
  std::size_t which = 0;
  (detail::check_one(f, xs, which++, r, o, xs...), ...);
}

template <class F, class... X>
void check_gradients(F const& f, X&... xs) {
  check_gradients(gradcheck_options{}, f, xs...);
}

}  // namespace test_support
