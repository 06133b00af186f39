# CTest `listings.convention`: scripts/doc_listings.py refuses a page that
# breaks the convention of docs/listings/README.md, naming the page's line,
# and accepts one that keeps it.
#   cmake -DPYTHON=<python3> -DSCRIPT=<doc_listings.py> -DWORK=<scratch dir> -P convention.cmake
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}/docs")

# expect(<page text> <regex or "ok">): generate from a page holding the text.
function(expect text want)
  file(WRITE "${WORK}/docs/page.md" "${text}")
  execute_process(
    COMMAND "${PYTHON}" "${SCRIPT}" generate --source-dir "${WORK}" --out "${WORK}/out"
            --manifest "${WORK}/out/listings.cmake" docs/page.md
    RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
  if(want STREQUAL "ok")
    if(NOT result EQUAL 0)
      message(FATAL_ERROR "a page that keeps the convention was refused:\n${text}\n${output}")
    endif()
  elseif(result EQUAL 0 OR NOT output MATCHES "${want}")
    message(FATAL_ERROR "expected a refusal matching '${want}' (exit ${result}):\n${text}\n${output}")
  endif()
endfunction()

set(fence "```")
expect("# p\n\n${fence}cpp\nint x = 1\n${fence}\n"
  "docs/page.md:3: a ...cpp listing without a marker")
expect("<!-- listing: bogus x -->\n${fence}cpp\nint x\n${fence}\n"
  "docs/page.md:1: a listing marker must read")
expect("<!-- listing: body demo -->\n\ntext between\n${fence}cpp\nint x\n${fence}\n"
  "docs/page.md:1: a listing marker must stand right before its")
expect("<!-- listing: rejected demo -->\n${fence}cpp\nint x\n${fence}\n"
  "needs the regex of the diagnostic")
expect("<!-- listing: body demo -->\n${fence}cpp\nint x = 1\n${fence}\n"
  "program .demo. has no top piece")
expect("<!-- listing: body demo -->\n${fence}text\nout\n${fence}\n"
  "a listing marker before a ...text fence")
expect("<!-- listing: top demo -->\n${fence}cpp\n#include <cstdio>\n${fence}\n<!-- listing: body demo -->\n${fence}cpp\nstd::puts(\"x\")\n${fence}\n"
  ok)
file(READ "${WORK}/out/docs_page_demo.cpp" generated)
if(NOT generated MATCHES "#line 7 \"[^\"]*docs/page.md\"\nstd::puts")
  message(FATAL_ERROR "the generated program does not point back at the page:\n${generated}")
endif()
message(STATUS "doc_listings.py keeps the convention")
