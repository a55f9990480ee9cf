/* fuzz_sources.h - the program sources and build options fuzz sessions use. */
#ifndef FUZZ_SOURCES_H
#define FUZZ_SOURCES_H

/*
 * fuzz_session compiles only these (a mutated source is swapped for one of
 * them, see fuzz_rewrite): compiling arbitrary text tests the runtime's
 * compiler, not the server, and costs a fresh build per input. Together
 * they give kernels with every argument kind the protocol can set: global
 * and constant buffers, by-value scalars, vectors and structs, __local
 * pointers. A kernel runs inside the server's process (PoCL's CPU device)
 * and the fuzzer picks any buffer, __local and work size: so these touch
 * only the first element, and only through pointers that are not NULL.
 */
static const char *const fuzz_sources[] = {
	/* 0: the generator's main program. */
	"struct pair { int a; float b; };\n"
	"__kernel void k(__global int *buf, int n, __local int *tmp,\n"
	"    struct pair p)\n"
	"{\n"
	"	if (get_local_id(0) == 0)\n"
	"		tmp[0] = n;\n"
	"	barrier(CLK_LOCAL_MEM_FENCE);\n"
	"	if (buf != 0 && get_global_id(0) == 0)\n"
	"		buf[0] = tmp[0] * p.a + (int)p.b;\n"
	"}\n"
	"__kernel void fill(__global int *buf, __constant int *c, int v)\n"
	"{\n"
	"	if (buf != 0 && get_global_id(0) == 0)\n"
	"		buf[0] = v + (c != 0 ? c[0] : 0);\n"
	"}\n",
	/* 1: no arguments, and vectors, longs and chars by value. */
	"__kernel void none(void) { }\n"
	"__kernel void vec(__global float *o, float4 v, long l, char c,\n"
	"    ulong2 u)\n"
	"{\n"
	"	if (o != 0 && get_global_id(0) == 0)\n"
	"		o[0] = v.x + v.w + (float)l + (float)c + (float)u.y;\n"
	"}\n",
	/* 2: does not compile (a failed build, its log). */
	"__kernel void broken(__global int *a) { a[0] = undeclared; }\n",
};
#define FUZZ_NSOURCES	(sizeof fuzz_sources / sizeof fuzz_sources[0])

static const char *const fuzz_options[] = {
	"",
	"-cl-fast-relaxed-math",
	"-DN=4",
	"-cl-std=CL1.2",
	"-no-such-option",
};
#define FUZZ_NOPTIONS	(sizeof fuzz_options / sizeof fuzz_options[0])

#endif
