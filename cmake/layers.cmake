# hone's layers, one object library each, so the build holds them (STYLE.md
# rule 1). A layer's sources see the internal headers of the layers it names
# and no others: each gets an include folder of links, build/layers/<layer>/,
# holding only those folders of src/. So `#include "tune/session.h"` in a pass
# fails to compile ("No such file or directory"), as does one backend
# including another. The public headers (include/hone/) are seen by all.
#
#   hone_layer(passes DIRS passes SEES core graph ops eval LIBS nlohmann_json::nlohmann_json)
#
# The objects of every layer make up the one `hone` library.

set(HONE_LAYER_ROOT ${CMAKE_BINARY_DIR}/layers)
set(HONE_LAYER_TARGETS "")

# hone_layer(NAME DIRS d... [FILES f...] [SEES d...] [LIBS l...])
#   DIRS: folders under src/ whose .cpp files (recursively) are the layer;
#   FILES: single sources instead; SEES: folders under src/ it may include
#   besides its own; LIBS: third-party targets whose headers it uses.
function(hone_layer name)
  cmake_parse_arguments(L "" "" "DIRS;FILES;SEES;LIBS" ${ARGN})
  set(sources ${L_FILES})
  foreach(d IN LISTS L_DIRS)
    file(GLOB_RECURSE s CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/src/${d}/*.cpp)
    list(APPEND sources ${s})
  endforeach()
  set(root ${HONE_LAYER_ROOT}/${name})
  file(REMOVE_RECURSE ${root})
  foreach(d IN LISTS L_DIRS L_SEES)
    get_filename_component(parent ${root}/${d} DIRECTORY)
    file(MAKE_DIRECTORY ${parent})
    file(CREATE_LINK ${CMAKE_SOURCE_DIR}/src/${d} ${root}/${d} SYMBOLIC)
  endforeach()
  add_library(hone_layer_${name} OBJECT ${sources})
  target_include_directories(hone_layer_${name} PRIVATE ${root})
  target_link_libraries(hone_layer_${name} PRIVATE hone_public ${L_LIBS})
  set(HONE_LAYER_TARGETS ${HONE_LAYER_TARGETS} hone_layer_${name} PARENT_SCOPE)
endfunction()
