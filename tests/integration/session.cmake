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
vcl_rawtest(tls)
set_property(TEST it_raw_tls APPEND PROPERTY ENVIRONMENT
	"VCL_TEST_HELLO=$<TARGET_FILE:hello>"
	"VCL_TEST_ADVECTION=$<TARGET_FILE:advection>"
	"VCL_TEST_FAULT_CLIENT=$<TARGET_FILE:fault_client>")
vcl_rawtest(kargs)
vcl_rawtest(build)

# it_raw_client_faults: libvcl against servers that die, stop or lie;
# fault_client is the libvcl application it runs (through the ICD loader).
add_executable(fault_client fault_client.c)
target_link_libraries(fault_client PRIVATE PkgConfig::OPENCL)
target_compile_options(fault_client PRIVATE ${VCL_WARNINGS})
add_executable(client_faults_test client_faults_test.c)
target_link_libraries(client_faults_test PRIVATE rawproto)
target_compile_options(client_faults_test PRIVATE ${VCL_WARNINGS})
add_test(NAME it_raw_client_faults COMMAND client_faults_test
	$<TARGET_FILE:vclserver> $<TARGET_FILE:fault_client>)
set_tests_properties(it_raw_client_faults PROPERTIES TIMEOUT 300
	LABELS integration ENVIRONMENT
	"VCL_TEST_ICD_DIR=${PROJECT_BINARY_DIR}/vcl-client")
vcl_rawtest(fuzzfix)
# it_raw_fuzzfix link_exe_input, empty_names: a server with nvspy preloaded
# (calls that took NVIDIA's runtime down abort PoCL's too).
add_library(nvspy SHARED nvspy.c)
target_link_libraries(nvspy PRIVATE PkgConfig::OPENCL ${CMAKE_DL_LIBS})
target_compile_options(nvspy PRIVATE ${VCL_WARNINGS})
add_dependencies(fuzzfix_test nvspy)
set_property(TEST it_raw_fuzzfix APPEND PROPERTY ENVIRONMENT
	"VCL_TEST_NVSPY_LIB=$<TARGET_FILE:nvspy>")
vcl_rawtest(conn)
vcl_rawtest(rect)
vcl_rawtest(peer)

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
vcl_rawtest(image)
vcl_rawtest(progbin)
vcl_rawtest(review)
vcl_rawtest(subdev)
vcl_rawtest(quiet)
target_link_libraries(quiet_test PRIVATE PkgConfig::OPENCL)
vcl_rawtest(journal)
vcl_rawtest(tools)
set_property(TEST it_raw_tools APPEND PROPERTY ENVIRONMENT
	"VCL_TEST_TOOL=$<TARGET_FILE:vcl_tool>"
	"VCL_TEST_HELLO=$<TARGET_FILE:hello>")
if(VCL_HAVE_UCX)
	vcl_rawtest(ucx)
	target_link_libraries(ucx_test PRIVATE vclucx)
	target_sources(ucx_test PRIVATE ucxpeer.c)
endif()
vcl_rawtest(transport)
vcl_rawtest(hostile)
vcl_rawtest(kinds)
vcl_rawtest(chunkread)
# readbench: a large read whole against chunked (a benchmark, not a test).
add_executable(readbench readbench.c)
target_link_libraries(readbench PRIVATE rawproto)
target_compile_options(readbench PRIVATE ${VCL_WARNINGS})
# writebench: large writes whole against chunked (a benchmark, not a test).
add_executable(writebench writebench.c)
target_link_libraries(writebench PRIVATE rawproto)
target_compile_options(writebench PRIVATE ${VCL_WARNINGS})
# hopsbench: finish and 4 KiB read latency, two server builds side by side.
add_executable(hopsbench hopsbench.c)
target_link_libraries(hopsbench PRIVATE rawproto)
target_compile_options(hopsbench PRIVATE ${VCL_WARNINGS})
vcl_rawtest(tca)
vcl_rawtest(tcawait)
vcl_rawtest(options)
set_property(TEST it_raw_options APPEND PROPERTY ENVIRONMENT
	"VCL_TEST_TOOL=$<TARGET_FILE:vcl_tool>")
vcl_rawtest(reader)
target_link_libraries(reader_test PRIVATE PkgConfig::OPENCL)
# The same with waiters spinning for their reply before they sleep (the
# default on hosts of 4 CPUs or more, off on this 2-CPU one).
add_test(NAME it_raw_reader_spin COMMAND reader_test
	$<TARGET_FILE:vclserver> $<TARGET_FILE:busy_client>)
set_tests_properties(it_raw_reader_spin PROPERTIES TIMEOUT 300
	LABELS integration ENVIRONMENT
	"VCL_TEST_ICD_DIR=${PROJECT_BINARY_DIR}/vcl-client;VCL_SPIN_US=200")
