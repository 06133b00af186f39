#pragma once
/// @file
/// @brief What a module is to the rest of the library: the `Module`
/// concept (a type with `for_each_parameter(f, prefix)`), the base
/// `nn::module<Derived>` that gives a struct of submodules and parameters
/// that member by reflection together with `train()`/`eval()`, the
/// parameters' keys and count, and `zero_grad`.
///
/// A user module declares its submodules and parameters once, with
/// Boost.Hana's `BOOST_HANA_DEFINE_STRUCT`, and derives from
/// `nn::module<Self>`:
///
/// @code
/// struct encoder : dt::nn::module<encoder> {
///   BOOST_HANA_DEFINE_STRUCT(encoder,
///       (dt::nn::embedding<Vocab, Embed>, embedding),
///       (dt::nn::gru<Steps, Batch, Embed, Hidden>, rnn));
///   encoder(Vocab v, Embed e, Hidden h) : embedding(v, e), rnn(e, h, 2) {}
/// };
/// @endcode
///
/// `for_each_parameter` then visits `embedding.weight`, `rnn.weight_ih_l0`,
/// …: PyTorch's `state_dict` keys, the member's name then its own keys, in
/// declaration order; `train()`/`eval()` reach every member that has them.
/// A member may be a tensor (a parameter, its key the member's name), a
/// module, or a `std::vector`/`std::array` of either (keys `blks.0.…`, as
/// `nn.ModuleList`); anything else in the struct is a compile error
/// (`module_member_not_a_module`): keep sizes, settings and buffers that
/// are not parameters (d2l's positional-encoding table `P`) as ordinary
/// members outside the macro.
///
/// That one member function is the whole protocol: `zero_grad(module)`,
/// the optimizers (optim/) and loading and saving (io/state_dict.hpp) visit
/// the same keys, and a parameter's gradient is `parameter.grad()`, of
/// exactly the parameter's type.  The library's leaves (`linear`,
/// `embedding`, `gru`, `layer_norm`, `dropout`) derive from `module` for
/// `train()`/`eval()` and write their own `for_each_parameter`; its
/// composites (the attention modules, `feed_forward`) are reflected
/// structs like a user's.

#include <array>
#include <boost/hana/accessors.hpp>
#include <boost/hana/concept/struct.hpp>
#include <boost/hana/define_struct.hpp>
#include <boost/hana/first.hpp>
#include <boost/hana/for_each.hpp>
#include <boost/hana/second.hpp>
#include <boost/hana/string.hpp>
#include <cstddef>
#include <string>
#include <type_traits>
#include <vector>

#include <dimtensor/config.hpp>
#include <dimtensor/core/diagnostic.hpp>
#include <dimtensor/tensor/tensor.hpp>

