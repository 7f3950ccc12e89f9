# install.cmake - what `cmake --install` puts where: both binaries into bin, and kubectl-kperf,
# a relative symlink to kperf, next to them, so that kubectl's plugin discovery (an executable
# named kubectl-<name> on PATH) runs `kubectl kperf ...` as kperf (which then prints its
# command lines as "kubectl kperf ..."). The build tree gets the same link in its bin dir.
include(GNUInstallDirs)
install(TARGETS kperf RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT kperf)
install(TARGETS kperf-agent RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT agent)
# kubectl (1.26+) completes a plugin's arguments with kubectl_complete-<plugin> from PATH
install(PROGRAMS ${CMAKE_SOURCE_DIR}/cmd/kperf/kubectl_complete-kperf
        DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT kperf)
install(CODE "
  set(dir \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}\")
  message(STATUS \"Installing: \${dir}/kubectl-kperf -> kperf\")
  file(REMOVE \"\${dir}/kubectl-kperf\")
  file(CREATE_LINK kperf \"\${dir}/kubectl-kperf\" SYMBOLIC)
" COMPONENT kperf)
add_custom_command(TARGET kperf POST_BUILD
                   COMMAND ${CMAKE_COMMAND} -E create_symlink kperf
                           ${CMAKE_RUNTIME_OUTPUT_DIRECTORY}/kubectl-kperf
                   VERBATIM)
# Shell completion (kperf completion bash|zsh|fish), where each shell looks for it on demand;
# bash-completion looks a command's file up by the command's name, hence the kubectl-kperf link.
install(CODE "
  set(share \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_DATADIR}\")
  foreach(spec \"bash;bash-completion/completions/kperf\" \"zsh;zsh/vendor-completions/_kperf\"
               \"fish;fish/vendor_completions.d/kperf.fish\")
    list(GET spec 0 shell)
    list(GET spec 1 file)
    get_filename_component(dir \"\${share}/\${file}\" DIRECTORY)
    file(MAKE_DIRECTORY \"\${dir}\")
    message(STATUS \"Installing: \${share}/\${file}\")
    execute_process(COMMAND \"$<TARGET_FILE:kperf>\" completion \${shell}
                    OUTPUT_FILE \"\${share}/\${file}\" RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR \"kperf completion \${shell} failed: \${rc}\")
    endif()
  endforeach()
  file(REMOVE \"\${share}/bash-completion/completions/kubectl-kperf\")
  file(CREATE_LINK kperf \"\${share}/bash-completion/completions/kubectl-kperf\" SYMBOLIC)
" COMPONENT kperf)
# Documentation: the README and docs/ for kperf, the README for kperf-agent.
install(FILES ${CMAKE_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT kperf)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT kperf)
install(FILES ${CMAKE_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/kperf-agent
        COMPONENT agent)
# The agent's systemd unit for an external host (packaging/kperf-agent.service), with the
# binary's path of this install (cpack installs with its packaging prefix, /usr).
install(CODE "
  file(READ \"${CMAKE_SOURCE_DIR}/packaging/kperf-agent.service\" unit)
  string(REPLACE \"@BINDIR@\" \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}\" unit \"\${unit}\")
  set(f \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/lib/systemd/system/kperf-agent.service\")
  message(STATUS \"Installing: \${f}\")
  file(WRITE \"\${f}\" \"\${unit}\")
" COMPONENT agent)
# Man pages, written from each binary's --help (cmake/manpage.cmake).
foreach(spec "kperf;kperf;Kubernetes pod-network performance"
             "kperf-agent;agent;the kperf measurement engine (server, client, probe)")
  list(GET spec 0 bin)
  list(GET spec 1 comp)
  list(GET spec 2 summary)
  install(CODE "
    set(man \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_MANDIR}/man1\")
    file(MAKE_DIRECTORY \"\${man}\")
    message(STATUS \"Installing: \${man}/${bin}.1\")
    execute_process(COMMAND \"${CMAKE_COMMAND}\" \"-DBIN=$<TARGET_FILE:${bin}>\" -DNAME=${bin}
                            \"-DSUMMARY=${summary}\" \"-DOUT=\${man}/${bin}.1\"
                            -P \"${CMAKE_SOURCE_DIR}/cmake/manpage.cmake\" RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR \"man page of ${bin}: \${rc}\")
    endif()
  " COMPONENT ${comp})
endforeach()
