#include <catch2/catch.hpp>

#include <dimtensor/backends/thrust.hpp>
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/io/npy.hpp>
#include <dimtensor/io/print.hpp>
#include <dimtensor/io/safetensors.hpp>
#if defined(DIMTENSOR_HAS_VIZ)
#include <dimtensor/viz.hpp>
#endif

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "unit/support/files.hpp"

// Saving, loading, printing, comparing and drawing tensors of the Thrust
// backend's host systems: the same bytes, text and answers as for the same
// elements on the cpu backend, and the backend's name in the printed text.

namespace backend_io_test {
namespace {

DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Feat);

namespace dt = dimtensor;
namespace fs = std::filesystem;

using test_support::read_bytes;
using test_support::temp_dir;

temp_dir const& tmp() { return test_support::program_temp_dir("dimtensor_backend_io_test_"); }

template <class B, class T>
using matrix = dt::basic_tensor<B, T, Batch, Feat>;

// A 2 x 3 matrix of B holding 1 ... 6, built on B itself.
template <class B, class T = float>
matrix<B, T> one_to_six() {
  return matrix<B, T>{{T(1), T(2), T(3)}, {T(4), T(5), T(6)}};
}

// @p head and @p tail with `, backend=<name>` between them, as to_string
// prints a tensor that is not on the default backend.
template <class B>
std::string with_backend(std::string const& head, std::string const& tail) {
  if constexpr (std::is_same_v<B, dt::default_backend>) {
    return head + tail;
  } else {
    return head + ", backend=" + std::string(B::name) + tail;
  }
}

}  // namespace

#if defined(_OPENMP)
#define DIMTENSOR_TEST_HOST_THRUST dt::thrust_cpp, dt::thrust_omp
#else
#define DIMTENSOR_TEST_HOST_THRUST dt::thrust_cpp
#endif

TEMPLATE_TEST_CASE("to_string: a tensor of another backend prints its name after the dims", "[io][print][thrust]",
                   DIMTENSOR_TEST_HOST_THRUST) {
  using B = TestType;
  auto const x = one_to_six<B>();
  auto const want = with_backend<B>("tensor([[1., 2., 3.],\n        [4., 5., 6.]], dims=[Batch=2, Feat=3]", ")");
  CHECK(dt::to_string(x) == want);
  std::ostringstream os;
  os << x;
  CHECK(os.str() == want);

  // Expressions and views are evaluated on the backend first.
  CHECK(dt::to_string(x * 2.0f) ==
        with_backend<B>("tensor([[ 2.,  4.,  6.],\n        [ 8., 10., 12.]], dims=[Batch=2, Feat=3]", ")"));
  CHECK(dt::to_string(dt::transpose<Batch, Feat>(x)) ==
        with_backend<B>("tensor([[1., 4.],\n        [2., 5.],\n        [3., 6.]], dims=[Feat=3, Batch=2]", ")"));

  // The backend comes before the dtype, as PyTorch's device before its
  // dtype; a suffix that would pass 80 columns goes on a line of its own.
  std::string const doubles = "tensor([[1., 2., 3.],\n        [4., 5., 6.]], dims=[Batch=2, Feat=3]";
  if constexpr (std::is_same_v<B, dt::default_backend>) {
    CHECK(dt::to_string(one_to_six<B, double>()) == doubles + ", dtype=float64)");
  } else {
    CHECK(dt::to_string(one_to_six<B, double>()) ==
          doubles + ", backend=" + std::string(B::name) + ",\n       dtype=float64)");
  }
  CHECK(dt::to_string(one_to_six<B, std::int32_t>()) ==
        with_backend<B>("tensor([[1, 2, 3],\n        [4, 5, 6]], dims=[Batch=2, Feat=3]", ", dtype=int32)"));
  CHECK(dt::to_string(dt::basic_tensor<B, std::int64_t, Batch>(dt::uninitialized, {0})) ==
        with_backend<B>("tensor([], dims=[Batch=0]", ", dtype=int64)"));
  CHECK(dt::to_string(dt::basic_tensor<B, bool, Batch>{true, false}) ==
        with_backend<B>("tensor([ True, False], dims=[Batch=2]", ")"));
  CHECK(dt::to_string(dt::basic_tensor<B, float>(std::array<dt::index_t, 0>{}) + 3.5f) ==
        with_backend<B>("tensor(3.5000, dims=[]", ")"));
}

