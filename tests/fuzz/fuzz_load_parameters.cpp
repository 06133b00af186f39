/// @file
/// @brief libFuzzer target: the input as a safetensors file of weights for
/// a module of two linear layers, loaded with `nn::load_parameters`.
///
/// Checks, beyond "no crash": a failed load throws `io_error` and leaves
/// every parameter as it was, bit for bit, in the same storage; a successful
/// one gives every parameter exactly what `safetensors_reader` reads for its
/// key, in the parameter's own storage, still requiring grad, from a file
/// that holds no other keys.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <dimtensor/autograd/graph.hpp>
#include <dimtensor/io/safetensors.hpp>
#include <dimtensor/nn/parameters.hpp>
#include <dimtensor/ops/random.hpp>

#include "fuzz_model.hpp"
#include "fuzz_support.hpp"

namespace {

namespace dt = dimtensor;
using dimtensor_fuzz::require;

/// A parameter as it was: where its elements live, and their bytes.
struct snapshot {
  void const* data;
  std::vector<dt::index_t> extents;
  std::string bytes;
};

template <class Tensor>
snapshot take(Tensor const& p) {
  auto const* first = reinterpret_cast<char const*>(p.data());
  std::size_t const n = static_cast<std::size_t>(p.size()) * sizeof(typename Tensor::value_type);
  return {p.data(), {p.extents().begin(), p.extents().end()}, n == 0 ? std::string() : std::string(first, n)};
}

bool same(snapshot const& a, snapshot const& b) {
  return a.data == b.data && a.extents == b.extents && a.bytes == b.bytes;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
  auto const& file = dimtensor_fuzz::scratch_file("weights.safetensors");
  dimtensor_fuzz::write_file(file, std::string_view(reinterpret_cast<char const*>(data), size));

  dt::generator gen(1);
  dimtensor_fuzz::two_layers model(gen);
  dt::autograd::no_grad const reading;
  std::vector<snapshot> before;
  model.for_each_parameter([&](std::string const&, auto const& p) { before.push_back(take(p)); });

  bool loaded = true;
  try {
    dt::nn::load_parameters(model, file);
  } catch (dt::io_error const& e) {
    dimtensor_fuzz::require_names(e, file.string());
    loaded = false;
  }

  std::size_t i = 0;
  if (!loaded) {
    model.for_each_parameter([&](std::string const&, auto const& p) {
      require(same(take(p), before[i++]), "a failed load_parameters changed a parameter");
    });
    return 0;
  }

  dt::safetensors_reader const reader(file);
  std::vector<std::string> keys;
  model.for_each_parameter([&](std::string const& key, auto const& p) {
    using tensor_type = std::remove_cvref_t<decltype(p)>;
    keys.push_back(key);
    snapshot const now = take(p);
    require(now.data == before[i++].data, "load_parameters moved a parameter to other storage");
    require(p.requires_grad(), "load_parameters dropped requires_grad");
    auto const expected = reader.load<tensor_type>(key);
    snapshot const want = take(expected);
    require(now.extents == want.extents && now.bytes == want.bytes,
            "a parameter differs from what safetensors_reader reads for its key");
  });
  std::sort(keys.begin(), keys.end());
  require(keys == reader.keys(), "load_parameters accepted a file with other keys than the module's");
  return 0;
}
