/* vcl_server_main.h - vclserver options and the entry into the server. */
#ifndef VCL_SERVER_MAIN_H
#define VCL_SERVER_MAIN_H

struct vcl_server;

struct vcl_options {
	const char	*listen;
	const char	*port_file;
	const char	*platform;
	const char	*devices;
	const char	*token_file;
	const char	*config;
	const char	*name;
	int		 insecure;
	const char	*tls_cert;
	const char	*tls_key;
	const char	*tls_ca;
	int		 tls_verify_clients;
	int		 workers;
	const char	*transports;	/* offered; NULL: all built */
	const char	*transport_force;	/* testing: only this one */
};

int	vcl_server_run(struct vcl_server *, const struct vcl_options *);

#endif
