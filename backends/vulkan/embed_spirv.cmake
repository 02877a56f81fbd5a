# Writes OUT: for each SPIR-V file in SPVS, a static uint32_t array named
# vk_spv_STEM and its word count, plus a table vk_spirv_table in file
# order. Run with cmake -P.
set(body "/* Generated from the shaders by embed_spirv.cmake: do not edit. */\n")
string(APPEND body "#ifndef BERTH_VK_SPIRV_H\n#define BERTH_VK_SPIRV_H\n#include <stddef.h>\n#include <stdint.h>\n\n")
set(table "")
foreach(spv ${SPVS})
  get_filename_component(stem ${spv} NAME_WE)
  file(READ ${spv} hex HEX)
  string(LENGTH "${hex}" nhex)
  math(EXPR rem "${nhex} % 8")
  if(NOT rem EQUAL 0)
    message(FATAL_ERROR "${spv}: size is not a multiple of 4 bytes")
  endif()
  # SPIR-V words are little-endian: reverse each group of four bytes.
  string(REGEX REPLACE "(..)(..)(..)(..)" "0x\\4\\3\\2\\1u," words "${hex}")
  string(REGEX REPLACE "((0x........u,){8})" "\\1\n    " words "${words}")
  string(APPEND body "static const uint32_t vk_spv_${stem}[] = {\n    ${words}\n};\n")
  string(APPEND table "    {\"${stem}\", vk_spv_${stem}, sizeof vk_spv_${stem}},\n")
endforeach()
string(APPEND body "\ntypedef struct vk_spirv_blob { const char *name; const uint32_t *code; size_t bytes; } vk_spirv_blob;\n")
string(APPEND body "static const vk_spirv_blob vk_spirv_table[] = {\n${table}};\n")
string(APPEND body "#define VK_SPIRV_COUNT (sizeof vk_spirv_table / sizeof vk_spirv_table[0])\n#endif\n")
file(WRITE ${OUT} "${body}")
