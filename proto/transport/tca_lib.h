/* tca_lib.h - the TCA user library behind function pointers (vendor or model). */
#ifndef VCL_TCA_LIB_H
#define VCL_TCA_LIB_H

#include "tca_api.h"

/* The calls VCL makes, filled by dlopen; the extensions may be NULL. */
struct vcl_tca_lib {
	void				*dl;
	char				 path[256];	/* what loaded */
	int				 model;		/* the PEACH2 model */
	tca_init_fn			 init;
	tca_strerror_fn			 strerror;
	tca_malloc_fn			 malloc;
	tca_free_fn			 free;
	tca_create_handle_fn		 create_handle;
	tca_destroy_handle_fn		 destroy_handle;
	tca_desc_new_fn			 desc_new;
	tca_desc_free_fn		 desc_free;
	tca_desc_set_memcpy_fn		 desc_set_memcpy;
	tca_desc_set_memcpy2d_fn	 desc_set_memcpy2d;
	tca_desc_set_fn			 desc_set;
	tca_start_dma_desc_fn		 start_dma_desc;
	tca_wait_dmac_fn		 wait_dmac;
	tca_wait_dma_recv_desc_fn	 wait_dma_recv_desc;
	tca_set_pio_region_fn		 set_pio_region;
	tca_send_pio_fn			 send_pio;
	tca_send_pio_commit_fn		 send_pio_commit;
	/* Model extensions (NULL with the vendor library). */
	tca_get_last_rule_fn		 get_last_rule;
	tca_get_last_detail_fn		 get_last_detail;
	tca_get_node_fn			 get_node;
	tca_finalize_fn			 finalize;
	tca_test_dmac_fn		 test_dmac;
	tca_model_time_fn		 model_time;
};

int		 vcl_tca_lib_load(struct vcl_tca_lib *, char *, size_t);
void		 vcl_tca_lib_unload(struct vcl_tca_lib *);
const char	*vcl_tca_lib_error(const struct vcl_tca_lib *, tcaresult);
void		 vcl_tca_split(size_t, const double *, int, size_t *);
void		 vcl_tca_weigh(const size_t *, const uint64_t *, int, double *);

#endif /* !VCL_TCA_LIB_H */
