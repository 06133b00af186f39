# Writes the CTest tests of one Catch2 v2 CUDA program: those of
# cmake/CatchAddTests.cmake (one per test case), each also Skipped when the
# program exits with 77, which it does on a machine without a CUDA device.
#   cmake -DEXECUTABLE=<program> -DOUTPUT=<file> -DPREFIX=<prefix>
#         -DLABELS=<labels> -DWORKING_DIRECTORY=<dir>
#         -DCATCH_ADD_TESTS=<cmake/CatchAddTests.cmake> -P CudaAddTests.cmake
include("${CATCH_ADD_TESTS}")

file(READ "${OUTPUT}" script)
string(REPLACE " PROPERTIES WORKING_DIRECTORY " " PROPERTIES SKIP_RETURN_CODE 77 WORKING_DIRECTORY " script "${script}")
file(WRITE "${OUTPUT}" "${script}")
