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
#include <fstream>
#include <functional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <boost/mp11/list.hpp>

#include <dimtensor/autograd/graph.hpp>
#include <dimtensor/core/dim.hpp>
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
                   shape_string<specs>(loaded.extents()) + " but the module's is " +
                   shape_string<specs>(current.extents()));
  }
}

/// The one axis of a stored tensor of shape (1,) that a rank-0 parameter
/// loads from.
DIMTENSOR_DIM(StoredAxis);

/// @brief The stored tensor @p key as the host type of @p Tensor, read by
/// `load_as.template operator()<U>()` as a U; @p stored_rank is the stored
/// tensor's rank (-1 when unknown).
///
/// A scalar parameter (rank 0) also takes a stored shape (1,), and a
/// parameter of shape [1] a stored scalar: PyTorch's
/// `nn.Parameter(torch.rand((1,)))` is a rank-0 tensor in a module that
/// broadcasts it by name (examples/nadaraya_watson).  Any other extent is
/// the usual `io_error` naming both shapes.
template <class Tensor, class Load>
host_tensor_t<Tensor> load_stored(std::string const& key, std::filesystem::path const& from, int stored_rank,
                                  Load const& load_as, Tensor const& current) {
  using host = host_tensor_t<Tensor>;
  using T = typename Tensor::value_type;
  if constexpr (Tensor::rank == 0) {
    if (stored_rank == 1) {
      auto const one = load_as.template operator()<tensor_with_dims<cpu, T, boost::mp11::mp_list<StoredAxis>>>();
      if (one.extents()[0] != 1) {
        throw io_error("load_parameters: " + key + " in " + from.string() + " has shape [" +
                       std::to_string(one.extents()[0]) + "] but the module's is a scalar (shape [], or [1] as stored)");
      }
      host out(typename host::extents_type{});
      out.data()[0] = one.data()[0];
      return out;
    }
  } else if constexpr (Tensor::rank == 1) {
    if (stored_rank == 0 && current.extents()[0] == 1) {
      auto const scalar = load_as.template operator()<tensor_with_dims<cpu, T, boost::mp11::mp_list<>>>();
      host out(typename host::extents_type{1});
      out.data()[0] = scalar.data()[0];
      return out;
    }
  }
  return load_as.template operator()<host>();
}

/// The rank of the `.npy` file @p file for a parameter of rank 0 or 1
/// (which may load from the other), else -1; -1 too when the header cannot
/// be read (loading then reports why).
template <class Tensor>
int stored_npy_rank(std::filesystem::path const& file) {
  if constexpr (Tensor::rank > 1) {
    return -1;
  } else {
    std::ifstream in(file, std::ios::binary);
    if (!in) return -1;
    try {
      return static_cast<int>(read_npy_header(in, file.string()).shape.size());
    } catch (io_error const&) {
      return -1;
    }
  }
}

}  // namespace detail

/// @brief Loads every parameter of @p model from @p source: a folder
/// holding `<key>.npy` per parameter (as `torch.save`d with numpy, e.g.
/// `W_q.weight.npy`), or a safetensors file.
///
/// Each tensor must have the parameter's rank, element type and extents
/// (except that a rank-0 parameter loads from shape (1,), as PyTorch stores
/// `nn.Parameter(torch.rand((1,)))`, and a parameter of shape [1] from a
/// scalar);
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
          auto const loaded = detail::load_stored(
              key, file, detail::stored_npy_rank<tensor_type>(file),
              [&]<class U>() {
                try {
                  return load_npy<U>(file);
                } catch (io_error const& e) {
                  throw io_error("load_parameters: " + key + ": " + e.what());
                }
              },
              parameter);
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
          auto const loaded = detail::load_stored(
              key, source, static_cast<int>(reader.entry(key).shape.size()),
              [&]<class U>() { return reader.template load<U>(key); }, parameter);
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
