/* vcl_pool.h - staging memory for transfers, large blocks kept for reuse. */
#ifndef VCL_POOL_H
#define VCL_POOL_H

#include <stddef.h>

void	*vcl_pool_get(size_t);
void	 vcl_pool_put(void *, size_t);
void	 vcl_pool_drain(void);

#endif
