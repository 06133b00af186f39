# One CTest test per Catch2 (v2) test case, like Catch2's own
# catch_discover_tests(), whose CatchAddTests.cmake splits a test name at
# every `;` (a case named "a; b" became the tests "a" and " b", and each of
# them silently matched nothing and passed). Here names are taken whole:
# any character may appear in a test case name.
#
#   dimtensor_catch_discover_tests(<target> PREFIX <prefix> LABELS <label>...)
#
# After each link of <target>, the program lists its test cases
# (--list-test-names-only) and a CTest include file is written with one test
# per case, named <prefix><case name>, running the program on exactly that
# case with `-w NoTests`, so a case that matches nothing fails instead of
# passing. Before the first build, ctest shows one <target>_NOT_BUILT test.

set(DIMTENSOR_CATCH_ADD_TESTS_SCRIPT "${CMAKE_CURRENT_LIST_DIR}/CatchAddTests.cmake")

function(dimtensor_catch_discover_tests target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "PREFIX" "LABELS")
  set(tests_file "${CMAKE_CURRENT_BINARY_DIR}/${target}_tests.cmake")
  set(include_file "${CMAKE_CURRENT_BINARY_DIR}/${target}_include.cmake")
  add_custom_command(TARGET ${target} POST_BUILD
    BYPRODUCTS "${tests_file}"
    COMMAND "${CMAKE_COMMAND}"
      "-DEXECUTABLE=$<TARGET_FILE:${target}>"
      "-DOUTPUT=${tests_file}"
      "-DPREFIX=${arg_PREFIX}"
      "-DLABELS=${arg_LABELS}"
      "-DWORKING_DIRECTORY=${CMAKE_CURRENT_BINARY_DIR}"
      -P "${DIMTENSOR_CATCH_ADD_TESTS_SCRIPT}"
    COMMENT "Listing the Catch2 test cases of ${target}"
    VERBATIM)
  file(WRITE "${include_file}"
    "if(EXISTS \"${tests_file}\")\n"
    "  include(\"${tests_file}\")\n"
    "else()\n"
    "  add_test(${target}_NOT_BUILT ${target}_NOT_BUILT)\n"
    "endif()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${include_file}")
endfunction()
