# The check of the instances declared extern (DIMTENSOR_EXTERN_INSTANCES at
# the end of each header with a dims-free body): a file that includes the umbrella
# calls the library's copies of the CPU backend's float and double code,
# and a file compiled with DIMTENSOR_NO_EXTERN_INSTANCES compiles its own.
#
#   cmake -DNM=<nm> -DEXTERN_OBJECT=<object> -DOWN_OBJECT=<object> -P cmake/CheckInstances.cmake
#
# Both objects are tests/instances/probe.cpp, which takes the address of
# backend_softmax<float> and autograd::add_gradient<cpu, double>.

cmake_minimum_required(VERSION 3.25)

foreach(var NM EXTERN_OBJECT OWN_OBJECT)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "CheckInstances.cmake: ${var} is not set")
  endif()
endforeach()

set(probes "dimtensor::backend_softmax<float>" "dimtensor::autograd::add_gradient<dimtensor::cpu, double>"
           "dimtensor::detail::attention_run<dimtensor::cpu, float>"
           "dimtensor::nn::detail::gru_layer_pass<double, dimtensor::cpu>")
set(problems "")
foreach(kind EXTERN OWN)
  execute_process(COMMAND "${NM}" -C "${${kind}_OBJECT}" OUTPUT_VARIABLE symbols RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "CheckInstances.cmake: ${NM} failed on ${${kind}_OBJECT}")
  endif()
  string(REPLACE "\n" ";" lines "${symbols}")
  foreach(probe IN LISTS probes)
    set(defined FALSE)
    set(undefined FALSE)
    foreach(line IN LISTS lines)
      string(FIND "${line}" "${probe}(" at)
      if(at EQUAL -1)
        continue()
      endif()
      if(line MATCHES "^ +U ")
        set(undefined TRUE)
      elseif(line MATCHES "^[0-9a-f]+ [TtWw] ")
        set(defined TRUE)
      endif()
    endforeach()
    if(kind STREQUAL "EXTERN" AND (defined OR NOT undefined))
      list(APPEND problems "${probe} is compiled in a file that includes dimtensor.hpp, not called in the library")
    elseif(kind STREQUAL "OWN" AND NOT defined)
      list(APPEND problems "${probe} is not compiled in a file built with DIMTENSOR_NO_EXTERN_INSTANCES")
    endif()
  endforeach()
endforeach()

if(problems)
  string(REPLACE ";" "\n  " text "${problems}")
  message(FATAL_ERROR "instance check:\n  ${text}")
endif()
message(STATUS "instance check: the library's copies are called, and compiled where asked")
