/*
 * vcl_shm.h - the layout of a client's ring of shared slots (ShmRing),
 * shared by libvcl and vclserver.
 *
 * A sealed memfd of the client's process: one header page, then slots of
 * slot_size bytes each. The header begins with VCL_SHM_MAGIC (with its
 * NUL) and the session's Greeting nonce: the server maps only a ring that
 * names its own session.
 */
#ifndef VCL_SHM_H
#define VCL_SHM_H

#define VCL_SHM_MAGIC		"VCLSHM1"
#define VCL_SHM_PAGE		4096u		/* the header page */
#define VCL_SHM_SLOTS_MAX	64u		/* a bit each in a uint64_t */

#endif /* VCL_SHM_H */
