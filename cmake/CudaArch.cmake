# Note [CUDA architectures]
# EMBER_CUDA_ARCH_LIST (or TORCH_CUDA_ARCH_LIST) takes PyTorch's spelling:
# "9.0", "8.0;9.0+PTX", "9.0a", separated by ';' or spaces. Each entry
# becomes machine code for that architecture; "+PTX" adds its PTX so newer
# GPUs can run it. CMAKE_CUDA_ARCHITECTURES is derived from it. The flags
# ("sm_90 compute_90") are what torch.cuda.get_arch_list() reports.

# ember_cuda_archs(<list> <cmake_archs_var> <flags_var> <error_var>): the
# CMAKE_CUDA_ARCHITECTURES entries and the space-separated flags of a list,
# or a message in <error_var> when an entry is not an architecture.
function(ember_cuda_archs list cmake_archs_var flags_var error_var)
  string(REPLACE " " ";" _archs "${list}")
  set(_cmake_archs)
  set(_flags)
  set(_error "")
  foreach(_arch IN LISTS _archs)
    if(_arch STREQUAL "")
      continue()
    endif()
    if(NOT _arch MATCHES "^([0-9]+)\\.([0-9]+)([af]?)(\\+PTX)?$")
      set(_error "EMBER_CUDA_ARCH_LIST: '${_arch}' is not an architecture like 9.0, 9.0a or 9.0+PTX")
      break()
    endif()
    set(_num "${CMAKE_MATCH_1}${CMAKE_MATCH_2}${CMAKE_MATCH_3}")
    list(APPEND _cmake_archs "${_num}-real")
    list(APPEND _flags "sm_${_num}")
    if(CMAKE_MATCH_4)
      list(APPEND _cmake_archs "${_num}-virtual")
      list(APPEND _flags "compute_${_num}")
    endif()
  endforeach()
  if(NOT _error AND NOT _cmake_archs)
    set(_error "EMBER_CUDA_ARCH_LIST is empty")
  endif()
  if(_error)
    set(_cmake_archs)
    set(_flags)
  endif()
  list(JOIN _flags " " _flags)
  set(${cmake_archs_var} "${_cmake_archs}" PARENT_SCOPE)
  set(${flags_var} "${_flags}" PARENT_SCOPE)
  set(${error_var} "${_error}" PARENT_SCOPE)
endfunction()
