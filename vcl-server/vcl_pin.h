/* vcl_pin.h - pinned staging: host blocks a runtime moves by DMA. */
#ifndef VCL_PIN_H
#define VCL_PIN_H

#include <stddef.h>
#include <stdint.h>

#include <CL/cl.h>

struct vcl_pins;		/* one context's blocks */

extern uint64_t	vcl_pin_max;	/* pinned bytes of the process, at most */

void	*vcl_pin_get(struct vcl_pins **, cl_context, size_t);
int	 vcl_pin_put(void *);
void	 vcl_pin_close(struct vcl_pins *);
uint64_t vcl_pin_bytes(void);

#endif
