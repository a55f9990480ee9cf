/*
 * vcl_nodes.h - the configured node list (VCL_NODES, SLURM_JOB_NODELIST,
 * nodes.conf), shared by libvcl and the vcl command.
 */
#ifndef VCL_NODES_H
#define VCL_NODES_H

#define VCL_NODES_MAX	64

/* The nodes a user configured and where the list came from. */
struct vcl_nodes {
	char		*addr[VCL_NODES_MAX];
	int		 n;
	char		*token_path;	/* VCL_TOKEN_FILE or token-file */
	char		 source[4096];	/* "VCL_NODES", a file, "default" */
	char		 port[8];	/* of hosts named without one */
	char		 warn[512];	/* a problem to report, or "" */
};

int	vcl_nodes_load(struct vcl_nodes *);
void	vcl_nodes_free(struct vcl_nodes *);

#endif
