#pragma once
/// @file
/// @brief Run-time shape helpers: extents, row-major strides, names and the
/// text that shape errors print.

#include <array>
#include <cstddef>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include <boost/mp11/algorithm.hpp>

#include <dimtensor/core/dims.hpp>
#include <dimtensor/core/error.hpp>

namespace dimtensor::detail {

/// The names of the dims in L, in order.
template <class L>
struct names_of;
template <class... S>
struct names_of<dims<S...>> {
  static constexpr std::array<std::string_view, sizeof...(S)> value{dim_name_v<dim_of<S>>...};
};

/// The static extents of L (dynamic_extent where unknown).
template <class L>
struct static_extents_of;
template <class... S>
struct static_extents_of<dims<S...>> {
  static constexpr std::array<index_t, sizeof...(S)> value{static_extent_v<S>...};
};

/// Row-major strides of @p ext.
template <std::size_t R>
constexpr std::array<index_t, R> row_major_strides(std::array<index_t, R> const& ext) {
  std::array<index_t, R> s{};
  index_t acc = 1;
  for (std::size_t k = R; k-- > 0;) {
    s[k] = acc;
    acc *= ext[k];
  }
  return s;
}

/// Product of the extents.
template <std::size_t R>
constexpr index_t element_count(std::array<index_t, R> const& ext) {
  index_t n = 1;
  for (auto e : ext) n *= e;
  return n;
}

/// Whether a layout is row-major contiguous (dims of extent 1 may have any stride).
template <std::size_t R>
constexpr bool is_row_major(std::array<index_t, R> const& ext, std::array<index_t, R> const& str) {
  index_t expected = 1;
  for (std::size_t k = R; k-- > 0;) {
    if (ext[k] != 1 && str[k] != expected) return false;
    expected *= ext[k];
  }
  return true;
}

/// "[Batch=2, Queries=4]" from the names and extents as run-time data: the
/// one body every dims list shares (shape_string<L> is a thin shell).
std::string shape_text(std::span<std::string_view const> names, std::span<index_t const> ext);

/// "[Batch=2, Queries=4]"
template <class L, std::size_t R>
std::string shape_string(std::array<index_t, R> const& ext) {
  static_assert(rank_v<L> == R);
  return shape_text(names_of<L>::value, ext);
}

/// Throws shape_error: "<op>: extent mismatch for dimension <dim>: <a> vs <b>".
[[noreturn]] void throw_extent_mismatch(std::string_view op, std::string_view dim, index_t a, index_t b,
                                        std::string_view what_a = "left", std::string_view what_b = "right");

/// Throws value_error: "element access: index <i> out of range for dimension <dim> of extent <n>".
[[noreturn]] void throw_index_out_of_range(index_t i, std::string_view dim, index_t extent);

/// "<call>: <message>"; the message as it is when it already starts with "<call>: ".
std::string in_call_message(std::string_view call, std::string_view message);

/// @brief Runs @p f and returns what it returns; a `shape_error` or
/// `value_error` thrown inside gets @p call in front of its message
/// ("dot_product_attention: contract: extent mismatch …"): a module's or a
/// loss's errors name the call the user wrote first, and keep the inner
/// operation as context.
template <class F>
decltype(auto) in_call(std::string_view call, F&& f) {
  try {
    return std::forward<F>(f)();
  } catch (shape_error const& e) {
    throw shape_error(in_call_message(call, e.what()));
  } catch (value_error const& e) {
    throw value_error(in_call_message(call, e.what()));
  }
}

/// @brief Checks that the operands @p a and @p b of @p call have the same
/// extent for each dim of the list @p Dims (tags both have); throws
/// `shape_error` "<call>: <b_name>: extent mismatch for dimension <D>: <x>
/// (<a_name>) vs <y> (<b_name>)" for the first that differs.  A dim of
/// static extent 1 on either side broadcasts and is not checked.
template <class Dims, class A, class B>
void check_operand_extents(std::string_view call, A const& a, std::string_view a_name, B const& b,
                           std::string_view b_name) {
  using SA = typename A::specs;
  using SB = typename B::specs;
  auto const& ea = a.extents();
  auto const& eb = b.extents();
  boost::mp11::mp_for_each<boost::mp11::mp_transform<boost::mp11::mp_identity, Dims>>([&](auto d) {
    using D = typename decltype(d)::type;
    constexpr std::size_t ia = index_of_v<D, SA>;
    constexpr std::size_t ib = index_of_v<D, SB>;
    if constexpr (static_extent_v<spec_at<SA, ia>> != 1 && static_extent_v<spec_at<SB, ib>> != 1) {
      if (ea[ia] != eb[ib]) {
        throw_extent_mismatch(std::string(call) + ": " + std::string(b_name), dim_name_v<D>, ea[ia], eb[ib], a_name,
                              b_name);
      }
    }
  });
}

/// The tags that the dims lists @p L1 and @p L2 share, in L1's order, less those of the list @p Except.
template <class L1, class L2, class Except = boost::mp11::mp_list<>>
using shared_tags = boost::mp11::mp_copy_if_q<
    boost::mp11::mp_remove_if_q<tags_of<L1>, boost::mp11::mp_bind_front<boost::mp11::mp_contains, Except>>,
    boost::mp11::mp_bind_front<boost::mp11::mp_contains, tags_of<L2>>>;

/// @brief @p extent · @p factor for non-negative numbers, or `value_error`
/// "<op>: <what()> overflows the extent (…)" when the product overflows an
/// index_t; @p what spells the operand ("dimension Batch of extent 4
/// repeated 4611686018427387905 times") only then.  The one place where an
/// operation makes a new extent by multiplying; the tensor built from it
/// checks the whole shape (checked_element_count).
template <class What>
index_t checked_extent_product(std::string_view op, index_t extent, index_t factor, What const& what) {
  if (extent != 0 && factor > std::numeric_limits<index_t>::max() / extent) {
    throw value_error(std::string(op) + ": " + std::string(what()) + " overflows the extent (" +
                      std::to_string(extent) + " x " + std::to_string(factor) + " > " +
                      std::to_string(std::numeric_limits<index_t>::max()) + ")");
  }
  return extent * factor;
}

/// @brief @p a + @p b for non-negative extents, or `value_error`
/// "<op>: <what()> overflows the extent (…)" when the sum overflows an index_t.
template <class What>
index_t checked_extent_sum(std::string_view op, index_t a, index_t b, What const& what) {
  if (a > std::numeric_limits<index_t>::max() - b) {
    throw value_error(std::string(op) + ": " + std::string(what()) + " overflows the extent (" + std::to_string(a) +
                      " + " + std::to_string(b) + " > " + std::to_string(std::numeric_limits<index_t>::max()) + ")");
  }
  return a + b;
}

/// @brief Product of the extents (all non-negative), or `value_error` naming
/// @p op and the shape when the elements, of @p element_size bytes each,
/// would need more bytes than an index_t can count (the product or the byte
/// size would overflow, and a too small buffer would be allocated).  The
/// non-zero extents must pass even when another is 0: the strides multiply them.
/// The names and extents are run-time data; checked_element_count<L> is its shell.
index_t checked_element_count_of(std::string_view op, std::span<std::string_view const> names,
                                 std::span<index_t const> ext, std::size_t element_size);

/// checked_element_count_of with the names of L.
template <class L, std::size_t R>
index_t checked_element_count(std::string_view op, std::array<index_t, R> const& ext, std::size_t element_size) {
  static_assert(rank_v<L> == R);
  return checked_element_count_of(op, names_of<L>::value, ext, element_size);
}

/// Checks run-time extents against static ones (dynamic_extent where any
/// extent goes), names and extents as run-time data; check_static_extents<L>
/// is its shell.
void check_static_extents_of(std::string_view op, std::span<std::string_view const> names,
                             std::span<index_t const> want_extents, std::span<index_t const> ext);

/// Checks run-time extents against L's static extents.
template <class L, std::size_t R>
void check_static_extents(std::string_view op, std::array<index_t, R> const& ext) {
  static_assert(rank_v<L> == R);
  check_static_extents_of(op, names_of<L>::value, static_extents_of<L>::value, ext);
}

}  // namespace dimtensor::detail

namespace dimtensor {

namespace meta {
/// The names of a dims list's dims (`names_of<L>::value`), its static
/// extents (`static_extents_of<L>::value`) and the tags two lists share
/// (`shared_tags<L1, L2, Except>`): see their definitions (core/shape.hpp).
using detail::names_of;
using detail::shared_tags;
using detail::static_extents_of;
}  // namespace meta

/// @name The run-time checks and messages of the shape rules, for writing
/// modules and operations: a shape as text (`shape_string<L>(extents)`:
/// "[Batch=2, Queries=3]"), the extent-mismatch error, the check of two
/// operands' shared extents, and sums and products of extents that refuse
/// to overflow.  Defined in core/shape.hpp's detail namespace, whose
/// comments give their messages.
/// @{
using detail::check_operand_extents;
using detail::checked_extent_product;
using detail::checked_extent_sum;
using detail::shape_string;
using detail::throw_extent_mismatch;
/// @}

}  // namespace dimtensor
