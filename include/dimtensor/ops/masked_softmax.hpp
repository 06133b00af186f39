#pragma once
/// @file
/// @brief `masked_softmax<D>(scores, valid_lens)`: d2l's `masked_softmax`,
/// along any named dim.
///
/// Exactly d2l's semantics: every score at index >= its row's valid length
/// along D is replaced by -1e6, then softmax is taken along D.  So masked
/// positions get (about) 0, a row of valid length 0 becomes uniform
/// (1 / extent of D), and a row whose valid scores all lie below -1e6
/// behaves as it does in PyTorch.  The kernel is fused: one set of sweeps
/// per row (mask, max, exp, sum, normalize) and no masked copy of the scores.
///
/// `valid_lens` holds int32 or int64 lengths.  Its dims must be a leading
/// part (a prefix, in order) of the scores' dims without D, and it
/// broadcasts by name over the rest.  For scores `[Batch, Queries, KVPairs]`
/// and D = KVPairs: `[Batch]` (d2l's 1-D valid_lens: one length per batch
/// row, shared by its queries), `[Batch, Queries]` (d2l's 2-D valid_lens),
/// or a rank-0 tensor (one length for all).  `[Queries]` is a compile error
/// (`valid_lens_not_a_leading_part`).  A length below 0 or above D's extent
/// throws `value_error` naming the value, its position and the extent
/// (d2l would silently mask everything or nothing).
///
/// Differentiable as d2l's is in PyTorch: the scores get softmax's gradient,
/// except the masked ones, which get 0 (they were overwritten).
///
/// Without valid lengths (d2l's `valid_lens=None`) it is plain softmax:
/// write `masked_softmax<D>(scores)` or `masked_softmax<D>(scores, std::nullopt)`;
/// a `std::optional` of a lengths tensor chooses at run time.

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <type_traits>

#include <dimtensor/autograd/propagate.hpp>
#include <dimtensor/autograd/rules/line.hpp>
#include <dimtensor/backends/backend.hpp>
#include <dimtensor/core/checked.hpp>
#include <dimtensor/core/concepts.hpp>
#include <dimtensor/core/diagnostic.hpp>
#include <dimtensor/core/dims.hpp>
#include <dimtensor/kernel/call.hpp>
#include <dimtensor/kernel/layout.hpp>
#include <dimtensor/ops/elementwise.hpp>
#include <dimtensor/ops/mask_parts.hpp>
#include <dimtensor/ops/masking.hpp>
#include <dimtensor/ops/reduce.hpp>
#include <dimtensor/ops/sequence_mask.hpp>
#include <dimtensor/ops/softmax.hpp>
#include <dimtensor/tensor/tensor.hpp>

