# Writes OUT, the test matrix of the catalogue (`STRATA info --tests`, run with ENV), after each
# build of the program: tests/mpi/catalogue_tests.cmake registers its lines with ctest. ENV's
# entries are separated by "|".
string(REPLACE "|" ";" ENV "${ENV}")
execute_process(COMMAND ${CMAKE_COMMAND} -E env ${ENV} ${STRATA} info --tests
                OUTPUT_VARIABLE rows RESULT_VARIABLE status ERROR_VARIABLE err)
if(NOT status EQUAL 0 OR rows STREQUAL "")
  message(FATAL_ERROR "${STRATA} info --tests failed (${status}): ${err}")
endif()
file(WRITE ${OUT}.new "${rows}")
file(RENAME ${OUT}.new ${OUT})
