# DrHookConfig.cmake -- find_package(DrHook) for an installed libdrhook
# (make -C drhook-ffi install PREFIX=...; point CMAKE_PREFIX_PATH at PREFIX).
#
#   find_package(DrHook REQUIRED)
#   target_link_libraries(model PRIVATE DrHook::yomhook)   # Fortran: USE YOMHOOK
#   target_link_libraries(tool  PRIVATE DrHook::drhook)    # C: drhook.h, libhpm.h
#
# DrHook::yomhook is the installed yomhook.mod + libyomhook.a, compiled with
# the installer's Fortran compiler. With another compiler, compile the
# module yourself instead:
#
#   add_library(yomhook STATIC ${DrHook_YOMHOOK_SOURCE})
#   target_link_libraries(yomhook PUBLIC DrHook::drhook)
#   target_link_libraries(model PRIVATE yomhook)
#
# Set DrHook_STATIC to link libdrhook.a instead of libdrhook.so.
#
# A static program gets Dr.Hook attached at link time (the lifecycle layer
# of drhook run: root region main, threads, fork, exec, every exit) with
#
#   target_link_libraries(model PRIVATE DrHook::wrap)      # or DrHook::wrap_mpi
#
# which links libdrhook_wrap.a (libdrhook included: not with DrHook::drhook)
# with the linker's --wrap list.
#
# A program linked with libdrhook gets its MPI calls as rows
# (DR_HOOK_OPT=mpi, no preload) with
#
#   target_link_libraries(model PRIVATE DrHook::mpi MPI::MPI_C)
#
# (libdrhook_mpi.so, then libdrhook: DrHook::mpi before the MPI libraries).

get_filename_component(_drhook_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
set(DrHook_INCLUDE_DIR "${_drhook_prefix}/include")
set(DrHook_YOMHOOK_SOURCE "${_drhook_prefix}/share/drhook/yomhook.F90")
find_package(Threads REQUIRED)

if(NOT TARGET DrHook::drhook)
  if(DrHook_STATIC)
    add_library(DrHook::drhook STATIC IMPORTED)
    set_target_properties(DrHook::drhook PROPERTIES
      IMPORTED_LOCATION "${_drhook_prefix}/lib/libdrhook.a"
      INTERFACE_LINK_LIBRARIES "Threads::Threads;${CMAKE_DL_LIBS};m")
  else()
    add_library(DrHook::drhook SHARED IMPORTED)
    set_target_properties(DrHook::drhook PROPERTIES
      IMPORTED_LOCATION "${_drhook_prefix}/lib/libdrhook.so")
  endif()
  set_target_properties(DrHook::drhook PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${DrHook_INCLUDE_DIR}")
endif()

if(NOT TARGET DrHook::yomhook AND EXISTS "${_drhook_prefix}/lib/libyomhook.a")
  add_library(DrHook::yomhook STATIC IMPORTED)
  set_target_properties(DrHook::yomhook PROPERTIES
    IMPORTED_LOCATION "${_drhook_prefix}/lib/libyomhook.a"
    INTERFACE_INCLUDE_DIRECTORIES "${DrHook_INCLUDE_DIR}"
    INTERFACE_LINK_LIBRARIES "DrHook::drhook")
  find_package(OpenMP COMPONENTS Fortran QUIET)
  if(OpenMP_Fortran_FOUND)
    set_property(TARGET DrHook::yomhook APPEND PROPERTY
      INTERFACE_LINK_LIBRARIES OpenMP::OpenMP_Fortran)
  endif()
endif()

if(NOT TARGET DrHook::wrap AND EXISTS "${_drhook_prefix}/lib/libdrhook_wrap.a")
  set(_drhook_lists "${_drhook_prefix}/share/drhook")
  add_library(DrHook::wrap STATIC IMPORTED)
  set_target_properties(DrHook::wrap PROPERTIES
    IMPORTED_LOCATION "${_drhook_prefix}/lib/libdrhook_wrap.a"
    INTERFACE_INCLUDE_DIRECTORIES "${DrHook_INCLUDE_DIR}"
    INTERFACE_LINK_OPTIONS "LINKER:@${_drhook_lists}/drhook-wrap.list"
    INTERFACE_LINK_LIBRARIES "Threads::Threads;${CMAKE_DL_LIBS};m")
  add_library(DrHook::wrap_mpi INTERFACE IMPORTED)
  set_target_properties(DrHook::wrap_mpi PROPERTIES
    INTERFACE_LINK_OPTIONS "LINKER:@${_drhook_lists}/drhook-wrap-mpi.list"
    INTERFACE_LINK_LIBRARIES "DrHook::wrap")
endif()

if(NOT TARGET DrHook::mpi AND EXISTS "${_drhook_prefix}/lib/libdrhook_mpi.so")
  add_library(DrHook::mpi SHARED IMPORTED)
  set_target_properties(DrHook::mpi PROPERTIES
    IMPORTED_LOCATION "${_drhook_prefix}/lib/libdrhook_mpi.so"
    INTERFACE_LINK_LIBRARIES "DrHook::drhook")
endif()

set(DrHook_FOUND TRUE)
