/* vcl_transports.h - the bulk transports the server offers. */
#ifndef VCL_TRANSPORTS_H
#define VCL_TRANSPORTS_H

#include <stddef.h>
#include <stdint.h>

#include "vcl.pb-c.h"
#include "vcl_transport.h"

struct vcl_bulk;
struct vcl_server;
struct vcl_session;

struct vcl_tp_offers {
	Vcl__TransportOffer	 o[VCL_TP_MAX];
	Vcl__TransportOffer	*p[VCL_TP_MAX];
	uint8_t			 addr[VCL_TP_MAX][VCL_TP_ADDR_MAX];
};

void	vcl_transports_register(void);
int	vcl_transports_init(struct vcl_server *, const char *, const char *,
	    char *, size_t);
void	vcl_transports_free(struct vcl_server *);
void	vcl_transports_progress(struct vcl_server *);
void	vcl_transports_kick(struct vcl_server *, struct vcl_tp *);
size_t	vcl_transports_names(struct vcl_server *, char **, size_t);
size_t	vcl_transports_offer(struct vcl_server *, unsigned,
	    struct vcl_tp_offers *);
struct vcl_tp_ep *vcl_transports_connect(struct vcl_server *, const char *,
	    struct vcl_link *, const uint8_t *, size_t, char *, size_t);
int	vcl_transports_hello(struct vcl_session *, const Vcl__Hello *,
	    Vcl__TransportOffer *, uint8_t *);
void	vcl_op_transport_ctl(struct vcl_session *, const Vcl__Request *,
	    struct vcl_bulk *);

#endif
