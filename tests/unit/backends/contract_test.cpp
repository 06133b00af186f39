// Tests of backends/backend.hpp: the backend contract as a concept, met by
// the CPU backend and Thrust's, and refused by a tag that lacks kernels;
// default_backend.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string_view>
#include <type_traits>

#include <dimtensor/backends/backend.hpp>
#if defined(DIMTENSOR_HAS_THRUST) && DIMTENSOR_HAS_THRUST
#include <dimtensor/backends/thrust.hpp>
#endif

namespace dt = dimtensor;

namespace contract_test {
// Storage and traits, no kernels.
struct storage_only {
  static constexpr bool host_accessible = true;
  static constexpr std::string_view name = "storage_only";
  template <class T>
  using storage = dt::cpu::storage<T>;
};
// Kernels found by ADL but no storage.
struct no_storage : dt::cpu {
  template <class T>
  using storage = void;
};
}  // namespace contract_test

TEST_CASE("backend contract: the CPU backend meets it for every element type it computes with", "[backends]") {
  STATIC_REQUIRE(dt::backend<dt::cpu, float>);
  STATIC_REQUIRE(dt::backend<dt::cpu, double>);
  STATIC_REQUIRE(dt::backend<dt::cpu, std::int32_t>);
  STATIC_REQUIRE(dt::backend<dt::cpu, std::int64_t>);
}

TEST_CASE("backend contract: a tag without the kernels does not meet it", "[backends]") {
  STATIC_REQUIRE_FALSE(dt::backend<contract_test::storage_only, float>);
  STATIC_REQUIRE_FALSE(dt::backend<int, float>);
}

#if defined(DIMTENSOR_HAS_THRUST) && DIMTENSOR_HAS_THRUST
TEST_CASE("backend contract: Thrust's host systems meet it", "[backends][thrust]") {
  STATIC_REQUIRE(dt::backend<dt::thrust_cpp, float>);
  STATIC_REQUIRE(dt::backend<dt::thrust_cpp, double>);
#if defined(_OPENMP)
  STATIC_REQUIRE(dt::backend<dt::thrust_omp, float>);
#endif
}
#endif

TEST_CASE("default_backend: cpu unless DIMTENSOR_DEFAULT_BACKEND names another", "[backends]") {
#if defined(DIMTENSOR_DEFAULT_BACKEND)
  STATIC_REQUIRE(std::is_same_v<dt::default_backend, DIMTENSOR_DEFAULT_BACKEND>);
#else
  STATIC_REQUIRE(std::is_same_v<dt::default_backend, dt::cpu>);
#endif
  CHECK(dt::default_backend::name == std::string_view(dt::default_backend::name));
}