vcl_rawtest(hops)
if(VCL_HAVE_UCX)
	vcl_rawtest(place)
	target_link_libraries(place_test PRIVATE vclucx)
	target_sources(place_test PRIVATE ucxpeer.c)
endif()
vcl_rawtest(pinread)
vcl_rawtest(shmring)
vcl_rawtest(shmclient)
target_link_libraries(shmclient_test PRIVATE PkgConfig::OPENCL)
vcl_rawtest(pinring)
# The same reads with the chunks' copy split among helper threads (a
# 2-core machine has none by default).
add_test(NAME it_raw_shmclient_copiers COMMAND shmclient_test
	$<TARGET_FILE:vclserver> $<TARGET_FILE:busy_client>)
set_tests_properties(it_raw_shmclient_copiers PROPERTIES TIMEOUT 300
	LABELS integration ENVIRONMENT
	"VCL_TEST_ICD_DIR=${PROJECT_BINARY_DIR}/vcl-client;VCL_SHM_COPY_THREADS=3")
vcl_rawtest(argcache)
vcl_rawtest(release)
if(VCL_HAVE_UCX)
	vcl_rawtest(choice)
endif()
vcl_rawtest(adversary)
if(VCL_HAVE_UCX)
	vcl_rawtest(adversary_ucx)
	target_link_libraries(adversary_ucx_test PRIVATE vclucx)
endif()
if(VCL_HAVE_UCX)
	vcl_rawtest(direct)
endif()
vcl_rawtest(backlog)
vcl_rawtest(strand)
vcl_rawtest(pinshare)
if(VCL_HAVE_UCX)
	vcl_rawtest(direct2)
	target_link_libraries(direct2_test PRIVATE vclucx)
	target_sources(direct2_test PRIVATE ucxpeer.c)
endif()
if(VCL_HAVE_UCX)
	vcl_rawtest(peerwire)
	target_link_libraries(peerwire_test PRIVATE vclucx)
	target_sources(peerwire_test PRIVATE ucxpeer.c)
endif()
vcl_rawtest(replyorder)
vcl_rawtest(readfail)
target_link_libraries(readfail_test PRIVATE PkgConfig::OPENCL)
# it_raw_strandspy: the runtime calls of a server with flushspy preloaded.
add_library(flushspy SHARED flushspy.c)
target_link_libraries(flushspy PRIVATE PkgConfig::OPENCL ${CMAKE_DL_LIBS})
target_compile_options(flushspy PRIVATE ${VCL_WARNINGS})
vcl_rawtest(strandspy)
add_dependencies(strandspy_test flushspy)
set_property(TEST it_raw_strandspy APPEND PROPERTY ENVIRONMENT
	"VCL_TEST_FLUSHSPY_LIB=$<TARGET_FILE:flushspy>")
vcl_rawtest(spin)
vcl_rawtest(wchunk)
vcl_rawtest(orphan)
vcl_rawtest(watchfail)
# it_raw_survive: libvcl blocked in every kind of call when its server is
# killed, stops or cuts a reply, over the ring, tcp and TLS, and one node
# of two lost while the other works on.
vcl_rawtest(survive)
target_link_libraries(survive_test PRIVATE PkgConfig::OPENCL Threads::Threads)
vcl_rawtest(attack5)
# it_raw_attack5 image_pitch: a server with imagespy preloaded (image host
# pitches as a runtime that follows the spec takes them).
add_library(imagespy SHARED imagespy.c)
target_link_libraries(imagespy PRIVATE PkgConfig::OPENCL ${CMAKE_DL_LIBS})
target_compile_options(imagespy PRIVATE ${VCL_WARNINGS})
add_dependencies(attack5_test imagespy)
set_property(TEST it_raw_attack5 APPEND PROPERTY ENVIRONMENT
	"VCL_TEST_IMAGESPY_LIB=$<TARGET_FILE:imagespy>")
vcl_rawtest(watchexit)
vcl_rawtest(deadcmd)
vcl_rawtest(review6)
vcl_rawtest(attack6)
vcl_rawtest(attack7)
vcl_rawtest(attack8)
# it_raw_attack11: a victim's round trips while another session tries to
# hold the loop or a shared resource (batches, long work, unread replies,
# dripped frames, a kernel that never ends).
vcl_rawtest(attack11)
target_link_libraries(attack11_test PRIVATE Threads::Threads)
vcl_rawtest(loopwait)
# it_raw_review9: released ids the session still holds, on its own paths.
vcl_rawtest(review9)
# it_raw_nodeloss2: one node of a two-node context lost (killed, stopped),
# then the whole API walked on the context: live-device work succeeds,
# lost-device work fails at once with CL_DEVICE_NOT_AVAILABLE.
vcl_rawtest(nodeloss2)
target_link_libraries(nodeloss2_test PRIVATE PkgConfig::OPENCL Threads::Threads)