TEMPLATE_TEST_CASE("save_npy / load_npy: tensors of another backend round-trip, with the cpu backend's bytes",
                   "[io][npy][thrust]", DIMTENSOR_TEST_HOST_THRUST) {
  using B = TestType;
  auto const x = one_to_six<B>();
  auto const file = tmp() / ("x_" + std::string(B::name) + ".npy");
  auto const cpu_file = tmp() / ("x_cpu_" + std::string(B::name) + ".npy");
  dt::save_npy(file, x);
  dt::save_npy(cpu_file, one_to_six<dt::cpu>());
  CHECK(read_bytes(file) == read_bytes(cpu_file));

  auto const back = dt::load_npy<matrix<B, float>>(file);
  STATIC_REQUIRE(std::is_same_v<std::remove_const_t<decltype(back)>, matrix<B, float>>);
  CHECK(back.extents() == x.extents());
  CHECK(dt::equal(back, x));

  // A strided view is written in row-major order; bools as 0/1 bytes.
  auto const t_file = tmp() / ("xt_" + std::string(B::name) + ".npy");
  dt::save_npy(t_file, dt::transpose<Batch, Feat>(x));
  auto const t_back = dt::load_npy<dt::basic_tensor<B, float, Feat, Batch>>(t_file);
  CHECK(dt::equal(t_back, dt::basic_tensor<B, float, Feat, Batch>{{1.f, 4.f}, {2.f, 5.f}, {3.f, 6.f}}));

  std::stringstream stream;
  dt::save_npy(stream, dt::basic_tensor<B, bool, Batch>{true, false, true});
  dt::save_npy(stream, one_to_six<B, std::int64_t>());
  auto const flags = dt::load_npy<dt::basic_tensor<B, bool, Batch>>(stream, "stream");
  auto const ints = dt::load_npy<matrix<B, std::int64_t>>(stream, "stream");
  CHECK(dt::equal(flags, dt::basic_tensor<B, bool, Batch>{true, false, true}));
  CHECK(dt::equal(ints, one_to_six<B, std::int64_t>()));

  // Errors are the cpu backend's.
  using doubles = matrix<B, double>;
  REQUIRE_THROWS_WITH(dt::load_npy<doubles>(file), Catch::Contains("dtype <f4 (float32) but the tensor holds float64"));
}

TEMPLATE_TEST_CASE("safetensors: tensors of another backend round-trip, with the cpu backend's bytes",
                   "[io][safetensors][thrust]", DIMTENSOR_TEST_HOST_THRUST) {
  using B = TestType;
  auto const file = tmp() / ("w_" + std::string(B::name) + ".safetensors");
  auto const cpu_file = tmp() / ("w_cpu_" + std::string(B::name) + ".safetensors");
  {
    dt::safetensors_writer out;
    out.add("weight", one_to_six<B>());
    out.add("weight_t", dt::transpose<Batch, Feat>(one_to_six<B, double>()));
    out.add("mask", dt::basic_tensor<B, bool, Batch>{false, true});
    out.save(file);
  }
  {
    dt::safetensors_writer out;
    out.add("weight", one_to_six<dt::cpu>());
    out.add("weight_t", dt::transpose<Batch, Feat>(one_to_six<dt::cpu, double>()));
    out.add("mask", dt::basic_tensor<dt::cpu, bool, Batch>{false, true});
    out.save(cpu_file);
  }
  CHECK(read_bytes(file) == read_bytes(cpu_file));

  dt::safetensors_reader in(file);
  auto const w = in.load<matrix<B, float>>("weight");
  STATIC_REQUIRE(std::is_same_v<std::remove_const_t<decltype(w)>, matrix<B, float>>);
  CHECK(dt::equal(w, one_to_six<B>()));
  CHECK(dt::equal(in.load<dt::basic_tensor<B, double, Feat, Batch>>("weight_t"),
                  dt::transpose<Batch, Feat>(one_to_six<B, double>())));
  CHECK(dt::equal(dt::load_safetensors<dt::basic_tensor<B, bool, Batch>>(file, "mask"),
                  dt::basic_tensor<B, bool, Batch>{false, true}));
  using vector = dt::basic_tensor<B, float, Batch>;
  REQUIRE_THROWS_WITH(in.load<vector>("weight"), Catch::Contains("weight") && Catch::Contains("rank 1"));
}

