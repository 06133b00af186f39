#pragma once
/// @file
/// @brief Parameter initializers: `nn::xavier_uniform_` (PyTorch's
/// `nn.init.xavier_uniform_`, what d2l's `train_seq2seq` applies to the
/// linear and GRU weights).

#include <cmath>
#include <string>
#include <type_traits>

#include <dimtensor/autograd/graph.hpp>
#include <dimtensor/core/error.hpp>
#include <dimtensor/ops/random.hpp>
#include <dimtensor/ops/to.hpp>
#include <dimtensor/tensor/tensor.hpp>

namespace dimtensor::nn {

/// @brief Refills the weight @p w ([Out, In], PyTorch's layout: fan_out the
/// first extent, fan_in the second) from U(-a, a), a = gain · √(6 / (fan_in +
/// fan_out)), drawn from @p gen in row-major order on the host; returns @p w.
///
/// In place, under `no_grad` (the weight stays a leaf that requires
/// gradients, as PyTorch's in-place init).  A rank other than 2 is a compile
/// error; an empty weight is a `value_error`.
template <class W>
W& xavier_uniform_(W& w, generator& gen, double gain = 1.0) {
  static_assert(is_tensor_v<W> && W::rank == 2,
                "dimtensor: nn::xavier_uniform_ takes a weight of rank 2, [Out, In] as PyTorch lays it out");
  static_assert(std::is_floating_point_v<typename W::value_type>, "dimtensor: nn::xavier_uniform_ needs a float weight");
  if constexpr (is_tensor_v<W> && W::rank == 2 && std::is_floating_point_v<typename W::value_type>) {
    index_t const fan_out = w.extents()[0];
    index_t const fan_in = w.extents()[1];
    if (fan_in + fan_out <= 0) throw value_error("xavier_uniform_: the weight has no elements");
    double const a = gain * std::sqrt(6.0 / static_cast<double>(fan_in + fan_out));
    using T = typename W::value_type;
    using host_t = tensor_with_dims<cpu, T, typename W::specs>;
    host_t host(typename host_t::extents_type{fan_out, fan_in});
    for (index_t i = 0; i < host.size(); ++i) host.data()[i] = static_cast<T>(-a + 2 * a * gen.next_double());
    autograd::no_grad const initializing;
    w.assign(to<typename W::backend>(host));
  }
  return w;
}

}  // namespace dimtensor::nn
