# embed_page.cmake - turns profdata/report/report_page.html into report_page.h:
# the page before and after its "@DATA@" line as two byte arrays, so the
# HTML report is one self-contained file while the page stays readable.
#   cmake -DIN=report_page.html -DOUT=report_page.h -P embed_page.cmake
file(READ "${IN}" page)
set(marker "@DATA@")
string(FIND "${page}" "${marker}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "${IN}: no ${marker} line")
endif()
string(LENGTH "${marker}" marker_len)
math(EXPR tail_at "${at} + ${marker_len}")
string(SUBSTRING "${page}" 0 ${at} head)
string(SUBSTRING "${page}" ${tail_at} -1 tail)

function(as_array name text out)
  string(HEX "${text}" hex)
  string(LENGTH "${hex}" hex_len)
  math(EXPR len "${hex_len} / 2")
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
  string(REGEX REPLACE "((0x..,){16})" "\\1\n  " bytes "${bytes}")
  set(${out} "static const unsigned char ${name}[] = {\n  ${bytes}0};\nstatic const size_t ${name}_len = ${len};\n" PARENT_SCOPE)
endfunction()

as_array(report_page_head "${head}" head_c)
as_array(report_page_tail "${tail}" tail_c)
file(WRITE "${OUT}.tmp" "/* generated from report_page.html by embed_page.cmake */\n#include <stddef.h>\n${head_c}${tail_c}")
file(RENAME "${OUT}.tmp" "${OUT}")
