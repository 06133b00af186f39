#pragma once
/// @file
/// @brief Whole-tensor comparisons: `equal`, `allclose`, `max_abs_diff`.
///
/// Both operands must have the same dims in the same order and the same
/// element type; anything else is a compile error naming the dims
/// (`different_dims<call::allclose, dims<Batch, Queries>, dims<Queries, Batch>>`).
/// Nothing broadcasts: run-time extents must agree, or `equal` is false and
/// `allclose` / `max_abs_diff` throw `shape_error` naming the dim and both
/// sizes.  Expressions are evaluated first, on their backend; elements the
/// host cannot read (`cuda`) are copied to the host to be compared.  (For
/// elementwise comparisons giving bool tensors see `eq`, `ne`, `<`, … in
/// ops/elementwise.hpp.)

#include <array>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <limits>
#include <string>
#include <type_traits>

#include <dimtensor/core/concepts.hpp>
#include <dimtensor/core/diagnostic.hpp>
#include <dimtensor/core/dims.hpp>
#include <dimtensor/core/error.hpp>
#include <dimtensor/core/shape.hpp>
#include <dimtensor/kernel/call.hpp>
#include <dimtensor/ops/to.hpp>
#include <dimtensor/tensor/tensor.hpp>

namespace dimtensor {

namespace call {
/// `equal(a, b)` in diagnostics.
struct equal : named<"equal"> {};
/// `allclose(a, b)` in diagnostics.
struct allclose : named<"allclose"> {};
/// `max_abs_diff(a, b)` in diagnostics.
struct max_abs_diff : named<"max_abs_diff"> {};
}  // namespace call

namespace diagnostic {

/// Whole-tensor comparisons need the same dims, in the same order, on both sides.
template <class Call, class LeftDims, class RightDims>
struct different_dims {
  static_assert(always_false<Call, LeftDims, RightDims>,
                "dimtensor: the compared tensors must have the same dims in the same order "
                "(see different_dims<call, left dims, right dims> above); transpose, rename or "
                "squeeze one of them first");
};

}  // namespace diagnostic

namespace detail {

template <class A>
concept CompareOperand = Expression<expr_t<A>> || is_ill_formed_v<A>;

/// The first position where both specs have static extents and they differ (rank when none).
template <class L, class R>
constexpr std::size_t first_static_conflict() {
  constexpr auto a = static_extents_of<L>::value;
  constexpr auto b = static_extents_of<R>::value;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i] != dynamic_extent && b[i] != dynamic_extent && a[i] != b[i]) return i;
  }
  return a.size();
}

/// Whether two operands can be compared; instantiates no diagnostic, so it
/// is safe in `if constexpr` (clang treats a constexpr call that instantiated
/// a failed diagnostic as "not a constant expression" and goes on to the
/// other branch, a cascade).
template <class A, class B>
constexpr bool comparable() {
  if constexpr (any_ill_formed_v<A, B>) {
    return false;
  } else if constexpr (!std::is_same_v<typename A::backend, typename B::backend> ||
                       !std::is_same_v<typename A::value_type, typename B::value_type> ||
                       !same_tags_v<typename A::specs, typename B::specs>) {
    return false;
  } else {
    return first_static_conflict<typename A::specs, typename B::specs>() == rank_v<typename A::specs>;
  }
}

/// Checks the operands of a whole-tensor comparison; instantiates the
/// diagnostic and returns false when they cannot be compared.  Call it only
/// where comparable() is false.
template <class Call, class A, class B>
constexpr auto check_comparable() {
  if constexpr (any_ill_formed_v<A, B>) {
    return false;
  } else if constexpr (!std::is_same_v<typename A::backend, typename B::backend>) {
    (void)diagnostic::fire<diagnostic::backends_differ<Call, typename A::backend, typename B::backend>>;
    return false;
  } else if constexpr (!std::is_same_v<typename A::value_type, typename B::value_type>) {
    (void)diagnostic::fire<diagnostic::element_types_differ<Call, typename A::value_type, typename B::value_type>>;
    return false;
  } else if constexpr (!same_tags_v<typename A::specs, typename B::specs>) {
    (void)diagnostic::fire<diagnostic::different_dims<Call, typename A::specs, typename B::specs>>;
    return false;
  } else if constexpr (constexpr std::size_t i = first_static_conflict<typename A::specs, typename B::specs>();
                       i < rank_v<typename A::specs>) {
    using left = spec_at<typename A::specs, i>;
    using right = spec_at<typename B::specs, i>;
    (void)diagnostic::fire<diagnostic::extent_mismatch<
        Call, dim_of<left>, diagnostic::extents<static_extent_v<left>, static_extent_v<right>>>>;
    return false;
  } else {
    return true;
  }
}

