// Catch2's main() for dimtensor_unit_tests and dimtensor_parity_tests, compiled
// once (tests/CMakeLists.txt: dimtensor_catch_main). Test files include
// <catch2/catch.hpp> and define TEST_CASEs only.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
