# Build knobs. Each can be given as -DNAME=VALUE, through CMAKE_ARGS, or as an
# environment variable of the same name (as PyTorch's setup.py reads them).
include(CMakeDependentOption)

# ember_env_cache(NAME "doc"): an environment variable NAME, when set,
# overrides the cached value on every configure (not only the first).
function(ember_env_cache name doc)
  if(DEFINED ENV{${name}} AND NOT "$ENV{${name}}" STREQUAL "")
    if("$ENV{${name}}" MATCHES "^(1|ON|on|On|TRUE|true|True|YES|yes|Y|y)$")
      set(${name} ON CACHE BOOL "${doc}" FORCE)
    else()
      set(${name} OFF CACHE BOOL "${doc}" FORCE)
    endif()
  endif()
endfunction()

# ember_env_option(NAME "doc" DEFAULT): the environment overrides the cache,
# which overrides the default.
function(ember_env_option name doc default)
  ember_env_cache(${name} "${doc}")
  option(${name} "${doc}" ${default})
endfunction()

# Build type: DEBUG=1 -> Debug (-O0 -g), REL_WITH_DEB_INFO=1 -> RelWithDebInfo.
if("$ENV{DEBUG}" MATCHES "^(1|ON|on|TRUE|true)$")
  set(CMAKE_BUILD_TYPE Debug CACHE STRING "" FORCE)
elseif("$ENV{REL_WITH_DEB_INFO}" MATCHES "^(1|ON|on|TRUE|true)$")
  set(CMAKE_BUILD_TYPE RelWithDebInfo CACHE STRING "" FORCE)
elseif(NOT CMAKE_BUILD_TYPE)
  set(CMAKE_BUILD_TYPE Release CACHE STRING "" FORCE)
endif()
set(CMAKE_CXX_FLAGS_DEBUG "-O0 -g")
# Extra flags of the per-capability kernels (Note [Kernel optimisation flags]
# in src/ember/CMakeLists.txt): -O2 and the vectoriser's full cost model.
if(CMAKE_BUILD_TYPE STREQUAL "Release")
  set(EMBER_KERNEL_OPT_FLAGS -O2 -fvect-cost-model=dynamic)
elseif(CMAKE_BUILD_TYPE STREQUAL "Debug")
  set(EMBER_KERNEL_OPT_FLAGS "")
else()
  set(EMBER_KERNEL_OPT_FLAGS -fvect-cost-model=dynamic)
endif()
# Kernels never read errno: without it sqrt is one instruction and its loops
# vectorise.
list(APPEND EMBER_KERNEL_OPT_FLAGS -fno-math-errno)

# Tests are built by plain CMake builds and by the test command; a pip
# install of the package skips them unless BUILD_TEST=1.
if(SKBUILD)
  ember_env_option(BUILD_TEST "Build the C++ tests" OFF)
else()
  ember_env_option(BUILD_TEST "Build the C++ tests" ON)
endif()
ember_env_option(USE_OPENMP "Use OpenMP for intra-op parallelism" ON)
# Used only when the library is found (cmake/Dependencies.cmake).
ember_env_option(USE_ONEDNN "Use oneDNN for float32 convolution when found" ON)
ember_env_option(USE_DISTRIBUTED "Build ember.distributed (stores, process groups)" ON)
ember_env_cache(USE_GLOO "Use Gloo for CPU collectives when found")
cmake_dependent_option(USE_GLOO "Use Gloo for CPU collectives when found" ON "USE_DISTRIBUTED" OFF)
ember_env_cache(USE_MPI "Build the MPI backend when MPI is found")
cmake_dependent_option(USE_MPI "Build the MPI backend when MPI is found" ON "USE_DISTRIBUTED" OFF)

# USE_CUDA defaults to on when a CUDA compiler is found.
include(CheckLanguage)
if(NOT DEFINED USE_CUDA AND NOT DEFINED ENV{USE_CUDA})
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    set(_ember_cuda_default ON)
  else()
    set(_ember_cuda_default OFF)
  endif()
else()
  set(_ember_cuda_default OFF)
