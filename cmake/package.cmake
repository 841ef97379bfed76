# ladder as a CMake package, for a project of one's own (./ladder new, docs/your_own_model.md):
# find_package(ladder) gives its libraries as ladder::core, ladder::nn (nn, optim and io),
# ladder::data, ladder::models, ladder::dist, ladder::plot and ladder::harness, each bringing
# what it links. Two places hold the package:
# - this build folder: find_package(ladder HINTS <ladder>/build), nothing installed;
# - a prefix P after `cmake --install build --prefix P`: the libraries in P/lib, the headers in
#   P/include/ladder (so #include "models/classifier.h" reads the same), the package files in
#   P/lib/cmake/ladder; a project finds them with -DCMAKE_PREFIX_PATH=P.
include(GNUInstallDirs)

set(LADDER_PACKAGE_LIBRARIES ladder_core ladder_nn ladder_data ladder_models ladder_dist ladder_plot ladder_harness)
foreach(library ${LADDER_PACKAGE_LIBRARIES})
  string(REPLACE "ladder_" "" short_name ${library})
  set_target_properties(${library} PROPERTIES EXPORT_NAME ${short_name})  # ladder::core, not ladder::ladder_core
endforeach()

install(TARGETS ${LADDER_PACKAGE_LIBRARIES} EXPORT ladderTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY core nn optim io data models dist plot harness DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/ladder
        FILES_MATCHING PATTERN "*.h")
set(LADDER_PACKAGE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/ladder)
install(EXPORT ladderTargets NAMESPACE ladder:: DESTINATION ${LADDER_PACKAGE_DIR})
export(EXPORT ladderTargets NAMESPACE ladder:: FILE ${PROJECT_BINARY_DIR}/ladderTargets.cmake)

# ladderConfig.cmake finds what the libraries link before it defines them; it records whether this
# build has MPI and the paths of OpenBLAS and PLplot, which ladder finds by path, not as packages.
set(LADDER_PACKAGE_HAS_MPI ${MPI_CXX_FOUND})
configure_file(${PROJECT_SOURCE_DIR}/cmake/ladderConfig.cmake.in ${PROJECT_BINARY_DIR}/ladderConfig.cmake @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/ladderConfig.cmake DESTINATION ${LADDER_PACKAGE_DIR})
