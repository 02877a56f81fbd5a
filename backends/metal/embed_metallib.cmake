# Writes OUT: the compiled kernel library LIB as a static byte array
# msl_metallib and its size, for the metal module to load with
# newLibraryWithData:. Run with cmake -P.
file(READ ${LIB} hex HEX)
string(REGEX REPLACE "(..)" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "((0x..,){16})" "\\1\n    " bytes "${bytes}")
file(WRITE ${OUT} "/* Generated from berth.metallib by embed_metallib.cmake: do not edit. */\n"
  "#ifndef BERTH_MSL_METALLIB_H\n#define BERTH_MSL_METALLIB_H\n#include <stddef.h>\n"
  "static const unsigned char msl_metallib[] = {\n    ${bytes}};\n"
  "static const size_t msl_metallib_size = sizeof msl_metallib;\n#endif\n")
