// Tests of nn/parameters.hpp: what load_parameters reports when the file
// system refuses a path, and that a failed load changes nothing.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/linear.hpp>
#include <dimtensor/nn/parameters.hpp>

#include "unit/support/files.hpp"

namespace dt = dimtensor;

namespace {
DIMTENSOR_DIM(Feat);
DIMTENSOR_DIM(Hidden);

using layer_t = dt::nn::linear<Feat, Hidden>;

std::vector<float> elements_of(layer_t const& layer) {
  std::vector<float> all;
  layer.for_each_parameter(
      [&](std::string const&, auto const& p) {
        for (dt::index_t i = 0; i < p.size(); ++i) all.push_back(p.data()[i]);
      },
      "");
  return all;
}

// load_parameters' message, or "(no io_error)"; any other exception fails the test.
std::string load_error(layer_t& layer, std::filesystem::path const& source) {
  try {
    dt::nn::load_parameters(layer, source);
  } catch (dt::io_error const& e) {
    return e.what();
  }
  return "(no io_error)";
}
}  // namespace

TEST_CASE("load_parameters: file system errors are io_errors naming the path", "[nn][parameters]") {
  // std::filesystem::filesystem_error used to escape from is_directory.
  test_support::temp_dir const dir("dimtensor_parameters_test_");
  dt::generator gen(5);
  layer_t layer(Feat(3), Hidden(2), true, gen);
  auto const before = elements_of(layer);

  SECTION("a symlink loop") {
    std::filesystem::create_symlink(dir / "b", dir / "a");
    std::filesystem::create_symlink(dir / "a", dir / "b");
    auto const message = load_error(layer, dir / "a");
    CHECK_THAT(message, Catch::StartsWith("load_parameters: cannot read " + (dir / "a").string() + ": ") &&
                            Catch::Contains("symbolic links"));
  }
  SECTION("a name longer than the file system allows") {
    auto const long_name = dir / std::string(300, 'x');
    auto const message = load_error(layer, long_name);
    CHECK_THAT(message, Catch::StartsWith("load_parameters: cannot read " + long_name.string() + ": ") &&
                            Catch::Contains("too long"));
  }
  SECTION("a file that is not there") {
    auto const message = load_error(layer, dir / "missing.safetensors");
    CHECK_THAT(message, Catch::Contains((dir / "missing.safetensors").string()));
  }
  CHECK(elements_of(layer) == before);
}

TEST_CASE("load_parameters: a failed load leaves every parameter as it was", "[nn][parameters]") {
  test_support::temp_dir const dir("dimtensor_parameters_test_");
  dt::generator gen(6);
  layer_t source(Feat(3), Hidden(2), true, gen);
  dt::nn::save_parameters(source, dir / "w.safetensors");
  dt::nn::save_parameters(source, dir / "folder");

  layer_t target(Feat(3), Hidden(2), true, gen);
  auto const before = elements_of(target);
  REQUIRE(before != elements_of(source));

  // The weight loads, the bias does not: neither may change.
  std::filesystem::remove(dir / "folder" / "bias.npy");
  CHECK_THAT(load_error(target, dir / "folder"), Catch::StartsWith("load_parameters: bias: load_npy: cannot open"));
  CHECK(elements_of(target) == before);

  layer_t wider(Feat(4), Hidden(2), true, gen);
  auto const wider_before = elements_of(wider);
  CHECK_THAT(load_error(wider, dir / "w.safetensors"), Catch::Contains("load_parameters: weight in") &&
                                                           Catch::Contains("has shape [Hidden=2, Feat=3]"));
  CHECK(elements_of(wider) == wider_before);

  // And a complete source loads whole.
  dt::nn::load_parameters(target, dir / "w.safetensors");
  CHECK(elements_of(target) == elements_of(source));
}

namespace {
DIMTENSOR_DIM(One);

// d2l's NWKernelRegression holds `w = nn.Parameter(torch.rand((1,)))`; a
// dimtensor module holds it as a rank-0 tensor (it broadcasts by name).
struct scalar_module : dt::nn::module<scalar_module> {
  BOOST_HANA_DEFINE_STRUCT(scalar_module, (dt::tensor<float>, w));
  explicit scalar_module(float v) : w(dt::full<float>(v)) { w.requires_grad_(); }
};
// The same parameter as PyTorch stores it: shape (1,).
struct vector_module : dt::nn::module<vector_module> {
  BOOST_HANA_DEFINE_STRUCT(vector_module, (dt::tensor<float, One>, w));
  explicit vector_module(float v, dt::index_t n = 1) : w(dt::full<float>(v, One(n))) { w.requires_grad_(); }
};
}  // namespace

TEST_CASE("load_parameters: a rank-0 parameter loads from shape (1,), and a [1] parameter from a scalar",
          "[nn][io]") {
  test_support::temp_dir dir("parameters_scalar_");
  for (std::string const name : {"as_npy", "weights.safetensors"}) {
    INFO(name);
    auto const stored = dir.path() / ("one_" + name);
    dt::nn::save_parameters(vector_module(0.25f), stored);  // w: (1,)
    scalar_module scalar(1.0f);
    dt::nn::load_parameters(scalar, stored);
    CHECK(scalar.w.item() == 0.25f);
    CHECK(scalar.w.requires_grad());

    auto const back = dir.path() / ("scalar_" + name);
    dt::nn::save_parameters(scalar_module(-3.5f), back);  // w: ()
    vector_module vec(0.0f);
    dt::nn::load_parameters(vec, back);
    CHECK(vec.w(One(0)) == -3.5f);

    // Any other extent is still an io_error naming the key and both shapes.
    auto const three = dir.path() / ("three_" + name);
    dt::nn::save_parameters(vector_module(1.0f, 3), three);
    CHECK_THROWS_WITH(dt::nn::load_parameters(scalar, three),
                      Catch::Contains("load_parameters: w") && Catch::Contains("[3]") && Catch::Contains("scalar"));
    CHECK(scalar.w.item() == 0.25f);  // unchanged
    vector_module wide(0.0f, 2);
    CHECK_THROWS_AS(dt::nn::load_parameters(wide, back), dt::io_error);
  }
}
