# toolchain-x86_64-linux-gnu.cmake - cross-build for amd64 (x86_64) on a Debian arm64 host with
# Debian's cross toolchain and its multiarch libraries (the mirror of
# toolchain-aarch64-linux-gnu.cmake, for Dockerfile.agent/Dockerfile.controller built on an
# arm64 machine, e.g. docker buildx on an Apple or Graviton host):
#   dpkg --add-architecture amd64 && apt-get update
#   apt-get install crossbuild-essential-amd64 libuv1-dev:amd64 libjansson-dev:amd64 libyaml-dev:amd64
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR x86_64)
set(CMAKE_C_COMPILER x86_64-linux-gnu-gcc)
set(CMAKE_LIBRARY_ARCHITECTURE x86_64-linux-gnu)
set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/x86_64-linux-gnu/pkgconfig:/usr/share/pkgconfig")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
