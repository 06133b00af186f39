#pragma once
/// @file
/// @brief Lazy elementwise expression nodes.  A node computes its dims and
/// extents (checking them) when built, and never loops: evaluation happens
/// when it is assigned to a tensor or passed to `eval()`.

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <boost/mp11/algorithm.hpp>

#include <dimtensor/autograd/graph.hpp>
#include <dimtensor/autograd/program.hpp>
#include <dimtensor/core/broadcast.hpp>
#include <dimtensor/core/concepts.hpp>
#include <dimtensor/core/diagnostic.hpp>
#include <dimtensor/core/shape.hpp>
#include <dimtensor/kernel/evaluator.hpp>
#include <dimtensor/kernel/layout.hpp>
#include <dimtensor/tensor/tensor.hpp>

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
  /// The extent of dim D, known without evaluating: `std::integral_constant`
  /// when static, `index_t` when dynamic (as a tensor's `extent<D>()`).
  template <class D>
  auto extent() const {
    return detail::extent_of<D, specs>(extents_);
  }
  /// The extent of dim D, as a named extent `D(n)`.
  template <class D>
  D named_extent() const {
    return D(static_cast<index_t>(extent<D>()));
  }

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
constexpr auto check_binary() {
  if constexpr (!std::is_same_v<typename A::backend, typename B::backend>) {
    (void)diagnostic::fire<diagnostic::backends_differ<Call, typename A::backend, typename B::backend>>;
    return false;
  } else if constexpr (!std::is_same_v<typename A::value_type, typename B::value_type>) {
    (void)diagnostic::fire<diagnostic::element_types_differ<Call, typename A::value_type, typename B::value_type>>;
    return false;
  } else if constexpr (!broadcast<typename A::specs, typename B::specs>::ok) {
    diagnose_broadcast<Call, typename A::specs, typename B::specs>();
    return false;
  } else {
    return true;
  }
}

}  // namespace detail