namespace dimtensor {

namespace diagnostic {

/// A member of @p Module's `BOOST_HANA_DEFINE_STRUCT` of type @p Member is
/// neither a tensor, a module, nor a `std::vector`/`std::array` of them.
template <class Module, class Member>
struct module_member_not_a_module {
  static_assert(always_false<Module, Member>,
                "dimtensor: a member declared in a module's BOOST_HANA_DEFINE_STRUCT is neither a parameter "
                "(a tensor), a module (a type with for_each_parameter), nor a std::vector or std::array of them "
                "(see module_member_not_a_module<module, member type> above); declare sizes, settings and "
                "buffers as ordinary members, outside the macro");
};

}  // namespace diagnostic

namespace nn {

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
concept Module = requires(M& m, detail::any_parameter f) {
  m.for_each_parameter(f, std::string{});
};

namespace detail {

template <class M>
inline constexpr bool is_sequence_v = false;
template <class M, class A>
inline constexpr bool is_sequence_v<std::vector<M, A>> = true;
template <class M, std::size_t N>
inline constexpr bool is_sequence_v<std::array<M, N>> = true;

/// Whether a reflected struct may hold an @p M: a tensor, a module, or a
/// vector or array of those.
template <class M>
constexpr bool is_module_member() {
  if constexpr (is_tensor_v<M> || Module<M>) {
    return true;
  } else if constexpr (is_sequence_v<M>) {
    return is_module_member<typename M::value_type>();
  } else {
    return false;
  }
}

/// Visits one member (or element) @p m of a module under @p key.
template <class M, class F>
void visit_parameters(M& m, F& f, std::string const& key) {
  using plain = std::remove_const_t<M>;
  if constexpr (is_tensor_v<plain>) {
    f(key, m);
  } else if constexpr (Module<plain>) {
    m.for_each_parameter(f, key + ".");
  } else {
    std::size_t i = 0;
    for (auto& element : m) visit_parameters(element, f, key + "." + std::to_string(i++));
  }
}

/// Switches member @p m (a module with `train(bool)`, or a sequence of
/// them) to training mode @p on; tensors have no mode.
template <class M>
void set_training(M& m, bool on) {
  if constexpr (is_sequence_v<M>) {
    for (auto& element : m) set_training(element, on);
  } else if constexpr (requires { m.train(on); }) {
    m.train(on);
  }
}

/// Calls @p g(name, member) for each member of the reflected struct
/// @p self; a compile error for a member that is not a module's.
template <class Derived, class Self, class G>
void for_each_member(Self& self, G&& g) {
  namespace hana = boost::hana;
  hana::for_each(hana::accessors<Derived>(), [&](auto pair) {
    auto& member = hana::second(pair)(self);
    using member_type = std::remove_cvref_t<decltype(member)>;
    if constexpr (!is_module_member<member_type>()) {
      (void)diagnostic::fire<diagnostic::module_member_not_a_module<Derived, member_type>>;
    } else {
      g(hana::to<char const*>(hana::first(pair)), member);
    }
  });
}

}  // namespace detail

/// @brief The base of a module (CRTP): `train()`/`eval()`/`is_training()`,
/// and, when @p Derived declares its members with
/// `BOOST_HANA_DEFINE_STRUCT`, `for_each_parameter` over them.
///
/// Modules start in training mode, as PyTorch's.  `train(on)` sets the
/// mode of the module and of every member that has one; a leaf whose
/// behaviour depends on the mode reads `is_training()`.  A type that is not
/// a reflected struct writes its own `for_each_parameter` (it hides this
/// one); calling this one on it is a compile error.
template <class Derived>
class module {
 public:
  /// Calls `f(key, parameter)` for each parameter of the reflected members,
  /// in declaration order, keys prefixed with @p prefix (PyTorch's
  /// `state_dict` keys: `rnn.weight_ih_l0`, `blks.0.ffn.dense1.weight`).
  template <class F>
  void for_each_parameter(F&& f, std::string const& prefix = "") {
    visit(derived(), f, prefix);
  }
  /// As above, read-only.
  template <class F>
  void for_each_parameter(F&& f, std::string const& prefix = "") const {
    visit(derived(), f, prefix);
  }

  /// Training mode (dropout active) when @p on, else evaluation mode, for
  /// the module and every member; returns the module.
  Derived& train(bool on = true) {
    training_ = on;
    if constexpr (boost::hana::Struct<Derived>::value) {
      detail::for_each_member<Derived>(derived(),
                                       [on](char const*, auto& member) { detail::set_training(member, on); });
    }
    return derived();
  }
  /// Evaluation mode: `train(false)`.
  Derived& eval() { return train(false); }
  /// Whether in training mode (the last `train()`/`eval()`; true at first).
  bool is_training() const noexcept { return training_; }

 protected:
  // Not `module() = default;`: a line starting with `module` reads as a
  // C++20 module directive to some front ends (nvcc warns).
  constexpr module() noexcept = default;

 private:
  bool training_ = true;

  Derived& derived() noexcept { return static_cast<Derived&>(*this); }
  Derived const& derived() const noexcept { return static_cast<Derived const&>(*this); }

  template <class Self, class F>
  static void visit(Self& self, F& f, std::string const& prefix) {
    static_assert(boost::hana::Struct<Derived>::value,
                  "dimtensor: nn::module<M>::for_each_parameter needs M's submodules and parameters declared with "
                  "BOOST_HANA_DEFINE_STRUCT(M, (type, name)...), or M's own for_each_parameter");
    if constexpr (boost::hana::Struct<Derived>::value) {  // no second error from Hana when it is not
      detail::for_each_member<Derived>(
          self, [&](char const* name, auto& member) { detail::visit_parameters(member, f, prefix + name); });
    }
  }
};

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

}  // namespace nn

}  // namespace dimtensor
