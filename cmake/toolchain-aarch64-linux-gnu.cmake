# toolchain-aarch64-linux-gnu.cmake - cross-build for arm64 (aarch64) on a Debian amd64 host with
# Debian's cross toolchain and its multiarch libraries:
#   dpkg --add-architecture arm64 && apt-get update
#   apt-get install crossbuild-essential-arm64 libuv1-dev:arm64 libjansson-dev:arm64 libyaml-dev:arm64
# scripts/build-agent-arch.sh arm64 DIR uses it for the static agent (images/README.md, "arm64").
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
# Multiarch keeps the arm64 libraries in /usr/lib/aarch64-linux-gnu (headers are shared in
# /usr/include): find_library looks there through CMAKE_LIBRARY_ARCHITECTURE, and pkg-config is
# pointed at the arm64 .pc files only, so no amd64 library can slip into the link.
set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
