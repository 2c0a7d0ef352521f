# private_jemalloc.cmake - make a private copy of Debian's jemalloc for
# libmemprof-hotcold: extract libjemalloc_pic.a, drop its C++ operators (the
# library defines its own), and rename every global symbol it defines to
# PREFIX<name>, so that the copy's malloc, free, mallocx ... never clash with
# the library's public malloc family nor with another jemalloc in the
# process.
#
#   cmake -DARCHIVE=... -DOUT_DIR=... -DPREFIX=... -DAR=... -DNM=...
#         -DOBJCOPY=... -DMEMBERS="a.o;b.o" -P private_jemalloc.cmake
foreach(v ARCHIVE OUT_DIR PREFIX AR NM OBJCOPY MEMBERS)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "private_jemalloc.cmake: ${v} is not set")
  endif()
endforeach()

set(raw ${OUT_DIR}/raw)
file(REMOVE_RECURSE ${raw})
file(MAKE_DIRECTORY ${raw})
execute_process(COMMAND ${AR} x ${ARCHIVE} ${MEMBERS}
                WORKING_DIRECTORY ${raw} RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "ar x ${ARCHIVE} failed")
endif()

set(objs)
foreach(m ${MEMBERS})
  list(APPEND objs ${raw}/${m})
endforeach()
execute_process(COMMAND ${NM} -g --defined-only ${objs}
                OUTPUT_VARIABLE nm_out RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "nm on the jemalloc objects failed")
endif()

# "ADDR TYPE NAME" lines; file headers and blank lines have fewer fields.
string(REPLACE "\n" ";" lines "${nm_out}")
set(names)
foreach(line ${lines})
  if(line MATCHES "^[0-9a-fA-F]+ [A-Za-z] ([^ ]+)$")
    list(APPEND names ${CMAKE_MATCH_1})
  endif()
endforeach()
list(REMOVE_DUPLICATES names)
set(map "")
foreach(n ${names})
  string(APPEND map "${n} ${PREFIX}${n}\n")
endforeach()
file(WRITE ${OUT_DIR}/rename.map "${map}")

foreach(m ${MEMBERS})
  execute_process(COMMAND ${OBJCOPY} --redefine-syms=${OUT_DIR}/rename.map
                          ${raw}/${m} ${OUT_DIR}/${m} RESULT_VARIABLE rc)
  if(rc)
    message(FATAL_ERROR "objcopy ${m} failed")
  endif()
endforeach()
file(REMOVE_RECURSE ${raw})
