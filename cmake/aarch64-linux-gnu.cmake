# Cross-building for AArch64 on a Debian x86-64 machine (`make test-aarch64`):
#   cmake -S . -B build-aarch64 -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake
# Debian's cross compilers (gcc-aarch64-linux-gnu, g++-aarch64-linux-gnu) bring their own
# C library; the tool's libraries (libdw-dev:arm64, libcurl4-openssl-dev:arm64) come from
# the arm64 side of a multiarch install, under /usr/lib/aarch64-linux-gnu, which the cross
# compilers search already.  Programs built here run under qemu-aarch64 (qemu-user).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)

# Headers and libraries of the target only; programs (pkg-config among them) of the host.
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu /)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# The host's pkg-config, pointed at the arm64 .pc files only (Debian 12 has no
# aarch64-linux-gnu-pkg-config), so that libdw and libcurl are never the host's.
set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_PATH} "")
set(ENV{PKG_CONFIG_SYSROOT_DIR} "")

# How the programs built here run on this machine: ctest starts a test's program through
# it, and tests/CMakeLists.txt builds launchers through it for programs that other
# programs start.  Without -L: the arm64 C library of the multiarch install (libc6:arm64,
# which libdw-dev:arm64 brings) is found where qemu looks by default, /lib/aarch64-linux-gnu,
# with its own loader; the cross compilers' copy under /usr/aarch64-linux-gnu is another
# build of glibc, and its loader with the multiarch libc.so.6 was seen to hang in fork().
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64)
