# Runs one compile_fail.<name> test, or one compile_ok.part_<k> test (the
# passing twins of a share of the files, in one generated TU); the convention
# is in CompileFail.cmake. Invoked by CTest as
#   cmake -DBINARY_DIR=<top build dir> -DTARGET=<object library> -DSOURCE=<file>
#         -DMODE=fail|ok -DCOMPILER_ID=<id> [-DCONFIG=<cfg>] -P RunCompileFail.cmake
#
# The compiler is run directly, with the exact command CMake generated for
# TARGET (taken from compile_commands.json), rather than through
# `cmake --build`: build tools must not run several times at once in one
# build tree (ctest -j would), and a build tool may decide to re-run CMake in
# the middle of a test. Nothing is written into the build tree. When compile_commands.json lacks TARGET (a generator that
# does not write it), the test falls back to `cmake --build --target TARGET`.

foreach(var IN ITEMS BINARY_DIR TARGET SOURCE MODE)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "RunCompileFail.cmake: ${var} is not set")
  endif()
endforeach()

file(READ "${SOURCE}" text)
if(MODE STREQUAL "fail" AND NOT text MATCHES "#[ \t]*if(def[ \t]+|[ \t]+defined[ \t]*\\(?[ \t]*)DIMTENSOR_COMPILE_FAIL")
  message(FATAL_ERROR "${SOURCE}: no `#ifdef DIMTENSOR_COMPILE_FAIL` branch: "
    "put the mistake under it and the corrected code under #else")
endif()

# The regexes that apply to this compiler.
file(STRINGS "${SOURCE}" expect_lines REGEX "^[ \t]*//[ \t]*EXPECT(-[A-Za-z]+)?:")
set(regexes "")
foreach(line IN LISTS expect_lines)
  if(line MATCHES "^[ \t]*//[ \t]*EXPECT(-([A-Za-z]+))?:[ \t]*(.*[^ \t])[ \t]*$")
    set(only "${CMAKE_MATCH_2}")
    set(rx "${CMAKE_MATCH_3}")
    if(only STREQUAL "" OR only STREQUAL "${COMPILER_ID}")
      list(APPEND regexes "${rx}")
    endif()
  endif()
endforeach()
if(MODE STREQUAL "fail" AND NOT regexes)
  message(FATAL_ERROR "${SOURCE}: no `// EXPECT: <regex>` line applies to "
    "${COMPILER_ID}: a compile-fail test must say which error it expects")
endif()

# Plain ASCII quotes from g++, no colours from anyone.
set(ENV{LC_ALL} C)
set(ENV{LANG} C)
set(ENV{GCC_COLORS} "")
unset(ENV{CLICOLOR_FORCE})

# --- Find TARGET's compile command --------------------------------------------
# CMake writes compile_commands.json one object per entry, "{" and "}" alone
# on their lines; a command never holds a raw newline (JSON escapes it). So the
# entry is the text between the "{" line before the object path and the next
# "}" line, and only that small object goes through string(JSON).
set(command_args "")
set(database "${BINARY_DIR}/compile_commands.json")
if(EXISTS "${database}")
  file(READ "${database}" json)
  string(FIND "${json}" "/${TARGET}.dir/" at)
  if(at GREATER -1)
    string(SUBSTRING "${json}" 0 ${at} head)
    string(FIND "${head}" "\n{" begin REVERSE)
    string(SUBSTRING "${json}" ${begin} -1 tail)
    string(FIND "${tail}" "\n}" length)
    math(EXPR length "${length} + 2")
    string(SUBSTRING "${tail}" 0 ${length} entry)
    string(JSON directory GET "${entry}" directory)
    string(JSON command ERROR_VARIABLE no_command GET "${entry}" command)
    if(no_command)
      # "arguments" form: already split.
      string(JSON count LENGTH "${entry}" arguments)
      math(EXPR last "${count} - 1")
      foreach(i RANGE ${last})
        string(JSON arg GET "${entry}" arguments ${i})
        list(APPEND raw_args "${arg}")
      endforeach()
    else()
      separate_arguments(raw_args UNIX_COMMAND "${command}")
    endif()

    # Same flags, but no dependency file, and no object: every check a
    # dimtensor diagnostic makes happens before code generation, so g++ and
    # clang++ stop after semantic analysis (twice as fast at -O3). Other
    # compilers write a scratch object.
    set(scratch "${BINARY_DIR}/compile_fail_scratch/${TARGET}.o")
    file(REMOVE "${scratch}")
    set(skip_next OFF)
    foreach(arg IN LISTS raw_args)
      if(skip_next)
        set(skip_next OFF)
      elseif(arg MATCHES "^-(MT|MF|MQ|o)$")
        set(skip_next ON)
      elseif(arg MATCHES "^-(MD|MMD)$" OR arg MATCHES "^-(MT|MF|MQ|o).")
        # dropped
      else()
        list(APPEND command_args "${arg}")
      endif()
    endforeach()
    if(COMPILER_ID MATCHES "GNU|Clang")
      list(APPEND command_args -fsyntax-only)
    else()
      list(APPEND command_args -o "${scratch}")
      get_filename_component(scratch_dir "${scratch}" DIRECTORY)
      file(MAKE_DIRECTORY "${scratch_dir}")
    endif()
  endif()
