/* vcl_op_mem.h - handlers: buffers and their transfers. */
#ifndef VCL_OP_MEM_H
#define VCL_OP_MEM_H

#include <stdint.h>

#include <CL/cl.h>

#include "vcl.pb-c.h"

struct vcl_bulk;
struct vcl_cmd;
struct vcl_hobj;
struct vcl_session;

void	vcl_op_create_buffer(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);
void	vcl_op_write_buffer(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);
void	vcl_op_read_buffer(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);
void	vcl_op_copy_buffer(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);
void	vcl_op_fill_buffer(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);
void	vcl_op_create_sub_buffer(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);
void	vcl_op_write_buffer_rect(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);
void	vcl_op_read_buffer_rect(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);
void	vcl_op_copy_buffer_rect(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);
int	vcl_mem_ctx_is(cl_mem, cl_context);
struct vcl_hobj *vcl_mem_range_get(struct vcl_session *, uint64_t, uint64_t,
	    uint64_t, cl_int *);
struct vcl_hobj *vcl_mem_buf_range(struct vcl_session *, uint64_t, uint64_t,
	    uint64_t, cl_int *);
void	vcl_mem_release(struct vcl_session *, cl_mem, uint64_t);
uint64_t vcl_mem_moving(void);
void	vcl_mem_chunk_done(struct vcl_cmd *);
extern uint64_t vcl_read_chunk;
void	vcl_mem_write_begin(struct vcl_session *, const Vcl__Request *);
void	vcl_mem_write_feed(struct vcl_session *);
void	vcl_mem_write_stop(struct vcl_session *);
int	vcl_mem_write_room(struct vcl_session *, uint8_t **, uint64_t *);
uint64_t vcl_mem_writes_chunked(void);
uint64_t vcl_mem_write_slot_waits(void);
#define VCL_WRITE_CHUNK		(4ull << 20)	/* --write-chunk's default */
#define VCL_WRITE_CHUNK_AUTO	UINT64_MAX	/* ... where the CPUs allow */
extern uint64_t vcl_write_chunk;
#define VCL_WRITE_SLOTS		4	/* --write-slots's default */
#define VCL_WRITE_SLOTS_MAX	16	/* ... and most */
extern unsigned vcl_write_slots;

#endif
