#pragma once
/// @file
/// @brief Reductions: `sum`, `mean`, `max`, `min` and `argmax` over a named
/// dim, and the full reductions `sum(x)`, `mean(x)`, `max(x)`, `min(x)`.
///
/// `sum<KVPairs>(x)` drops `KVPairs`; `sum<KVPairs>(x, keep_dim)` keeps it
/// as `KVPairs::fixed<1>`, ready to broadcast against x.  A full reduction
/// returns a rank-0 tensor (read it with `item()`).  Reductions are
/// evaluation boundaries: they accept any expression, evaluate it, and
/// return a new tensor.
///
/// Element types, as in PyTorch:
///  - `sum` of float or double keeps the type; of int32, int64 or bool it
///    gives int64.  Float sums accumulate in double, integer sums in int64.
///  - `mean` needs float or double: on an integer or bool tensor it is a
///    compile error (`needs_floating_point<call::mean, int>`); cast first.
///    A mean over no elements is NaN.
///  - `max`, `min` keep the type; `argmax` gives int64 indices, the first
///    maximum on ties.  NaN propagates (argmax points at the first NaN).
///    Over no elements (extent 0) they throw `value_error`.
///
/// Gradients, as in PyTorch: `sum` spreads the result's gradient over the
/// reduced elements, `mean` spreads it divided by their count; `max<D>` and
/// `min<D>` route it to the first extremum along D (the index argmax gives),
/// while the full `max(x)` and `min(x)` split it evenly among all the
/// elements equal to the extremum.

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>

#include <boost/mp11/algorithm.hpp>

#include <dimtensor/autograd/propagate.hpp>
#include <dimtensor/autograd/rules/line.hpp>
#include <dimtensor/backends/backend.hpp>
#include <dimtensor/core/concepts.hpp>
#include <dimtensor/core/diagnostic.hpp>
#include <dimtensor/core/dims.hpp>
#include <dimtensor/core/error.hpp>
#include <dimtensor/core/shape.hpp>
#include <dimtensor/kernel/call.hpp>
#include <dimtensor/kernel/layout.hpp>
#include <dimtensor/ops/elementwise.hpp>
#include <dimtensor/tensor/partial.hpp>
#include <dimtensor/tensor/tensor.hpp>