endif()

if(command_args)
  execute_process(
    COMMAND ${command_args}
    WORKING_DIRECTORY "${directory}"
    RESULT_VARIABLE result
    OUTPUT_VARIABLE output
    ERROR_VARIABLE output)
  set(how "compiled with the command of target ${TARGET}")
else()
  set(config_args "")
  if(CONFIG)
    set(config_args --config "${CONFIG}")
  endif()
  execute_process(
    COMMAND "${CMAKE_COMMAND}" --build "${BINARY_DIR}" --target "${TARGET}" ${config_args}
    RESULT_VARIABLE result
    OUTPUT_VARIABLE output
    ERROR_VARIABLE output)
  set(how "built with cmake --build --target ${TARGET} (no compile_commands.json entry)")
endif()

string(ASCII 27 esc)
string(REGEX REPLACE "${esc}\\[[0-9;]*[mK]" "" output "${output}")

if(MODE STREQUAL "ok")
  if(NOT result EQUAL 0)
    message("${output}")
    message(FATAL_ERROR "compile_ok: the passing twins in ${SOURCE} (each file "
      "without DIMTENSOR_COMPILE_FAIL) must compile, but they do not (output "
      "above, which names the file; ${how}). A broken twin means its "
      "compile-fail test proves nothing.")
  endif()
  message(STATUS "compile_ok: the passing twins in ${SOURCE} compile without DIMTENSOR_COMPILE_FAIL")
  return()
endif()

if(result EQUAL 0)
  message("${output}")
  message(FATAL_ERROR "compile_fail: ${SOURCE} with DIMTENSOR_COMPILE_FAIL "
    "compiled (${how}), but it must be rejected")
endif()

# A build tool echoes the failing command line (ninja: "FAILED: ..." then the
# command; make: "make[2]: *** [...] Error 1"), which holds the file name and
# the flags. Drop those lines, so that a regex can only match what the
# compiler itself said.
set(diagnostics "\n${output}\n")
foreach(rx IN ITEMS
    "\n(FAILED|ninja): [^\n]*"
    "\ng?make(\\[[0-9]+\\])?: [^\n]*"
    "\n[^\n]* -o [^\n]* -c [^\n]*"
    "\n[^\n]* -c [^\n]* -o [^\n]*")
  string(REGEX REPLACE "${rx}" "\n" diagnostics "${diagnostics}")
endforeach()

# The diagnosis must be the first error (docs/diagnostics.md): the first
# line that says "error:" must be the static_assert of a dimtensor
# diagnosis ("dimtensor: " starts every message; g++ prints it on that
# line, clang too, after the diagnosis's arguments), whatever the code does next with the rejected call's result.
# A file whose first error is another compiler error on purpose says so
# with `// EXPECT-FIRST-OTHER`.
if(NOT text MATCHES "//[ \t]*EXPECT-FIRST-OTHER")
  string(REGEX MATCH "[^\n]*error: [^\n]*" first_error "${diagnostics}")
  if(NOT first_error MATCHES "error: static[_ ]assert[^\n]*(failed: |\")dimtensor")
    message("${output}")
    message(FATAL_ERROR "compile_fail: ${SOURCE} was rejected, but its first error "
      "is not a dimtensor diagnosis (output above; ${how}):\n    ${first_error}")
  endif()
endif()

set(missing "")
foreach(rx IN LISTS regexes)
  if(NOT diagnostics MATCHES "${rx}")
    list(APPEND missing "${rx}")
  endif()
endforeach()
if(missing)
  message("${output}")
  string(REPLACE ";" "\n    " missing_text "${missing}")
  message(FATAL_ERROR "compile_fail: ${SOURCE} was rejected, but the compiler "
    "output (above; ${how}) does not match:\n    ${missing_text}")
endif()
message(STATUS "compile_fail: ${SOURCE} was rejected as expected")
