# Dependencies come from Debian packages and are found with pkg-config. A missing one stops
# CMake with the name of the package that provides it.
find_package(PkgConfig)
if(NOT PKG_CONFIG_FOUND)
  message(FATAL_ERROR "pkg-config not found: apt-get install pkg-config")
endif()

function(kperf_require var module debpkg)
  pkg_check_modules(${var} QUIET IMPORTED_TARGET ${module})
  if(NOT ${var}_FOUND)
    message(FATAL_ERROR "${module} not found: apt-get install ${debpkg}")
  endif()
endfunction()

kperf_require(UV libuv libuv1-dev)
kperf_require(JANSSON jansson libjansson-dev)
kperf_require(YAML yaml-0.1 libyaml-dev)
kperf_require(CURL libcurl libcurl4-openssl-dev)
if(KPERF_TESTS)
  kperf_require(CMOCKA cmocka libcmocka-dev)
endif()
find_package(Threads REQUIRED)
