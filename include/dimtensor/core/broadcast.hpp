#pragma once
/// @file
/// @brief The broadcasting rule, at the type level.
///
/// Operands are aligned from the right (as in NumPy and PyTorch).  At every
/// aligned position both operands must name the same dimension; a position
/// only one operand has is broadcast.  A dim sharded over a mesh axis
/// (`Batch::sharded<Data>`) must be sharded over the same axis in both
/// operands, unless one's extent is a static 1.  Extents combine as follows:
///  - equal static extents stay static;
///  - a static extent 1 (what `unsqueeze` makes) broadcasts against anything;
///  - a static and a dynamic extent give the static one, checked at run time;
///  - two dynamic extents must be equal at run time (`shape_error` otherwise);
///    a dynamic extent that happens to be 1 is **not** broadcast.
/// Any other pair is a compile error naming the position and the dims.

#include <cstddef>
#include <type_traits>

#include <boost/mp11/algorithm.hpp>

#include <dimtensor/core/diagnostic.hpp>
#include <dimtensor/core/dims.hpp>

namespace dimtensor::detail {

enum class broadcast_status { ok, dims_differ, extents_differ, axes_differ };

/// The combination of two specs at one aligned position.
template <class A, class B>
struct combine_specs {
  static constexpr index_t ea = static_extent_v<A>;
  static constexpr index_t eb = static_extent_v<B>;
  static constexpr broadcast_status status =
      !std::is_same_v<dim_of<A>, dim_of<B>>                       ? broadcast_status::dims_differ
      : (ea >= 0 && eb >= 0 && ea != eb && ea != 1 && eb != 1)   ? broadcast_status::extents_differ
      // a dim sharded differently (a static extent 1 broadcasts to every part)
      : (!std::is_same_v<axis_of<A>, axis_of<B>> && ea != 1 && eb != 1) ? broadcast_status::axes_differ
                                                                 : broadcast_status::ok;
  using type = std::conditional_t<
      ea == 1, B,
      std::conditional_t<eb == 1, A, std::conditional_t<(ea >= 0), A, B>>>;
};

template <class L, class R, std::size_t I>
struct broadcast_at {
  static constexpr std::size_t nl = rank_v<L>;
  static constexpr std::size_t nr = rank_v<R>;
  static constexpr std::size_t n = nl > nr ? nl : nr;
  static constexpr bool in_l = I + nl >= n;
  static constexpr bool in_r = I + nr >= n;

  template <class X, class Y>
  struct pick {
    using c = combine_specs<X, Y>;
    using type = typename c::type;
    static constexpr broadcast_status status = c::status;
  };
  template <class X>
  struct only {
    using type = X;
    static constexpr broadcast_status status = broadcast_status::ok;
  };
  template <bool HasL, bool HasR, class = void>
  struct select;
  template <class V>
  struct select<true, true, V> : pick<spec_at<L, I + nl - n>, spec_at<R, I + nr - n>> {
    using left = spec_at<L, I + nl - n>;
    using right = spec_at<R, I + nr - n>;
  };
  template <class V>
  struct select<true, false, V> : only<spec_at<L, I + nl - n>> {
    using left = spec_at<L, I + nl - n>;
    using right = left;
  };
  template <class V>
  struct select<false, true, V> : only<spec_at<R, I + nr - n>> {
    using right = spec_at<R, I + nr - n>;
    using left = right;
  };
  using sel = select<in_l, in_r>;
  using type = typename sel::type;
  using left = typename sel::left;
  using right = typename sel::right;
  static constexpr broadcast_status status = sel::status;
};

template <class L, class R>
struct broadcast {
  static constexpr std::size_t n = rank_v<L> > rank_v<R> ? rank_v<L> : rank_v<R>;
  template <class I>
  using at = broadcast_at<L, R, I::value>;
  using positions = boost::mp11::mp_iota_c<n>;
  template <class I>
  using is_bad = std::bool_constant<at<I>::status != broadcast_status::ok>;
  static constexpr std::size_t first_bad = boost::mp11::mp_find_if<positions, is_bad>::value;
  static constexpr bool ok = first_bad == n;
  template <class I>
  using spec = typename at<I>::type;
  using type = boost::mp11::mp_rename<boost::mp11::mp_transform<spec, positions>, dims>;
};

/// Instantiates the diagnostic for a failed broadcast of L and R in Call.
template <class Call, class L, class R>
constexpr auto diagnose_broadcast() {
  using b = broadcast<L, R>;
  using at = broadcast_at<L, R, b::first_bad>;
  if constexpr (at::status == broadcast_status::dims_differ) {
    (void)diagnostic::fire<diagnostic::operands_disagree<Call, diagnostic::at_position<b::first_bad>,
                                                         diagnostic::left_has<dim_of<typename at::left>>,
                                                         diagnostic::right_has<dim_of<typename at::right>>>>;
  } else if constexpr (at::status == broadcast_status::axes_differ) {
    (void)diagnostic::fire<diagnostic::sharded_differently<
        Call, dim_of<typename at::left>,
        diagnostic::left_axis<typename diagnostic::axis_name_of<axis_of<typename at::left>>::type>,
        diagnostic::right_axis<typename diagnostic::axis_name_of<axis_of<typename at::right>>::type>>>;
  } else {
    (void)diagnostic::fire<diagnostic::extent_mismatch<
        Call, dim_of<typename at::left>,
        diagnostic::extents<static_extent_v<typename at::left>, static_extent_v<typename at::right>>>>;
  }
}

}  // namespace dimtensor::detail
