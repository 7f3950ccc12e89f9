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
if(NOT KPERF_AGENT_ONLY) # the agent never talks HTTP
  kperf_require(CURL libcurl libcurl4-openssl-dev)
endif()
if(KPERF_TESTS)
  kperf_require(CMOCKA cmocka libcmocka-dev)
endif()
find_package(Threads REQUIRED)

# Static agent for FROM-scratch images: point the imported targets at Debian's static archives
# (libuv1-dev ships libuv_a.a, libjansson-dev libjansson.a). Only kperf-agent links -static.
if(KPERF_STATIC)
  find_library(KPERF_UV_STATIC NAMES libuv_a.a libuv.a)
  find_library(KPERF_JANSSON_STATIC NAMES libjansson.a)
  # base/ links libyaml (base/yaml_load.c); the agent uses none of it, but its link line names it
  find_library(KPERF_YAML_STATIC NAMES libyaml.a)
  if(NOT KPERF_UV_STATIC OR NOT KPERF_JANSSON_STATIC OR NOT KPERF_YAML_STATIC)
    message(FATAL_ERROR "static libuv/jansson/libyaml not found: "
                        "apt-get install libuv1-dev libjansson-dev libyaml-dev")
  endif()
  set_target_properties(PkgConfig::UV PROPERTIES INTERFACE_LINK_LIBRARIES
                        "${KPERF_UV_STATIC};pthread;dl;rt")
  set_target_properties(PkgConfig::JANSSON PROPERTIES INTERFACE_LINK_LIBRARIES
                        "${KPERF_JANSSON_STATIC}")
  set_target_properties(PkgConfig::YAML PROPERTIES INTERFACE_LINK_LIBRARIES "${KPERF_YAML_STATIC}")
endif()
