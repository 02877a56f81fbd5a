# The backend kit's sources, compiled into every backend module (a module
# links nothing from libberth): include this file, then add
# ${BERTH_KIT_SOURCES} to the module and ${BERTH_KIT_DIR} to its includes.
set(BERTH_KIT_DIR ${CMAKE_CURRENT_LIST_DIR})
set(BERTH_KIT_SOURCES
  ${BERTH_KIT_DIR}/bk_attr.c
  ${BERTH_KIT_DIR}/bk_dtype.c
  ${BERTH_KIT_DIR}/bk_elementwise.c
  ${BERTH_KIT_DIR}/bk_entry.c
  ${BERTH_KIT_DIR}/bk_graph.c
  ${BERTH_KIT_DIR}/bk_node.c
  ${BERTH_KIT_DIR}/bk_ops.c
  ${BERTH_KIT_DIR}/bk_params.c
  ${BERTH_KIT_DIR}/bk_option_parse.c
  ${BERTH_KIT_DIR}/bk_options.c
  ${BERTH_KIT_DIR}/bk_place.c
  ${BERTH_KIT_DIR}/bk_upload.c)
