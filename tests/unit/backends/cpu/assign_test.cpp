// Tests of backends/cpu/assign.hpp: the one elementwise loop, flat and by rows.
#include <catch2/catch.hpp>

#include <array>
#include <cmath>
#include <numeric>
#include <vector>

#include <dimtensor/backends/cpu/assign.hpp>
#include <dimtensor/kernel/evaluator.hpp>
#include <dimtensor/ops/creation.hpp>
#include <dimtensor/ops/elementwise.hpp>

namespace assign_test {
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(Hidden);
}  // namespace assign_test

namespace dt = dimtensor;
namespace d = dimtensor::detail;
using dt::index_t;
using namespace assign_test;

namespace {
struct thread_guard {
  ~thread_guard() { dt::set_num_threads(0); }
};
}  // namespace

TEST_CASE("assign: flat path", "[backends][cpu][assign]") {
  std::vector<double> src(24);
  std::iota(src.begin(), src.end(), 1.0);
  std::array<index_t, 3> const ext{2, 3, 4};
  auto leaf = d::bind_strided<double, 3, 3>(src.data(), ext, d::row_major_strides(ext), ext);
  REQUIRE(leaf.flat());
  std::vector<double> dst(24, -1.0);
  dt::backend_assign(dt::cpu{}, dst.data(), ext, leaf);
  CHECK(dst == src);
}

TEST_CASE("assign: row path with a strided and a broadcast leaf", "[backends][cpu][assign]") {
  std::vector<float> m(12);  // [4, 3] read as [3, 4] (transposed)
  std::iota(m.begin(), m.end(), 0.0f);
  std::vector<float> bias{100, 200, 300, 400};  // [4] broadcast over rows
  std::array<index_t, 2> const out{3, 4};
  auto a = d::bind_strided<float, 2, 2>(m.data(), out, {1, 3}, out);
  auto b = d::bind_strided<float, 2, 1>(bias.data(), std::array<index_t, 1>{4}, {1}, out);
  auto plus = [](float x, float y) { return x + y; };
  d::map_evaluator<decltype(plus), decltype(a), decltype(b)> ev{plus, {a, b}};
  REQUIRE_FALSE(ev.flat());
  std::vector<float> dst(12);
  dt::backend_assign(dt::cpu{}, dst.data(), out, ev);
  for (index_t i = 0; i < 3; ++i)
    for (index_t j = 0; j < 4; ++j)
      CHECK(dst[static_cast<std::size_t>(i * 4 + j)] == m[static_cast<std::size_t>(j * 3 + i)] + bias[static_cast<std::size_t>(j)]);
}

TEST_CASE("assign: rank 0, extent 0, and conversion of the element type", "[backends][cpu][assign]") {
  d::scalar_evaluator<double> s{2.75};
  float one = 0.0f;
  dt::backend_assign(dt::cpu{}, &one, std::array<index_t, 0>{}, s);
  CHECK(one == 2.75f);
  std::vector<int> none;
  dt::backend_assign(dt::cpu{}, none.data(), std::array<index_t, 2>{0, 5}, s);
  dt::backend_assign(dt::cpu{}, none.data(), std::array<index_t, 2>{5, 0}, s);
  std::vector<int> ints(3);
  dt::backend_assign(dt::cpu{}, ints.data(), std::array<index_t, 1>{3}, s);
  CHECK(ints == std::vector<int>{2, 2, 2});
}

TEST_CASE("assign: backend_copy", "[backends][cpu][assign]") {
  std::vector<std::int64_t> src(70000);
  std::iota(src.begin(), src.end(), std::int64_t{-5});
  std::vector<std::int64_t> dst(70000, 0);
  dt::backend_copy(dt::cpu{}, dst.data(), src.data(), 70000);
  CHECK(dst == src);
}

TEST_CASE("assign: large tensors go through the threaded loop, both paths", "[backends][cpu][assign]") {
  thread_guard guard;
  dt::set_num_threads(4);
  constexpr index_t nb = 3, nq = 130, nh = 257;  // 100230 elements > parallel_grain
  auto x = dt::empty<float>(Batch(nb), Queries(nq), Hidden(nh));
  for (index_t i = 0; i < x.size(); ++i) x.data()[i] = static_cast<float>(i % 1000) * 0.01f - 5.0f;
  auto y = dt::eval(dt::tanh(x) * 2.0f + 1.0f);  // flat
  index_t wrong = 0;
  for (index_t i = 0; i < x.size(); ++i) {
    if (std::fabs(y.data()[i] - (std::tanh(x.data()[i]) * 2.0f + 1.0f)) > 1e-6f) ++wrong;
  }
  CHECK(wrong == 0);
  auto bias = dt::arange<float>(Hidden(nh));
  auto col = dt::empty<float>(Queries(nq), Hidden::fixed<1>{});
  for (index_t q = 0; q < nq; ++q) col.data()[q] = static_cast<float>(q) * 1000.0f;
  auto z = dt::eval(x + bias + col);  // rows
  wrong = 0;
  for (index_t b = 0; b < nb; ++b)
    for (index_t q = 0; q < nq; ++q)
      for (index_t h = 0; h < nh; ++h)
        if (z(Batch(b), Queries(q), Hidden(h)) !=
            x(Batch(b), Queries(q), Hidden(h)) + static_cast<float>(h) + static_cast<float>(q) * 1000.0f)
          ++wrong;
  CHECK(wrong == 0);
}