namespace dimtensor {

/// The type of `keep_dim`.
struct keep_dim_t {};

/// @brief Asks a reduction over a dim to keep it with the static extent 1:
/// `sum<KVPairs>(x, keep_dim)` has x's dims with `KVPairs::fixed<1>`.
inline constexpr keep_dim_t keep_dim{};

namespace diagnostic {

/// An operation that needs float or double elements was given another type.
template <class Call, class T>
struct needs_floating_point {
  static_assert(always_false<Call, T>,
                "dimtensor: this call needs a floating-point tensor (float or double); convert it first "
                "with dimtensor::cast<float>(x) (see needs_floating_point<call, element type> above)");
};

}  // namespace diagnostic

namespace detail {

template <class D>
struct keep_as_one {
  template <class S>
  using fn = std::conditional_t<std::is_same_v<dim_of<S>, D>, fixed<D, 1>, S>;
};

/// The dims of a reduction over D: L without D, or with D as `D::fixed<1>`.
template <class D, class L, bool Keep>
using reduced_dims = std::conditional_t<Keep, mp::mp_transform_q<keep_as_one<D>, L>, remove_dim<D, L>>;

/// The extents of a reduction over position I of @p ext.
template <std::size_t I, bool Keep, std::size_t RO, std::size_t R>
std::array<index_t, RO> reduced_extents(std::array<index_t, R> const& ext) {
  std::array<index_t, RO> out{};
  if constexpr (RO > 0) {
    std::size_t k = 0;
    for (std::size_t d = 0; d < R; ++d) {
      if (d != I) {
        out[k++] = ext[d];
      } else if (Keep) {
        out[k++] = 1;
      }
    }
  }
  return out;
}

enum class reduction_kind { sum, mean, max, min, argmax };

template <reduction_kind K>
inline constexpr std::string_view reduction_name = K == reduction_kind::sum    ? "sum"
                                                   : K == reduction_kind::mean ? "mean"
                                                   : K == reduction_kind::max  ? "max"
                                                   : K == reduction_kind::min  ? "min"
                                                                               : "argmax";

/// Whether the reduction has no value over no elements.
template <reduction_kind K>
inline constexpr bool needs_elements_v =
    K == reduction_kind::max || K == reduction_kind::min || K == reduction_kind::argmax;

/// The element type reduction K of T gives (PyTorch's rule).
template <reduction_kind K, class T>
using reduction_result_t =
    std::conditional_t<K == reduction_kind::argmax || (K == reduction_kind::sum && !std::is_floating_point_v<T>),
                       std::int64_t, T>;

/// What the compile-time checks of a reduction find first.
enum class reduce_status { ok, absent_dim, not_floating_point };

// Computed without instantiating a diagnostic, so that the `if constexpr`
// testing it stays a constant expression and only the failing branch is
// instantiated (clang would otherwise go on into the success branch).
// D is void for a full reduction.
template <reduction_kind K, class D, class E>
constexpr reduce_status reduce_check() {
  if constexpr (!std::is_void_v<D> && !contains_v<D, typename E::specs>) {
    return reduce_status::absent_dim;
  } else if constexpr (K == reduction_kind::mean && !std::is_floating_point_v<typename E::value_type>) {
    return reduce_status::not_floating_point;
  } else {
    return reduce_status::ok;
  }
}

/// Instantiates the diagnostic for what reduce_check found, naming @p Call.
template <class Call, reduction_kind K, class D, class E>
auto diagnose_reduce() {
  constexpr reduce_status status = reduce_check<K, D, E>();
  if constexpr (status == reduce_status::absent_dim) {
    (void)diagnostic::fire<diagnostic::not_a_dimension_of<Call, D, typename E::specs>>;
  } else if constexpr (status == reduce_status::not_floating_point) {
    (void)diagnostic::fire<diagnostic::needs_floating_point<Call, typename E::value_type>>;
  }
}

template <reduction_kind K, class Backend, class T, class R>
void run_reduction(T const* in, R* out, kernel::lines s) {
  if constexpr (K == reduction_kind::sum) {
    backend_sum(Backend{}, in, out, s.outer, s.n, s.inner);
  } else if constexpr (K == reduction_kind::mean) {
    backend_mean(Backend{}, in, out, s.outer, s.n, s.inner);
  } else if constexpr (K == reduction_kind::max) {
    backend_max(Backend{}, in, out, s.outer, s.n, s.inner);
  } else if constexpr (K == reduction_kind::min) {
    backend_min(Backend{}, in, out, s.outer, s.n, s.inner);
  } else {
    backend_argmax(Backend{}, in, out, s.outer, s.n, s.inner);
  }
}

/// @brief The tensor @p g of dims L without D (or with D kept), seen with D
/// as `D::fixed<1>` at its place in L: what broadcasts a reduction's result
/// back over D (the rules of sum, mean, max, softmax and the like).
template <class D, class L, class G>
auto keep_dim_view(G const& g) {
  using kept = tensor_with_dims<typename G::backend, typename G::value_type, reduced_dims<D, L, true>>;
  if constexpr (std::is_same_v<typename G::specs, reduced_dims<D, L, true>>) {
    return kept(g);
  } else {
    constexpr std::size_t I = index_of_v<D, L>;
    typename kept::extents_type ext{};
    typename kept::extents_type str{};
    for (std::size_t d = 0, k = 0; d < kept::rank; ++d) {
      if (d == I) {
        ext[d] = 1;
        str[d] = 0;
      } else {
        ext[d] = g.extents()[k];
        str[d] = g.strides()[k];
        ++k;
      }
    }
    return kept(g.storage(), g.data(), ext, str);
  }
}

/// Whether a spec is sharded over a mesh axis, as a type (for Mp11).
template <class S>
using sharded_spec = std::bool_constant<is_sharded_v<S>>;

/// The first spec of L sharded over a mesh axis (void when none is).
template <class L>
using first_sharded_spec =
    mp::mp_eval_if_c<mp::mp_find_if<L, sharded_spec>::value == mp::mp_size<L>::value, void, mp::mp_at, L,
                     mp::mp_find_if<L, sharded_spec>>;

/// @p out, or, when @p Spec is sharded over a mesh axis, this rank's part
/// of the reduction over it (`partial`), which reduced @p n elements.
template <class Call, class Spec, class Out>
auto maybe_partial(Out&& out, index_t n) {
  if constexpr (std::is_void_v<Spec>) {
    return std::forward<Out>(out);
  } else if constexpr (!is_sharded_v<Spec>) {
    return std::forward<Out>(out);
  } else {
    return partial<std::remove_cvref_t<Out>, dim_of<Spec>, axis_of<Spec>, Call>(std::forward<Out>(out), n);
  }
}

/// Reduction K of @p x over D (kept with extent 1 when Keep).
template <class Call, reduction_kind K, bool Keep, class D, class E>
auto reduce_dim(E const& x) {
  if constexpr (is_ill_formed_v<E>) {
    return ill_formed{};
  } else {
    using S = typename E::specs;
    using T = typename E::value_type;
    if constexpr (reduce_check<K, D, E>() != reduce_status::ok) {
      diagnose_reduce<Call, K, D, E>();
      return ill_formed{};
    } else if constexpr (K == reduction_kind::argmax && is_sharded_v<spec_for<D, S>>) {
      (void)diagnostic::fire<diagnostic::reduction_over_sharded_dim<Call, D, axis_of<spec_for<D, S>>>>;
      return ill_formed{};
    } else {
      using R = reduction_result_t<K, T>;
      using out_t = tensor_with_dims<typename E::backend, R, reduced_dims<D, S, Keep>>;
      constexpr std::size_t I = index_of_v<D, S>;
      auto const in = eval(x).contiguous();
      kernel::lines const s = kernel::lines_along<I>(in.extents());
      if constexpr (needs_elements_v<K>) {
        if (s.n == 0) {
          throw value_error(std::string(reduction_name<K>) + ": cannot reduce over dimension " +
                            std::string(dim_name_v<D>) + " of extent 0 in " + shape_string<S>(in.extents()) +
                            ": there is no " + std::string(reduction_name<K>) + " of no elements");
        }
      }
      out_t out(uninitialized, reduced_extents<I, Keep, out_t::rank>(in.extents()));
      run_reduction<K, typename E::backend>(in.data(), out.data(), s);
      if constexpr (K == reduction_kind::sum || K == reduction_kind::mean) {
        if constexpr (std::is_floating_point_v<T>) {
          if (autograd::should_record(in)) {
            // The gradient expands over D (divided by its extent for mean).
            autograd::record_lines(reduction_name<K>, out, in,
                                   K == reduction_kind::sum ? autograd::line_rule::sum : autograd::line_rule::mean, s,
                                   {});
          }
        }
      } else if constexpr (K == reduction_kind::max || K == reduction_kind::min) {
        if constexpr (std::is_floating_point_v<T>) {
          if (autograd::should_record(in)) {
            // To the first extremum along D (argmax's index), as PyTorch's max(dim) does.
            typename autograd::line_node<typename E::backend, T>::saved keep;
            keep.keep = in.storage();
            keep.data = in.data();
            keep.extremum_keep = out.storage();
            keep.extremum = out.data();
            autograd::record_lines(reduction_name<K>, out, in, autograd::line_rule::extremum, s, std::move(keep));
          }
        }
      }
      return maybe_partial<Call, spec_for<D, S>>(std::move(out), s.n);
    }
  }
}

/// Reduction K of all the elements of @p x, as a rank-0 tensor.
template <class Call, reduction_kind K, class E>
auto reduce_all(E const& x) {
  if constexpr (is_ill_formed_v<E>) {
    return ill_formed{};
  } else {
    using T = typename E::value_type;
    if constexpr (reduce_check<K, void, E>() != reduce_status::ok) {
      diagnose_reduce<Call, K, void, E>();
      return ill_formed{};
    } else {
      using R = reduction_result_t<K, T>;
      using out_t = basic_tensor<typename E::backend, R>;
      auto const in = eval(x).contiguous();
      if constexpr (needs_elements_v<K>) {
        if (in.size() == 0) {
          throw value_error(std::string(reduction_name<K>) + ": the tensor " +
                            shape_string<typename E::specs>(in.extents()) + " has no elements: there is no " +
                            std::string(reduction_name<K>) + " of no elements");
        }
      }
      out_t out(uninitialized, {});
      run_reduction<K, typename E::backend>(in.data(), out.data(), kernel::lines{1, in.size(), 1});
      if constexpr (K == reduction_kind::sum || K == reduction_kind::mean) {
        if constexpr (std::is_floating_point_v<T>) {
          if (autograd::should_record(in)) {
            // A rank-0 gradient broadcasts over every position (one line).
            autograd::record_lines(reduction_name<K>, out, in,
                                   K == reduction_kind::sum ? autograd::line_rule::sum : autograd::line_rule::mean,
                                   kernel::lines{1, in.size(), 1}, {});
          }
        }
      } else if constexpr (K == reduction_kind::max || K == reduction_kind::min) {
        if constexpr (std::is_floating_point_v<T>) {
          if (autograd::should_record(in)) {
            // Split evenly among the elements equal to the extremum, as PyTorch's max() does.
            typename autograd::line_node<typename E::backend, T>::saved keep;
            keep.keep = in.storage();
            keep.data = in.data();
            keep.extremum_all = out.item();
            autograd::record_lines(reduction_name<K>, out, in, autograd::line_rule::extremum_all,
                                   kernel::lines{1, in.size(), 1}, std::move(keep));
          }
        }
      }
      return maybe_partial<Call, first_sharded_spec<typename E::specs>>(std::move(out), in.size());
    }
  }
}

}  // namespace detail

/// @name Reductions over a named dim
/// `f<D>(x)` drops D; `f<D>(x, keep_dim)` keeps it as `D::fixed<1>`.
/// A D that is not a dim of x is a compile error
/// (`not_a_dimension_of<call::sum, D, dims<...>>`).
/// @{

/// Sum along D (int64 for integer and bool tensors).
template <class D, detail::Operand E>
auto sum(E const& x) {
  return detail::reduce_dim<call::sum, detail::reduction_kind::sum, false, D>(x);
}
/// Sum along D, keeping D with extent 1.
template <class D, detail::Operand E>
auto sum(E const& x, keep_dim_t) {
  return detail::reduce_dim<call::sum, detail::reduction_kind::sum, true, D>(x);
}
/// Mean along D (float and double tensors only).
template <class D, detail::Operand E>
auto mean(E const& x) {
  return detail::reduce_dim<call::mean, detail::reduction_kind::mean, false, D>(x);
}
/// Mean along D, keeping D with extent 1.
template <class D, detail::Operand E>
auto mean(E const& x, keep_dim_t) {
  return detail::reduce_dim<call::mean, detail::reduction_kind::mean, true, D>(x);
}
/// Maximum along D; `value_error` when D has extent 0.
template <class D, detail::Operand E>
auto max(E const& x) {
  return detail::reduce_dim<call::max, detail::reduction_kind::max, false, D>(x);
}
/// Maximum along D, keeping D with extent 1.
template <class D, detail::Operand E>
auto max(E const& x, keep_dim_t) {
  return detail::reduce_dim<call::max, detail::reduction_kind::max, true, D>(x);
}
/// Minimum along D; `value_error` when D has extent 0.
template <class D, detail::Operand E>
auto min(E const& x) {
  return detail::reduce_dim<call::min, detail::reduction_kind::min, false, D>(x);
}
/// Minimum along D, keeping D with extent 1.
template <class D, detail::Operand E>
auto min(E const& x, keep_dim_t) {
  return detail::reduce_dim<call::min, detail::reduction_kind::min, true, D>(x);
}
/// Index (int64) of the maximum along D, the first one on ties; `value_error` when D has extent 0.
template <class D, detail::Operand E>
auto argmax(E const& x) {
  return detail::reduce_dim<call::argmax, detail::reduction_kind::argmax, false, D>(x);
}
/// Index of the maximum along D, keeping D with extent 1.
template <class D, detail::Operand E>
auto argmax(E const& x, keep_dim_t) {
  return detail::reduce_dim<call::argmax, detail::reduction_kind::argmax, true, D>(x);
}
/// @}

/// @name Full reductions (rank-0 results)
/// @{

/// Sum of all elements.
template <detail::Operand E>
auto sum(E const& x) {
  return detail::reduce_all<call::sum, detail::reduction_kind::sum>(x);
}
/// Mean of all elements (float and double tensors only).
template <detail::Operand E>
auto mean(E const& x) {
  return detail::reduce_all<call::mean, detail::reduction_kind::mean>(x);
}
/// Maximum of all elements; `value_error` for an empty tensor.
template <detail::Operand E>
auto max(E const& x) {
  return detail::reduce_all<call::max, detail::reduction_kind::max>(x);
}
/// Minimum of all elements; `value_error` for an empty tensor.
template <detail::Operand E>
auto min(E const& x) {
  return detail::reduce_all<call::min, detail::reduction_kind::min>(x);
}
/// @}

}  // namespace dimtensor
