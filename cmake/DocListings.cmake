# The documentation's C++ listings, compiled and run (docs/listings/README.md).
#
# scripts/doc_listings.py reads the pages at configure time and writes one
# translation unit per program of a page and one per listing the page shows
# as rejected, plus a manifest of calls to the two functions below. The
# pages, the harnesses and the script are configure dependencies: editing a
# page re-runs CMake, and a page that breaks the convention stops the
# configure step with the page's line.
#
#   doc.<page>_<name>            builds with the library (part of `all`, like the
#                                examples) and runs in a folder of its own; passes
#                                when it exits 0
#   compile_fail.doc_<page>_<name>_<line>
#                                the rejected listing in its program: passes when
#                                the compiler rejects it with the page's regex
#                                (the compile-fail machinery of CompileFail.cmake,
#                                its precompiled header included)
#
# A listing compiles with the tests' warnings as errors, except for unused
# variables: a listing shows a value it does not go on to use.

# dimtensor_add_doc_listings(SOURCE_DIR <dir> PAGES <page>... LINK_LIBRARIES <targets>...
#   [REJECTED_LINK_LIBRARIES <targets>...] [FIXTURES_REQUIRED <fixtures>...])
# PAGES are relative to SOURCE_DIR. REJECTED_LINK_LIBRARIES: what the rejected
# listings compile against (those of the compile-fail tests, so that their
# precompiled header, dimtensor_compile_fail_pch, serves them too).
function(dimtensor_add_doc_listings)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "SOURCE_DIR"
    "PAGES;LINK_LIBRARIES;REJECTED_LINK_LIBRARIES;FIXTURES_REQUIRED")
  find_package(Python3 COMPONENTS Interpreter REQUIRED)
  set(script "${arg_SOURCE_DIR}/scripts/doc_listings.py")
  set(out "${CMAKE_CURRENT_BINARY_DIR}/doc_listings")
  set(manifest "${out}/listings.cmake")
  file(GLOB harnesses CONFIGURE_DEPENDS "${arg_SOURCE_DIR}/docs/listings/*.hpp")
  set(page_paths "")
  foreach(page IN LISTS arg_PAGES)
    list(APPEND page_paths "${arg_SOURCE_DIR}/${page}")
  endforeach()
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${page_paths} ${harnesses} "${script}")
  execute_process(
    COMMAND "${Python3_EXECUTABLE}" "${script}" generate --source-dir "${arg_SOURCE_DIR}"
            --out "${out}" --manifest "${manifest}" ${arg_PAGES}
    WORKING_DIRECTORY "${arg_SOURCE_DIR}"
    RESULT_VARIABLE result
    OUTPUT_VARIABLE output
    ERROR_VARIABLE error)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "${error}${output}")
  endif()
  string(STRIP "${output}" output)
  message(STATUS "${output}")

  set(program_libraries ${arg_LINK_LIBRARIES})
  # For _dimtensor_add_compile_check (CompileFail.cmake), which reads these
  # from its caller's scope.
  set(arg_LINK_LIBRARIES ${arg_REJECTED_LINK_LIBRARIES})
  set(pch_target "")
  if(TARGET dimtensor_compile_fail_pch)
    set(pch_target dimtensor_compile_fail_pch)
  endif()
  set(listing_warnings
    $<$<CXX_COMPILER_ID:GNU,Clang,AppleClang>:-Wno-unused-variable>
    $<$<CXX_COMPILER_ID:GNU>:-Wno-unused-but-set-variable>)

  function(dimtensor_doc_program name source page)
    set(target "doc_${name}")
    add_executable(${target} "${source}")
    target_link_libraries(${target} PRIVATE ${program_libraries})
    # A listing is compiled to be checked, not to be fast: unoptimized.
    target_compile_options(${target} PRIVATE ${listing_warnings} $<$<CXX_COMPILER_ID:GNU,Clang,AppleClang>:-O0>)
    set(run_dir "${out}/run/${name}")
    file(MAKE_DIRECTORY "${run_dir}")
    add_test(NAME doc.${name} COMMAND ${target} WORKING_DIRECTORY "${run_dir}")
    set_tests_properties(doc.${name} PROPERTIES LABELS listings)
  endfunction()

  function(dimtensor_doc_rejected name source page)
    _dimtensor_add_compile_check(fail "compile_fail.doc_${name}" "${source}")
    target_compile_options("compile_fail.doc_${name}" PRIVATE ${listing_warnings})
    set_property(TEST "compile_fail.doc_${name}" APPEND PROPERTY LABELS listings)
  endfunction()

  include("${manifest}")
  set(DIMTENSOR_DOC_LISTING_COUNT ${dimtensor_doc_listing_count} PARENT_SCOPE)
endfunction()
