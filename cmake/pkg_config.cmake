# pkg_config.cmake - each pkg-config file twice: one for the build tree
# (build/pkgconfig/NAME.pc: absolute paths into the build and source
# folders, so `PKG_CONFIG_PATH=build/pkgconfig` works before installing)
# and a relocatable one that is installed (prefix found from the file's
# own place).  NAME.pc.in uses @PC_PREFIX@, @PC_LIBDIR@, @PC_INCLUDEDIR@
# (the folder holding memprof_interface.h) and @PC_SYMSDIR@ (memprof.syms).
function(memprof_pkg_config name)
  set(in ${PROJECT_SOURCE_DIR}/cmake/${name}.pc.in)
  set(PC_PREFIX ${PROJECT_BINARY_DIR})
  set(PC_LIBDIR "\${prefix}")
  set(PC_INCLUDEDIR ${PROJECT_SOURCE_DIR}/include)
  set(PC_SYMSDIR "\${prefix}/runtime")
  configure_file(${in} ${PROJECT_BINARY_DIR}/pkgconfig/${name}.pc @ONLY)
  set(PC_PREFIX "\${pcfiledir}/../..")
  set(PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
  set(PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}/memprof")
  set(PC_SYMSDIR "\${libdir}")
  configure_file(${in} ${PROJECT_BINARY_DIR}/pkgconfig-install/${name}.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/pkgconfig-install/${name}.pc
          DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endfunction()
