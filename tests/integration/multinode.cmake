# multinode.cmake - multinode_test: one context over several vclservers
# (migration, cross-node copies and wait lists, a node's death).
add_executable(multinode_test multinode_test.c)
target_include_directories(multinode_test PRIVATE ${PROJECT_SOURCE_DIR}/include)
target_link_libraries(multinode_test PRIVATE PkgConfig::OPENCL)
target_compile_options(multinode_test PRIVATE ${VCL_WARNINGS})