/// @name Recording evaluations
/// What autograd needs of the lazy nodes: whether an expression reads a
/// tensor that requires gradients, its states, and the expression as a
/// program (autograd/program.hpp) when a tensor evaluates it.
/// @{
namespace autograd {

/// Whether X is a lazy elementwise node.
template <class X>
inline constexpr bool is_map_expr_v = false;
/// A map_expr is one.
template <class Op, class... A>
inline constexpr bool is_map_expr_v<map_expr<Op, A...>> = true;

/// Whether a tensor of @p x (a tensor or a lazy expression) requires gradients;
/// anything else (constants, index tensors of integers) does not.
template <class X>
bool any_requires_grad(X const& x) {
  if constexpr (is_tensor_v<X>) {
    return x.requires_grad();
  } else if constexpr (is_map_expr_v<X>) {
    return std::apply([](auto const&... a) { return (any_requires_grad(a) || ...); }, x.operands());
  } else {
    return false;
  }
}

/// Whether an operation on @p operands records a node: grad mode is on and
/// one of them requires gradients.
template <class... X>
bool should_record(X const&... operands) {
  return is_grad_enabled() && (any_requires_grad(operands) || ...);
}

namespace detail {

template <class X>
void collect_states(std::vector<std::shared_ptr<tensor_state>>& out, X const& x) {
  if constexpr (is_tensor_v<X>) {
    if (x.requires_grad()) out.push_back(x.grad_state());
  } else if constexpr (is_map_expr_v<X>) {
    std::apply([&](auto const&... a) { (collect_states(out, a), ...); }, x.operands());
  }
}

/// The positions of a gradient of dims GS that a tensor of dims XS was
/// broadcast over: GS's leading positions XS lacks, and those where XS has
/// the static extent 1 and GS another.
template <class XS, class GS>
constexpr std::array<bool, dimtensor::detail::rank_v<GS>> broadcast_positions() {
  constexpr std::size_t rg = dimtensor::detail::rank_v<GS>;
  constexpr std::size_t rx = dimtensor::detail::rank_v<XS>;
  std::array<bool, rg> out{};
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    (
        [&] {
          if constexpr (I + rx < rg) {
            out[I] = true;
          } else {
            using xs = dimtensor::detail::spec_at<XS, I + rx - rg>;
            using gs = dimtensor::detail::spec_at<GS, I>;
            out[I] = static_extent_v<xs> == 1 && static_extent_v<gs> != 1;
          }
        }(),
        ...);
  }(std::make_index_sequence<rg>{});
  return out;
}

/// Whether X is a scalar operand.
template <class X>
inline constexpr bool is_scalar_expr_v = false;
/// A scalar_expr is one.
template <class B, class T>
inline constexpr bool is_scalar_expr_v<scalar_expr<B, T>> = true;

/// Pads the rank-R array @p a to kernel::max_rank with leading @p fill.
template <class V, std::size_t R>
std::array<V, kernel::max_rank> padded(std::array<V, R> const& a, V fill) {
  std::array<V, kernel::max_rank> out{};
  for (std::size_t i = 0; i < kernel::max_rank; ++i) out[i] = fill;
  for (std::size_t i = 0; i < R; ++i) out[kernel::max_rank - R + i] = a[i];
  return out;
}

/// Adds @p x (a tensor, a scalar, an expression) to the program @p p of a
/// result of dims RootSpecs and extents @p root; returns its step.  An
/// operand of another element type than T is evaluated (and recorded on
/// its own) and read through a conversion.
template <class RootSpecs, class B, class T, std::size_t R, class X>
std::uint32_t flatten(program_node<B, T>& p, std::array<index_t, R> const& root, X const& x) {
  using U = typename X::value_type;
  if constexpr (is_tensor_v<X>) {
    program_leaf<T> l;
    auto const ev = x.template evaluator<R>(root);
    l.keep = x.storage();
    l.data = x.data();
    l.strides = padded(ev.strides, index_t{0});
    l.flat = ev.is_flat;
    l.broadcast = padded(broadcast_positions<typename X::specs, RootSpecs>(), false);
    l.read = &read_leaf<B, T, U>;
    if constexpr (std::is_floating_point_v<U>) {
      if (x.requires_grad()) {
        l.state = x.grad_state();
        l.accumulate = &accumulate_leaf<B, T, U>;
      }
    }
    return p.add_leaf(std::move(l));
  } else if constexpr (is_scalar_expr_v<X> && std::is_same_v<U, T>) {
    program_leaf<T> l;
    l.scalar = true;
    l.value = x.value();
    return p.add_leaf(std::move(l));
  } else if constexpr (!std::is_same_v<U, T>) {
    return flatten<RootSpecs>(p, root, tensor_for<X>(x));
  } else {
    static_assert(is_map_expr_v<X>, "dimtensor internal: an elementwise operand of an unknown kind");
    using Op = std::remove_cvref_t<decltype(x.op())>;
    std::array<std::uint32_t, 3> args{};
    std::size_t i = 0;
    std::apply([&](auto const&... a) { ((args[i++] = flatten<RootSpecs>(p, root, a)), ...); }, x.operands());
    return p.add_step(code_of<Op>, static_cast<std::uint8_t>(i), args);
  }
}

/// Records the evaluation of the lazy expression @p e into @p result as a
/// program.
template <class Out, class E>
void record_program(std::string_view name, Out& result, E const& e) {
  using B = typename Out::backend;
  using T = typename Out::value_type;
  if constexpr (Out::rank > kernel::max_rank) {
    throw_rank_not_recorded("an elementwise expression", Out::rank);
  } else {
    auto n = std::make_shared<program_node<B, T>>(name, padded(result.extents(), index_t{1}));
    (void)flatten<typename Out::specs>(*n, result.extents(), e);
    result.attach_grad_fn(std::move(n));
  }
}

/// The functions whose forward pass costs enough that an expression of
/// them runs in the runtime's program kernel (evaluate_in_runtime).
using costly_functions = boost::mp11::mp_list<call::log, call::exp, call::tanh, call::sigmoid, call::sin, call::cos,
                                              call::erf, call::pow, call::gelu, call::silu,
                                              call::gelu_tanh>;

/// @brief Of an expression X: whether every function in it has an
/// interpreter code (`known`) and whether one of them is costly.
template <class X>
struct program_traits {
  /// A tensor or a scalar.
  static constexpr bool known = true;
  /// Neither is a function.
  static constexpr bool costly = false;
};
/// A function of operands.
template <class Op, class... Args>
struct program_traits<map_expr<Op, Args...>> {
  /// Every function in it has a code.
  static constexpr bool known = code_of<Op> != op_code::no_rule && (program_traits<Args>::known && ...);
  /// One of them is costly.
  static constexpr bool costly =
      boost::mp11::mp_contains<costly_functions, Op>::value || (program_traits<Args>::costly || ...);
};

/// Elements below which an expression is evaluated in the caller's loop.
inline constexpr index_t runtime_forward_min = 2048;

/// @brief Evaluates @p e into @p result (fresh, dense, on the CPU) by the
/// runtime's program kernel, compiled for the CPU it runs on, and records
/// it as a program where it should be: for float and double expressions of
/// at least runtime_forward_min elements with a costly function
/// (costly_functions; GELU, an exponential).  Where an operand is not a
/// dense tensor at the result's extents or a scalar, the caller's own loop
/// evaluates it and the program made is still the one recorded.  False,
/// doing nothing, for any other expression: the caller evaluates and
/// records it.
template <class Out, class E>
bool evaluate_in_runtime(Out& result, E const& e) {
  using B = typename Out::backend;
  using T = typename Out::value_type;
  if constexpr (std::is_same_v<B, cpu> && backends::cpu::has_level_kernels<T> && is_map_expr_v<E> &&
                Out::rank >= 1 && Out::rank <= kernel::max_rank && program_traits<E>::known &&
                program_traits<E>::costly) {
    if (result.size() < runtime_forward_min) return false;
    auto n = std::make_shared<program_node<B, T>>("elementwise", padded(result.extents(), index_t{1}));
    (void)flatten<typename Out::specs>(*n, result.extents(), e);
    if (!n->forward(result.data())) {
      backend_assign(B{}, result.data(), result.extents(), e.template evaluator<Out::rank>(result.extents()));
    }
    if (should_record(e)) result.attach_grad_fn(std::move(n));
    return true;
  } else {
    (void)result;
    (void)e;
    return false;
  }
}

/// Records the evaluation of a lazy expression @p e into @p result (called
/// by the tensor constructor that evaluates expressions).
template <class Out, class E>
void record_evaluation(Out& result, E const& e) {
  if constexpr (is_map_expr_v<E> && std::is_floating_point_v<typename Out::value_type>) {
    if (should_record(e)) record_program("elementwise", result, e);
  }
}

}  // namespace detail
}  // namespace autograd
/// @}

}  // namespace dimtensor
