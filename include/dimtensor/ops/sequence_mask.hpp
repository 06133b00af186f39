#pragma once
/// @file
/// @brief `sequence_mask<D>(x, valid_len, value)`: d2l's `sequence_mask`,
/// generalized to any dim, and the valid-length checks it shares with
/// `masked_softmax`.
///
/// Every element of x at index >= its row's valid length along D is
/// replaced by `value`.  The valid lengths are an int32 or int64 tensor
/// whose dims are a leading part (a prefix, in order) of x's dims without
/// D; they broadcast by name over the remaining dims.  For d2l's
/// `X [batch, steps]` with `valid_len [batch]`, that is
/// `sequence_mask<Steps>(X, valid_len)` — or `sequence_mask(X, valid_len)`,
/// which masks x's last dim.
///
/// Unlike d2l's, which writes into X, this returns a new tensor and leaves
/// x as it was; assign the result back (`x.assign(sequence_mask(x, …))`) to
/// get d2l's effect.  Also unlike d2l's, a valid length below 0 or above
/// D's extent is a `value_error` (d2l masks everything or nothing).
///
/// Differentiable in x: the kept elements pass their gradient through, the
/// replaced ones get 0; the valid lengths get none.

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

#include <boost/mp11/algorithm.hpp>

#include <dimtensor/autograd/propagate.hpp>
#include <dimtensor/autograd/rules/line.hpp>
#include <dimtensor/backends/backend.hpp>
#include <dimtensor/core/checked.hpp>
#include <dimtensor/core/concepts.hpp>
#include <dimtensor/core/diagnostic.hpp>
#include <dimtensor/core/dims.hpp>
#include <dimtensor/core/error.hpp>
#include <dimtensor/core/shape.hpp>
#include <dimtensor/kernel/call.hpp>
#include <dimtensor/kernel/layout.hpp>
#include <dimtensor/ops/elementwise.hpp>
#include <dimtensor/ops/reduce.hpp>
#include <dimtensor/tensor/lengths.hpp>
#include <dimtensor/tensor/tensor.hpp>

