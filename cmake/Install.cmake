# Stage 7: the installed layout inside the Python package.
#   ember/_C*.so                       the stub extension
#   ember/lib/libember_*.so            the layered libraries
#   ember/lib/libsleef.so.3            SLEEF, where the build machine has it
#   ember/include/ember/**             public headers (+ generated ones)
#   ember/include/pybind11/**          pybind11, for users' extension modules
#   ember/share/cmake/Ember/           find_package(Ember) for C++ users
#   ember/version.py, ember/_C.pyi
include(CMakePackageConfigHelpers)

install(TARGETS ember_core ember_cpu EXPORT EmberTargets LIBRARY DESTINATION ember/lib)
install(TARGETS ember_python LIBRARY DESTINATION ember/lib)
if(EMBER_SLEEF_LIBRARY_REAL)
  install(FILES ${EMBER_SLEEF_LIBRARY_REAL} DESTINATION ember/lib RENAME libsleef.so.3)
endif()
if(USE_DISTRIBUTED)
  install(TARGETS ember_distributed LIBRARY DESTINATION ember/lib)
  foreach(_plugin ember_distributed_mpi ember_distributed_nccl)
    if(TARGET ${_plugin})
      install(TARGETS ${_plugin} LIBRARY DESTINATION ember/lib)
    endif()
  endforeach()
endif()
if(USE_CUDA)
  # Not an exported target: EmberConfig links it when the file is there, so a
  # CPU distribution (tools/build/libember.py) can leave it and cuBLAS out.
  install(TARGETS ember_cuda LIBRARY DESTINATION ember/lib)
endif()
install(TARGETS _C LIBRARY DESTINATION ember)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/src/ember/ DESTINATION ember/include/ember
        FILES_MATCHING PATTERN "*.h" REGEX "/src/ember/(python|cuda)$" EXCLUDE)
install(DIRECTORY ${EMBER_GEN_DIR}/include/ember/ DESTINATION ember/include/ember)
install(FILES ${CMAKE_BINARY_DIR}/config/include/ember/BuildConfig.h DESTINATION ember/include/ember)
if(EMBER_PYBIND11_INCLUDE)
  install(DIRECTORY ${EMBER_PYBIND11_INCLUDE}/pybind11 DESTINATION ember/include)
endif()

install(EXPORT EmberTargets NAMESPACE Ember:: DESTINATION ember/share/cmake/Ember)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/EmberConfig.cmake.in
                              ${CMAKE_BINARY_DIR}/EmberConfig.cmake INSTALL_DESTINATION ember/share/cmake/Ember)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/EmberConfigVersion.cmake VERSION ${PROJECT_VERSION}
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/EmberConfig.cmake ${CMAKE_BINARY_DIR}/EmberConfigVersion.cmake
        DESTINATION ember/share/cmake/Ember)

# Python-side build facts.
if(EMBER_CUDA_VERSION)
  set(EMBER_PY_CUDA "'${EMBER_CUDA_VERSION}'")
else()
  set(EMBER_PY_CUDA "None")
endif()
if(CMAKE_BUILD_TYPE STREQUAL "Debug")
  set(EMBER_PY_DEBUG True)
else()
  set(EMBER_PY_DEBUG False)
endif()
configure_file(${PROJECT_SOURCE_DIR}/cmake/version.py.in ${CMAKE_BINARY_DIR}/version.py @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/version.py DESTINATION ember)
install(FILES ${EMBER_GEN_PYI} DESTINATION ember)
