# Layering the build enforces (docs/architecture.md). Every library is one folder, and its link
# line is the list of arrows that leave it. Sources include headers by their path from the
# repository root ("base/kp_err.h", "controller/report/report.h"); a library does not get the
# repository root as its include path but a folder of links to the headers of the folders it
# may use, so an include across a forbidden arrow fails to compile (file not found).
# scripts/check-layers.py checks the same rules on the sources, with a message that names them.

# kperf_layer_includes(<target> <folder>...): give <target> the headers of <folder>... (paths
# from the repository root; only each folder's own headers, not its subfolders').
function(kperf_layer_includes target)
  set(root ${CMAKE_BINARY_DIR}/layers/${target})
  foreach(dir ${ARGN})
    file(GLOB headers CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/${dir}/*.h)
    file(MAKE_DIRECTORY ${root}/${dir})
    foreach(h ${headers})
      get_filename_component(name ${h} NAME)
      if(NOT EXISTS ${root}/${dir}/${name})
        file(CREATE_LINK ${h} ${root}/${dir}/${name} SYMBOLIC)
      endif()
    endforeach()
  endforeach()
  target_include_directories(${target} PRIVATE ${root})
endfunction()

# kperf_layer(<name> <folder> DEPS <lib>... FOLDERS <folder>... LIBS <external>...):
# the static library kperf_<name> from <folder>/*.c. It may include its own folder and
# FOLDERS, and links DEPS (other layers) and LIBS (Debian libraries).
function(kperf_layer name folder)
  cmake_parse_arguments(L "" "" "DEPS;FOLDERS;LIBS" ${ARGN})
  file(GLOB src CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/${folder}/*.c)
  add_library(kperf_${name} STATIC ${src})
  target_link_libraries(kperf_${name} PUBLIC ${L_DEPS} ${L_LIBS})
  kperf_layer_includes(kperf_${name} ${folder} ${L_FOLDERS})
endfunction()
