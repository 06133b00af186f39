// nn::layer_norm: values against a naive loop, gradients against finite
// differences, PyTorch's names, save/load, bad input.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <string>
#include <type_traits>
#include <vector>

#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/layer_norm.hpp>
#include <dimtensor/nn/parameters.hpp>

#include "unit/support/gradcheck.hpp"

namespace dt = dimtensor;
namespace nn = dimtensor::nn;
using test_support::check_gradients;
using test_support::uniform;

namespace layer_norm_test {
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Steps);
DIMTENSOR_DIM(Hidden);
using x_t = dt::tensor<double, Batch, Steps, Hidden>;

// (x - mean) / sqrt(var + eps) * w + b over the last dim of a [rows, n] array.
std::vector<double> reference(std::vector<double> const& x, dt::index_t n, std::vector<double> const& w,
                              std::vector<double> const& b, double eps) {
  std::vector<double> out(x.size());
  for (std::size_t r = 0; r < x.size() / n; ++r) {
    double mean = 0, var = 0;
    for (dt::index_t i = 0; i < n; ++i) mean += x[r * n + i];
    mean /= n;
    for (dt::index_t i = 0; i < n; ++i) var += (x[r * n + i] - mean) * (x[r * n + i] - mean);
    var /= n;
    for (dt::index_t i = 0; i < n; ++i) out[r * n + i] = (x[r * n + i] - mean) / std::sqrt(var + eps) * w[i] + b[i];
  }
  return out;
}

template <class X>
std::vector<double> flat(X const& x) {
  auto const c = dt::eval(x).contiguous();
  return std::vector<double>(c.data(), c.data() + c.size());
}
}  // namespace layer_norm_test

using namespace layer_norm_test;

TEST_CASE("layer_norm: normalizes over the named dim", "[nn][layer_norm]") {
  nn::layer_norm<Hidden, double> ln(Hidden(5));
  CHECK(ln.normalized_size() == 5);
  CHECK(ln.eps() == 1e-5);
  CHECK(flat(ln.weight) == std::vector<double>(5, 1.0));
  CHECK(flat(ln.bias) == std::vector<double>(5, 0.0));
  auto const x = uniform<x_t>({2, 3, 5}, 1, -2, 3);
  {
    dt::autograd::no_grad const g;
    ln.weight.assign(uniform<dt::tensor<double, Hidden>>({5}, 2));
    ln.bias.assign(uniform<dt::tensor<double, Hidden>>({5}, 3));
  }
  auto const want = reference(flat(x), 5, flat(ln.weight), flat(ln.bias), 1e-5);
  SECTION("Hidden last") {
    auto const y = ln(x);
    static_assert(std::is_same_v<std::remove_cvref_t<decltype(y)>, x_t>);
    auto const got = flat(y);
    for (std::size_t i = 0; i < got.size(); ++i) CHECK(got[i] == Approx(want[i]).margin(1e-12));
  }
  SECTION("Hidden in the middle: the same numbers, in the input's order") {
    auto const y = ln(dt::permute<Batch, Hidden, Steps>(x));
    static_assert(std::is_same_v<dt::detail::tags_of<typename std::remove_cvref_t<decltype(y)>::specs>,
                                 dt::dims<Batch, Hidden, Steps>>);
    auto const got = flat(dt::permute<Batch, Steps, Hidden>(y));
    for (std::size_t i = 0; i < got.size(); ++i) CHECK(got[i] == Approx(want[i]).margin(1e-12));
  }
  SECTION("a constant row gives the bias (the variance is eps only)") {
    x_t c(x_t::extents_type{1, 1, 5});
    c.fill(2.5);
    auto const got = flat(ln(c));
    auto const b = flat(ln.bias);
    for (std::size_t i = 0; i < 5; ++i) CHECK(got[i] == Approx(b[i]).margin(1e-12));
  }
}

TEST_CASE("layer_norm: gradients match finite differences", "[nn][layer_norm][autograd]") {
  nn::layer_norm<Hidden, double> ln(Hidden(4));
  {
    dt::autograd::no_grad const g;
    ln.weight.assign(uniform<dt::tensor<double, Hidden>>({4}, 5, 0.5, 1.5));
  }
  auto x = uniform<x_t>({2, 3, 4}, 4);
  check_gradients([&](auto const& xx, auto const&, auto const&) { return ln(xx); }, x, ln.weight, ln.bias);
  auto xm = uniform<dt::tensor<double, Hidden, Batch>>({4, 3}, 6);
  check_gradients([&](auto const& xx, auto const&, auto const&) { return ln(xx); }, xm, ln.weight, ln.bias);
  static_assert(std::is_same_v<decltype(ln.weight.grad()), dt::tensor<double, Hidden>>);
  dt::autograd::no_grad const guard;
  CHECK_FALSE(ln(x).requires_grad());
}

