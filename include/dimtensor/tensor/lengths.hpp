#pragma once
/// @file
/// @brief `lengths<Measured, Dims...>`: valid lengths that know the dim they
/// measure.
///
/// d2l's `valid_lens` is an integer tensor: `[batch]` (one length per
/// sequence) or `[batch, queries]` (one per query); nothing says which
/// sequence dim it counts, so lengths of the keys given where the queries'
/// are meant, or the encoder's given to the decoder's self-attention, pass
/// silently whenever they fit. A `lengths<KVPairs, Batch>` is a
/// `tensor<std::int64_t, Batch>` that also carries *KVPairs*, the dim it
/// measures: `masked_softmax<D>`, `sequence_mask<D>`, the attention modules
/// and the losses reject lengths of another dim at compile time, naming both
/// (`valid_lens_measure_another_dim`).
///
/// @code
/// dt::lengths<KVPairs, Batch> valid_lens{2, 6};                     // braces, as a tensor
/// auto lens = dt::lengths_of<KVPairs>(dt::tensor<int, Batch>{2, 6}); // tags an integer tensor
/// auto w = dt::masked_softmax<KVPairs>(scores, valid_lens);          // checked: KVPairs is masked
/// @endcode
///
/// It is a tensor (it derives from one, and `is_tensor_v` holds), so every
/// operation takes it as before; results of operations are plain tensors,
/// except `repeat_interleave`, which keeps the measured dim (d2l's lengths
/// repeated over the heads). Plain integer tensors keep working as lengths,
/// unchecked.

#include <cstdint>
#include <optional>
#include <type_traits>
#include <utility>

#include <boost/mp11/algorithm.hpp>

#include <dimtensor/core/concepts.hpp>
#include <dimtensor/core/dims.hpp>
#include <dimtensor/tensor/tensor.hpp>

namespace dimtensor {

/// @brief Valid lengths along @p Measured: a tensor of @p T (int32 or
/// int64) with dims @p Dims on @p Backend, one length per position; see the
/// file's comment.
template <class Measured, class Backend, class T, class... Dims>
class basic_lengths : public basic_tensor<Backend, T, Dims...> {
  static_assert(DimTag<Measured>,
                "dimtensor: lengths<Measured, Dims...> needs a dimension tag Measured declared with DIMTENSOR_DIM");
  static_assert(std::is_same_v<T, std::int32_t> || std::is_same_v<T, std::int64_t>,
                "dimtensor: lengths hold std::int32_t or std::int64_t elements");
  static_assert(!boost::mp11::mp_contains<detail::tags_of<dims<Dims...>>, Measured>::value,
                "dimtensor: lengths along a dim cannot have that dim themselves (lengths<KVPairs, Batch> holds one "
                "length of KVPairs per Batch)");

 public:
  /// The dim the lengths measure.
  using measures = Measured;
  /// The plain tensor of the lengths.
  using tensor_type = basic_tensor<Backend, T, Dims...>;

  using tensor_type::tensor_type;

  /// An empty tensor of lengths, as `basic_tensor()`.
  basic_lengths() = default;
  /// The lengths @p t, along Measured.
  explicit basic_lengths(tensor_type t) noexcept : tensor_type(std::move(t)) {}

  /// The lengths as a plain tensor (sharing storage).
  tensor_type const& values() const noexcept { return *this; }
};

/// int64 lengths along @p Measured, one per position of @p Dims, on the default backend.
template <class Measured, class... Dims>
using lengths = basic_lengths<Measured, default_backend, std::int64_t, Dims...>;

/// Lengths are tensors: every operation takes them.
template <class M, class B, class T, class... S>
inline constexpr bool is_tensor_v<basic_lengths<M, B, T, S...>> = true;

/// Whether @p L is a `basic_lengths`.
template <class L>
inline constexpr bool is_lengths_v = false;
/// A basic_lengths is.
template <class M, class B, class T, class... S>
inline constexpr bool is_lengths_v<basic_lengths<M, B, T, S...>> = true;

/// @brief The dim the valid lengths @p L measure: `basic_lengths`'
/// Measured, the same through `std::optional`; `void` for a plain tensor
/// (lengths of any dim, unchecked).
template <class L>
struct measured_dim {
  /// None: `void`.
  using type = void;
};
/// Of lengths: the dim they measure.
template <class M, class B, class T, class... S>
struct measured_dim<basic_lengths<M, B, T, S...>> {
  /// Measured.
  using type = M;
};
/// Of an optional: its value's.
template <class L>
struct measured_dim<std::optional<L>> : measured_dim<L> {};
/// `measured_dim<std::remove_cvref_t<L>>::type`.
template <class L>
using measured_dim_t = typename measured_dim<std::remove_cvref_t<L>>::type;

/// The lengths type along @p Measured of a backend, an element type and a `dims<...>` list.
template <class Measured, class Backend, class T, class L>
using lengths_with_dims =
    boost::mp11::mp_apply<boost::mp11::mp_bind_front<basic_lengths, Measured, Backend, T>::template fn, L>;

/// @brief The integer tensor @p x as lengths along @p Measured (sharing its
/// storage when x is a tensor; an expression is evaluated first).
template <class Measured, Expression X>
auto lengths_of(X const& x) {
  using out_t = lengths_with_dims<Measured, typename X::backend, typename X::value_type, typename X::specs>;
  return out_t(typename out_t::tensor_type(eval(x)));
}

}  // namespace dimtensor