/// The shortest text that reads back as @p v ("1e-05").
inline std::string tolerance_text(double v) {
  char buf[32];
  auto const r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

/// Whether the run-time extents agree; when they do not and @p op is given, throws shape_error.
template <class L, std::size_t R>
bool same_extents(char const* op, std::array<index_t, R> const& a, std::array<index_t, R> const& b) {
  for (std::size_t i = 0; i < R; ++i) {
    if (a[i] != b[i]) {
      if (op != nullptr) throw_extent_mismatch(op, names_of<L>::value[i], a[i], b[i]);
      return false;
    }
  }
  return true;
}

/// Calls @p f(x, y) on each pair of elements of two tensors of equal extents,
/// in row-major order, until it returns false; returns whether none did.
/// Elements the host cannot read are copied to the host first.
template <class TA, class TB, class F>
bool all_pairs(TA const& a, TB const& b, F f) {
  auto const ca = to_host(a);
  auto const cb = to_host(b);
  auto const* pa = ca.data();
  auto const* pb = cb.data();
  index_t const n = ca.size();
  for (index_t i = 0; i < n; ++i) {
    if (!f(pa[i], pb[i])) return false;
  }
  return true;
}

}  // namespace detail

/// @brief Whether @p a and @p b hold the same elements (as `torch.equal`):
/// same extents and every pair equal (`NaN` is never equal; `-0.0 == 0.0`).
/// Extents that differ give false, not an error.
template <detail::CompareOperand A, detail::CompareOperand B>
bool equal(A const& a, B const& b) {
  if constexpr (!detail::comparable<A, B>()) {
    (void)detail::check_comparable<call::equal, A, B>();
    return false;
  } else {
    auto const ta = eval(a);
    auto const tb = eval(b);
    if (!detail::same_extents<typename A::specs>(nullptr, ta.extents(), tb.extents())) return false;
    return detail::all_pairs(ta, tb, [](auto x, auto y) { return x == y; });
  }
}

/// @brief Whether every pair satisfies |a - b| <= atol + rtol * |b| (as
/// `torch.allclose`, not symmetric in a and b): equal values (infinities
/// included) are close, `NaN` is never close.  Computed in double.
///
/// Throws `shape_error` when the extents differ and `value_error` when
/// @p rtol or @p atol is negative or NaN.
template <detail::CompareOperand A, detail::CompareOperand B>
bool allclose(A const& a, B const& b, double rtol = 1e-5, double atol = 1e-8) {
  if constexpr (!detail::comparable<A, B>()) {
    (void)detail::check_comparable<call::allclose, A, B>();
    return false;
  } else {
    if (!(rtol >= 0) || !(atol >= 0)) {
      throw value_error("allclose: rtol and atol must be >= 0, got rtol " + detail::tolerance_text(rtol) +
                        " and atol " + detail::tolerance_text(atol));
    }
    auto const ta = eval(a);
    auto const tb = eval(b);
    detail::same_extents<typename A::specs>("allclose", ta.extents(), tb.extents());
    return detail::all_pairs(ta, tb, [&](auto x, auto y) {
      if (x == y) return true;
      auto const dx = static_cast<double>(x);
      auto const dy = static_cast<double>(y);
      if (!std::isfinite(dx) || !std::isfinite(dy)) return false;
      return std::abs(dx - dy) <= atol + rtol * std::abs(dy);
    });
  }
}

/// @brief The largest |a - b| over all pairs, in double (0 for empty
/// tensors).  Equal values, infinities included, differ by 0; a NaN on
/// either side makes the result NaN.  Throws `shape_error` when the extents differ.
template <detail::CompareOperand A, detail::CompareOperand B>
double max_abs_diff(A const& a, B const& b) {
  if constexpr (!detail::comparable<A, B>()) {
    (void)detail::check_comparable<call::max_abs_diff, A, B>();
    return std::numeric_limits<double>::quiet_NaN();
  } else {
    auto const ta = eval(a);
    auto const tb = eval(b);
    detail::same_extents<typename A::specs>("max_abs_diff", ta.extents(), tb.extents());
    double worst = 0;
    detail::all_pairs(ta, tb, [&](auto x, auto y) {
      if (x == y) return true;
      double const d = std::abs(static_cast<double>(x) - static_cast<double>(y));
      if (std::isnan(d)) {
        worst = d;
        return false;  // nothing can raise it further
      }
      if (d > worst) worst = d;
      return true;
    });
    return worst;
  }
}

}  // namespace dimtensor