// On the CPU, float and double run the runtime's kernels: one pass per row
// forward and backward, the weight's and bias's gradients summed over fixed
// blocks of rows (here 1,200 rows: 38 blocks), in block order.
TEST_CASE("layer_norm: every gradient over many rows, the same on one thread and two", "[nn][layer_norm][autograd]") {
  dt::index_t const n = 48;
  nn::layer_norm<Hidden, float> ln{Hidden(n)};
  auto const x0 = dt::eval(dt::cast<float>(uniform<x_t>({40, 30, n}, 7, -2, 3)));
  auto const g = dt::eval(dt::cast<float>(uniform<x_t>({40, 30, n}, 8)));
  {
    dt::autograd::no_grad const guard;
    ln.weight.assign(dt::cast<float>(uniform<dt::tensor<double, Hidden>>({n}, 9, 0.5, 1.5)));
    ln.bias.assign(dt::cast<float>(uniform<dt::tensor<double, Hidden>>({n}, 10)));
  }
  std::vector<std::vector<float>> runs;
  for (int threads : {1, 2}) {
    dt::set_num_threads(threads);
    nn::zero_grad(ln);
    auto x = x0.detach().requires_grad_();
    ln(x).backward(g);
    std::vector<float> all(x.grad().data(), x.grad().data() + x.size());
    all.insert(all.end(), ln.weight.grad().data(), ln.weight.grad().data() + n);
    all.insert(all.end(), ln.bias.grad().data(), ln.bias.grad().data() + n);
    runs.push_back(all);
  }
  dt::set_num_threads(0);
  CHECK(runs[0] == runs[1]);
  // The gradients in double, from the definitions.
  dt::index_t const rows = x0.size() / n;
  std::vector<double> dx(x0.size()), dw(n, 0.0), db(n, 0.0);
  for (dt::index_t r = 0; r < rows; ++r) {
    float const* xr = x0.data() + r * n;
    float const* gr = g.data() + r * n;
    double mean = 0, var = 0;
    for (dt::index_t i = 0; i < n; ++i) mean += xr[i];
    mean /= n;
    for (dt::index_t i = 0; i < n; ++i) var += (xr[i] - mean) * (xr[i] - mean);
    double const rho = 1.0 / std::sqrt(var / n + 1e-5);
    double m1 = 0, m2 = 0;
    for (dt::index_t i = 0; i < n; ++i) {
      double const xh = (xr[i] - mean) * rho;
      double const gw = gr[i] * static_cast<double>(ln.weight.data()[i]);
      m1 += gw / n;
      m2 += gw * xh / n;
      dw[i] += gr[i] * xh;
      db[i] += gr[i];
    }
    for (dt::index_t i = 0; i < n; ++i) {
      double const xh = (xr[i] - mean) * rho;
      double const gw = gr[i] * static_cast<double>(ln.weight.data()[i]);
      dx[r * n + i] = rho * (gw - m1 - xh * m2);
    }
  }
  for (dt::index_t i = 0; i < x0.size(); ++i) CHECK(runs[0][i] == Approx(dx[i]).epsilon(1e-4).margin(1e-4));
  for (dt::index_t i = 0; i < n; ++i) {
    CHECK(runs[0][x0.size() + i] == Approx(dw[i]).epsilon(1e-4).margin(1e-3));
    CHECK(runs[0][x0.size() + n + i] == Approx(db[i]).epsilon(1e-4).margin(1e-3));
  }
}

TEST_CASE("layer_norm: parameters by PyTorch's names, saved and loaded", "[nn][layer_norm]") {
  nn::layer_norm<Hidden> a(Hidden(3));
  CHECK(nn::parameter_names(a) == std::vector<std::string>{"weight", "bias"});
  {
    dt::autograd::no_grad const g;
    a.weight.assign(dt::tensor<float, Hidden>{1.5f, -2.f, 3.f});
    a.bias.assign(dt::tensor<float, Hidden>{0.25f, 0.5f, -1.f});
  }
  auto const dir = std::filesystem::temp_directory_path() / "dimtensor_layer_norm_test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  for (std::string const target : {"w.safetensors", "npy"}) {
    INFO(target);
    nn::save_parameters(a, dir / target);
    nn::layer_norm<Hidden> b(Hidden(3));
    nn::load_parameters(b, dir / target);
    CHECK(dt::equal(a.weight, b.weight));
    CHECK(dt::equal(a.bias, b.bias));
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("layer_norm: bad input", "[nn][layer_norm]") {
  nn::layer_norm<Hidden, double> ln(Hidden(4));
  auto const x = uniform<x_t>({2, 3, 5}, 1);
  REQUIRE_THROWS_AS(ln(x), dt::shape_error);
  REQUIRE_THROWS_WITH(ln(x), Catch::Contains("layer_norm") && Catch::Contains("Hidden") && Catch::Contains("5") &&
                                 Catch::Contains("4"));
  REQUIRE_THROWS_AS((nn::layer_norm<Hidden>(Hidden(0))), dt::value_error);
  REQUIRE_THROWS_WITH((nn::layer_norm<Hidden>(Hidden(3), -1.0)), Catch::Contains("eps"));
}
