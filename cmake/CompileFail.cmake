# Compile-fail tests: a mistake must be rejected, with the diagnostic we wrote.
#
# Convention for every tests/compile_fail/<name>.cpp
# --------------------------------------------------
#   * The mistake sits under `#ifdef DIMTENSOR_COMPILE_FAIL`; the corrected
#     code sits in the `#else` branch. Everything else is shared:
#
#         #include <dimtensor/dimtensor.hpp>
#         // EXPECT: bmm contracts .*Hidden.* but the right offers .*KVPairs
#         int main() {
#           ...
#         #ifdef DIMTENSOR_COMPILE_FAIL
#           auto s = dt::bmm(queries, keys);
#         #else
#           auto s = dt::bmm(queries, dt::transpose<KVPairs, KeyFeat>(keys));
#         #endif
#           (void)s;
#         }
#
#   * One or more lines `// EXPECT: <regex>`. Each regex must be found in the
#     compiler's output when the file is compiled with -DDIMTENSOR_COMPILE_FAIL.
#     `// EXPECT-GNU: <regex>` and `// EXPECT-Clang: <regex>` apply only to
#     that compiler (CMAKE_CXX_COMPILER_ID). A file needs at least one
#     regex that applies to the compiler in use.
#   * Regexes are CMake regexes (string(REGEX MATCH)): . * + ? [] [^] () | \
#     with no \d, no {n}, no lazy quantifiers; `.` also matches a newline.
#     They are searched anywhere in the output, so avoid ^ and $. Do not use
#     `;` (write `.`). Match the words of the static_assert message, which both
#     g++ and clang++ print verbatim, rather than how each compiler spells
#     types or quotes: g++ and clang++ differ there. The output is produced
#     with LC_ALL=C (plain ASCII quotes), without colour codes and without
#     source snippets (so the text of the static_assert line cannot match
#     unless that static_assert is what fired).
#
# Tests, per file (label `compile_fail`):
#   compile_fail.<name>  builds the file with -DDIMTENSOR_COMPILE_FAIL; passes
#                        only when the build fails AND every regex matches.
#   compile_ok.<name>    builds the file without the define (the passing twin);
#                        passes only when it compiles. It proves the snippet is
#                        otherwise valid, so the failure is the one we meant.
# Both are OBJECT libraries left out of `all` (a broken twin does not block the
# rest of the build; `cmake --build <dir> --target compile_fail.<name>` shows
# the error by hand). The CTest test runs the compiler itself, with the exact
# command CMake generated for the target plus -fsyntax-only
# (cmake/RunCompileFail.cmake), so tests run in parallel without running the
# build tool concurrently, and need no code generation. They use
# the same flags as the unit tests, warnings included: the twin must compile
# cleanly under -Wall -Wextra -Wpedantic -Werror (use (void)x or
# [[maybe_unused]] for values a snippet only computes).

set(DIMTENSOR_RUN_COMPILE_FAIL_SCRIPT "${CMAKE_CURRENT_LIST_DIR}/RunCompileFail.cmake")

# dimtensor_add_compile_fail_tests(DIRECTORY <dir>
#   [LINK_LIBRARIES <targets>...]    # what each file compiles against
#   [EXCLUDE <regex>...]             # file names (without .cpp) left out
#   [FIXTURES_REQUIRED <fixtures>...])
function(dimtensor_add_compile_fail_tests)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "DIRECTORY" "LINK_LIBRARIES;EXCLUDE;FIXTURES_REQUIRED")
  if(NOT arg_DIRECTORY)
    message(FATAL_ERROR "dimtensor_add_compile_fail_tests: DIRECTORY is required")
  endif()
  file(GLOB sources CONFIGURE_DEPENDS "${arg_DIRECTORY}/*.cpp")
  list(SORT sources)
  foreach(source IN LISTS sources)
    get_filename_component(name "${source}" NAME_WE)
    set(skip OFF)
    foreach(rx IN LISTS arg_EXCLUDE)
      if(name MATCHES "${rx}")
        set(skip ON)
      endif()
    endforeach()
    if(skip)
      continue()
    endif()
    foreach(mode IN ITEMS fail ok)
      set(target "compile_${mode}.${name}")
      add_library(${target} OBJECT EXCLUDE_FROM_ALL "${source}")
      # The test runs the compiler with this target's entry of
      # compile_commands.json (see RunCompileFail.cmake).
      set_target_properties(${target} PROPERTIES
        EXCLUDE_FROM_DEFAULT_BUILD ON
        EXPORT_COMPILE_COMMANDS ON)
      target_link_libraries(${target} PRIVATE ${arg_LINK_LIBRARIES})
      if(mode STREQUAL "fail")
        target_compile_definitions(${target} PRIVATE DIMTENSOR_COMPILE_FAIL)
        # No source snippets under the diagnostics: the snippet of a
        # static_assert line shows its message even when another error
        # fired on that line, and a regex would match the snippet.
        target_compile_options(${target} PRIVATE
          $<$<CXX_COMPILER_ID:GNU>:-fno-diagnostics-show-caret>
          $<$<CXX_COMPILER_ID:Clang,AppleClang>:-fno-caret-diagnostics>)
      endif()
      add_test(NAME ${target}
        COMMAND "${CMAKE_COMMAND}"
          "-DBINARY_DIR=${CMAKE_BINARY_DIR}"
          "-DTARGET=${target}"
          "-DCONFIG=$<CONFIG>"
          "-DSOURCE=${source}"
          "-DMODE=${mode}"
          "-DCOMPILER_ID=${CMAKE_CXX_COMPILER_ID}"
          -P "${DIMTENSOR_RUN_COMPILE_FAIL_SCRIPT}")
      set_tests_properties(${target} PROPERTIES LABELS compile_fail)
      if(arg_FIXTURES_REQUIRED)
        set_tests_properties(${target} PROPERTIES FIXTURES_REQUIRED "${arg_FIXTURES_REQUIRED}")
      endif()
    endforeach()
  endforeach()
endfunction()
