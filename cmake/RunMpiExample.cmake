# example.distributed_translation: the example on 2 processes (mpirun) and
# in one process whose 2 ranks are threads (--threads=2), both in double
# without dropout (--exact); both must succeed and print the same
# translations, BLEU and mean BLEU (the lines with "bleu").
#
#   cmake -DMPIEXEC=… -DNUMPROC_FLAG=-np -DPROGRAM=… -DOUTPUT_DIR=… -P RunMpiExample.cmake
cmake_minimum_required(VERSION 3.25)

foreach(run IN ITEMS processes threads)
  if(run STREQUAL "processes")
    set(command "${MPIEXEC}" ${PREFLAGS} ${NUMPROC_FLAG} 2 "${PROGRAM}" "${OUTPUT_DIR}" --exact)
  else()
    set(command "${PROGRAM}" "${OUTPUT_DIR}" --exact --threads=2)
  endif()
  execute_process(COMMAND ${command} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message("--- 2 ranks as ${run}:\n${out}${err}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "the example on 2 ${run} exited with '${rc}'")
  endif()
  string(REGEX MATCHALL "[^\n]*bleu[^\n]*" lines "${out}")
  set(lines_${run} "${lines}")
endforeach()
if(NOT lines_processes)
  message(FATAL_ERROR "the example printed no translations")
endif()
if(NOT lines_processes STREQUAL lines_threads)
  message(FATAL_ERROR "2 processes printed other translations than one process:\n  processes: ${lines_processes}\n  threads: ${lines_threads}")
endif()
message("2 processes and one process (2 thread ranks) printed the same translations and BLEU")