TEMPLATE_TEST_CASE("equal, allclose, max_abs_diff: tensors of another backend", "[ops][compare][thrust]",
                   DIMTENSOR_TEST_HOST_THRUST) {
  using B = TestType;
  auto const x = one_to_six<B>();
  matrix<B, float> const y{{1.f, 2.f, 3.f}, {4.f, 5.f, 6.5f}};
  CHECK(dt::equal(x, one_to_six<B>()));
  CHECK_FALSE(dt::equal(x, y));
  CHECK_FALSE(dt::equal(x, matrix<B, float>{{1.f, 2.f, 3.f}}));  // other extents: false
  CHECK(dt::allclose(x, y, 0.0, 0.5));
  CHECK_FALSE(dt::allclose(x, y, 0.0, 0.49));
  CHECK(dt::max_abs_diff(x, y) == 0.5);
  // Expressions and strided views.
  CHECK(dt::equal(x + x, x * 2.0f));
  CHECK(dt::max_abs_diff(dt::transpose<Batch, Feat>(x),
                         dt::basic_tensor<B, float, Feat, Batch>{{1.f, 4.f}, {2.f, 5.f}, {3.f, 6.f}}) == 0.0);
  float const nan = std::numeric_limits<float>::quiet_NaN();
  dt::basic_tensor<B, float, Batch> const with_nan{1.f, nan};
  CHECK_FALSE(dt::equal(with_nan, with_nan));
  CHECK(std::isnan(dt::max_abs_diff(with_nan, with_nan)));
  auto const first_row = matrix<B, float>{{1.f, 2.f, 3.f}};
  REQUIRE_THROWS_WITH(dt::allclose(x, first_row), Catch::Contains("Batch"));
}

#if defined(DIMTENSOR_HAS_VIZ)
TEMPLATE_TEST_CASE("viz: a heatmap and a series drawn from tensors of another backend", "[viz][thrust]",
                   DIMTENSOR_TEST_HOST_THRUST) {
  using B = TestType;
  namespace viz = dimtensor::viz;
  auto const m = one_to_six<B, double>();
  auto const layout = viz::layout_heatmap(m);
  CHECK(layout.ny == 2);
  CHECK(layout.nx == 3);
  CHECK(layout.vmin == 1.0);
  CHECK(layout.vmax == 6.0);
  CHECK(layout.xlabel == "Feat");

  auto const file = tmp() / ("heatmap_" + std::string(B::name) + ".png");
  auto const cpu_file = tmp() / ("heatmap_cpu_" + std::string(B::name) + ".png");
  viz::show_heatmap(m, file);
  viz::show_heatmap(one_to_six<dt::cpu, double>(), cpu_file);
  auto const png = read_bytes(file);
  REQUIRE(png.size() > 8);
  CHECK(png.substr(1, 3) == "PNG");
  CHECK(png == read_bytes(cpu_file));

  dt::basic_tensor<B, float, Batch> const xs{0.f, 1.f, 2.f};
  auto const s = viz::series_of("y", xs, xs * xs);
  CHECK(s.x == std::vector<double>{0, 1, 2});
  CHECK(s.y == std::vector<double>{0, 1, 4});
}
#endif

}  // namespace backend_io_test
