/* fuzz_sources.h - the program sources and build options fuzz sessions use. */
#ifndef FUZZ_SOURCES_H
#define FUZZ_SOURCES_H

/*
 * fuzz_session compiles only these (a mutated source is swapped for one of
 * them, see fuzz_rewrite): compiling arbitrary text tests the runtime's
 * compiler, not the server, and costs a fresh build per input. Together
 * they give kernels with every argument kind the protocol can set: global
 * and constant buffers, by-value scalars, vectors and structs, __local
 * pointers, images of each type and samplers; and two halves of a program
 * that are compiled apart and linked. A kernel runs inside the server's process (PoCL's CPU device)
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
	/*
	 * 3: image and sampler arguments of every image type. Reads go
	 * through the sampler at (0, 0), inside any image; writes touch
	 * pixel 0 only.
	 */
	"__kernel void img2d(__read_only image2d_t in, sampler_t s,\n"
	"    __write_only image2d_t out, __global float *o)\n"
	"{\n"
	"	float4 v;\n"
	"\n"
	"	if (get_global_id(0) != 0)\n"
	"		return;\n"
	"	v = read_imagef(in, s, (float2)(0.0f, 0.0f));\n"
	"	write_imagef(out, (int2)(0, 0), v);\n"
	"	if (o != 0)\n"
	"		o[0] = v.x + (float)get_image_width(in);\n"
	"}\n"
	"__kernel void imgs(__read_only image1d_t a,\n"
	"    __read_only image1d_buffer_t b, __read_only image1d_array_t c,\n"
	"    __read_only image2d_array_t d, __read_only image3d_t e,\n"
	"    sampler_t s, __global int *o)\n"
	"{\n"
	"	float4 v;\n"
	"\n"
	"	if (get_global_id(0) != 0)\n"
	"		return;\n"
	"	v = read_imagef(a, s, 0.0f) + read_imagef(b, 0) +\n"
	"	    read_imagef(c, s, (float2)(0.0f, 0.0f)) +\n"
	"	    read_imagef(d, s, (float4)(0.0f, 0.0f, 0.0f, 0.0f)) +\n"
	"	    read_imagef(e, s, (float4)(0.0f, 0.0f, 0.0f, 0.0f));\n"
	"	if (o != 0)\n"
	"		o[0] = (int)v.x + get_image_width(a) +\n"
	"		    (int)get_image_array_size(c) + get_image_depth(e);\n"
	"}\n",
	/* 4: a library function, compiled alone and linked with 5. */
	"int fuzz_helper(int x) { return x * 3 + 1; }\n",
	/* 5: a kernel calling the function of 4 (compile, then link). */
	"int fuzz_helper(int x);\n"
	"__kernel void use(__global int *b)\n"
	"{\n"
	"	if (b != 0 && get_global_id(0) == 0)\n"
	"		b[0] = fuzz_helper(b[0]);\n"
	"}\n",
};
#define FUZZ_NSOURCES	(sizeof fuzz_sources / sizeof fuzz_sources[0])

/*
 * A CreateProgramFrom binary of exactly these bytes is swapped for the
 * last binary GetBinary answered in the same session (a seed cannot know
 * the runtime's bytes; the server takes only binaries it made).
 */
#define FUZZ_BINARY	"fuzz: the binary GetBinary gave"

static const char *const fuzz_options[] = {
	"",
	"-cl-fast-relaxed-math",
	"-DN=4",
	"-cl-std=CL1.2",
	"-no-such-option",
};
#define FUZZ_NOPTIONS	(sizeof fuzz_options / sizeof fuzz_options[0])

#endif
