#pragma once
/// @file
/// @brief What a module is to the rest of the library: the `Module`
/// concept (a type with `for_each_parameter(f, prefix)`), its parameters'
/// keys and count, and `zero_grad`.
///
/// A module takes part by having `for_each_parameter(f, prefix)`, calling
/// `f(key, tensor)` for each parameter (`nn::linear` does, and the
/// attention modules pass their layers' calls on with prefixes such as
/// "W_q.").  That one member is the whole protocol: `zero_grad(module)`,
/// the optimizers (optim/) and loading and saving (io/state_dict.hpp) visit
/// the same keys, PyTorch's `state_dict` keys, and a parameter's gradient is
/// `parameter.grad()`, of exactly the parameter's type.

#include <string>
#include <vector>

#include <dimtensor/config.hpp>

namespace dimtensor::nn {

namespace detail {
/// A visitor of any parameter, doing nothing: what `Module` offers a type's
/// `for_each_parameter` (a named type, not a lambda, so that every compiler,
/// nvcc included, can test the call).
struct any_parameter {
  /// Accepts a key and a parameter.
  template <class P>
  void operator()(std::string const&, P&) const {}
};
}  // namespace detail

/// A type with `for_each_parameter(f, prefix)`.
template <class M>
concept Module = requires(M& m, detail::any_parameter f) { m.for_each_parameter(f, std::string{}); };

/// The keys of @p model's parameters, in its order ("W_q.weight", …).
template <Module M>
std::vector<std::string> parameter_names(M const& model) {
  std::vector<std::string> names;
  model.for_each_parameter([&](std::string const& key, auto const&) { names.push_back(key); }, "");
  return names;
}

/// The number of scalars in @p model's parameters.
template <Module M>
index_t parameter_count(M const& model) {
  index_t n = 0;
  model.for_each_parameter([&](std::string const&, auto const& p) { n += p.size(); }, "");
  return n;
}

/// @brief Drops the gradient of every parameter of @p model (PyTorch's
/// `module.zero_grad()`, which sets them to None): the next `backward()`
/// starts them afresh instead of adding to them.
template <Module M>
void zero_grad(M& model) {
  model.for_each_parameter([](std::string const&, auto& parameter) { parameter.zero_grad(); }, "");
}

}  // namespace dimtensor::nn
