#pragma once
/// @file
/// @brief `dims<Specs...>`, the ordered dimension list of a shape, and the
/// type-level algorithms on it (Boost.Mp11).

#include <cstddef>
#include <type_traits>

#include <boost/mp11/algorithm.hpp>
#include <boost/mp11/bind.hpp>
#include <boost/mp11/list.hpp>

#include <dimtensor/core/dim.hpp>

namespace dimtensor {

/// @brief An ordered list of dimension specs; diagnostics print shapes as
/// `dims<Batch, Queries, KVPairs>`.
template <class... Specs>
struct dims {};

/// @brief The type-level algorithms on dims lists (Boost.Mp11): the
/// vocabulary operations and modules are written in, public for a user's
/// own.  A dims list `L` is a `dims<Specs...>` (or any list of specs); a
/// tag is a dim's type (`Batch`), a spec a tag or `fixed<Batch, 4>`.
namespace meta {
namespace mp = boost::mp11;

/// The tags of the specs in L (`fixed<Batch, 4>` becomes `Batch`), in order.
template <class L>
using tags_of = mp::mp_transform<dim_of, L>;

/// The position of tag D in L (L's size when D is not in it).
template <class D, class L>
inline constexpr std::size_t index_of_v = mp::mp_find<tags_of<L>, D>::value;

/// Whether tag D is in L.
template <class D, class L>
inline constexpr bool contains_v = index_of_v<D, L> < mp::mp_size<L>::value;

/// Whether no tag appears twice in L.
template <class L>
inline constexpr bool is_unique_v = mp::mp_is_set<tags_of<L>>::value;

/// A quoted predicate: whether a tag appears more than once in L.
template <class L>
struct count_in {
  /// The predicate.
  template <class D>
  using fn = mp::mp_bool<(mp::mp_count<L, D>::value > 1)>;
};

/// The first tag that appears twice in L (void when none does).
template <class L>
using first_duplicate = mp::mp_eval_if_c<is_unique_v<L>, void, mp::mp_at, tags_of<L>,
                                         mp::mp_find_if_q<tags_of<L>, count_in<tags_of<L>>>>;

/// The spec of tag D in L (with its static extent, if any).
template <class D, class L>
using spec_for = mp::mp_at_c<L, index_of_v<D, L>>;

/// A quoted predicate: whether a spec's tag is D.
template <class D>
struct has_tag {
  /// The predicate.
  template <class S>
  using fn = std::is_same<dim_of<S>, D>;
};

/// L without tag D.
template <class D, class L>
using remove_dim = mp::mp_remove_if_q<L, has_tag<D>>;

/// L without tag D (the arguments in the other order).
template <class L, class D>
using without_tag = remove_dim<D, L>;

/// Whether L1 and L2 have the same tags in the same order.
template <class L1, class L2>
inline constexpr bool same_tags_v = std::is_same_v<tags_of<L1>, tags_of<L2>>;

/// Positions in L (as mp_size_t) of the tags in Ds.
template <class L, class... Ds>
using positions_of = mp::mp_list<mp::mp_size_t<index_of_v<Ds, L>>...>;

/// The number of specs in L.
template <class L>
inline constexpr std::size_t rank_v = mp::mp_size<L>::value;

/// The I-th spec of L.
template <class L, std::size_t I>
using spec_at = mp::mp_at_c<L, I>;

/// Rebinds L's specs into another template: apply<tensor_of, L>.
template <template <class...> class T, class L>
using apply_dims = mp::mp_apply<T, L>;

/// Whether every tag of L is in the tag list D.
template <class L, class D>
inline constexpr bool all_tags_in_v = mp::mp_all_of_q<tags_of<L>, mp::mp_bind_front<mp::mp_contains, D>>::value;

/// Whether the tags of Sub appear in L in the same order, as a leading part.
template <class Sub, class L>
inline constexpr bool is_prefix_v = [] {
  if constexpr (rank_v<Sub> > rank_v<L>) {
    return false;
  } else {
    return std::is_same_v<tags_of<Sub>, mp::mp_take_c<tags_of<L>, rank_v<Sub>>>;
  }
}();

}  // namespace meta

namespace detail {
namespace mp = boost::mp11;
// The library's own code names them detail::…, as it did before they were public.
using namespace ::dimtensor::meta;
}  // namespace detail
}  // namespace dimtensor
