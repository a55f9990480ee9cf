# cg.cmake - the conjugate-gradient example: natively (one device in bands),
# through VCL on 1, 2 and 3 servers and across namespaced "hosts", and its
# Matrix Market reader. Included by tests/CMakeLists.txt after the helpers.
#
# Every split of the rows gives the same work-group partial sums, so a solve
# on N devices must take the same iterations to the same residual, bit for
# bit, as one device: -c checks it against one band on device 0, and
# compare_native.sh against the native platform's one device.
set(VCL_CG $<TARGET_FILE:cg>)
set(VCL_CG_MTX ${PROJECT_SOURCE_DIR}/tests/data/spring300.mtx)

# Natively: the known solution, every method and precision, bands that
# exchange halos with copies on one device.
add_test(NAME native_cg_2d COMMAND ${VCL_CG} -n 48 -v 3 -c)
add_test(NAME native_cg_3d_pipelined COMMAND ${VCL_CG} -3 -n 16 -v 4 -P -c)
add_test(NAME native_cg_float COMMAND ${VCL_CG} -n 40 -v 2 -f -c)
add_test(NAME native_cg_mtx COMMAND ${VCL_IT}/cg_mtx.sh ${VCL_CG} ${VCL_CG_MTX})
set_tests_properties(native_cg_2d native_cg_3d_pipelined native_cg_float
	native_cg_mtx PROPERTIES TIMEOUT 120 LABELS integration)

# Through VCL: the same iterations and residual as native PoCL's one device.
vcl_integration(it_cg_1node COMMAND ${VCL_IT}/compare_native.sh
	"^cg: iterations=" -- ${VCL_CG} -n 48 -v 2 -c)
vcl_integration(it_cg_2nodes NODES 2 COMMAND ${VCL_IT}/compare_native.sh
	"^cg: iterations=" -- ${VCL_CG} -n 64 -c -S 5)
vcl_integration(it_cg_2nodes_pipelined NODES 2 COMMAND
	${VCL_IT}/compare_native.sh "^cg: iterations=" --
	${VCL_CG} -3 -n 16 -P -c -S 5)
vcl_integration(it_cg_3nodes NODES 3 COMMAND ${VCL_IT}/compare_native.sh
	"^cg: iterations=" -- ${VCL_CG} -n 64 -P -c -S 5)
# Far entries: every node exchanges with both others.
vcl_integration(it_cg_3nodes_mtx NODES 3 COMMAND ${VCL_IT}/compare_native.sh
	"^cg: iterations=" -- ${VCL_CG} -m ${VCL_CG_MTX} -c -S 5)

vcl_netns(netns_cg NODES 3 COMMAND ${VCL_CG} -n 64 -P -c -S 5)
