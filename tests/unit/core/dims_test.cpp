// Tests of core/dims.hpp: the dims list and its type-level algorithms.
#include <catch2/catch.hpp>

#include <type_traits>

#include <boost/mp11/list.hpp>

#include <dimtensor/core/dims.hpp>

namespace dims_test {
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(Hidden);
}  // namespace dims_test

namespace dt = dimtensor;
namespace d = dimtensor::detail;
namespace mp = boost::mp11;
using namespace dims_test;

using bqkh = dt::dims<Batch, Queries::fixed<1>, KVPairs, Hidden::fixed<8>>;

// tags_of drops static extents, keeps order.
static_assert(std::is_same_v<d::tags_of<bqkh>, dt::dims<Batch, Queries, KVPairs, Hidden>>);
static_assert(std::is_same_v<d::tags_of<dt::dims<>>, dt::dims<>>);

// index_of_v: position of a tag, whatever its extent; the size when absent.
static_assert(d::index_of_v<Batch, bqkh> == 0);
static_assert(d::index_of_v<Queries, bqkh> == 1);
static_assert(d::index_of_v<KVPairs, bqkh> == 2);
static_assert(d::index_of_v<Hidden, bqkh> == 3);
static_assert(d::index_of_v<Hidden, dt::dims<Batch>> == 1);
static_assert(d::index_of_v<Hidden, dt::dims<>> == 0);

// contains_v
static_assert(d::contains_v<Hidden, bqkh> && d::contains_v<Queries, bqkh>);
static_assert(!d::contains_v<Hidden, dt::dims<Batch, Queries>> && !d::contains_v<Batch, dt::dims<>>);

// Duplicate detection looks at tags, not specs: Hidden and Hidden::fixed<8> collide.
static_assert(d::is_unique_v<bqkh> && d::is_unique_v<dt::dims<>> && d::is_unique_v<dt::dims<Batch>>);
static_assert(!d::is_unique_v<dt::dims<Queries, Queries>>);
static_assert(!d::is_unique_v<dt::dims<Hidden, Batch, Hidden::fixed<8>>>);
static_assert(std::is_same_v<d::first_duplicate<dt::dims<Queries, Queries>>, Queries>);
static_assert(std::is_same_v<d::first_duplicate<dt::dims<Batch, Hidden, Queries, Hidden::fixed<2>>>, Hidden>);
static_assert(std::is_same_v<d::first_duplicate<dt::dims<Batch, Queries, Batch, Queries>>, Batch>);
static_assert(std::is_same_v<d::first_duplicate<bqkh>, void>);

// spec_for returns the spec, with its extent.
static_assert(std::is_same_v<d::spec_for<Hidden, bqkh>, Hidden::fixed<8>>);
static_assert(std::is_same_v<d::spec_for<KVPairs, bqkh>, KVPairs>);

// remove_dim / without_tag remove by tag.
static_assert(std::is_same_v<d::remove_dim<Queries, bqkh>, dt::dims<Batch, KVPairs, Hidden::fixed<8>>>);
static_assert(std::is_same_v<d::remove_dim<Hidden, bqkh>, dt::dims<Batch, Queries::fixed<1>, KVPairs>>);
static_assert(std::is_same_v<d::without_tag<bqkh, Batch>, dt::dims<Queries::fixed<1>, KVPairs, Hidden::fixed<8>>>);
static_assert(std::is_same_v<d::remove_dim<Hidden, dt::dims<Batch>>, dt::dims<Batch>>);

// same_tags_v ignores extents, not order.
static_assert(d::same_tags_v<bqkh, dt::dims<Batch, Queries, KVPairs, Hidden>>);
static_assert(!d::same_tags_v<bqkh, dt::dims<Batch, KVPairs, Queries, Hidden>>);

// positions_of
static_assert(std::is_same_v<d::positions_of<bqkh, Hidden, Batch>, mp::mp_list<mp::mp_size_t<3>, mp::mp_size_t<0>>>);

// rank_v, spec_at
static_assert(d::rank_v<bqkh> == 4 && d::rank_v<dt::dims<>> == 0);
static_assert(std::is_same_v<d::spec_at<bqkh, 1>, Queries::fixed<1>>);
static_assert(std::is_same_v<d::spec_at<bqkh, 3>, Hidden::fixed<8>>);

// apply_dims rebinds the specs.
static_assert(std::is_same_v<d::apply_dims<mp::mp_list, bqkh>,
                             mp::mp_list<Batch, Queries::fixed<1>, KVPairs, Hidden::fixed<8>>>);

// all_tags_in_v: every tag of the first list is in the second (any order).
static_assert(d::all_tags_in_v<dt::dims<Hidden, Batch>, dt::dims<Batch, Queries, Hidden>>);
static_assert(!d::all_tags_in_v<dt::dims<Hidden, KVPairs>, dt::dims<Batch, Queries, Hidden>>);
static_assert(d::all_tags_in_v<dt::dims<>, dt::dims<Batch>>);

// is_prefix_v: a leading part, in order, by tag.
static_assert(d::is_prefix_v<dt::dims<Batch>, bqkh>);
static_assert(d::is_prefix_v<dt::dims<Batch, Queries>, bqkh>);
static_assert(d::is_prefix_v<dt::dims<>, bqkh>);
static_assert(d::is_prefix_v<bqkh, bqkh>);
static_assert(!d::is_prefix_v<dt::dims<Queries>, bqkh>);
static_assert(!d::is_prefix_v<dt::dims<Queries, Batch>, bqkh>);
static_assert(!d::is_prefix_v<dt::dims<Batch, Queries, KVPairs, Hidden, Batch>, bqkh>);

TEST_CASE("dims: type-level algorithms (checked at compile time)", "[core][dims]") {
  // Every check of this file is a static_assert above; the values that can
  // be read at run time are repeated so that a broken trait shows in the report.
  CHECK(d::index_of_v<KVPairs, bqkh> == 2);
  CHECK(d::index_of_v<Hidden, dt::dims<Batch>> == 1);
  CHECK(d::rank_v<bqkh> == 4);
  CHECK_FALSE(d::is_unique_v<dt::dims<Queries, Queries>>);
  CHECK(d::is_prefix_v<dt::dims<Batch, Queries>, bqkh>);
}

// The public names (dimtensor::meta) are the library's own.
static_assert(std::is_same_v<dt::meta::tags_of<bqkh>, d::tags_of<bqkh>>);
static_assert(dt::meta::index_of_v<KVPairs, bqkh> == 2);
static_assert(dt::meta::contains_v<Hidden, bqkh> && !dt::meta::contains_v<Hidden, dt::dims<Batch>>);
static_assert(std::is_same_v<dt::meta::remove_dim<Queries, bqkh>, dt::dims<Batch, KVPairs, Hidden::fixed<8>>>);
