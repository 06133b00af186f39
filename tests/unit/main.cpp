// Catch2's main() for dimtensor_unit_tests and dimtensor_parity_tests, compiled
// once (tests/CMakeLists.txt: dimtensor_catch_main). Test files include
// <catch2/catch.hpp> and define TEST_CASEs only.
//
// With DIMTENSOR_TEST_SKIP_WIDEST_ISA set (CTest's unit_isa.<level>), a run
// whose DIMTENSOR_CPU_ISA names the widest level this CPU runs is skipped
// (exit 77): the unit tests themselves run at that level already.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <string_view>

#include <dimtensor/backends/cpu/dispatch.hpp>

int main(int argc, char* argv[]) {
  char const* const asked = std::getenv("DIMTENSOR_CPU_ISA");
  if (std::getenv("DIMTENSOR_TEST_SKIP_WIDEST_ISA") != nullptr && asked != nullptr &&
      dimtensor::backends::cpu::isa_name(dimtensor::backends::cpu::isa_supported()) == std::string_view(asked)) {
    std::printf("DIMTENSOR_CPU_ISA=%s is the widest level this CPU runs: the unit tests ran at it\n", asked);
    return 77;
  }
  return Catch::Session().run(argc, argv);
}
