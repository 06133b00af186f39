#pragma once
/// @file
/// @brief A module's parameters, by their PyTorch `state_dict` keys, loaded
/// from and saved to a folder of `.npy` files or one safetensors file:
/// `nn::load_parameters` and `nn::save_parameters`.
///
/// @code
/// dt::nn::multi_head_attention<Queries, KVPairs, Hidden> attention(...);
/// dt::nn::load_parameters(attention, "weights.safetensors");   // or a folder of W_q.weight.npy, ...
/// @endcode

#include <algorithm>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <dimtensor/autograd/graph.hpp>
#include <dimtensor/core/error.hpp>
#include <dimtensor/core/shape.hpp>
#include <dimtensor/io/npy.hpp>
#include <dimtensor/io/safetensors.hpp>
#include <dimtensor/nn/module.hpp>
#include <dimtensor/ops/to.hpp>

namespace dimtensor::nn {

namespace detail {

/// The cpu tensor of Tensor's dims and element type: what a parameter of
/// any backend is loaded into and saved from.
template <class Tensor>
using host_tensor_t = tensor_with_dims<cpu, typename Tensor::value_type, typename Tensor::specs>;

template <class Loaded, class Tensor>
void check_loaded_shape(std::string const& key, std::filesystem::path const& from, Loaded const& loaded,
                        Tensor const& current) {
  if (loaded.extents() != current.extents()) {
    using specs = typename Tensor::specs;
    throw io_error("load_parameters: " + key + " in " + from.string() + " has shape " +
                   dimtensor::detail::shape_string<specs>(loaded.extents()) + " but the module's is " +
                   dimtensor::detail::shape_string<specs>(current.extents()));
  }
}

}  // namespace detail

/// @brief Loads every parameter of @p model from @p source: a folder
/// holding `<key>.npy` per parameter (as `torch.save`d with numpy, e.g.
/// `W_q.weight.npy`), or a safetensors file.
///
/// Each tensor must have the parameter's rank, element type and extents;
/// any failure is an `io_error` naming the key and what differs.  From a
/// safetensors file, keys the module does not have are an error too (as
/// PyTorch's strict `load_state_dict`); a folder may hold other files.
/// Nothing changes unless every parameter loads.  The values are copied
/// into the parameters' own storage (as PyTorch's `load_state_dict`), so
/// every handle to a parameter sees them.  A parameter on another backend
/// than `cpu` is read into a cpu tensor, then copied to its backend.
template <Module M>
void load_parameters(M& model, std::filesystem::path const& source) {
  std::vector<std::function<void()>> commits;
  std::error_code ec;
  bool const folder = std::filesystem::is_directory(source, ec);
  if (ec) {
    // A symlink loop, a name too long, no permission: what the file system
    // said, as every io failure is reported.
    throw io_error("load_parameters: cannot read " + source.string() + ": " + ec.message());
  }
  if (folder) {
    model.for_each_parameter(
        [&](std::string const& key, auto& parameter) {
          using tensor_type = std::remove_cvref_t<decltype(parameter)>;
          auto const file = source / (key + ".npy");
          detail::host_tensor_t<tensor_type> const loaded = [&] {
            try {
              return load_npy<detail::host_tensor_t<tensor_type>>(file);
            } catch (io_error const& e) {
              throw io_error("load_parameters: " + key + ": " + e.what());
            }
          }();
          detail::check_loaded_shape(key, file, loaded, parameter);
          tensor_type const moved = dimtensor::to<typename tensor_type::backend>(loaded);
          commits.push_back([&parameter, moved] { parameter.assign(moved); });
        },
        "");
  } else {
    safetensors_reader const reader(source);
    std::vector<std::string> expected;
    model.for_each_parameter(
        [&](std::string const& key, auto& parameter) {
          using tensor_type = std::remove_cvref_t<decltype(parameter)>;
          expected.push_back(key);
          if (!reader.contains(key)) {
            throw io_error("load_parameters: " + source.string() + " has no tensor " + key);
          }
          auto const loaded = reader.template load<detail::host_tensor_t<tensor_type>>(key);
          detail::check_loaded_shape(key, source, loaded, parameter);
          tensor_type const moved = dimtensor::to<typename tensor_type::backend>(loaded);
          commits.push_back([&parameter, moved] { parameter.assign(moved); });
        },
        "");
    std::string unexpected;
    for (auto const& key : reader.keys()) {
      if (std::find(expected.begin(), expected.end(), key) == expected.end()) {
        unexpected += (unexpected.empty() ? "" : ", ") + key;
      }
    }
    if (!unexpected.empty()) {
      throw io_error("load_parameters: " + source.string() + " has tensors the module does not: " + unexpected);
    }
  }
  // The parameters require gradients: writing into them is not an
  // operation to record (as PyTorch's load_state_dict, under no_grad).
  autograd::no_grad const loading;
  for (auto& commit : commits) commit();
}

/// @brief Saves every parameter of @p model to @p target: one
/// safetensors file when the name ends in `.safetensors`, else a folder
/// (created if needed) of `<key>.npy` files.  `io_error` on failure.
/// Parameters on another backend than `cpu` are copied to the host first.
template <Module M>
void save_parameters(M const& model, std::filesystem::path const& target) {
  autograd::no_grad const saving;  // the copies to the host are not operations to record
  if (target.extension() == ".safetensors") {
    safetensors_writer writer;
    model.for_each_parameter(
        [&](std::string const& key, auto const& parameter) { writer.add(key, dimtensor::to<cpu>(parameter)); }, "");
    writer.save(target);
  } else {
    std::error_code ec;
    std::filesystem::create_directories(target, ec);
    if (ec) throw io_error("save_parameters: cannot create the folder " + target.string() + ": " + ec.message());
    model.for_each_parameter(
        [&](std::string const& key, auto const& parameter) {
          save_npy(target / (key + ".npy"), dimtensor::to<cpu>(parameter));
        },
        "");
  }
}

}  // namespace dimtensor::nn
