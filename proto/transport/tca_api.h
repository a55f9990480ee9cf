/* tca_api.h - VCL's own declaration of the TCA user API subset it uses. */
#ifndef VCL_TCA_API_H
#define VCL_TCA_API_H

/*
 * The vendor header (tca-api.h) is not public. This declares the calls VCL
 * makes the way their public users (omni-compiler libxmp, PEACH2-Benchmarks)
 * call them. The layouts of tcaHandle and tcaPIO are opaque byte blocks here:
 * large enough for the model, unverified against the vendor library. The
 * PEACH2 model (libvcl_peach2.so) implements exactly this header; the
 * functions marked "model extension" are looked up optionally and are NULL
 * when the vendor libtca.so is loaded.
 */

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef enum {
	TCA_SUCCESS = 0,
	TCA_ERROR_INVALID_VALUE = 1,
	TCA_ERROR_OUT_OF_MEMORY = 2,
	TCA_ERROR_NOT_SUPPORTED = 3,
	/* Model extensions: a channel restarted before confirmed idle, a bounded
	 * wait that ran out or whose peer is gone. */
	TCA_ERROR_BUSY = 100,
	TCA_ERROR_TIMEOUT = 101
} tcaresult;

typedef enum {
	tcaMemoryCPU = 0,
	tcaMemoryGPU = 1
} tcaMemoryKind;

/* DMA flags (tcaDescSetMemcpy). */
#define tcaDMANotify		0x01	/* notify the destination node */
#define tcaDMANotifySelf	0x02	/* notify the source node too */
#define tcaDMAUseInternal	0x04	/* register mode: chain kept on board */
#define tcaDMAUseNotifyInternal	0x08	/* notification kept on board */
#define tcaDMAPipeline		0x10	/* do not wait for the previous one */

#define TCA_NCHANNELS		4	/* DMA controllers per board */
#define TCA_CHAIN_MAX		255	/* descriptors per chain in host memory */
#define TCA_REG_CHAIN_MAX	16	/* descriptors per channel, register mode */
#define TCA_NSLOTS		64	/* notification slots */
#define TCA_MAX_NODES		16	/* nodes of one domain (two rings of 8) */

/* A handle: plain bytes, position independent, exchanged between nodes. */
typedef struct {
	unsigned char	bytes[64];
} tcaHandle;

/* A PIO region set on a remote handle. */
typedef struct {
	unsigned char	bytes[64];
} tcaPIO;

typedef struct tcaDesc tcaDesc;

/*
 * Model extension: which rule a failed call broke (tcaGetLastRule), so that a
 * test can tell one INVALID_VALUE from another.
 */
enum vcl_tca_rule {
	VCL_TCA_RULE_NONE = 0,
	VCL_TCA_RULE_NOT_INIT,		/* tcaInit not called or failed */
	VCL_TCA_RULE_REMOTE_READ,	/* source not local: DMA writes only */
	VCL_TCA_RULE_LENGTH,		/* length not a positive multiple of 4 */
	VCL_TCA_RULE_ALIGN,		/* low 4 address bits disagree */
	VCL_TCA_RULE_UNREGISTERED,	/* outside registered memory */
	VCL_TCA_RULE_BAD_HANDLE,	/* handle bytes not a handle of the domain */
	VCL_TCA_RULE_CHAIN_LIMIT,	/* more than 255 (16 in register mode) */
	VCL_TCA_RULE_CHANNEL,		/* channel number out of 0..3 */
	VCL_TCA_RULE_BUSY,		/* restart before completion confirmed */
	VCL_TCA_RULE_NO_CHAIN,		/* start of a channel with no chain */
	VCL_TCA_RULE_SLOT,		/* notification slot out of range */
	VCL_TCA_RULE_PIO,		/* PIO outside its region or unaligned */
	VCL_TCA_RULE_NOTIFY_FULL,	/* destination's notification queue full */
	VCL_TCA_RULE_PEER_GONE,		/* the node a wait depends on exited */
	VCL_TCA_RULE_TIMEOUT,		/* a bounded wait ran out */
	VCL_TCA_RULE_ARG		/* NULL pointer or other bad argument */
};

