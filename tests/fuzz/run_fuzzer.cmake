# Runs one fuzzer for a while on a fresh corpus and sums it up in one line:
#   cmake -DFUZZER=<program> -DNAME=<name> -DSEEDS=<seed folder> -DWORK=<folder>
#         -DSECONDS=<n> [-DDICT=<libFuzzer dictionary>] -P run_fuzzer.cmake
# The corpus is a copy of the seeds in WORK/corpus, so that each run starts
# from the same inputs and the seeds stay as fuzz_make_seeds wrote them.
# Findings go to WORK/artifacts/, which the next run clears; the test fails,
# showing the end of the fuzzer's output, when the fuzzer exits nonzero.
cmake_minimum_required(VERSION 3.25)

foreach(var IN ITEMS FUZZER NAME SEEDS WORK SECONDS)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run_fuzzer.cmake: -D${var}=... is missing")
  endif()
endforeach()
foreach(var IN ITEMS FUZZER SEEDS WORK)
  get_filename_component(${var} "${${var}}" ABSOLUTE)
endforeach()
if(NOT IS_DIRECTORY "${SEEDS}")
  message(FATAL_ERROR "fuzz ${NAME}: no seeds in ${SEEDS} (the fuzz.seeds test writes them)")
endif()

file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}/corpus" "${WORK}/artifacts")
file(GLOB seeds "${SEEDS}/*")
file(COPY ${seeds} DESTINATION "${WORK}/corpus")
list(LENGTH seeds seed_count)

set(dict_option)
if(DEFINED DICT AND NOT DICT STREQUAL "")
  set(dict_option "-dict=${DICT}")
endif()

string(TIMESTAMP started "%s" UTC)
execute_process(
  COMMAND "${FUZZER}"
    -max_total_time=${SECONDS}
    -rss_limit_mb=2048
    -timeout=10
    -print_final_stats=1
    ${dict_option}
    "-artifact_prefix=${WORK}/artifacts/"
    "${WORK}/corpus"
  WORKING_DIRECTORY "${WORK}"
  RESULT_VARIABLE rc
  OUTPUT_VARIABLE out
  ERROR_VARIABLE out)
string(TIMESTAMP finished "%s" UTC)
math(EXPR elapsed "${finished} - ${started}")

set(executions "?")
if(out MATCHES "stat::number_of_executed_units:[ \t]*([0-9]+)")
  set(executions "${CMAKE_MATCH_1}")
endif()
set(added "?")
if(out MATCHES "stat::new_units_added:[ \t]*([0-9]+)")
  set(added "${CMAKE_MATCH_1}")
endif()
set(rss "?")
if(out MATCHES "stat::peak_rss_mb:[ \t]*([0-9]+)")
  set(rss "${CMAKE_MATCH_1}")
endif()
file(GLOB findings "${WORK}/artifacts/*")
list(LENGTH findings finding_count)

if(rc EQUAL 0 AND finding_count EQUAL 0)
  string(CONCAT summary "fuzz ${NAME}: ${executions} executions in ${elapsed} s, 0 findings "
    "(${seed_count} seeds, ${added} inputs added, peak RSS ${rss} MB)")
  file(WRITE "${WORK}/summary.txt" "${summary}\n")
  message("${summary}")
  return()
endif()

string(LENGTH "${out}" out_length)
set(shown 12000)
if(out_length GREATER shown)
  math(EXPR from "${out_length} - ${shown}")
  string(SUBSTRING "${out}" ${from} -1 out)
  set(out "[... the first ${from} characters left out ...]\n${out}")
endif()
list(JOIN findings "\n  " finding_list)
string(CONCAT summary "fuzz ${NAME}: ${executions} executions in ${elapsed} s, ${finding_count} findings "
  "(exit status ${rc})")
file(WRITE "${WORK}/summary.txt" "${summary}\n")
message("${out}")
message(FATAL_ERROR "${summary}:\n  ${finding_list}\n"
  "reproduce with: ${FUZZER} <artifact>  (the findings stay until the next run of this test)")
