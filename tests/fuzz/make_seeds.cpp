/// @file
/// @brief Writes the seed corpora of the fuzz targets with the library's own
/// writers: `fuzz_make_seeds <folder>` fills `<folder>/npy`,
/// `<folder>/safetensors` and `<folder>/load_parameters`, replacing them.
///
/// The seeds cover every element type (float, double, std::int32_t,
/// std::int64_t, bool), ranks 0 to 3, empty extents and special floats;
/// for load_parameters, a correct file of fuzz_model.hpp's module and
/// near misses (a key missing, one too many, a wrong shape, a wrong dtype).

#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <type_traits>

#include <dimtensor/autograd/graph.hpp>
#include <dimtensor/io/npy.hpp>
#include <dimtensor/io/safetensors.hpp>
#include <dimtensor/nn/parameters.hpp>
#include <dimtensor/ops/random.hpp>
#include <dimtensor/tensor/tensor.hpp>

#include "fuzz_model.hpp"

namespace {

DIMTENSOR_DIM(Rows);
DIMTENSOR_DIM(Cols);
DIMTENSOR_DIM(Depth);

namespace dt = dimtensor;
namespace fs = std::filesystem;

/// Element i of a seed: small values, and for floats also -0, ±infinity,
/// NaN and a subnormal, so that round trips must keep every bit.
template <class T>
T pattern(dt::index_t i) {
  if constexpr (std::is_same_v<T, bool>) {
    return i % 3 != 1;
  } else if constexpr (std::is_floating_point_v<T>) {
    switch (i % 7) {
      case 1:
        return T(-0.0);
      case 3:
        return std::numeric_limits<T>::quiet_NaN();
      case 4:
        return std::numeric_limits<T>::denorm_min();
      case 5:
        return -std::numeric_limits<T>::infinity();
      default:
        return static_cast<T>(i) * T(0.5) - T(1);
    }
  } else {
    return static_cast<T>(i % 2 == 0 ? i : -i * 1000);
  }
}

template <class T, class... Dims>
dt::tensor<T, Dims...> filled(Dims... extents) {
  dt::tensor<T, Dims...> t(extents...);
  for (dt::index_t i = 0; i < t.size(); ++i) t.data()[i] = pattern<T>(i);
  return t;
}

template <class T>
dt::tensor<T> scalar() {
  dt::tensor<T> t(std::array<dt::index_t, 0>{});
  t.data()[0] = pattern<T>(0);
  return t;
}

fs::path fresh(fs::path const& folder) {
  fs::remove_all(folder);
  fs::create_directories(folder);
  return folder;
}

void npy_seeds(fs::path const& folder) {
  dt::save_npy(folder / "f32_r0.npy", scalar<float>());
  dt::save_npy(folder / "f32_r1.npy", filled<float>(Rows(7)));
  dt::save_npy(folder / "f32_r2.npy", filled<float>(Rows(2), Cols(3)));
  dt::save_npy(folder / "f32_r3.npy", filled<float>(Rows(2), Cols(1), Depth(3)));
  dt::save_npy(folder / "f32_r2_empty.npy", filled<float>(Rows(0), Cols(3)));
  dt::save_npy(folder / "f32_r3_empty.npy", filled<float>(Rows(2), Cols(0), Depth(4)));
  dt::save_npy(folder / "f64_r2.npy", filled<double>(Rows(3), Cols(2)));
  dt::save_npy(folder / "i32_r3.npy", filled<std::int32_t>(Rows(1), Cols(2), Depth(2)));
  dt::save_npy(folder / "i64_r1.npy", filled<std::int64_t>(Rows(4)));
  dt::save_npy(folder / "bool_r2.npy", filled<bool>(Rows(2), Cols(3)));
  dt::save_npy(folder / "bool_r2_empty.npy", filled<bool>(Rows(0), Cols(0)));
  // Two arrays in one stream, as load_npy(std::istream&) reads them.
  std::ofstream two(folder / "f32_r2_then_r1.npy", std::ios::binary);
  dt::save_npy(two, filled<float>(Rows(2), Cols(2)));
  dt::save_npy(two, filled<float>(Rows(3)));
}

void safetensors_seeds(fs::path const& folder) {
  dt::safetensors_writer mixed;
  mixed.add("scalar", scalar<float>());
  mixed.add("f32.r1", filled<float>(Rows(7)));
  mixed.add("f32.r2", filled<float>(Rows(2), Cols(3)));
  mixed.add("f32.r3", filled<float>(Rows(2), Cols(1), Depth(3)));
  mixed.add("f64.r2", filled<double>(Rows(3), Cols(2)));
  mixed.add("i32.r1", filled<std::int32_t>(Rows(3)));
  mixed.add("i64.r2", filled<std::int64_t>(Rows(2), Cols(2)));
  mixed.add("bool.r1", filled<bool>(Rows(5)));
  mixed.add("bool.r2", filled<bool>(Rows(2), Cols(2)));
  mixed.add_metadata("format", "pt");
  mixed.save(folder / "mixed.safetensors");

  auto const one = [&](std::string const& name, auto const& t) {
    dt::safetensors_writer w;
    w.add(name, t);
    w.save(folder / (name + ".safetensors"));
  };
  one("f32_r0", scalar<float>());
  one("f32_r2", filled<float>(Rows(2), Cols(3)));
  one("f64_r1", filled<double>(Rows(3)));
  one("i32_r1", filled<std::int32_t>(Rows(4)));
  one("i64_r2", filled<std::int64_t>(Rows(1), Cols(2)));
  one("bool_r2", filled<bool>(Rows(2), Cols(3)));
  one("f32_r2_empty", filled<float>(Rows(0), Cols(3)));
  one("bool_r3_empty", filled<bool>(Rows(2), Cols(0), Depth(1)));

  dt::safetensors_writer none;
  none.save(folder / "no_tensors.safetensors");
  dt::safetensors_writer metadata_only;
  metadata_only.add_metadata("format", "pt");
  metadata_only.add_metadata("note", "\xc3\xa9t\xc3\xa9");
  metadata_only.save(folder / "metadata_only.safetensors");
}

void load_parameters_seeds(fs::path const& folder) {
  dt::generator gen(2);
  dimtensor_fuzz::two_layers model(gen);
  dt::autograd::no_grad const saving;
  dt::nn::save_parameters(model, folder / "good.safetensors");

  auto const near_miss = [&](std::string const& name, auto&& edit) {
    dt::safetensors_writer w;
    edit(w);
    w.save(folder / (name + ".safetensors"));
  };
  using dimtensor_fuzz::Classes;
  using dimtensor_fuzz::Hidden;
  using W = dt::safetensors_writer;
  near_miss("with_metadata", [&](W& w) {
    w.add("first.weight", model.first.weight);
    w.add("first.bias", model.first.bias);
    w.add("second.weight", model.second.weight);
    w.add_metadata("format", "pt");
  });
  near_miss("missing_key", [&](W& w) {
    w.add("first.weight", model.first.weight);
    w.add("first.bias", model.first.bias);
  });
  near_miss("extra_key", [&](W& w) {
    w.add("first.weight", model.first.weight);
    w.add("first.bias", model.first.bias);
    w.add("second.weight", model.second.weight);
    w.add("second.bias", filled<float>(Classes(2)));
  });
  near_miss("wrong_shape", [&](W& w) {
    w.add("first.weight", model.first.weight);
    w.add("first.bias", filled<float>(Hidden(4)));
    w.add("second.weight", model.second.weight);
  });
  near_miss("wrong_dtype", [&](W& w) {
    w.add("first.weight", model.first.weight);
    w.add("first.bias", model.first.bias);
    w.add("second.weight", filled<double>(Classes(2), Hidden(3)));
  });
}

}  // namespace

