# fiat-config.cmake -- find_package(fiat) for drhook-rs installed in a
# fiat-shaped tree (make -C drhook-ffi install-fiat PREFIX=...), so that
# ECMWF-style CMake projects that use fiat only for Dr.Hook (YOMHOOK,
# drhook.h, ABOR1) build against drhook-rs with no edit:
#
#   find_package(fiat REQUIRED)                 # -Dfiat_ROOT=PREFIX or CMAKE_PREFIX_PATH
#   target_link_libraries(model PRIVATE fiat)   # USE YOMHOOK, #include "drhook.h"
#
# The target `fiat` (also `fiat::fiat`) carries the Fortran module
# directory (module/fiat: yomhook.mod, dr_hook_watch_mod.mod, compiled with
# the installer's compiler), include/fiat and include (drhook.h,
# abor1.h), and links lib/libfiat.so: a linker script naming libyomhook.a,
# libdrhook_abor1.a (ABOR1 stand-ins, pulled only when the code calls ABOR1
# and does not define it) and libdrhook.so. Only Dr.Hook's part of fiat is
# provided: no MPL, OML, parkind modules.

get_filename_component(_fiat_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
set(fiat_BASE_DIR "${_fiat_prefix}")
set(fiat_HAVE_OMP 1)
set(fiat_HAVE_MPI 0)
set(fiat_HAVE_DR_HOOK_MULTI_PRECISION_HANDLES 1)

if(NOT TARGET fiat)
  add_library(fiat INTERFACE IMPORTED)
  set_target_properties(fiat PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES
      "${_fiat_prefix}/module/fiat;${_fiat_prefix}/include/fiat;${_fiat_prefix}/include"
    INTERFACE_LINK_LIBRARIES "${_fiat_prefix}/lib/libfiat.so")
  find_package(OpenMP COMPONENTS Fortran QUIET)
  if(OpenMP_Fortran_FOUND)
    set_property(TARGET fiat APPEND PROPERTY
      INTERFACE_LINK_LIBRARIES OpenMP::OpenMP_Fortran)
  endif()
  # libdrhook.so is found through the rpath CMake records for a library
  # given by full path; the linker script hides it, so add its directory.
  set_property(TARGET fiat APPEND PROPERTY
    INTERFACE_LINK_OPTIONS "LINKER:-rpath,${_fiat_prefix}/lib")
endif()
if(NOT TARGET fiat::fiat)
  add_library(fiat::fiat INTERFACE IMPORTED)
  set_target_properties(fiat::fiat PROPERTIES INTERFACE_LINK_LIBRARIES fiat)
endif()

set(fiat_FOUND TRUE)
