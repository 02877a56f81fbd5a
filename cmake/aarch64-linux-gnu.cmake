# Cross-building berth for arm64 (aarch64) Linux on a Debian x86-64 host,
# with the arm64 libraries installed multiarch beside the host's
# (libopenblas-dev:arm64 and the rest; scripts/bootstrap --arm64 installs
# them):
#
#   cmake -S . -B build-arm64 -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake
#
# The compiler is Debian's cross gcc (gcc-aarch64-linux-gnu) where it is
# installed, else clang targeting aarch64. Debian's cross gcc conflicts with
# gcc-multilib, so a machine that needs -m32 cannot have it; clang, with
# binutils-aarch64-linux-gnu for the linker and libgcc-12-dev:arm64 for the
# start files, builds the same tree there. -DBERTH_ARM64_CC=gcc|clang picks
# one.
#
# Multiarch puts the arm64 headers and libraries in /usr/include and
# /usr/lib/aarch64-linux-gnu, so there is no separate sysroot: what keeps
# the host's x86-64 libraries out is pkg-config reading only the arm64 .pc
# files and the compilers' own multiarch search paths.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(BERTH_CROSS_TRIPLE aarch64-linux-gnu)
# Its Debian architecture, which the package is labelled with (cmake/install.cmake).
set(BERTH_DEB_ARCHITECTURE arm64)

if(NOT BERTH_ARM64_CC)
  find_program(BERTH_ARM64_GCC ${BERTH_CROSS_TRIPLE}-gcc)
  if(BERTH_ARM64_GCC)
    set(BERTH_ARM64_CC gcc)
  else()
    set(BERTH_ARM64_CC clang)
  endif()
endif()
set(BERTH_ARM64_CC ${BERTH_ARM64_CC} CACHE STRING "The arm64 cross compiler: gcc (aarch64-linux-gnu-gcc) or clang")
if(BERTH_ARM64_CC STREQUAL "gcc")
  set(CMAKE_C_COMPILER ${BERTH_CROSS_TRIPLE}-gcc)
elseif(BERTH_ARM64_CC STREQUAL "clang")
  set(CMAKE_C_COMPILER clang)
  set(CMAKE_C_COMPILER_TARGET ${BERTH_CROSS_TRIPLE})
else()
  message(FATAL_ERROR "BERTH_ARM64_CC is '${BERTH_ARM64_CC}': give gcc or clang")
endif()
# The host's ar would index arm64 objects with an x86-64 binutils.
set(CMAKE_AR ${BERTH_CROSS_TRIPLE}-ar CACHE FILEPATH "")
set(CMAKE_RANLIB ${BERTH_CROSS_TRIPLE}-ranlib CACHE FILEPATH "")
set(CMAKE_STRIP ${BERTH_CROSS_TRIPLE}-strip CACHE FILEPATH "")

# find_library and find_path look in the arm64 multiarch folders; programs
# (glslc, python3, diff) are the host's.
set(CMAKE_LIBRARY_ARCHITECTURE ${BERTH_CROSS_TRIPLE})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)

# pkg-config reads the arm64 .pc files only: the host's would hand the
# linker x86-64 libraries.
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/${BERTH_CROSS_TRIPLE}/pkgconfig:/usr/share/pkgconfig)
set(ENV{PKG_CONFIG_PATH} "")

# Tests and anything else CMake runs from the build go through qemu-user.
# -L / makes qemu load the programs with the multiarch loader and libc in
# /lib/aarch64-linux-gnu: the cross gcc's own (/usr/aarch64-linux-gnu) is a
# different glibc build, and a program that mixes the two hangs in its
# first pthread_create.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64;-L;/)
