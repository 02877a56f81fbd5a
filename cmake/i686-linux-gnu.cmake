# Building berth as a 32-bit (i386) program on a Debian x86-64 host, to
# keep it clean where size_t and pointers are 32-bit and file offsets are
# not (a watch's arm64_32, armhf, i386). `make test-32` uses it:
#
#   cmake -S . -B build-32 -DCMAKE_TOOLCHAIN_FILE=cmake/i686-linux-gnu.cmake
#
# Needs gcc-multilib (gcc -m32), qemu-user, and the i386 libraries
# installed multiarch beside the host's (dpkg --add-architecture i386):
# libinih-dev:i386 and libopenblas-dev:i386 for -DBERTH_CORE_ONLY=ON, as
# make test-32 builds; the whole tree also needs libmicrohttpd-dev:i386,
# libpng-dev:i386 and libjpeg-dev:i386. Debian's gcc-multilib conflicts
# with its arm64 cross gcc (installing one removes the other).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR i686)
set(BERTH_CROSS_TRIPLE i386-linux-gnu)
# Its Debian architecture, which the package is labelled with (cmake/install.cmake).
set(BERTH_DEB_ARCHITECTURE i386)

set(CMAKE_C_COMPILER gcc)
# SSE2 arithmetic, not the x87's: x87 keeps doubles in 80 bits
# (FLT_EVAL_METHOD 2), so in strict C11 a literal such as 2.5e-4 no longer
# equals the double strtod returns for it. The 32-bit targets berth is
# for (armhf, arm64_32) compute in plain IEEE single and double like this.
set(CMAKE_C_FLAGS_INIT "-m32 -msse2 -mfpmath=sse")
set(CMAKE_EXE_LINKER_FLAGS_INIT -m32)
set(CMAKE_SHARED_LINKER_FLAGS_INIT -m32)
set(CMAKE_MODULE_LINKER_FLAGS_INIT -m32)

# find_library and find_path look in the i386 multiarch folders.
set(CMAKE_LIBRARY_ARCHITECTURE ${BERTH_CROSS_TRIPLE})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)

# pkg-config reads the i386 .pc files only: the host's would hand the
# linker x86-64 libraries.
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/${BERTH_CROSS_TRIPLE}/pkgconfig:/usr/share/pkgconfig)
set(ENV{PKG_CONFIG_PATH} "")

# Tests run through qemu-user: many x86-64 kernels (this one included)
# are built or booted without 32-bit emulation, so an i386 program
# cannot run natively. -L / lets qemu find /lib/ld-linux.so.2.
# OpenBLAS picks its kernels from CPUID, and on an Intel host qemu-i386's
# emulated cpu reads to it as an Athlon: its 3DNow! kernels, which qemu
# does not implement, ended every product in SIGSEGV (the same binaries
# ran natively, and on an AMD host, without fault). Prescott's SSE3
# kernels run on every x86 cpu berth's 32-bit build targets.
set(CMAKE_CROSSCOMPILING_EMULATOR env;OPENBLAS_CORETYPE=Prescott;qemu-i386;-L;/)
