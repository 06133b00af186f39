# Runs a program under mpirun and passes when it fails as it should: a
# non-zero exit, within TIMEOUT seconds, with EXPECT (a regular expression)
# in what it printed.  For the failure cases of tests/dist/.
#
#   cmake -DMPIEXEC=… -DNUMPROC_FLAG=-np -DRANKS=2 -DPROGRAM=… -DMODE=…
#         -DEXPECT=… -DTIMEOUT=60 -P RunMpiFailure.cmake
cmake_minimum_required(VERSION 3.25)

foreach(var IN ITEMS MPIEXEC NUMPROC_FLAG RANKS PROGRAM MODE EXPECT TIMEOUT)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "RunMpiFailure.cmake: ${var} is not set")
  endif()
endforeach()

string(TIMESTAMP started "%s")
execute_process(
  COMMAND "${MPIEXEC}" ${PREFLAGS} ${NUMPROC_FLAG} ${RANKS} "${PROGRAM}" ${MODE}
  RESULT_VARIABLE rc
  OUTPUT_VARIABLE out
  ERROR_VARIABLE out
  TIMEOUT ${TIMEOUT})
string(TIMESTAMP ended "%s")
math(EXPR seconds "${ended} - ${started}")
message("${out}")
message("mpirun exited with '${rc}' after ${seconds} s")
if(rc MATCHES "timeout|Process terminated due to timeout")
  message(FATAL_ERROR "${MODE}: the ranks hung (killed after ${TIMEOUT} s)")
endif()
if(rc EQUAL 0)
  message(FATAL_ERROR "${MODE}: mpirun exited 0; a failing rank must end every rank with a non-zero exit")
endif()
if(NOT out MATCHES "${EXPECT}")
  message(FATAL_ERROR "${MODE}: the output does not say '${EXPECT}'")
endif()
message("${MODE}: every rank ended, exit '${rc}', with the message")
