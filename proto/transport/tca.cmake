# The TCA transport: the PEACH2 model (libvcl_peach2.so, the TCA user API for
# the processes of one host) and the loader of the TCA library in vclproto.
set(VCL_TCA_DIR ${CMAKE_CURRENT_LIST_DIR})
add_library(vcl_peach2 SHARED ${VCL_TCA_DIR}/peach2/peach2.c)
target_include_directories(vcl_peach2 PRIVATE ${VCL_TCA_DIR})
target_compile_options(vcl_peach2 PRIVATE ${VCL_WARNINGS} -fvisibility=hidden)
target_link_libraries(vcl_peach2 PRIVATE Threads::Threads rt)
# vclserver loads it (dlopen) where no vendor libtca.so exists.
install(TARGETS vcl_peach2 LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
	COMPONENT server)

target_sources(vclproto PRIVATE ${VCL_TCA_DIR}/tca_lib.c ${VCL_TCA_DIR}/tca.c)
target_include_directories(vclproto PUBLIC ${VCL_TCA_DIR})
set_source_files_properties(${VCL_TCA_DIR}/tca.c PROPERTIES
	COMPILE_OPTIONS "${VCL_WARNINGS}")
set_source_files_properties(${VCL_TCA_DIR}/tca_lib.c PROPERTIES
	COMPILE_OPTIONS "${VCL_WARNINGS}"
	COMPILE_DEFINITIONS "VCL_PEACH2_PATH=\"$<TARGET_FILE:vcl_peach2>\"")
target_link_libraries(vclproto PUBLIC ${CMAKE_DL_LIBS})
add_dependencies(vclproto vcl_peach2)