// The tokenizer's seeds: each line of the parity sample as a text (first
// byte 0), and each committed tokenizer.json as a file (first byte 1).
void tokenizer_seeds(fs::path const& dir) {
  fs::path const data = DIMTENSOR_FUZZ_TOKENIZERS_DIR;
  auto const read = [](fs::path const& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
  };
  int n = 0;
  std::istringstream lines(read(data / "sample.txt"));
  for (std::string line; std::getline(lines, line);) {
    std::ofstream(dir / ("text_" + std::to_string(n++)), std::ios::binary) << '\0' << line;
  }
  for (char const* name : {"bert", "gpt2"}) {
    std::ofstream(dir / (std::string("file_") + name), std::ios::binary) << '\1' << read(data / name / "tokenizer.json");
  }
}

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <seed folder>\n", argv[0]);
    return 2;
  }
  try {
    fs::path const root = argv[1];
    npy_seeds(fresh(root / "npy"));
    safetensors_seeds(fresh(root / "safetensors"));
    load_parameters_seeds(fresh(root / "load_parameters"));
    tokenizer_seeds(fresh(root / "tokenizer"));
    std::printf("fuzz seeds written to %s\n", root.string().c_str());
  } catch (std::exception const& e) {
    std::fprintf(stderr, "fuzz_make_seeds: %s\n", e.what());
    return 1;
  }
  return 0;
}
