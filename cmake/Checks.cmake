# Configure-time checks with one-line failures.

# C++17 needs GCC 9 / Clang 10 or newer.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 9)
  ember_fail("GCC ${CMAKE_CXX_COMPILER_VERSION} is too old for C++17; Ember needs GCC 9 or newer (fix: apt-get install g++-12 and set CXX=g++-12)")
elseif(CMAKE_CXX_COMPILER_ID MATCHES "Clang" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 10)
  ember_fail("Clang ${CMAKE_CXX_COMPILER_VERSION} is too old for C++17; Ember needs Clang 10 or newer (fix: install a newer clang or g++)")
endif()

# Python with headers (the interpreter scikit-build-core runs, if any).
if(SKBUILD AND DEFINED PYTHON_EXECUTABLE AND NOT Python_EXECUTABLE)
  set(Python_EXECUTABLE ${PYTHON_EXECUTABLE})
endif()
find_package(Python 3.10 COMPONENTS Interpreter Development.Module)
if(NOT Python_Interpreter_FOUND)
  ember_fail("no Python 3.10+ interpreter found (fix: install python3, or pass -DPython_EXECUTABLE=/path/to/python)")
endif()
if(NOT Python_Development.Module_FOUND)
  ember_fail("Python headers not found for ${Python_EXECUTABLE} (fix: apt-get install python3-dev, or use a Python built with its headers)")
endif()

# Code generation needs PyYAML in that interpreter.
execute_process(COMMAND ${Python_EXECUTABLE} -c "import yaml" RESULT_VARIABLE _ember_yaml OUTPUT_QUIET ERROR_QUIET)
if(NOT _ember_yaml EQUAL 0)
  ember_fail("code generation needs PyYAML in ${Python_EXECUTABLE} (fix: ${Python_EXECUTABLE} -m pip install pyyaml)")
endif()
