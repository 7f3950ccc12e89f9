# install.cmake - what `cmake --install` puts where: both binaries into bin, and kubectl-kperf,
# a relative symlink to kperf, next to them, so that kubectl's plugin discovery (an executable
# named kubectl-<name> on PATH) runs `kubectl kperf ...` as kperf (which then prints its
# command lines as "kubectl kperf ..."). The build tree gets the same link in its bin dir.
include(GNUInstallDirs)
install(TARGETS kperf kperf-agent RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(CODE "
  set(dir \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}\")
  message(STATUS \"Installing: \${dir}/kubectl-kperf -> kperf\")
  file(REMOVE \"\${dir}/kubectl-kperf\")
  file(CREATE_LINK kperf \"\${dir}/kubectl-kperf\" SYMBOLIC)
")
add_custom_command(TARGET kperf POST_BUILD
                   COMMAND ${CMAKE_COMMAND} -E create_symlink kperf
                           ${CMAKE_RUNTIME_OUTPUT_DIRECTORY}/kubectl-kperf
                   VERBATIM)
