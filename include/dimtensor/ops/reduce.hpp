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
#include <dimtensor/backends/backend.hpp>
#include <dimtensor/core/concepts.hpp>
#include <dimtensor/core/diagnostic.hpp>
#include <dimtensor/core/dims.hpp>
#include <dimtensor/core/error.hpp>
#include <dimtensor/core/shape.hpp>
#include <dimtensor/ops/elementwise.hpp>
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

/// Extents seen as [outer, n, inner] around one dim: how the kernels see a
/// row-major tensor.
struct split_extents {
  index_t outer;  ///< product of the extents before the dim
  index_t n;      ///< the dim's extent
  index_t inner;  ///< product of the extents after the dim
};

/// @p ext seen as [outer, n, inner] around position I.
template <std::size_t I, std::size_t R>
constexpr split_extents split_around(std::array<index_t, R> const& ext) {
  split_extents s{1, ext[I], 1};
  for (std::size_t k = 0; k < I; ++k) s.outer *= ext[k];
  for (std::size_t k = I + 1; k < R; ++k) s.inner *= ext[k];
  return s;
}

/// The rules of the operations that work on lines `[outer, n, inner]`.
enum class line_rule : std::uint8_t {
  softmax,         ///< softmax's: y (g - Σ g y)
  log_softmax,     ///< log_softmax's: g - e^y Σ g
  masked_softmax,  ///< softmax's within the valid length, 0 beyond
  sum,             ///< the gradient expanded over n
  mean,            ///< the gradient over n expanded over n
  extremum,        ///< to the first extremum of each line
  extremum_all,    ///< split evenly among the elements equal to the extremum (one line)
  sequence_mask,   ///< the gradient within the valid length, 0 beyond
  sum_repeats,     ///< repeat_interleave's: the n repeats summed back
  index_add        ///< index_select's: each selected index adds its entries of g
};

/// @brief The node of an operation on lines `[outer, n, inner]` of its
/// contiguous input (softmax, log_softmax, masked_softmax, and the
/// reductions): one body per backend and element type, whatever the dims.
template <class Backend, class T>
class line_node final : public autograd::node {
 public:
  /// What a rule reads, kept alive with the node.
  struct saved {
    std::shared_ptr<void const> keep;  ///< keeps `data` alive
    T const* data = nullptr;           ///< the result (softmax) or the input (extremum)
    std::shared_ptr<void const> extremum_keep;
    T const* extremum = nullptr;  ///< the extremum of each line (extremum)
    T extremum_all{};             ///< the extremum (extremum_all)
    std::shared_ptr<void const> lens_keep;
    std::int64_t const* lens = nullptr;  ///< valid lengths, or index_select's indices
    index_t repeat = 1;                  ///< lines per valid length
    index_t count = 0;                   ///< index_select's number of indices
  };

  /// The node named @p name of @p rule over lines @p s of the input
  /// @p source, of @p size elements.
  line_node(std::string_view name, line_rule rule, std::shared_ptr<autograd::tensor_state> source, index_t size,
            split_extents s, saved keep)
      : node(name), rule_(rule), size_(size), s_(s), saved_(std::move(keep)) {
    inputs.push_back(std::move(source));
  }

  /// Computes the input's gradient and adds it.
  void backward(autograd::tensor_state const& out) override {
    T const* const g = static_cast<T const*>(out.grad_data);
    index_t const n = size_;
    auto dx = std::make_shared<typename Backend::template storage<T>>(n);
    T* const d = dx->data();
    T const* const y = saved_.data;
    switch (rule_) {
      case line_rule::softmax: backend_softmax_backward(Backend{}, y, g, d, s_.outer, s_.n, s_.inner); break;
      case line_rule::log_softmax: backend_log_softmax_backward(Backend{}, y, g, d, s_.outer, s_.n, s_.inner); break;
      case line_rule::masked_softmax:
        backend_masked_softmax_backward(Backend{}, y, g, d, s_.outer, s_.n, s_.inner, saved_.lens, saved_.repeat);
        break;
      case line_rule::sum:
      case line_rule::mean: {
        // g (one value per [outer, inner]) read with stride 0 along n.
        std::array<index_t, 3> const ext{s_.outer, s_.n, s_.inner};
        strided_evaluator<T, 3> const ev{g, g, {s_.inner, 0, 1}, s_.n == 1};
        if (rule_ == line_rule::sum) {
          backend_assign(Backend{}, d, ext, ev);
        } else {
          using mean_ev = map_evaluator<fn::divides, strided_evaluator<T, 3>, scalar_evaluator<T>>;
          backend_assign(Backend{}, d, ext, mean_ev{fn::divides{}, {ev, {static_cast<T>(s_.n)}}});
        }
        break;
      }
      case line_rule::extremum:
        backend_extremum_backward(Backend{}, y, saved_.extremum, g, d, s_.outer, s_.n, s_.inner);
        break;
      case line_rule::extremum_all:
        backend_extremum_all_backward(Backend{}, y, n, saved_.extremum_all, read_element(Backend{}, g), d);
        break;
      case line_rule::sequence_mask:
        backend_sequence_mask(Backend{}, g, d, s_.outer, s_.n, s_.inner, saved_.lens, saved_.repeat, T(0));
        break;
      case line_rule::sum_repeats: backend_sum(Backend{}, g, d, s_.outer, s_.n, s_.inner); break;
      case line_rule::index_add:
        backend_fill(Backend{}, d, n, T(0));
        backend_index_add(Backend{}, d, g, s_.outer, s_.n, s_.inner, saved_.lens, saved_.count);
        break;
    }
    autograd::add_gradient<Backend, T>(*inputs.front(), std::move(dx), n);
  }

