# package.cmake - `cpack` (run in the build dir) builds two Debian packages from the install
# components of install.cmake: kperf (the controller, kubectl-kperf, completions, docs) and
# kperf-agent (the agent and its hardened systemd unit for an external host). Their Depends
# come from dpkg-shlibdeps over the binaries (libcurl4, libjansson4, libyaml-0-2 for kperf;
# libuv1, libjansson4 for kperf-agent; libc6), so they match what the build linked.
# Tested by test/e2e/deb_install.sh (installed into a clean debootstrap root).
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME kperf)
set(CPACK_PACKAGE_VENDOR kperf)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "kperf maintainers <kperf@users.noreply.github.com>")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL kperf agent)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE https://github.com/kperf/kperf)
set(CPACK_DEBIAN_KPERF_PACKAGE_NAME kperf)
set(CPACK_DEBIAN_AGENT_PACKAGE_NAME kperf-agent)
set(CPACK_COMPONENT_KPERF_DESCRIPTION
    "Kubernetes pod-network performance: the kperf controller\n kperf runs kperf-agent pods in a cluster (or network namespaces locally) and measures\n pod-to-pod, host-to-host, pod-to-service and pod-to-external latency and throughput.\n Includes kubectl-kperf (kubectl kperf ...) and shell completion.")
set(CPACK_COMPONENT_AGENT_DESCRIPTION
    "kperf measurement agent (server and client)\n kperf-agent is the engine kperf runs in its pods. This package also runs it as the\n external host of pod-to-external runs: a hardened systemd unit (kperf-agent.service,\n DynamicUser, no capabilities) reading the run's token from /etc/kperf/agent.token.")
set(CPACK_DEBIAN_KPERF_PACKAGE_RECOMMENDS kubectl)
include(CPack)
