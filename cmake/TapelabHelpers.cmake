# Helpers shared by the folders' CMakeLists.

# tapelab_backend_option(VAR found "what is missing"): resolves an AUTO/ON/OFF
# option. Sets ${VAR}_ENABLED. ON with the dependency missing is an error;
# AUTO with it missing switches the backend off with a message.
function(tapelab_backend_option var found missing)
  set(value "${${var}}")
  if(value STREQUAL "OFF")
    set(${var}_ENABLED OFF PARENT_SCOPE)
    message(STATUS "tapelab: ${var}=OFF, backend not built")
  elseif(found)
    set(${var}_ENABLED ON PARENT_SCOPE)
    message(STATUS "tapelab: ${var} backend enabled")
  elseif(value STREQUAL "ON")
    message(FATAL_ERROR "tapelab: ${var}=ON but ${missing}")
  else()
    set(${var}_ENABLED OFF PARENT_SCOPE)
    message(STATUS "tapelab: ${var} backend switched off: ${missing}")
  endif()
endfunction()

# The kinds a test is labelled with beside its component (DEVELOPERS.md, Tests):
# exactness (checks a bit-for-bit == promise), gpu (uses a GPU API), slow (over
# ~20 s with cold kernel caches).
set(TAPELAB_TEST_KINDS exactness gpu slow)
# The cases of a suite instantiated over the engine registry that run a GPU engine.
set(TAPELAB_GPU_ENGINE_CASES "/(vulkan|opencl|cuda|hip)( |$)")

# tapelab_discover_tests(TARGET LABELS <label>... [WORKING_DIRECTORY <dir>]
#                        [EXACTNESS <regex>...] [GPU <regex>...] [SLOW <regex>...]):
# TARGET's GoogleTest cases as CTest tests, listed when ctest runs (PRE_TEST),
# GTEST_SKIP reported as skipped. Every case is labelled LABELS, and a case whose
# CTest name matches one of a kind's regexes also gets that kind.
function(tapelab_discover_tests target)
  cmake_parse_arguments(ARG "" "WORKING_DIRECTORY" "LABELS;EXACTNESS;GPU;SLOW" ${ARGN})
  if(NOT ARG_WORKING_DIRECTORY)
    set(ARG_WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
  endif()
  set(list ${target}_tests)
  gtest_discover_tests(${target} DISCOVERY_MODE PRE_TEST DISCOVERY_TIMEOUT 60 TEST_LIST ${list}
                       WORKING_DIRECTORY ${ARG_WORKING_DIRECTORY}
                       PROPERTIES SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\]")
  # The labels by a script that runs after the listing: gtest_discover_tests'
  # PROPERTIES cannot carry a list (CMake 3.25 splits LABELS "a;b" into pairs).
  set(script "foreach(tapelab_case IN LISTS ${list})\n  set(tapelab_labels ${ARG_LABELS})\n")
  foreach(kind IN LISTS TAPELAB_TEST_KINDS)
    string(TOUPPER ${kind} key)
    foreach(regex IN LISTS ARG_${key})
      string(APPEND script "  if(tapelab_case MATCHES [==[${regex}]==])\n    list(APPEND tapelab_labels ${kind})\n  endif()\n")
    endforeach()
  endforeach()
  string(APPEND script "  list(REMOVE_DUPLICATES tapelab_labels)\n"
                       "  set_tests_properties(\"\${tapelab_case}\" PROPERTIES LABELS \"\${tapelab_labels}\")\n"
                       "endforeach()\n")
  file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/${list}_labels.cmake "${script}")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${CMAKE_CURRENT_BINARY_DIR}/${list}_labels.cmake)
endfunction()

# tapelab_tests(COMPONENT <component> [LABELS <kind>...] [LIBRARIES <target>...]
#               SOURCES test_<component>_<what>.cpp... [EXACTNESS|GPU|SLOW <regex>...]):
# one GoogleTest executable per source, named after it and built into the build
# tree's tests/, linked to LIBRARIES only (and GoogleTest's main, the exactness
# flags). Its cases are labelled <component> and each kind in LABELS; the regexes
# add a kind to the cases whose CTest names match (the slow cases of a quick file).
function(tapelab_tests)
  cmake_parse_arguments(ARG "" "COMPONENT" "LABELS;LIBRARIES;SOURCES;EXACTNESS;GPU;SLOW" ${ARGN})
  if(NOT ARG_COMPONENT OR NOT ARG_SOURCES OR ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "tapelab_tests: COMPONENT and SOURCES are required (unparsed: ${ARG_UNPARSED_ARGUMENTS})")
  endif()
  foreach(kind IN LISTS ARG_LABELS)
    if(NOT kind IN_LIST TAPELAB_TEST_KINDS)
      string(REPLACE ";" ", " kinds "${TAPELAB_TEST_KINDS}")
      message(FATAL_ERROR "tapelab_tests: '${kind}' is not a kind of test (${kinds}); the component is COMPONENT")
    endif()
  endforeach()
  foreach(src IN LISTS ARG_SOURCES)
    get_filename_component(name ${src} NAME_WE)
    if(NOT name MATCHES "^test_${ARG_COMPONENT}_")
      message(FATAL_ERROR "tapelab_tests: ${src} is in component ${ARG_COMPONENT}: name it test_${ARG_COMPONENT}_<what>.cpp")
    endif()
    add_executable(${name} ${src})
    target_link_libraries(${name} PRIVATE ${ARG_LIBRARIES} tapelab_flags GTest::gtest_main)
    target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR})  # tests/common/
    target_compile_definitions(${name} PRIVATE TAPELAB_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
                               TAPELAB_BINARY_DIR="${PROJECT_BINARY_DIR}")
    # One folder for every test binary, as scripts/gpu-pack.sh expects.
    set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/tests)
    tapelab_discover_tests(${name} LABELS ${ARG_COMPONENT} ${ARG_LABELS} WORKING_DIRECTORY ${PROJECT_BINARY_DIR}/tests
                           EXACTNESS ${ARG_EXACTNESS} GPU ${ARG_GPU} SLOW ${ARG_SLOW})
  endforeach()
endfunction()
