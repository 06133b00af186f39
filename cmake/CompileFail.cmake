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
#   compile_ok.part_<k>  builds the passing twins (every file without the
#                        define) of one share of the files, OK_GROUPS shares
#                        (default 2), as one translation unit: each file is
#                        included in a namespace of its own
#                        (compile_ok_<name>), after every #include line of the
#                        share. Passes only when it compiles: it proves each
#                        snippet is otherwise valid, so the failure is the one
#                        we meant; an error names the file it is in ("In file
#                        included from .../<name>.cpp"). One TU per share
#                        instead of one per file: the twins share their
#                        instantiations and the parse (GCC 12, all 121 twins
#                        in one TU: 76 CPU s, against ~2.2 s per twin alone).
# Both are OBJECT libraries left out of `all` (a broken twin does not block the
# rest of the build; `cmake --build <dir> --target compile_fail.<name>` shows
# the error by hand). The CTest test runs the compiler itself, with the exact
# command CMake generated for the target plus -fsyntax-only
# (cmake/RunCompileFail.cmake), so tests run in parallel without running the
# build tool concurrently, and need no code generation. They use
# the same flags as the unit tests, warnings included: the twin must compile
# cleanly under -Wall -Wextra -Wpedantic -Werror (use (void)x or
# [[maybe_unused]] for values a snippet only computes).
#
# PRECOMPILE_HEADERS: headers parsed once into a precompiled header that every
# file's command then includes first (`-include`, CMake's REUSE_FROM). Most of
# a compile-fail test's time is parsing dimtensor's headers: with them
# precompiled a test takes about half as long (GCC 12: 7.0 s -> 4.7 s for
# the passing twin of attention_additive_W_q_of_keys). The files still
# include what they use; the include guards make that free. The precompiled
# header is built by the target dimtensor_compile_fail_pch, part of `all`.

set(DIMTENSOR_RUN_COMPILE_FAIL_SCRIPT "${CMAKE_CURRENT_LIST_DIR}/RunCompileFail.cmake")

# dimtensor_add_compile_fail_tests(DIRECTORY <dir>
#   [LINK_LIBRARIES <targets>...]    # what each file compiles against
#   [EXCLUDE <regex>...]             # file names (without .cpp) left out
#   [FIXTURES_REQUIRED <fixtures>...]
#   [PRECOMPILE_HEADERS <headers>...]  # e.g. <dimtensor/dimtensor.hpp>
#   [OK_GROUPS <n>])                   # translation units of passing twins (2)
function(dimtensor_add_compile_fail_tests)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "DIRECTORY;OK_GROUPS"
    "LINK_LIBRARIES;EXCLUDE;FIXTURES_REQUIRED;PRECOMPILE_HEADERS")
  if(NOT arg_OK_GROUPS)
    set(arg_OK_GROUPS 2)
  endif()
  if(NOT arg_DIRECTORY)
    message(FATAL_ERROR "dimtensor_add_compile_fail_tests: DIRECTORY is required")
  endif()
  set(pch_target "")
  if(arg_PRECOMPILE_HEADERS)
    set(pch_target dimtensor_compile_fail_pch)
    set(pch_source "${CMAKE_CURRENT_BINARY_DIR}/compile_fail_pch.cpp")
    file(CONFIGURE OUTPUT "${pch_source}"
      CONTENT "// Generated by cmake/CompileFail.cmake: carries the compile-fail tests' precompiled header.\n")
    add_library(${pch_target} OBJECT "${pch_source}")
    target_link_libraries(${pch_target} PRIVATE ${arg_LINK_LIBRARIES})
    target_precompile_headers(${pch_target} PRIVATE ${arg_PRECOMPILE_HEADERS})
  endif()
  file(GLOB sources CONFIGURE_DEPENDS "${arg_DIRECTORY}/*.cpp")
  list(SORT sources)
  set(kept "")
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
    list(APPEND kept "${source}")
  endforeach()

  # The failing builds: one target and one test per file.
  foreach(source IN LISTS kept)
    get_filename_component(name "${source}" NAME_WE)
    _dimtensor_add_compile_check(fail "compile_fail.${name}" "${source}")
  endforeach()

  # The passing twins: OK_GROUPS translation units, file i in share i mod n.
  set(ok_dir "${CMAKE_CURRENT_BINARY_DIR}/compile_ok")
  foreach(group RANGE 1 ${arg_OK_GROUPS})
    set(includes "")
    set(bodies "")
    set(index 0)
    foreach(source IN LISTS kept)
      math(EXPR share "${index} % ${arg_OK_GROUPS} + 1")
      math(EXPR index "${index} + 1")
      if(NOT share EQUAL group)
        continue()
      endif()
      get_filename_component(name "${source}" NAME_WE)
      file(STRINGS "${source}" lines REGEX "^[ \t]*#[ \t]*include[ \t]*[<\"]")
      foreach(line IN LISTS lines)
        string(STRIP "${line}" line)
        if(NOT line IN_LIST includes)
          list(APPEND includes "${line}")
        endif()
      endforeach()
      string(APPEND bodies
        "namespace compile_ok_${name} {\n#include \"${source}\"\n}  // namespace compile_ok_${name}\n\n")
    endforeach()
    if(bodies STREQUAL "")
      continue()
    endif()
    list(JOIN includes "\n" include_text)
    set(generated "${ok_dir}/part_${group}.cpp")
    file(CONFIGURE OUTPUT "${generated}" @ONLY CONTENT
"// Generated by cmake/CompileFail.cmake: the passing twins of share ${group}
// of the compile-fail files, each in a namespace of its own. A snippet's
// main() is an ordinary function there and need not return.
#pragma GCC diagnostic ignored \"-Wreturn-type\"
${include_text}

${bodies}")
    _dimtensor_add_compile_check(ok "compile_ok.part_${group}" "${generated}")
  endforeach()
endfunction()

# _dimtensor_add_compile_check(<fail|ok> <target> <source>): the object
# library and the CTest test of one compile check; reads the caller's arg_*
# and pch_target.
function(_dimtensor_add_compile_check mode target source)
  add_library(${target} OBJECT EXCLUDE_FROM_ALL "${source}")
  # The test runs the compiler with this target's entry of
  # compile_commands.json (see RunCompileFail.cmake).
  set_target_properties(${target} PROPERTIES
    EXCLUDE_FROM_DEFAULT_BUILD ON
    EXPORT_COMPILE_COMMANDS ON)
  target_link_libraries(${target} PRIVATE ${arg_LINK_LIBRARIES})
  if(pch_target)
    target_precompile_headers(${target} REUSE_FROM ${pch_target})
  endif()
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
endfunction()
