/* vcl_pin.h - pinned staging: host blocks a runtime moves by DMA. */
#ifndef VCL_PIN_H
#define VCL_PIN_H

#include <stddef.h>
#include <stdint.h>

#include <CL/cl.h>

struct vcl_pins;		/* one context's blocks */
struct vcl_pinuse;		/* one session's pinned bytes */
struct vcl_pinring;		/* a ring of shared slots */
struct vcl_pinwrap;		/* a ring wrapped for one context */

extern uint64_t	vcl_pin_max;	/* pinned bytes of the process, at most */
extern uint64_t	vcl_pin_session_max; /* ... of one session; 0: half */

struct vcl_pinuse *vcl_pin_use_new(void);
void	 vcl_pin_use_drop(struct vcl_pinuse *);
uint64_t vcl_pin_use_bytes(const struct vcl_pinuse *);
uint64_t vcl_pin_share_refused(void);
struct vcl_pins *vcl_pin_open(cl_context, struct vcl_pinuse *);
void	*vcl_pin_get(struct vcl_pins **, cl_context, size_t);
int	 vcl_pin_put(void *);
void	 vcl_pin_close(struct vcl_pins *);
uint64_t vcl_pin_bytes(void);

struct vcl_pinring *vcl_pin_ring_add(void *, size_t);
struct vcl_pinring *vcl_pin_ring_of(const void *, size_t);
void	 vcl_pin_ring_del(struct vcl_pinring *);
void	 vcl_pin_ring_forget(cl_context);
struct vcl_pinwrap *vcl_pin_wrap(struct vcl_pinring *, struct vcl_pins *);
void	 vcl_pin_unwrap(struct vcl_pinwrap *);
uint64_t vcl_pin_ring_bytes(void);
uint64_t vcl_pin_ring_refused(void);

#endif
