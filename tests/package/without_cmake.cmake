# CTest `package.without_cmake`: runs the build command that docs/building.md
# gives for users without CMake (the ```sh block after "Without CMake:"),
# exactly as written, then the program it builds, so the page cannot drift
# from what the library needs.
#   cmake -DSOURCE_DIR=<dimtensor source> -DWORK_DIR=<scratch dir>
#         -DVERSION_MAJOR=<x> -DVERSION_MINOR=<y> [-DDOC=<page>] -P without_cmake.cmake
# The command runs unoptimized (its -O level replaced by -O0, as
# package.add_subdirectory builds the library: it checks how the library is
# built and used, not its speed; the runtime's sources take a third of the
# time at -O0). The command runs in WORK_DIR, where `dimtensor` is a link to the source
# tree and `app.cpp` is tests/package/consumer.cpp (with the version it
# checks defined), the names the page uses. It must also name every folder
# of src/ that holds library sources (all of them but src/viz/, the pictures).

foreach(var SOURCE_DIR WORK_DIR VERSION_MAJOR VERSION_MINOR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "without_cmake.cmake: ${var} is not set")
  endif()
endforeach()
if(NOT DOC)
  set(DOC "${SOURCE_DIR}/docs/building.md")
endif()

file(READ "${DOC}" page)
string(FIND "${page}" "\nWithout CMake:" at)
if(at EQUAL -1)
  message(FATAL_ERROR "${DOC} has no line \"Without CMake:\"")
endif()
string(SUBSTRING "${page}" ${at} -1 rest)
string(FIND "${rest}" "\n```sh\n" open)
if(open EQUAL -1)
  message(FATAL_ERROR "${DOC}: no ```sh block after \"Without CMake:\"")
endif()
math(EXPR open "${open} + 7")
string(SUBSTRING "${rest}" ${open} -1 rest)
string(FIND "${rest}" "\n```" close)
if(close EQUAL -1)
  message(FATAL_ERROR "${DOC}: the ```sh block after \"Without CMake:\" is not closed")
endif()
string(SUBSTRING "${rest}" 0 ${close} command)

set(problems "")
file(GLOB source_dirs LIST_DIRECTORIES true RELATIVE "${SOURCE_DIR}/src" "${SOURCE_DIR}/src/*")
foreach(dir IN LISTS source_dirs)
  file(GLOB cpp "${SOURCE_DIR}/src/${dir}/*.cpp")
  if(cpp AND NOT dir STREQUAL "viz" AND NOT command MATCHES "dimtensor/src/${dir}/\\*\\.cpp")
    list(APPEND problems "it does not compile dimtensor/src/${dir}/*.cpp")
  endif()
endforeach()
if(NOT command MATCHES "(^|[ \t\n])app\\.cpp([ \t\n\\\\]|$)")
  list(APPEND problems "it does not compile app.cpp")
endif()
set(program "a.out")
if(command MATCHES "[ \t\n]-o[ \t]*([^ \t\n]+)")
  set(program "${CMAKE_MATCH_1}")
endif()
if(problems)
  list(JOIN problems "\n  " text)
  message(FATAL_ERROR "${DOC}, the command after \"Without CMake:\":\n  ${text}")
endif()

file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
file(CREATE_LINK "${SOURCE_DIR}" "${WORK_DIR}/dimtensor" SYMBOLIC)
file(WRITE "${WORK_DIR}/app.cpp"
  "// Written by tests/package/without_cmake.cmake: the package tests' consumer.\n"
  "#define EXPECTED_VERSION_MAJOR ${VERSION_MAJOR}\n"
  "#define EXPECTED_VERSION_MINOR ${VERSION_MINOR}\n"
  "#include \"${SOURCE_DIR}/tests/package/consumer.cpp\"\n")
string(REGEX REPLACE "(^|[ \t])-O[0-9sgz]?([ \t]|$)" "\\1-O0\\2" command "${command}")
file(WRITE "${WORK_DIR}/build.sh" "set -e\n${command}\n")
message(STATUS "docs/building.md's command, in ${WORK_DIR}:\n${command}")
execute_process(COMMAND sh "${WORK_DIR}/build.sh" WORKING_DIRECTORY "${WORK_DIR}" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "docs/building.md's command (\"Without CMake:\") failed: ${rc}")
endif()
execute_process(COMMAND "${WORK_DIR}/${program}" WORKING_DIRECTORY "${WORK_DIR}" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the program built by docs/building.md's command failed: ${rc}")
endif()
message(STATUS "docs/building.md's command built ${program}, which ran and passed")
