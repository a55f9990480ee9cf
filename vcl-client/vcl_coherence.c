/*
 * vcl_coherence.c - the coherence tracker of buffers across nodes: which
 * nodes hold the newest bytes, which event wrote them, what a command on a
 * node must wait for or have moved there first. No wire here: vcl_mem.c
 * sends the MigrateOut/MigrateIn these decisions ask for.
 */
#include <stdlib.h>
#include <string.h>

#include "vcl_coherence.h"
#include "vcl_event.h"
#include "vcl_object.h"

/* A new record: no instance yet, every one to come starts pristine. */
void
vcl_coherence_init(struct vcl_coherence *c)
{
	memset(c, 0, sizeof *c);
	c->pristine = 1;
	c->last_node = -1;
}

/* Drop what the record holds: its events and the initial bytes. */
void
vcl_coherence_free(struct vcl_coherence *c)
{
	int	i;

	for (i = 0; i < VCL_MAX_NODES; i++) {
		if (c->ready[i] != NULL)
			vcl_event_unref(c->ready[i]);
		c->ready[i] = NULL;
	}
	if (c->last_write != NULL)
		vcl_event_unref(c->last_write);
	c->last_write = NULL;
	c->last_node = -1;
	free(c->init);
	c->init = NULL;
}

/* An instance was made on node: while pristine it holds the newest bytes. */
void
vcl_coherence_created(struct vcl_coherence *c, int node)
{
	if (c->pristine)
		c->valid |= 1ull << node;
}

/*
 * Must the newest bytes move to node before a command there? Not when its
 * instance holds them, nor when the command overwrites the whole buffer
 * (write and whole): stale bytes need not travel.
 */
int
vcl_coherence_stale(const struct vcl_coherence *c, int node, int write,
    int whole)
{
	return (!(c->valid & (1ull << node)) && !(write && whole));
}

/*
 * The node to move the newest bytes from: the last writer's if it is
 * alive (its copy is the one the writer made), else the first live node
 * that holds them. -1: every copy was lost with its node.
 */
int
vcl_coherence_source(const struct vcl_coherence *c, vcl_nodeset alive)
{
	vcl_nodeset	holders = c->valid & alive;
	int		i;

	if (c->last_node >= 0 && (holders & (1ull << c->last_node)))
		return (c->last_node);
	for (i = 0; i < VCL_MAX_NODES; i++)
		if (holders & (1ull << i))
			return (i);
	return (-1);
}

/*
 * What sending the bytes out of node must wait for there, into deps (room
 * for 2): the last writer when it ran there, and the migration that
 * filled that node's copy. Returns how many.
 */
size_t
vcl_coherence_deps(const struct vcl_coherence *c, int node, cl_event *deps)
{
	size_t	n = 0;

	if (c->last_write != NULL && c->last_node == node)
		deps[n++] = c->last_write;
	if (node >= 0 && node < VCL_MAX_NODES && c->ready[node] != NULL)
		deps[n++] = c->ready[node];
	return (n);
}

/*
 * The newest bytes are on their way to node (arrival: the event of their
 * MigrateIn there, whose reference the record takes): node holds them,
 * for commands that wait for arrival.
 */
void
vcl_coherence_arrived(struct vcl_coherence *c, int node, cl_event arrival)
{
	c->valid |= 1ull << node;
	if (c->ready[node] != NULL)
		vcl_event_unref(c->ready[node]);
	c->ready[node] = arrival;
}

/* What a command on node must wait for before it uses the bytes, or NULL. */
cl_event
vcl_coherence_ready(const struct vcl_coherence *c, int node)
{
	return (c->ready[node]);
}

/*
 * A command on node wrote the buffer (ev: its event, retained here): only
 * node holds the newest bytes now, the initial ones are gone, and the
 * other nodes' arrivals are stale.
 */
void
vcl_coherence_written(struct vcl_coherence *c, int node, cl_event ev)
{
	int	i;

	c->valid = 1ull << node;
	c->pristine = 0;
	free(c->init);
	c->init = NULL;
	vcl_retain(ev);
	if (c->last_write != NULL)
		vcl_event_unref(c->last_write);
	c->last_write = ev;
	c->last_node = node;
	for (i = 0; i < VCL_MAX_NODES; i++) {
		if (i != node && c->ready[i] != NULL) {
			vcl_event_unref(c->ready[i]);
			c->ready[i] = NULL;
		}
	}
}
