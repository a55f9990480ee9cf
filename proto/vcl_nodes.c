/*
 * vcl_nodes.c - the configured node list, read the same way by libvcl and
 * the vcl command: VCL_NODES, else ~/.config/vcl/nodes.conf, else
 * /etc/vcl/nodes.conf, else the local default port; the token file from
 * VCL_TOKEN_FILE, else the file's token-file line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/*
 * Read a nodes.conf: "node HOST:PORT" or bare "HOST:PORT" lines and an
 * optional "token-file PATH"; '#' starts a comment. Returns 0, or -1 if the
 * file does not exist.
 */
static int
vcl_nodes_read(struct vcl_nodes *nl, const char *path)
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
		} else if (strcmp(k, "node") == 0)
			vcl_nodes_parse(nl, v);
		else
			vcl_nodes_parse(nl, k);
	}
	fclose(f);
	snprintf(nl->source, sizeof nl->source, "%s", path);
	return (0);
}

/* Fill nl from the environment and the config files. Returns 0 or -1. */
int
vcl_nodes_load(struct vcl_nodes *nl)
{
	const char	*env, *home;
	char		 path[4096];

	memset(nl, 0, sizeof *nl);
	if ((env = getenv("VCL_TOKEN_FILE")) != NULL &&
	    (nl->token_path = strdup(env)) == NULL)
		return (-1);
	if ((env = getenv("VCL_NODES")) != NULL) {
		vcl_nodes_parse(nl, env);
		snprintf(nl->source, sizeof nl->source, "VCL_NODES");
		return (0);
	}
	if ((home = getenv("HOME")) != NULL) {
		snprintf(path, sizeof path, "%s/.config/vcl/nodes.conf", home);
		if (vcl_nodes_read(nl, path) == 0)
			return (0);
	}
	if (vcl_nodes_read(nl, "/etc/vcl/nodes.conf") == 0)
		return (0);
	snprintf(path, sizeof path, "127.0.0.1:%d", VCL_DEFAULT_PORT);
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
