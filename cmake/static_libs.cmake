# memprof_static_archives(OUT name...): the static archives lib<name>.a of
# the tools' libraries, for MEMPROF_STATIC_LIBS; a missing one is an error
# that says which (its -dev package provides it).
function(memprof_static_archives out)
  set(found)
  foreach(name ${ARGN})
    find_library(MEMPROF_STATIC_${name} NAMES lib${name}.a)
    if(NOT MEMPROF_STATIC_${name})
      message(FATAL_ERROR "MEMPROF_STATIC_LIBS: lib${name}.a not found; "
              "install its -dev package or configure with -DMEMPROF_STATIC_LIBS=OFF")
    endif()
    list(APPEND found ${MEMPROF_STATIC_${name}})
  endforeach()
  set(${out} ${found} PARENT_SCOPE)
endfunction()
