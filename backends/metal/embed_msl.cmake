# Writes OUT: for each MSL file in SRCS (a ;-list), its text as a static
# NUL-terminated byte array msl_src_STEM, and a table msl_sources in file
# order, so the metal module carries its kernels and compiles each on
# first use. Run with cmake -P.
set(body "/* Generated from the kernels' MSL by embed_msl.cmake: do not edit. */\n")
string(APPEND body "#ifndef BERTH_MSL_SOURCES_H\n#define BERTH_MSL_SOURCES_H\n#include <stddef.h>\n\n")
set(table "")
foreach(src ${SRCS})
  get_filename_component(stem ${src} NAME_WE)
  file(READ ${src} hex HEX)
  string(REGEX REPLACE "(..)" "0x\\1," bytes "${hex}")
  string(REGEX REPLACE "((0x..,){16})" "\\1\n    " bytes "${bytes}")
  string(APPEND body "static const unsigned char msl_src_${stem}[] = {\n    ${bytes}0x00};\n")
  string(APPEND table "    {\"${stem}\", (const char *)msl_src_${stem}, sizeof msl_src_${stem} - 1},\n")
endforeach()
string(APPEND body "\ntypedef struct msl_source { const char *name; const char *text; size_t len; } msl_source;\n")
string(APPEND body "static const msl_source msl_sources[] = {\n${table}};\n")
string(APPEND body "#define MSL_SOURCE_COUNT (sizeof msl_sources / sizeof msl_sources[0])\n#endif\n")
file(WRITE ${OUT} "${body}")
