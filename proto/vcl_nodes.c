/*
 * vcl_nodes.c - the configured node list, read the same way by libvcl and
 * the vcl command: VCL_NODES, else a Slurm job's SLURM_JOB_NODELIST, else
 * ~/.config/vcl/nodes.conf, else /etc/vcl/nodes.conf, else the local
 * default port; the token file from VCL_TOKEN_FILE, else the file's
 * token-file line; the port of hosts named without one from VCL_PORT, else
 * the file's port line, else the default. Inside a Slurm job a nodes.conf
 * still gives its port and token-file.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vcl_hostlist.h"
#include "vcl_nodes.h"

/* Append the addresses of a comma- or space-separated list. */
static void
vcl_nodes_parse(struct vcl_nodes *nl, const char *list)
{
	const char	*p = list;
	size_t		 len;

	while (*p != '\0' && nl->n < VCL_NODES_MAX) {
		p += strspn(p, ", \t\r\n");
		len = strcspn(p, ", \t\r\n");
		if (len == 0)
			break;
		if ((nl->addr[nl->n] = strndup(p, len)) == NULL)
			break;
		nl->n++;
		p += len;
	}
}

/* Whether s is a port number, 1-65535, in decimal. */
static int
vcl_nodes_port_ok(const char *s)
{
	size_t	len = strspn(s, "0123456789");

	return (len > 0 && len <= 5 && s[len] == '\0' && atoi(s) > 0 &&
	    atoi(s) <= 65535);
}

/*
 * Read a nodes.conf: "node HOST:PORT" or bare "HOST:PORT" lines, an
 * optional "token-file PATH" and "port PORT" (of hosts named without one);
 * '#' starts a comment. Nodes are taken only if nodes is set. Returns 0, or
 * -1 if the file does not exist.
 */
static int
vcl_nodes_read(struct vcl_nodes *nl, const char *path, int nodes)
{
	FILE	*f;
	char	 line[1024], *k, *v, *e;

	if ((f = fopen(path, "r")) == NULL)
		return (-1);
	while (fgets(line, sizeof line, f) != NULL) {
		if ((e = strchr(line, '#')) != NULL)
			*e = '\0';
		k = line + strspn(line, " \t");
		e = k + strcspn(k, " \t\r\n");
		v = e + strspn(e, " \t=");
		v[strcspn(v, " \t\r\n")] = '\0';
		if (*k == '\0' || *k == '\n')
			continue;
		*e = '\0';
		if (strcmp(k, "token-file") == 0) {
			if (nl->token_path == NULL && *v != '\0')
				nl->token_path = strdup(v);
		} else if (strcmp(k, "port") == 0) {
			if (vcl_nodes_port_ok(v))
				snprintf(nl->port, sizeof nl->port, "%s", v);
			else
				snprintf(nl->warn, sizeof nl->warn,
				    "%s: bad port '%s'", path, v);
		} else if (!nodes)
			continue;
		else if (strcmp(k, "node") == 0)
			vcl_nodes_parse(nl, v);
		else
			vcl_nodes_parse(nl, k);
	}
	fclose(f);
	if (nodes)
		snprintf(nl->source, sizeof nl->source, "%s", path);
	return (0);
}

/* Fill nl from the environment and the config files. Returns 0 or -1. */
int
vcl_nodes_load(struct vcl_nodes *nl)
{
	const char	*env, *home, *nodes, *slurm;
	char		 path[4096], err[256];
	int		 found = -1, n;

	memset(nl, 0, sizeof *nl);
	if ((env = getenv("VCL_TOKEN_FILE")) != NULL &&
	    (nl->token_path = strdup(env)) == NULL)
		return (-1);
	nodes = getenv("VCL_NODES");
	slurm = nodes == NULL ? getenv("SLURM_JOB_NODELIST") : NULL;
	if (nodes == NULL && (home = getenv("HOME")) != NULL) {
		snprintf(path, sizeof path, "%s/.config/vcl/nodes.conf", home);
		found = vcl_nodes_read(nl, path, slurm == NULL);
	}
	if (nodes == NULL && found != 0)
		found = vcl_nodes_read(nl, "/etc/vcl/nodes.conf",
		    slurm == NULL);
	if ((env = getenv("VCL_PORT")) != NULL) {
		if (vcl_nodes_port_ok(env))
			snprintf(nl->port, sizeof nl->port, "%s", env);
		else
			snprintf(nl->warn, sizeof nl->warn,
			    "bad VCL_PORT '%s'", env);
	}
	if (nl->port[0] == '\0')
		snprintf(nl->port, sizeof nl->port, "%d", VCL_DEFAULT_PORT);
	if (nodes != NULL) {
		vcl_nodes_parse(nl, nodes);
		snprintf(nl->source, sizeof nl->source, "VCL_NODES");
		return (0);
	}
	if (slurm != NULL) {
		snprintf(nl->source, sizeof nl->source, "SLURM_JOB_NODELIST");
		n = vcl_hostlist_expand(slurm, nl->port, nl->addr,
		    VCL_NODES_MAX, err, sizeof err);
		if (n < 0)
			snprintf(nl->warn, sizeof nl->warn, "SLURM_JOB_NODELIST:"
			    " %s; no nodes (set VCL_NODES)", err);
		else
			nl->n = n;
		return (0);
	}
	if (found == 0)
		return (0);
	snprintf(path, sizeof path, "127.0.0.1:%s", nl->port);
	vcl_nodes_parse(nl, path);
	snprintf(nl->source, sizeof nl->source, "default");
	return (0);
}

/* Free what vcl_nodes_load allocated. */
void
vcl_nodes_free(struct vcl_nodes *nl)
{
	int	i;

	for (i = 0; i < nl->n; i++)
		free(nl->addr[i]);
	free(nl->token_path);
	memset(nl, 0, sizeof *nl);
}
