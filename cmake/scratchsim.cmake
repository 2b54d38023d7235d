# Helpers that keep each module's CMakeLists to one line per library, binary or test.

# scratchsim_cc_library(NAME SRCS a.cc ... DEPS x y)
function(scratchsim_cc_library name)
  cmake_parse_arguments(ARG "" "" "SRCS;DEPS" ${ARGN})
  add_library(${name} STATIC ${ARG_SRCS})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR})
  target_link_libraries(${name} PUBLIC ${ARG_DEPS})
  target_compile_options(${name} PRIVATE -Wall -Wextra -Wno-unused-parameter)
endfunction()

# scratchsim_cc_test(NAME SRCS a_test.cc DEPS lib ...)
function(scratchsim_cc_test name)
  if(NOT SCRATCHSIM_BUILD_TESTS)
    return()
  endif()
  cmake_parse_arguments(ARG "" "" "SRCS;DEPS" ${ARGN})
  add_executable(${name} ${ARG_SRCS})
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gmock GTest::gtest_main)
  target_compile_definitions(${name} PRIVATE
    SCRATCHSIM_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    SCRATCHSIM_BINARY_DIR="${PROJECT_BINARY_DIR}")
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60
    PROPERTIES ENVIRONMENT "SCRATCHSIM_MODELS=${PROJECT_SOURCE_DIR}/models/devices")
endfunction()
