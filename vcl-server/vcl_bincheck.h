/* vcl_bincheck.h - foreign program binaries tried in a child process. */
#ifndef VCL_BINCHECK_H
#define VCL_BINCHECK_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "vcl_server.h"

#define VCL_BINCHECK_THREADS	2	/* checks running at once, server-wide */
#define VCL_BINCHECK_BINS	64	/* binaries one check takes */

/*
 * One check: the binaries of one CreateProgramFrom the server has not seen
 * pass, each with the device it is for. Made and freed by its caller, who
 * sets d.fn and d.s; the loop runs d.fn when the check is over.
 */
struct vcl_bincheck {
	struct vcl_done	 d;		/* must stay first */
	struct vcl_server *srv;		/* set by vcl_bincheck_start */
	uint32_t	 platform;	/* vcl_backend's platform_index */
	uint32_t	 n;
	uint32_t	 dev[VCL_BINCHECK_BINS];	/* all_index of each */
	const uint8_t	*bins[VCL_BINCHECK_BINS];	/* the caller's */
	size_t		 lens[VCL_BINCHECK_BINS];
	uint64_t	 timeout_ms;
	atomic_int	 cancel;	/* its session closed: end it */
	int32_t		 status[VCL_BINCHECK_BINS];	/* out: CL_SUCCESS or
						   CL_INVALID_BINARY */
	char		 why[256];	/* out: how a failed check ended */
};

int	vcl_bincheck_start(struct vcl_server *, struct vcl_bincheck *);
void	vcl_bincheck_cancel(struct vcl_bincheck *);
void	vcl_bincheck_stop(struct vcl_server *);
void	vcl_bincheck_counts(uint64_t *, uint64_t *, uint64_t *);
int	vcl_bincheck_main(void);

#endif
