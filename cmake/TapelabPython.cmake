# The Python module's dependencies (python/): resolved before the libraries are
# defined, because a module links them into a shared object and so needs them
# position-independent. Sets TAPELAB_PYTHON_ENABLED.
#
# The interpreter: Python3_EXECUTABLE when given, else Debian's /usr/bin/python3,
# the one scripts/setup.sh installs the headers, NumPy and pytest for (a python3
# ahead of it on PATH, such as pyenv's, usually has none of them). The module is
# built for that interpreter, and CTest runs pytest with it.
set(TAPELAB_PYTHON AUTO CACHE STRING "Python module (pybind11): AUTO, ON or OFF")
set(tapelab_python_found FALSE)
set(tapelab_python_missing "")
if(NOT TAPELAB_PYTHON STREQUAL "OFF")
  if(NOT Python3_EXECUTABLE AND EXISTS /usr/bin/python3)
    set(Python3_EXECUTABLE /usr/bin/python3 CACHE FILEPATH "the interpreter the tapelab module is built for")
  endif()
  find_package(Python3 3.8 QUIET COMPONENTS Interpreter Development.Module)
  # pybind11 2.10 uses FindPython's results (its "new" mode) when Python3_FOUND is set.
  if(Python3_FOUND)
    find_package(pybind11 2.6 CONFIG QUIET)
  endif()
  if(NOT Python3_FOUND)
    set(tapelab_python_missing "no Python 3 interpreter with headers (apt install python3-dev)")
  elseif(NOT pybind11_FOUND)
    set(tapelab_python_missing "pybind11 not found (apt install pybind11-dev)")
  else()
    set(tapelab_python_found TRUE)
  endif()
endif()
tapelab_backend_option(TAPELAB_PYTHON ${tapelab_python_found} "${tapelab_python_missing}")
if(TAPELAB_PYTHON_ENABLED)
  message(STATUS "tapelab: Python module for ${Python3_EXECUTABLE} (${Python3_VERSION}), pybind11 ${pybind11_VERSION}")
  set(CMAKE_POSITION_INDEPENDENT_CODE ON)
endif()
