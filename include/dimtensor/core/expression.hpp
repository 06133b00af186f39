#pragma once
/// @file
/// @brief Lazy elementwise expression nodes.  A node computes its dims and
/// extents (checking them) when built, and never loops: evaluation happens
/// when it is assigned to a tensor or passed to `eval()`.

#include <array>
#include <cstddef>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include <boost/mp11/algorithm.hpp>

#include <dimtensor/core/broadcast.hpp>
#include <dimtensor/core/concepts.hpp>
#include <dimtensor/core/diagnostic.hpp>
#include <dimtensor/core/evaluator.hpp>
#include <dimtensor/core/shape.hpp>
#include <dimtensor/core/tensor.hpp>

namespace dimtensor {

/// @brief A scalar broadcast to any shape (rank 0).
template <class Backend, class T>
class scalar_expr {
 public:
  /// Element type.
  using value_type = T;
  /// Backend tag.
  using backend = Backend;
  /// No dims.
  using specs = dims<>;
  /// Rank 0.
  static constexpr std::size_t rank = 0;
  /// Marks the expression concept.
  static constexpr bool is_expression = true;

  /// Wraps @p v.
  explicit scalar_expr(T v) : value_(v) {}
  /// No extents.
  std::array<index_t, 0> extents() const { return {}; }
  /// Binds to an output of any rank.
  template <std::size_t R>
  detail::scalar_evaluator<T> evaluator(std::array<index_t, R> const&) const {
    return {value_};
  }
  /// The value.
  T value() const { return value_; }
  /// A scalar reads no storage.
  bool reads_storage(void const*) const noexcept { return false; }

 private:
  T value_;
};

namespace detail {

template <class L, class R>
using broadcast_t = typename broadcast<L, R>::type;

template <class... Ls>
struct broadcast_all;
template <class L>
struct broadcast_all<L> {
  using type = L;
};
template <class L, class R, class... Rest>
struct broadcast_all<L, R, Rest...> {
  using type = typename broadcast_all<broadcast_t<L, R>, Rest...>::type;
};

}  // namespace detail

/// @brief A lazy elementwise node: `op(args...)`, broadcast by the rule of
/// core/broadcast.hpp.
template <class Op, class... Args>
class map_expr {
 public:
  /// The broadcast dims of the operands.
  using specs = typename detail::broadcast_all<typename Args::specs...>::type;
  /// Element type: what Op returns.
  using value_type = std::remove_cvref_t<std::invoke_result_t<Op const&, typename Args::value_type...>>;
  /// Backend tag (every operand has the same).
  using backend = typename std::tuple_element_t<0, std::tuple<Args...>>::backend;
  /// Number of dims.
  static constexpr std::size_t rank = detail::rank_v<specs>;
  /// Run-time extents, outermost first.
  using extents_type = std::array<index_t, rank>;
  /// Marks the expression concept.
  static constexpr bool is_expression = true;

  /// Builds the node; dynamic extents that disagree throw `shape_error`
  /// naming @p name, the dim and both sizes.
  map_expr(std::string_view name, Op op, Args const&... args) : op_(op), args_(args...) {
    extents_type ext{};
    std::array<bool, rank> known{};  // an extent seen that cannot broadcast
    std::array<bool, rank> seen{};
    (merge(name, ext, known, seen, args), ...);
    extents_ = ext;
  }

  /// Run-time extents.
  extents_type const& extents() const noexcept { return extents_; }

  /// Binds to an output of rank R.
  template <std::size_t R>
  auto evaluator(std::array<index_t, R> const& out) const {
    return std::apply(
        [&](auto const&... a) {
          return detail::map_evaluator<Op, decltype(a.template evaluator<R>(out))...>{
              op_, {a.template evaluator<R>(out)...}};
        },
        args_);
  }

  /// Evaluates into a new tensor.
  auto eval() const { return tensor_for<map_expr>(*this); }

  /// Whether any operand reads @p storage (aliasing checks).
  bool reads_storage(void const* storage) const noexcept {
    return std::apply([&](auto const&... a) { return (a.reads_storage(storage) || ...); }, args_);
  }

  /// The operands.
  std::tuple<Args...> const& operands() const noexcept { return args_; }
  /// The function.
  Op const& op() const noexcept { return op_; }

 private:
  template <class A>
  static void merge(std::string_view name, extents_type& ext, std::array<bool, rank>& known,
                    std::array<bool, rank>& seen, A const& a) {
    using AS = typename A::specs;
    constexpr std::size_t n = A::rank;
    auto const& in = a.extents();
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      (
          [&] {
            constexpr std::size_t k = I + rank - n;
            index_t const e = in[I];
            // A static extent 1 broadcasts; anything else must agree.
            constexpr bool broadcasts = static_extent_v<detail::spec_at<AS, I>> == 1;
            if (!seen[k]) {
              ext[k] = e;
              seen[k] = true;
              known[k] = !broadcasts;
            } else if (broadcasts) {
              // leaves ext[k] as it is
            } else if (!known[k]) {
              ext[k] = e;
              known[k] = true;
            } else if (ext[k] != e) {
              detail::throw_extent_mismatch(name, detail::names_of<specs>::value[k], ext[k], e);
            }
          }(),
          ...);
    }(std::make_index_sequence<n>{});
  }

  Op op_;
  std::tuple<Args...> args_;
  extents_type extents_{};
};

namespace detail {

/// Wraps a scalar as an expression of the backend and element type of E.
template <class E, class S>
auto as_operand(S const& s) {
  if constexpr (Expression<S>) {
    return s;
  } else {
    return scalar_expr<typename E::backend, typename E::value_type>(static_cast<typename E::value_type>(s));
  }
}

/// Whether check_binary<Call, A, B>() passes.  Test this in `if constexpr`
/// and call check_binary only in the failing branch: clang rejects a constexpr
/// call whose body instantiated a failed diagnostic as "not a constant
/// expression" and then instantiates the other branch too (a cascade).
template <class A, class B>
inline constexpr bool binary_ok_v = std::is_same_v<typename A::backend, typename B::backend> &&
                                    std::is_same_v<typename A::value_type, typename B::value_type> &&
                                    broadcast<typename A::specs, typename B::specs>::ok;

/// Checks operands of an elementwise call: same backend, same element type,
/// broadcastable dims.  Instantiates the diagnostic and returns false if not.
template <class Call, class A, class B>
constexpr bool check_binary() {
  if constexpr (!std::is_same_v<typename A::backend, typename B::backend>) {
    (void)diagnostic::backends_differ<Call, typename A::backend, typename B::backend>{};
    return false;
  } else if constexpr (!std::is_same_v<typename A::value_type, typename B::value_type>) {
    (void)diagnostic::element_types_differ<Call, typename A::value_type, typename B::value_type>{};
    return false;
  } else if constexpr (!broadcast<typename A::specs, typename B::specs>::ok) {
    diagnose_broadcast<Call, typename A::specs, typename B::specs>();
    return false;
  } else {
    return true;
  }
}

}  // namespace detail
}  // namespace dimtensor