typedef tcaresult	(*tca_init_fn)(void);
typedef const char	*(*tca_strerror_fn)(tcaresult);
typedef tcaresult	(*tca_malloc_fn)(void **, size_t, tcaMemoryKind);
typedef tcaresult	(*tca_free_fn)(void *, tcaMemoryKind);
typedef tcaresult	(*tca_create_handle_fn)(tcaHandle *, void *, size_t,
			    tcaMemoryKind);
typedef tcaresult	(*tca_destroy_handle_fn)(tcaHandle *);
typedef tcaDesc		*(*tca_desc_new_fn)(void);
typedef tcaresult	(*tca_desc_free_fn)(tcaDesc *);
typedef tcaresult	(*tca_desc_set_memcpy_fn)(tcaDesc *, tcaHandle *,
			    off_t, tcaHandle *, off_t, size_t, int, int, int);
typedef tcaresult	(*tca_desc_set_memcpy2d_fn)(tcaDesc *, tcaHandle *,
			    off_t, size_t, tcaHandle *, off_t, size_t, size_t,
			    size_t, int, int, int);
typedef tcaresult	(*tca_desc_set_fn)(tcaDesc *, int);
typedef tcaresult	(*tca_start_dma_desc_fn)(int);
typedef tcaresult	(*tca_wait_dmac_fn)(int);
typedef tcaresult	(*tca_wait_dma_recv_desc_fn)(tcaHandle *, int, int);
typedef tcaresult	(*tca_set_pio_region_fn)(tcaPIO *, tcaHandle *, off_t,
			    size_t);
typedef tcaresult	(*tca_send_pio_fn)(tcaPIO *, off_t, const void *,
			    size_t);
typedef tcaresult	(*tca_send_pio_commit_fn)(void);
/* Model extensions. */
typedef int		(*tca_get_last_rule_fn)(void);
typedef const char	*(*tca_get_last_detail_fn)(void);
typedef int		(*tca_get_node_fn)(void);
typedef tcaresult	(*tca_finalize_fn)(void);
typedef tcaresult	(*tca_test_dmac_fn)(int);
typedef uint64_t	(*tca_model_time_fn)(int, int);

tcaresult	 tcaInit(void);
const char	*tcaGetErrorString(tcaresult);
tcaresult	 tcaMalloc(void **, size_t, tcaMemoryKind);
tcaresult	 tcaFree(void *, tcaMemoryKind);
tcaresult	 tcaCreateHandle(tcaHandle *, void *, size_t, tcaMemoryKind);
tcaresult	 tcaDestroyHandle(tcaHandle *);
tcaDesc		*tcaDescNew(void);
tcaresult	 tcaDescFree(tcaDesc *);
tcaresult	 tcaDescSetMemcpy(tcaDesc *, tcaHandle *, off_t, tcaHandle *,
		     off_t, size_t, int, int, int);
tcaresult	 tcaDescSetMemcpy2D(tcaDesc *, tcaHandle *, off_t, size_t,
		     tcaHandle *, off_t, size_t, size_t, size_t, int, int, int);
tcaresult	 tcaDescSet(tcaDesc *, int);
tcaresult	 tcaStartDMADesc(int);
tcaresult	 tcaWaitDMAC(int);
tcaresult	 tcaWaitDMARecvDesc(tcaHandle *, int, int);
tcaresult	 tcaSetPIORegion(tcaPIO *, tcaHandle *, off_t, size_t);
tcaresult	 tcaSendPIO(tcaPIO *, off_t, const void *, size_t);
tcaresult	 tcaSendPIOCommit(void);
int		 tcaGetLastRule(void);
const char	*tcaGetLastErrorDetail(void);
int		 tcaGetNodeId(void);
tcaresult	 tcaFinalize(void);
tcaresult	 tcaTestDMAC(int);
uint64_t	 tcaModelTime(int, int);

#endif /* !VCL_TCA_API_H */