 private:
  line_rule rule_;
  index_t size_;
  split_extents s_;
  saved saved_;
};

/// Records @p out as made by @p rule from the contiguous input @p in, seen
/// as lines @p s.
template <class Out, class In>
void record_lines(std::string_view name, Out& out, In const& in, line_rule rule, split_extents s,
                  typename line_node<typename In::backend, typename In::value_type>::saved keep) {
  using node_t = line_node<typename In::backend, typename In::value_type>;
  out.attach_grad_fn(std::make_shared<node_t>(name, rule, in.grad_state(), in.size(), s, std::move(keep)));
}

/// @p t's elements as 64-bit integers (t itself when they are): what the
/// rules read lengths and indices as.
template <class X>
auto as_int64(X const& t) {
  if constexpr (std::is_same_v<typename X::value_type, std::int64_t>) {
    return t;
  } else {
    return eval(cast<std::int64_t>(t));
  }
}

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
void run_reduction(T const* in, R* out, split_extents s) {
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
    } else {
      using R = reduction_result_t<K, T>;
      using out_t = tensor_with_dims<typename E::backend, R, reduced_dims<D, S, Keep>>;
      constexpr std::size_t I = index_of_v<D, S>;
      auto const in = eval(x).contiguous();
      split_extents const s = split_around<I>(in.extents());
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
            record_lines(reduction_name<K>, out, in, K == reduction_kind::sum ? line_rule::sum : line_rule::mean, s, {});
          }
        }
      } else if constexpr (K == reduction_kind::max || K == reduction_kind::min) {
        if constexpr (std::is_floating_point_v<T>) {
          if (autograd::should_record(in)) {
            // To the first extremum along D (argmax's index), as PyTorch's max(dim) does.
            typename line_node<typename E::backend, T>::saved keep;
            keep.keep = in.storage();
            keep.data = in.data();
            keep.extremum_keep = out.storage();
            keep.extremum = out.data();
            record_lines(reduction_name<K>, out, in, line_rule::extremum, s, std::move(keep));
          }
        }
      }
      return out;
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
      run_reduction<K, typename E::backend>(in.data(), out.data(), split_extents{1, in.size(), 1});
      if constexpr (K == reduction_kind::sum || K == reduction_kind::mean) {
        if constexpr (std::is_floating_point_v<T>) {
          if (autograd::should_record(in)) {
            // A rank-0 gradient broadcasts over every position (one line).
            record_lines(reduction_name<K>, out, in, K == reduction_kind::sum ? line_rule::sum : line_rule::mean,
                         split_extents{1, in.size(), 1}, {});
          }
        }
      } else if constexpr (K == reduction_kind::max || K == reduction_kind::min) {
        if constexpr (std::is_floating_point_v<T>) {
          if (autograd::should_record(in)) {
            // Split evenly among the elements equal to the extremum, as PyTorch's max() does.
            typename line_node<typename E::backend, T>::saved keep;
            keep.keep = in.storage();
            keep.data = in.data();
            keep.extremum_all = out.item();
            record_lines(reduction_name<K>, out, in, line_rule::extremum_all, split_extents{1, in.size(), 1},
                         std::move(keep));
          }
        }
      }
      return out;
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
