# drhook-rs's fiat-shaped install stands in for fiat's Dr.Hook part as of
# fiat 2.0 (the interface it implements): it answers find_package(fiat)
# for any requested version up to 2.x.
set(PACKAGE_VERSION "2.0.0")
if(PACKAGE_FIND_VERSION_MAJOR GREATER 2)
  set(PACKAGE_VERSION_COMPATIBLE FALSE)
else()
  set(PACKAGE_VERSION_COMPATIBLE TRUE)
  if(PACKAGE_FIND_VERSION STREQUAL PACKAGE_VERSION)
    set(PACKAGE_VERSION_EXACT TRUE)
  endif()
endif()
