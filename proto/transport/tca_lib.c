/* tca_lib.c - load the TCA user library: vendor libtca.so, else the PEACH2 model. */

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tca_lib.h"
#include "vcl_log.h"

#ifndef VCL_PEACH2_PATH
#define VCL_PEACH2_PATH	"libvcl_peach2.so"
#endif

/* Try one library; 0 when every required call resolved. */
static int
vcl_tca_lib_try(struct vcl_tca_lib *l, const char *path, char *err,
    size_t errlen)
{
	static const struct {
		const char	*name;
		size_t		 off;
		int		 optional;
	} syms[] = {
#define S(n, f, o) { n, offsetof(struct vcl_tca_lib, f), o }
		S("tcaInit", init, 0),
		S("tcaGetErrorString", strerror, 0),
		S("tcaMalloc", malloc, 0),
		S("tcaFree", free, 0),
		S("tcaCreateHandle", create_handle, 0),
		S("tcaDestroyHandle", destroy_handle, 0),
		S("tcaDescNew", desc_new, 0),
		S("tcaDescFree", desc_free, 0),
		S("tcaDescSetMemcpy", desc_set_memcpy, 0),
		S("tcaDescSetMemcpy2D", desc_set_memcpy2d, 1),
		S("tcaDescSet", desc_set, 0),
		S("tcaStartDMADesc", start_dma_desc, 0),
		S("tcaWaitDMAC", wait_dmac, 0),
		S("tcaWaitDMARecvDesc", wait_dma_recv_desc, 0),
		S("tcaSetPIORegion", set_pio_region, 1),
		S("tcaSendPIO", send_pio, 1),
		S("tcaSendPIOCommit", send_pio_commit, 1),
		S("tcaGetLastRule", get_last_rule, 1),
		S("tcaGetLastErrorDetail", get_last_detail, 1),
		S("tcaGetNodeId", get_node, 1),
		S("tcaFinalize", finalize, 1),
		S("tcaTestDMAC", test_dmac, 1),
		S("tcaModelTime", model_time, 1),
#undef S
	};
	void	*dl, *fn;
	size_t	 i;

	if ((dl = dlopen(path, RTLD_NOW | RTLD_LOCAL)) == NULL) {
		snprintf(err, errlen, "%s", dlerror());
		return (-1);
	}
	memset(l, 0, sizeof *l);
	for (i = 0; i < sizeof syms / sizeof syms[0]; i++) {
		fn = dlsym(dl, syms[i].name);
		if (fn == NULL && !syms[i].optional) {
			snprintf(err, errlen, "%s: no %s", path, syms[i].name);
			dlclose(dl);
			memset(l, 0, sizeof *l);
			return (-1);
		}
		memcpy((char *)l + syms[i].off, &fn, sizeof fn);
	}
	l->dl = dl;
	snprintf(l->path, sizeof l->path, "%s", path);
	l->model = l->get_last_rule != NULL;
	return (0);
}

/*
 * Fill the table: VCL_TCA_LIB when set (that library only), else the vendor
 * libtca.so, else the PEACH2 model of this build or of the library path.
 * Says in the log which one loaded. 0 on success; err says why not.
 */
int
vcl_tca_lib_load(struct vcl_tca_lib *l, char *err, size_t errlen)
{
	const char	*env = getenv("VCL_TCA_LIB");
	char		 e1[256] = "", e2[256] = "";
	int		 rc = -1;

	if (env != NULL && *env != '\0') {
		if ((rc = vcl_tca_lib_try(l, env, e1, sizeof e1)) != 0)
			snprintf(err, errlen, "VCL_TCA_LIB %s", e1);
		goto out;
	}
	if ((rc = vcl_tca_lib_try(l, "libtca.so", e1, sizeof e1)) == 0)
		goto out;
	if ((rc = vcl_tca_lib_try(l, VCL_PEACH2_PATH, e2, sizeof e2)) == 0)
		goto out;
	if ((rc = vcl_tca_lib_try(l, "libvcl_peach2.so", e2, sizeof e2)) == 0)
		goto out;
	snprintf(err, errlen, "no vendor libtca.so (%s) and no PEACH2 model "
	    "(%s)", e1, e2);
out:
	if (rc == 0)
		vcl_log_info("TCA library: %s (%s)", l->path, l->model ?
		    "the PEACH2 model" : "vendor");
	return (rc);
}

/* Close the library (its memory must be freed by then). */
void
vcl_tca_lib_unload(struct vcl_tca_lib *l)
{
	if (l->finalize != NULL)
		l->finalize();
	if (l->dl != NULL)
		dlclose(l->dl);
	memset(l, 0, sizeof *l);
}

/* The library's text for a result, with the model's detail when it has one. */
const char *
vcl_tca_lib_error(const struct vcl_tca_lib *l, tcaresult res)
{
	static __thread char	buf[384];
	const char		*d;

	d = l->get_last_detail != NULL ? l->get_last_detail() : "";
	snprintf(buf, sizeof buf, "%s%s%s", l->strerror != NULL ?
	    l->strerror(res) : "TCA error", *d != '\0' ? ": " : "", d);
	return (buf);
}

/*
 * Split n bytes over nch channels by weights w (seed 003's adaptive split)
 * into 16-byte multiples, each channel at least 16 bytes (n >= 16 * nch);
 * channel 0 takes the rest. Channels from nch on get 0.
 */
void
vcl_tca_split(size_t n, const double *w, int nch, size_t *part)
{
	double	sum = 0;
	size_t	left = n;
	int	c;

	for (c = 0; c < nch; c++)
		sum += w[c];
	for (c = nch - 1; c > 0; c--) {
		part[c] = ((size_t)((double)n * w[c] / sum) + 15) & ~(size_t)15;
		if (part[c] < 16)
			part[c] = 16;
		if (part[c] > left - 16 * (size_t)c)
			part[c] = 16;
		left -= part[c];
	}
	part[0] = left;
	for (c = nch; c < TCA_NCHANNELS; c++)
		part[c] = 0;
}

/*
 * New weights w from a split's parts and each channel's time (ns): the
 * weights follow each channel's measured bandwidth (seed 003 §5.2).
 */
void
vcl_tca_weigh(const size_t *part, const uint64_t *tc, int nch, double *w)
{
	double	bw[TCA_NCHANNELS], sum = 0;
	int	c;

	for (c = 0; c < nch; c++) {
		bw[c] = (double)part[c] / (double)(tc[c] > 0 ? tc[c] : 1);
		sum += bw[c];
	}
	for (c = 0; c < nch && sum > 0; c++)
		w[c] = bw[c] / sum;
}
