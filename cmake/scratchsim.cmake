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

# SCRATCHSIM_STATIC: binaries that run on a machine without Abseil or Protobuf installed (the
# GPU machine). Debian's CMake packages import the shared objects; point each imported target
# at the static archive beside it and link libstdc++/libgcc statically.
if(SCRATCHSIM_STATIC)
  function(scratchsim_use_static_archive target)
    if(NOT TARGET ${target})
      return()
    endif()
    get_target_property(aliased ${target} ALIASED_TARGET)
    if(aliased)
      set(target ${aliased})
    endif()
    foreach(property IMPORTED_LOCATION IMPORTED_LOCATION_NONE IMPORTED_LOCATION_RELEASE
                     IMPORTED_LOCATION_DEBUG IMPORTED_LOCATION_RELWITHDEBINFO)
      get_target_property(location ${target} ${property})
      if(location AND location MATCHES "\\.so")
        string(REGEX REPLACE "\\.so(\\.[0-9.]*)?$" ".a" archive "${location}")
        if(EXISTS "${archive}")
          set_target_properties(${target} PROPERTIES ${property} "${archive}")
        endif()
      endif()
    endforeach()
  endfunction()
  get_directory_property(scratchsim_imported_targets IMPORTED_TARGETS)
  foreach(target IN LISTS scratchsim_imported_targets)
    if(target MATCHES "^absl::" OR target MATCHES "^protobuf::")
      scratchsim_use_static_archive(${target})
    endif()
  endforeach()
  add_link_options(-static-libstdc++ -static-libgcc)
  set(CMAKE_CUDA_RUNTIME_LIBRARY Static)
endif()