namespace dimtensor {

namespace diagnostic {

/// The valid lengths of sequence_mask or masked_softmax do not hold integers.
template <class Call, class T>
struct valid_lens_not_integral {
  static_assert(always_false<Call, T>,
                "dimtensor: valid_lens must hold std::int32_t or std::int64_t elements "
                "(see valid_lens_not_integral<call, element type of valid_lens> above)");
};

/// Typed valid lengths (`lengths<Measured, …>`) given to a call that masks another dim.
template <class Call, class Measured, class Masked>
struct valid_lens_measure_another_dim {
  static_assert(always_false<Call, Measured, Masked>,
                "dimtensor: the valid lengths measure another dim than the one the call masks (see "
                "valid_lens_measure_another_dim<call, measured<dim of the lengths>, masked<dim of the call>> above); "
                "pass the lengths of the masked dim's sequences");
};

/// The dim typed valid lengths measure, in diagnostics.
template <class D>
struct measured {};
/// The dim a call masks or attends over, in diagnostics.
template <class D>
struct masked {};

/// `valid_lengths<D>(mask)` given a mask that does not hold bools.
template <class Call, class T>
struct mask_not_bool {
  static_assert(
      always_false<Call, T>,
      "dimtensor: valid_lengths counts the true elements of a bool mask, e.g. valid_lengths<Steps>(ne(tokens, pad)) "
      "(see mask_not_bool<call, element type of the mask> above)");
};

/// The valid lengths' dims do not lead the dims of the masked tensor without the masked dim.
template <class Call, class ValidLensDims, class DimsWithoutMasked>
struct valid_lens_not_a_leading_part {
  static_assert(always_false<Call, ValidLensDims, DimsWithoutMasked>,
                "dimtensor: valid_lens' dims must be a leading part (a prefix, in order) of the scores' dims "
                "without the masked dimension (see valid_lens_not_a_leading_part<call, dims of valid_lens, "
                "dims of the scores without the masked dimension> above)");
};

}  // namespace diagnostic

namespace detail {

/// The first position where the static extents of Lengths and Rest disagree, or rank_v<Lengths>.
template <class Lengths, class Rest>
constexpr std::size_t first_static_mismatch() {
  constexpr auto a = static_extents_of<Lengths>::value;
  constexpr auto b = static_extents_of<Rest>::value;
  for (std::size_t i = 0; i < rank_v<Lengths>; ++i) {
    if (a[i] != dynamic_extent && b[i] != dynamic_extent && a[i] != b[i]) return i;
  }
  return rank_v<Lengths>;
}

/// Whether valid lengths @p L may mask @p D: typed lengths of D's tag, or
/// untyped ones (a plain integer tensor, unchecked).
template <class L, class D>
inline constexpr bool measures_v = std::is_void_v<measured_dim_t<L>> || std::is_same_v<measured_dim_t<L>, dim_of<D>>;

/// The diagnosis for valid lengths @p L given to @p Call, which masks @p D:
/// `valid_lens_measure_another_dim<Call, measured<M>, masked<D>>` for typed
/// lengths of another dim M (named, not instantiated), else void.  Every
/// call that takes lengths (masking, the losses, the attention modules, the
/// sequence models) reports the mistake through it.
template <class Call, class L, class D>
using lens_measure_diagnosis_t =
    std::conditional_t<measures_v<L, D>, void,
                       diagnostic::valid_lens_measure_another_dim<Call, diagnostic::measured<measured_dim_t<L>>,
                                                                  diagnostic::masked<dim_of<D>>>>;

/// @brief The rule of valid lengths @p L given to @p Call, which masks
/// @p X along @p D: D a dim of X, lengths of D (when typed), on X's
/// backend, of int32 or int64, whose dims are a leading part of X's
/// without D with the same static extents. Returns the diagnosis naming
/// @p Call (`std::type_identity`, void when the lengths are right).
template <class Call, class D, class X, class L>
constexpr auto valid_lens_diagnosis() {
  using S = typename X::specs;
  using LS = typename L::specs;
  using LT = typename L::value_type;
  using rest = remove_dim<D, S>;
  if constexpr (!contains_v<D, S>) {
    return std::type_identity<diagnostic::not_a_dimension_of<Call, D, S>>{};
  } else if constexpr (!measures_v<L, D>) {
    return std::type_identity<lens_measure_diagnosis_t<Call, L, D>>{};
  } else if constexpr (!std::is_same_v<typename L::backend, typename X::backend>) {
    return std::type_identity<diagnostic::backends_differ<Call, typename X::backend, typename L::backend>>{};
  } else if constexpr (!std::is_same_v<LT, std::int32_t> && !std::is_same_v<LT, std::int64_t>) {
    return std::type_identity<diagnostic::valid_lens_not_integral<Call, LT>>{};
  } else if constexpr (!is_prefix_v<LS, rest>) {
    return std::type_identity<diagnostic::valid_lens_not_a_leading_part<Call, LS, rest>>{};
  } else if constexpr (first_static_mismatch<LS, rest>() < rank_v<LS>) {
    constexpr std::size_t bad = first_static_mismatch<LS, rest>();
    return std::type_identity<diagnostic::extent_mismatch<
        Call, dim_of<spec_at<LS, bad>>,
        diagnostic::extents<static_extent_v<spec_at<rest, bad>>, static_extent_v<spec_at<LS, bad>>>>>{};
  } else {
    return std::type_identity<void>{};
  }
}

/// valid_lens_diagnosis for lengths @p L, or void (no lengths) for void.
template <class Call, class D, class X, class L>
constexpr auto masking_diagnosis() {
  if constexpr (std::is_void_v<L>) {
    return std::type_identity<void>{};
  } else {
    return valid_lens_diagnosis<Call, D, X, L>();
  }
}

/// @brief Checks the run-time extents and values of valid lengths @p lens
/// (contiguous) for masking a tensor of dims @p S and extents @p xe along
/// D, and returns how many consecutive rows (of that tensor seen as
/// [outer, n, inner] around D) share one length.
///
/// Throws `shape_error` when an extent of lens differs from the tensor's
/// for the same dim, and `value_error` naming the first length outside
/// [0, extent of D], its position and the extent.
template <class D, class S, class LT, std::size_t R>
index_t check_valid_lens_extents(std::string_view call, std::string_view x_name, std::array<index_t, R> const& xe,
                                 LT const& lens) {
  using LS = typename LT::specs;
  constexpr std::size_t I = index_of_v<D, S>;
  constexpr std::size_t RL = LT::rank;
  auto const& le = lens.extents();
  auto position_in_x = [](std::size_t k) { return k < I ? k : k + 1; };
  for (std::size_t k = 0; k < RL; ++k) {
    if (le[k] != xe[position_in_x(k)]) {
      throw_extent_mismatch(call, names_of<LS>::value[k], xe[position_in_x(k)], le[k], x_name, "valid_lens");
    }
  }
  index_t repeat = 1;
  for (std::size_t k = RL; k + 1 < R; ++k) repeat *= xe[position_in_x(k)];
  index_t const extent = xe[I];
  index_t const bad = backend_first_invalid_length(typename LT::backend{}, lens.data(), lens.size(), extent);
  if (bad >= 0) {
    std::array<index_t, RL> at{};
    index_t rem = bad;
    for (std::size_t k = RL; k-- > 0;) {
      at[k] = rem % le[k];
      rem /= le[k];
    }
    throw value_error(std::string(call) + ": valid length " + std::to_string(detail::read_element(typename std::remove_cvref_t<decltype(lens)>::backend{}, lens.data() + bad)) + " at valid_lens" +
                      shape_string<LS>(at) + " is out of range for dimension " + std::string(dim_name_v<D>) +
                      " of extent " + std::to_string(extent) + " (a valid length must lie in [0, " +
                      std::to_string(extent) + "])");
  }
  return repeat > 0 ? repeat : 1;
}

/// check_valid_lens_extents for masking the tensor @p x along D.
template <class D, class XT, class LT>
index_t check_valid_lens_values(std::string_view call, std::string_view x_name, XT const& x, LT const& lens) {
  return check_valid_lens_extents<D, typename XT::specs>(call, x_name, x.extents(), lens);
}

}  // namespace detail

/// @name The rules of valid lengths, for a call of one's own that takes
/// them (defined above, in detail): whether lengths L may mask dim D
/// (`measures_v<L, D>`), the diagnosis of typed lengths of another dim
/// (`lens_measure_diagnosis_t<Call, L, D>`), the whole rule of lengths
/// against the masked tensor (`valid_lens_diagnosis<Call, D, X, L>()`, and
/// `masking_diagnosis`, void for no lengths), and the run-time check of
/// their extents and values (`check_valid_lens_extents`).
/// @{
using detail::check_valid_lens_extents;
using detail::lens_measure_diagnosis_t;
using detail::masking_diagnosis;
using detail::measures_v;
using detail::valid_lens_diagnosis;
/// @}

/// @brief d2l's `sequence_mask`, along any dim D: a copy of @p x in which
/// every element at index >= its row's valid length along D is @p value.
///
/// @p valid_len holds int32 or int64 lengths, one per row; its dims must be
/// a leading part of x's dims without D (else a compile error,
/// `valid_lens_not_a_leading_part<call::sequence_mask, …>`), and it
/// broadcasts over the rest.  A length outside [0, extent of D] throws
/// `value_error`.  Returns a new tensor (d2l's version writes into X).
template <class D, detail::Operand E, detail::Operand L, Scalar V = int>
auto sequence_mask(E const& x, L const& valid_len, V value = V(0)) {
  auto const diagnose = [] {
    if constexpr (any_ill_formed_v<E, L>) {
      return std::type_identity<ill_formed>{};
    } else {
      return detail::valid_lens_diagnosis<call::sequence_mask, D, E, L>();
    }
  }();
  if constexpr (rejects(diagnose)) {
    return ill_formed{};
  } else {
    return checked<call::sequence_mask>(
        [&](auto const& x, auto const& valid_len) {
          using T = typename E::value_type;
          static_assert(
              detail::scalar_fits<E, V>(),
              "dimtensor: a floating-point mask value with an integer tensor; cast the tensor first (cast<float>(x))");
          auto const in = eval(x).contiguous();
          auto const lens = eval(valid_len).contiguous();
          index_t const repeat = detail::check_valid_lens_values<D>("sequence_mask", "x", in, lens);
          using out_t = std::remove_cvref_t<decltype(in)>;
          out_t out(uninitialized, in.extents());
          kernel::lines const s = kernel::lines_along<detail::index_of_v<D, typename E::specs>>(in.extents());
          backend_sequence_mask(typename E::backend{}, in.data(), out.data(), s.outer, s.n, s.inner, lens.data(),
                                repeat, static_cast<T>(value));
          if constexpr (std::is_floating_point_v<T>) {
            if (autograd::should_record(in)) {
              // The kept elements pass the gradient through; the replaced ones get 0.
              typename autograd::line_node<typename E::backend, T>::saved keep;
              auto const wide = detail::as_int64(lens);
              keep.lens_keep = wide.storage();
              keep.lens = wide.data();
              keep.repeat = repeat;
              autograd::record_lines("sequence_mask", out, in, autograd::line_rule::sequence_mask, s, std::move(keep));
            }
          }
          return out;
        },
        x, valid_len);
  }
}

/// @brief d2l's `sequence_mask(X, valid_len, value)`: masks x's last dim
/// (`sequence_mask<D>` with D the last dim of x).
template <detail::Operand E, detail::Operand L, Scalar V = int>
auto sequence_mask(E const& x, L const& valid_len, V value = V(0)) {
  if constexpr (any_ill_formed_v<E, L>) {
    return ill_formed{};
  } else if constexpr (E::rank == 0) {
    static_assert(diagnostic::always_false<E>, "dimtensor: sequence_mask needs a tensor with at least one dim to mask");
    return ill_formed{};
  } else {
    return sequence_mask<dim_of<boost::mp11::mp_back<typename E::specs>>>(x, valid_len, value);
  }
}

/// @brief The counterpart of `sequence_mask`: the number of true elements
/// of the bool @p mask along D, as lengths along D (`lengths<D, …>`, int64,
/// the mask's other dims).  d2l's `(array != pad).sum(1)`:
/// `valid_lengths<Steps>(ne(tokens, pad))`.
///
/// D not a dim of the mask (`not_a_dimension_of`) or a mask of another
/// element type than bool (`mask_not_bool`) is a compile error.
template <class D, detail::Operand M>
auto valid_lengths(M const& mask) {
  if constexpr (is_ill_formed_v<M>) {
    return ill_formed{};
  } else if constexpr (!detail::contains_v<D, typename M::specs>) {
    (void)diagnostic::fire<diagnostic::not_a_dimension_of<call::valid_lengths, D, typename M::specs>>;
    return ill_formed{};
  } else if constexpr (!std::is_same_v<typename M::value_type, bool>) {
    (void)diagnostic::fire<diagnostic::mask_not_bool<call::valid_lengths, typename M::value_type>>;
    return ill_formed{};
  } else {
    return lengths_of<dim_of<D>>(sum<D>(cast<std::int64_t>(mask)));
  }
}

}  // namespace dimtensor