namespace dimtensor {

/// The value d2l's masked_softmax gives the masked scores before the softmax.
inline constexpr double masked_softmax_fill = -1e6;

/// @brief Softmax along D without valid lengths (d2l's `valid_lens=None`):
/// the same as `softmax<D>(scores)`.
template <class D, detail::Operand E>
auto masked_softmax(E const& scores) {
  return detail::softmax_along<call::masked_softmax, false, D>(scores);
}

/// @brief Softmax along D without valid lengths, spelled as d2l's
/// `masked_softmax(X, None)`: `masked_softmax<D>(scores, std::nullopt)`.
template <class D, detail::Operand E>
auto masked_softmax(E const& scores, std::nullopt_t) {
  return detail::softmax_along<call::masked_softmax, false, D>(scores);
}

namespace detail {

/// @brief masked_softmax along D with the scores at index >= the valid
/// length replaced by @p fill (d2l's: -1e6; the masks of ops/masking.hpp:
/// the lowest value, below their masked score), the lengths checked.
template <class D, Operand E, Operand L>
auto masked_softmax_filled(E const& scores, L const& valid_lens, typename E::value_type fill) {
  return checked<call::masked_softmax>(
      [&](auto const& scores, auto const& valid_lens) {
        using T = typename E::value_type;
        auto const in = eval(scores).contiguous();
        auto const lens = eval(valid_lens).contiguous();
        index_t const repeat = detail::check_valid_lens_values<D>("masked_softmax", "scores", in, lens);
        using out_t = std::remove_cvref_t<decltype(in)>;
        out_t out(uninitialized, in.extents());
        kernel::lines const s = kernel::lines_along<detail::index_of_v<D, typename E::specs>>(in.extents());
        backend_masked_softmax(typename E::backend{}, in.data(), out.data(), s.outer, s.n, s.inner, lens.data(),
                               repeat, fill);
        if (autograd::should_record(in)) {
          // Softmax's rule on the result; the masked scores were replaced by a
          // constant, so they get 0 (also in a row of valid length 0, whose
          // result is uniform).
          typename autograd::line_node<typename E::backend, T>::saved keep;
          keep.keep = out.storage();
          keep.data = out.data();
          auto const wide = detail::as_int64(lens);  // the rule reads 64-bit lengths (the same values)
          keep.lens_keep = wide.storage();
          keep.lens = wide.data();
          keep.repeat = repeat;
          autograd::record_lines("masked_softmax", out, in, autograd::line_rule::masked_softmax, s, std::move(keep));
        }
        return out;
      },
      scores, valid_lens);
}

}  // namespace detail

/// @brief d2l's masked softmax along D: scores at index >= the valid length
/// become -1e6, then softmax along D.
///
/// @p valid_lens: int32 or int64, dims a leading part of the scores' dims
/// without D.  Throws `shape_error` when its extents differ from the
/// scores', `value_error` for a length outside [0, extent of D].
template <class D, detail::Operand E, detail::Operand L>
auto masked_softmax(E const& scores, L const& valid_lens) {
  auto const diagnose = [] {
    if constexpr (any_ill_formed_v<E, L>) {
      return std::type_identity<ill_formed>{};
    } else {
      return first_diagnosis(detail::softmax_diagnosis<call::masked_softmax, D, E>(),
                             detail::valid_lens_diagnosis<call::masked_softmax, D, E, L>());
    }
  }();
  if constexpr (rejects(diagnose)) {
    return ill_formed{};
  } else {
    return detail::masked_softmax_filled<D>(scores, valid_lens, static_cast<typename E::value_type>(masked_softmax_fill));
  }
}

/// @brief d2l's masked softmax with optional valid lengths, chosen at run
/// time: masked when @p valid_lens holds a tensor, plain softmax when empty.
template <class D, detail::Operand E, Expression L>
auto masked_softmax(E const& scores, std::optional<L> const& valid_lens) {
  using masked_t = decltype(masked_softmax<D>(scores, *valid_lens));
  if constexpr (is_ill_formed_v<masked_t>) {
    return ill_formed{};
  } else {
    if (valid_lens) return masked_softmax<D>(scores, *valid_lens);
    return masked_t(masked_softmax<D>(scores));
  }
}

/// @brief d2l's masked softmax along D under the masking @p m
/// (ops/masking.hpp): its valid lengths when it holds them, else plain
/// softmax.
template <class D, detail::Operand E, class L>
auto masked_softmax(E const& scores, masking<D, L> const& m) {
  if constexpr (std::is_void_v<L>) {
    return masked_softmax<D>(scores);
  } else {
    return masked_softmax<D>(scores, m.lengths);
  }
}

/// @brief Softmax along D under a masking with key, additive or causal
/// parts (ops/masking.hpp): the masks added to the scores as one tensor of
/// their dims (the masked score where a key is masked), then d2l's masked
/// softmax with each row's valid length (the causal limit within it).
/// The same weights as the fused attention kernels; the masks get no
/// gradient.
template <class D, detail::Operand E, class L, class P, class A, class Q>
  requires(!is_lengths_masking_v<masking<D, L, P, A, Q>>)
auto masked_softmax(E const& scores, masking<D, L, P, A, Q> const& m) {
  using M = masking<D, L, P, A, Q>;
  if constexpr (rejects(first_diagnosis(detail::masking_diagnosis<call::masked_softmax, D, E, L>(),
                                        detail::mask_parts_diagnosis<call::masked_softmax, D, void, E, M>::value()))) {
    return ill_formed{};
  } else {
    auto const s = dimtensor::eval(scores);
    using st = std::remove_cvref_t<decltype(s)>;
    using S = typename st::specs;
    using T = typename st::value_type;
    using Backend = typename st::backend;
    std::array<index_t, st::rank> sext{};
    for (std::size_t k = 0; k < st::rank; ++k) sext[k] = s.extents()[k];
    bool any = false;
    if constexpr (!std::is_void_v<P>) {
      if (m.keep) detail::check_mask_extents<S>("masked_softmax", "key_mask", sext, *m.keep), any = true;
    }
    if constexpr (!std::is_void_v<A>) {
      if (m.additive) detail::check_mask_extents<S>("masked_softmax", "additive_mask", sext, *m.additive), any = true;
    }
    st const x = any ? st(dimtensor::eval(s + detail::masks_as_additive<Backend, T, S>(sext, m))) : s;
    // Past a row's length: d2l's -1e6 alone, the lowest value under masks
    // (below their masked score, so a row whose kept keys are all masked
    // stays uniform over them).
    T const fill = any ? std::numeric_limits<T>::lowest() : static_cast<T>(masked_softmax_fill);
    if constexpr (!std::is_void_v<Q>) {
      if (m.is_causal) {
        if constexpr (std::is_void_v<L>) {
          return st(detail::masked_softmax_filled<D>(x, detail::causal_lengths<Backend, D, Q, S, st>(sext, nullptr),
                                                     fill));
        } else {
          return st(detail::masked_softmax_filled<D>(x, detail::causal_lengths<Backend, D, Q, S, L>(sext, &m.lengths),
                                                     fill));
        }
      }
    }
    if constexpr (std::is_void_v<L>) {
      return st(masked_softmax<D>(x));
    } else {
      if (m.lengths) return st(detail::masked_softmax_filled<D>(x, *m.lengths, fill));
      return st(masked_softmax<D>(x));
    }
  }
}

}  // namespace dimtensor
