# session.cmake - session_test (raw-protocol server tests) and busy_client.
# ctest registers session_test as it_session (tests/CMakeLists.txt).
add_executable(session_test session_test.c)
target_link_libraries(session_test PRIVATE vclproto)
target_compile_options(session_test PRIVATE ${VCL_WARNINGS})

add_executable(busy_client busy_client.c)
target_link_libraries(busy_client PRIVATE PkgConfig::OPENCL)
target_compile_options(busy_client PRIVATE ${VCL_WARNINGS})
