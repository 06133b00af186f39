#pragma once
/// @file
/// @brief Dimension tags, static extents and dimension specs.
///
/// A *dimension tag* is a type declared with `DIMTENSOR_DIM(Name)`.  A
/// *dimension spec* is what a tensor type lists: either a tag (dynamic extent)
/// or `Name::fixed<N>` (static extent N).  Everything else asks a spec two
/// questions, through one API: which tag (`dim_of`) and which static extent
/// (`static_extent_v`, or `dynamic_extent`).

#include <array>
#include <concepts>
#include <cstddef>
#include <string_view>
#include <type_traits>

#include <dimtensor/config.hpp>

namespace dimtensor {

/// The value of `static_extent_v` for a spec whose extent is known only at run time.
inline constexpr index_t dynamic_extent = -1;

template <class D, index_t N>
struct fixed;

template <class S, class Axis>
struct sharded;

/// @brief Base of every dimension tag (CRTP); use `DIMTENSOR_DIM` to declare one.
///
/// A value of a tag is a named extent (`zeros<float>(Batch(2))`) or a named
/// index (`x(Batch(1), Queries(0))`).
template <class Derived>
struct dim {
  /// The extent or index this value names.
  index_t value = 0;

  constexpr dim() = default;
  /// Names the extent or index @p n.
  constexpr explicit dim(index_t n) : value(n) {}

  /// The same dimension with the static extent @p N: `Hidden::fixed<8>`.
  template <index_t N>
  using fixed = ::dimtensor::fixed<Derived, N>;

  /// The same dimension cut over the ranks of the mesh axis @p Axis:
  /// `Batch::sharded<Data>` (see `dimtensor::sharded`).
  template <class Axis>
  using sharded = ::dimtensor::sharded<Derived, Axis>;
};

/// @brief Base of every mesh axis tag (CRTP); use `DIMTENSOR_AXIS` to declare one.
///
/// A mesh axis names a group of ranks a dim is cut over: `Data` for data
/// parallelism (every rank one part of Batch), a model axis for tensor
/// parallelism.  Only its name matters: the communicator of the axis is
/// given to the collectives at run time.
template <class Derived>
struct axis {};

/// A type declared by `DIMTENSOR_AXIS`.
template <class A>
concept AxisTag = std::derived_from<A, axis<A>> && requires {
  { A::axis_name } -> std::convertible_to<std::string_view>;
};

/// A type declared by `DIMTENSOR_DIM`.
template <class D>
concept DimTag = std::derived_from<D, dim<D>> && requires {
  { D::dim_name } -> std::convertible_to<std::string_view>;
};

/// @brief The dimension @p D with the static extent @p N.
///
/// Spelled `D::fixed<N>` in user code.  A value of it is a named static
/// extent for the factories: `zeros<float>(Batch(2), Hidden::fixed<8>{})`.
template <class D, index_t N>
struct fixed {
  static_assert(N >= 0, "dimtensor: a static extent must not be negative");
  /// The dimension tag.
  using dim_type = D;
  /// The extent.
  static constexpr index_t value = N;
};

/// @brief The dimension spec @p S (a tag or `D::fixed<N>`) cut over the
/// ranks of the mesh axis @p Axis: each rank holds its part.
///
/// Spelled `Batch::sharded<Data>`.  The extent a tensor reports is the
/// local one (dynamic: the ranks' parts may differ).  Elementwise
/// operations between operands sharded differently, and using a reduction
/// over a sharded dim before the all-reduce that completes it
/// (`partial`), are compile errors that name the dim and the axes.
template <class S, class Axis>
struct sharded {
  static_assert(AxisTag<Axis>, "dimtensor: D::sharded<Axis> needs a mesh axis declared with DIMTENSOR_AXIS");
  /// The mesh axis.
  using axis_type = Axis;
};

namespace detail {
template <class S>
struct spec_traits {
  using dim_type = S;
  using axis_type = void;
  static constexpr index_t extent = dynamic_extent;
};
template <class D, index_t N>
struct spec_traits<fixed<D, N>> {
  static_assert(N >= 0, "dimtensor: a static extent must not be negative");
  using dim_type = D;
  using axis_type = void;
  static constexpr index_t extent = N;
};
template <class S, class Axis>
struct spec_traits<sharded<S, Axis>> {
  // Here, not only in sharded itself: a tensor type names sharded<S, Axis>
  // without ever completing it, and asks its traits.
  static_assert(AxisTag<Axis>, "dimtensor: D::sharded<Axis> needs a mesh axis declared with DIMTENSOR_AXIS");
  using dim_type = typename spec_traits<S>::dim_type;
  using axis_type = Axis;
  static constexpr index_t extent = dynamic_extent;
};
}  // namespace detail

/// The dimension tag of a spec: `dim_of<Hidden::fixed<8>>` is `Hidden`.
template <class S>
using dim_of = typename detail::spec_traits<S>::dim_type;

/// The static extent of a spec, or `dynamic_extent`.
template <class S>
inline constexpr index_t static_extent_v = detail::spec_traits<S>::extent;

/// Whether a spec's extent is known at compile time.
template <class S>
inline constexpr bool is_static_v = static_extent_v<S> != dynamic_extent;

/// The mesh axis a spec is sharded over (`void` when it is not).
template <class S>
using axis_of = typename detail::spec_traits<S>::axis_type;

/// Whether a spec is sharded over a mesh axis.
template <class S>
inline constexpr bool is_sharded_v = !std::is_void_v<axis_of<S>>;

namespace detail {
template <class S>
struct unsharded_spec {
  using type = S;
};
template <class S, class Axis>
struct unsharded_spec<sharded<S, Axis>> {
  using type = S;
};
}  // namespace detail

/// The spec @p S without its sharding: `unsharded_t<Batch::sharded<Data>>` is `Batch`.
template <class S>
using unsharded_t = typename detail::unsharded_spec<S>::type;

/// A dimension spec: a tag or `fixed<Tag, N>`.
template <class S>
concept DimSpec = DimTag<dim_of<S>>;

/// The printable name of a dimension tag.
template <class D>
inline constexpr std::string_view dim_name_v = D::dim_name;

namespace detail {
/// The characters of `D`'s name followed by a prime, kept in static storage.
template <class D>
struct primed_name {
  static constexpr auto chars = [] {
    std::array<char, D::dim_name.size() + 1> out{};
    for (std::size_t i = 0; i < D::dim_name.size(); ++i) out[i] = D::dim_name[i];
    out.back() = '\'';
    return out;
  }();
};
}  // namespace detail

/// @brief A second dimension derived from @p D, printed `D'`.
///
/// Needed where one object must name the same dimension twice, which a
/// shape may not: a square layer `nn::linear<Hidden, Hidden>` keeps its
/// weight as [Hidden, prime<Hidden>] (PyTorch's [out, in]), and
/// `rename<Hidden, prime<Hidden>>` lets a user do the same by hand.
template <class D>
struct prime final : dim<prime<D>> {
  static_assert(DimTag<D>, "dimtensor: prime<D> needs a dimension tag declared with DIMTENSOR_DIM");
  using dim<prime<D>>::dim;
  /// `D'`.
  static constexpr std::string_view dim_name{detail::primed_name<D>::chars.data(),
                                             detail::primed_name<D>::chars.size()};
};

}  // namespace dimtensor
