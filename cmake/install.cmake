# What `cmake --install` puts under PREFIX, and the Debian package cpack
# builds from it:
#
#   bin/berth, bin/berth-ocr        the command and the OCR example
#   bin/onnx2webnn, bin/berth-conformance
#                                   links to the Python tools in share/berth/tools
#   lib/libberth.so.0 (and .so), lib/libberth.a
#   lib/berth/libberth-*.so         the backend modules
#   lib/pkgconfig/berth.pc, lib/cmake/berth/
#   include/berth/                  berth.h, backend.h, ops.h, ops.def
#   share/berth/kit/                the backend kit's sources and kit.cmake
#   share/berth/examples/           first (a graph and weights), embed.c, skeleton-backend
#   share/doc/berth/                README.md, backend-ops.md
#   lib/python3*/dist-packages/berth the Python package (see below)
#
# Nothing installed names a path of the build machine: the command finds
# its modules relative to itself, the package files relative to
# themselves (a test installs, moves the prefix and builds against it).
include(CMakePackageConfigHelpers)

install(FILES include/berth/berth.h include/berth/backend.h include/berth/ops.h include/berth/ops.def
  DESTINATION include/berth)
file(GLOB BERTH_KIT_FILES ${CMAKE_SOURCE_DIR}/kit/*.c ${CMAKE_SOURCE_DIR}/kit/*.h)
install(FILES ${BERTH_KIT_FILES} kit/kit.cmake DESTINATION share/berth/kit)

configure_file(cmake/berth.pc.in ${CMAKE_BINARY_DIR}/berth.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/berth.pc DESTINATION lib/pkgconfig)
configure_package_config_file(cmake/berthConfig.cmake.in ${CMAKE_BINARY_DIR}/berthConfig.cmake
  INSTALL_DESTINATION lib/cmake/berth)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/berthConfigVersion.cmake
  COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_BINARY_DIR}/berthConfig.cmake ${CMAKE_BINARY_DIR}/berthConfigVersion.cmake
  cmake/berth_module.cmake DESTINATION lib/cmake/berth)
install(EXPORT berthTargets NAMESPACE berth:: DESTINATION lib/cmake/berth)

# The Python tools keep their package beside them; the links in bin/ are
# relative, so the prefix stays movable.
install(PROGRAMS tools/onnx2webnn tools/conformance DESTINATION share/berth/tools)
install(DIRECTORY tools/onnx2webnn_lib DESTINATION share/berth/tools FILES_MATCHING PATTERN "*.py")
install(CODE "
  file(MAKE_DIRECTORY \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/bin\")
  file(CREATE_LINK ../share/berth/tools/onnx2webnn \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/bin/onnx2webnn\" SYMBOLIC)
  file(CREATE_LINK ../share/berth/tools/conformance \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/bin/berth-conformance\" SYMBOLIC)")

# The Python package (python/berth), where Debian's python3 looks:
# /usr/lib/python3/dist-packages for the distribution's prefix (the
# package), PREFIX/lib/python3.X/dist-packages for any other (/usr/local's
# is on Debian's path; another goes on PYTHONPATH). It finds libberth at
# PREFIX/lib relative to itself. Chosen at install time, since cpack
# installs into /usr whatever the configured prefix.
execute_process(COMMAND /usr/bin/python3 -c "import sys; print('%d.%d' % sys.version_info[:2])"
  OUTPUT_VARIABLE BERTH_PY_VERSION OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE py_rc ERROR_QUIET)
if(NOT py_rc EQUAL 0)
  set(BERTH_PY_VERSION 3)
endif()
install(CODE "
  if(CMAKE_INSTALL_PREFIX STREQUAL \"/usr\")
    set(py_dir lib/python3/dist-packages)
  else()
    set(py_dir lib/python${BERTH_PY_VERSION}/dist-packages)
  endif()
  file(INSTALL \"${CMAKE_SOURCE_DIR}/python/berth\" DESTINATION \"\${CMAKE_INSTALL_PREFIX}/\${py_dir}\"
    FILES_MATCHING PATTERN \"*.py\")")

install(FILES examples/first/first.webnn examples/first/first.safetensors DESTINATION share/berth/examples/first)
install(FILES examples/embed/embed.c DESTINATION share/berth/examples/embed)
install(DIRECTORY examples/skeleton-backend DESTINATION share/berth/examples)
# skeleton.ini runs the first graph from first/ beside it: a vendor copies
# the skeleton's folder alone.
install(FILES examples/first/first.webnn examples/first/first.safetensors
  DESTINATION share/berth/examples/skeleton-backend/first)
install(FILES README.md docs/backend-ops.md DESTINATION share/doc/berth)

# One Debian package, berth: the engine, its modules, the command, the
# tools and the files to build against it. They are released together
# (the command and the modules negotiate the ABI, but a deployment wants
# the pair it was tested with), and the whole is a few megabytes; a
# distribution that wants libberth0 / libberth-dev / berth-tools can split
# along the directories above.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME berth)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "inference engine with hardware backends loaded at run time")
set(CPACK_PACKAGE_CONTACT "berth maintainers <berth@localhost>")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
# The libraries the binaries link, found by dpkg-shlibdeps; the Python
# tools' modules by hand.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# A build for another machine is packaged for that machine: CPack would
# otherwise ask dpkg --print-architecture, the host's, and label i386 or
# arm64 programs amd64. The toolchain files set BERTH_DEB_ARCHITECTURE.
if(BERTH_DEB_ARCHITECTURE)
  set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE ${BERTH_DEB_ARCHITECTURE})
endif()
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "python3, python3-numpy, python3-onnx")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "libonnx-testdata")
# ldconfig through a trigger, as Debian's library packages do, instead of
# CPack's postinst calling it: a trigger also works for an install into
# another root (dpkg --root), which the package test does.
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${CMAKE_SOURCE_DIR}/cmake/deb/triggers ${CMAKE_SOURCE_DIR}/cmake/deb/postinst
  ${CMAKE_SOURCE_DIR}/cmake/deb/postrm)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
include(CPack)
