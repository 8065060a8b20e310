# Checks that must pass before project(): each failure is one line that names
# the cause and the fix.

# Stops configuring with one line: "ember: <cause> (fix: <what to do>)".
# (NOTICE keeps the line whole; FATAL_ERROR alone would wrap it.)
macro(ember_fail msg)
  message(NOTICE "ember: ${msg}")
  message(FATAL_ERROR "Ember configuration stopped by the check above.")
endmacro()

set(EMBER_MIN_CMAKE 3.26)
if(CMAKE_VERSION VERSION_LESS EMBER_MIN_CMAKE)
  ember_fail("CMake ${CMAKE_VERSION} is too old; Ember needs ${EMBER_MIN_CMAKE} or newer (fix: pip install -U cmake)")
endif()

# A C++ compiler: CXX if set, else the usual names on PATH.
if(NOT CMAKE_CXX_COMPILER)
  if(DEFINED ENV{CXX} AND NOT "$ENV{CXX}" STREQUAL "")
    string(REPLACE " " ";" _ember_cxx "$ENV{CXX}")
    list(GET _ember_cxx 0 _ember_cxx)
    find_program(_ember_cxx_path NAMES "${_ember_cxx}")
    if(NOT _ember_cxx_path)
      ember_fail("no C++ compiler: CXX is set to '$ENV{CXX}', which does not exist (fix: install g++ or point CXX at a C++ compiler)")
    endif()
  else()
    find_program(_ember_cxx_path NAMES c++ g++ clang++)
    if(NOT _ember_cxx_path)
      ember_fail("no C++ compiler found on PATH (fix: apt-get install g++, or set CXX to a C++17 compiler)")
    endif()
  endif()
endif()
