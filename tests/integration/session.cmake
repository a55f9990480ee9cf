# session.cmake - session_test (vclserver over the raw protocol) and busy_client, its libvcl helper.
add_executable(session_test session_test.c)
target_link_libraries(session_test PRIVATE vclproto)
target_compile_options(session_test PRIVATE ${VCL_WARNINGS})

add_executable(busy_client busy_client.c)
target_link_libraries(busy_client PRIVATE PkgConfig::OPENCL)
target_compile_options(busy_client PRIVATE ${VCL_WARNINGS})

if(TARGET vclserver AND TARGET vcl)
	add_test(NAME session_test COMMAND session_test
		$<TARGET_FILE:vclserver> $<TARGET_FILE:busy_client>)
	set_tests_properties(session_test PROPERTIES TIMEOUT 900
		ENVIRONMENT "VCL_TEST_ICD_DIR=${PROJECT_BINARY_DIR}/vcl-client")
endif()
