# session.cmake - raw-protocol server tests (rawproto.c is their harness)
# and busy_client. ctest registers session_test as it_session
# (tests/CMakeLists.txt).
add_library(rawproto STATIC rawproto.c)
target_link_libraries(rawproto PUBLIC vclproto)
target_compile_options(rawproto PRIVATE ${VCL_WARNINGS})

add_executable(session_test session_test.c)
target_link_libraries(session_test PRIVATE rawproto)
target_compile_options(session_test PRIVATE ${VCL_WARNINGS})

add_executable(busy_client busy_client.c)
target_link_libraries(busy_client PRIVATE PkgConfig::OPENCL)
target_compile_options(busy_client PRIVATE ${VCL_WARNINGS})

# vcl_rawtest(NAME): NAME_test.c on the rawproto harness, run by ctest as
# it_raw_NAME against fresh vclservers (busy_client for tests that need a
# real libvcl client). The sanitizer pass of test.sh runs every it_raw_*.
function(vcl_rawtest name)
	add_executable(${name}_test ${name}_test.c)
	target_link_libraries(${name}_test PRIVATE rawproto)
	target_compile_options(${name}_test PRIVATE ${VCL_WARNINGS})
	add_test(NAME it_raw_${name} COMMAND ${name}_test
		$<TARGET_FILE:vclserver> $<TARGET_FILE:busy_client>)
	set_tests_properties(it_raw_${name} PROPERTIES TIMEOUT 300
		LABELS integration ENVIRONMENT
		"VCL_TEST_ICD_DIR=${PROJECT_BINARY_DIR}/vcl-client")
endfunction()

# The soak: 64 libvcl clients at once, random kills, a server lost and
# restarted (soak_test.c drives soak_client.c; SOAK_SECONDS for longer runs).
add_executable(soak_client soak_client.c)
target_link_libraries(soak_client PRIVATE PkgConfig::OPENCL)
target_compile_options(soak_client PRIVATE ${VCL_WARNINGS})
add_executable(soak_test soak_test.c)
target_link_libraries(soak_test PRIVATE rawproto)
target_compile_options(soak_test PRIVATE ${VCL_WARNINGS})
add_test(NAME it_soak COMMAND soak_test $<TARGET_FILE:vclserver>
	$<TARGET_FILE:soak_client>)
set_tests_properties(it_soak PROPERTIES TIMEOUT 300 LABELS integration
	ENVIRONMENT "VCL_TEST_ICD_DIR=${PROJECT_BINARY_DIR}/vcl-client")
