# Install rules: `cmake --install build --prefix PREFIX` puts the `hone` CLI in
# bin/, libhone.a in lib/, the public headers in include/hone/, a CMake
# package (find_package(hone) gives hone::hone) and hone.pc for pkg-config.
#
# libhone is static, so its private dependencies (ONNX, protobuf, oneDNN,
# OpenBLAS, ...) are part of its link interface: hone-config.cmake finds
# each again with find_dependency, and hone.pc lists them for
# `pkg-config --static`.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(HONE_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/hone)

# hone_public carries the include folders and definitions every user of hone needs.
install(TARGETS hone hone_public EXPORT hone-targets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
if(TARGET hone_cli)
  install(TARGETS hone_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
install(DIRECTORY ${CMAKE_SOURCE_DIR}/include/hone DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h")
install(FILES ${CMAKE_BINARY_DIR}/generated/include/hone/version.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/hone)
install(EXPORT hone-targets NAMESPACE hone:: DESTINATION ${HONE_INSTALL_CMAKEDIR})

configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/hone-config.cmake.in
  ${CMAKE_BINARY_DIR}/hone-config.cmake INSTALL_DESTINATION ${HONE_INSTALL_CMAKEDIR})
write_basic_package_version_file(${CMAKE_BINARY_DIR}/hone-config-version.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/hone-config.cmake ${CMAKE_BINARY_DIR}/hone-config-version.cmake
  DESTINATION ${HONE_INSTALL_CMAKEDIR})

# OpenMP's runtime and OpenBLAS come in as plain library paths; hone.pc
# lists them as -l flags.
set(HONE_PC_LIBS_PRIVATE "-lgomp -lopenblas -ldnnl -lonnx -lonnx_proto -lspdlog -lfmt")
# hone.pc finds the prefix from its own folder (${pcfiledir}), so
# `cmake --install --prefix` anywhere gives a working file.
file(RELATIVE_PATH HONE_PC_TO_PREFIX "/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/")
configure_file(${CMAKE_SOURCE_DIR}/cmake/hone.pc.in ${CMAKE_BINARY_DIR}/hone.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/hone.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