endif()
ember_env_option(USE_CUDA "Build the CUDA backend" ${_ember_cuda_default})
ember_env_cache(USE_CUDNN "Use cuDNN (needs USE_CUDA)")
cmake_dependent_option(USE_CUDNN "Use cuDNN (needs USE_CUDA)" ON "USE_CUDA" OFF)
ember_env_cache(USE_NCCL "Build the NCCL backend (needs USE_CUDA and USE_DISTRIBUTED)")
cmake_dependent_option(USE_NCCL "Build the NCCL backend (needs USE_CUDA and USE_DISTRIBUTED)" ON
                       "USE_CUDA;USE_DISTRIBUTED" OFF)

# MAX_JOBS caps parallel compile and link jobs (Ninja job pools).
if(DEFINED ENV{MAX_JOBS} AND "$ENV{MAX_JOBS}" MATCHES "^[0-9]+$")
  set(MAX_JOBS $ENV{MAX_JOBS} CACHE STRING "Parallel compile/link jobs (empty: all cores)" FORCE)
endif()
if(MAX_JOBS)
  set_property(GLOBAL APPEND PROPERTY JOB_POOLS ember_compile=${MAX_JOBS} ember_link=${MAX_JOBS})
  set(CMAKE_JOB_POOL_COMPILE ember_compile)
  set(CMAKE_JOB_POOL_LINK ember_link)
endif()

# ccache as compiler launcher when present (EMBER_USE_CCACHE=OFF disables).
ember_env_option(EMBER_USE_CCACHE "Use ccache when found" ON)
if(EMBER_USE_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  find_program(CCACHE_PROGRAM ccache)
  if(CCACHE_PROGRAM)
    set(CMAKE_C_COMPILER_LAUNCHER ${CCACHE_PROGRAM})
    set(CMAKE_CXX_COMPILER_LAUNCHER ${CCACHE_PROGRAM})
    # nvcc too: device objects are the slowest to rebuild.
    set(CMAKE_CUDA_COMPILER_LAUNCHER ${CCACHE_PROGRAM})
  endif()
endif()

# EMBER_SANITIZE=ON (or SANITIZE=1 in the environment): AddressSanitizer and
# UndefinedBehaviorSanitizer on every target, any UB report fatal, libstdc++'s
# checked containers on; `make test-asan` builds this in build/asan.
if("$ENV{SANITIZE}" MATCHES "^(1|ON|on|TRUE|true)$")
  set(EMBER_SANITIZE ON CACHE BOOL "Build with ASan and UBSan" FORCE)
endif()
option(EMBER_SANITIZE "Build with ASan and UBSan" OFF)
# EMBER_BASELINE_KERNELS_ONLY=ON: the CPU kernels for the baseline capability
# only (a third of their compile time), for builds whose CPU speed is not
# measured (the GPU check).
option(EMBER_BASELINE_KERNELS_ONLY "Compile the CPU kernels for the baseline capability only" OFF)
if(EMBER_SANITIZE AND CMAKE_BUILD_TYPE STREQUAL "Debug")
  # -O1 as the sanitizers advise: readable reports, and it compiles several
  # times faster than the release kernels' -O3; -g1 gives reports file:line.
  set(CMAKE_CXX_FLAGS_DEBUG "-O1 -g1")
  set(CMAKE_C_FLAGS_DEBUG "-O1 -g1")
endif()
if(EMBER_SANITIZE)
  set(_ember_san -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
  add_compile_options(${_ember_san})
  add_compile_definitions(_GLIBCXX_ASSERTIONS)
  add_link_options(${_ember_san})
endif()
if(CMAKE_BUILD_TYPE STREQUAL "Debug")
  add_compile_definitions(_GLIBCXX_ASSERTIONS)
endif()

set(CMAKE_EXPORT_COMPILE_COMMANDS ON)
set(CMAKE_CXX_STANDARD 17)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
set(CMAKE_CXX_EXTENSIONS OFF)
set(CMAKE_POSITION_INDEPENDENT_CODE ON)
set(CMAKE_CXX_VISIBILITY_PRESET hidden)
set(CMAKE_VISIBILITY_INLINES_HIDDEN ON)
# Nothing a library takes from a static archive (libstdc++.a where a toolchain
# links it statically, cudart_static) is exported: loaded before PyTorch, an
# exported copy of libstdc++ bound PyTorch's own references and crashed it.
if(CMAKE_SYSTEM_NAME STREQUAL "Linux")
  add_link_options(LINKER:--exclude-libs,ALL)
endif()
set(CMAKE_LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/lib)
set(CMAKE_RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)
