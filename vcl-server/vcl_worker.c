/*
 * vcl_worker.c - a small thread pool for work that blocks or takes long off
 * the loop: program builds, making and freeing large buffers.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "vcl_worker.h"

struct vcl_job {
	void		(*fn)(void *);
	void		*arg;
	struct vcl_job	*next;
};

struct vcl_workers {
	pthread_mutex_t	 lock;
	pthread_cond_t	 cond;
	struct vcl_job	*head, **tail;
	atomic_int	 queued;	/* jobs no thread has taken */
	int		 stop;
	int		 nthreads;
	pthread_t	 threads[];
};

/* A worker: take jobs until told to stop. */
static void *
vcl_worker_main(void *arg)
{
	struct vcl_workers	*w = arg;
	struct vcl_job		*j;

	pthread_mutex_lock(&w->lock);
	for (;;) {
		while (w->head == NULL && !w->stop)
			pthread_cond_wait(&w->cond, &w->lock);
		if ((j = w->head) == NULL)
			break;
		if ((w->head = j->next) == NULL)
			w->tail = &w->head;
		atomic_fetch_sub(&w->queued, 1);
		pthread_mutex_unlock(&w->lock);
		j->fn(j->arg);
		free(j);
		pthread_mutex_lock(&w->lock);
	}
	pthread_mutex_unlock(&w->lock);
	return (NULL);
}

/* Start n worker threads. Returns NULL on failure. */
struct vcl_workers *
vcl_workers_new(int n)
{
	struct vcl_workers	*w;

	if (n < 1)
		n = 1;
	if ((w = calloc(1, sizeof *w + (size_t)n * sizeof w->threads[0])) ==
	    NULL)
		return (NULL);
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cond, NULL);
	w->tail = &w->head;
	for (; w->nthreads < n; w->nthreads++) {
		if (pthread_create(&w->threads[w->nthreads], NULL,
		    vcl_worker_main, w) != 0) {
			vcl_workers_free(w);
			return (NULL);
		}
	}
	return (w);
}

/* Queue fn(arg) for a worker. Returns 0 or -1 when out of memory. */
int
vcl_workers_run(struct vcl_workers *w, void (*fn)(void *), void *arg)
{
	struct vcl_job	*j;

	if ((j = malloc(sizeof *j)) == NULL)
		return (-1);
	j->fn = fn;
	j->arg = arg;
	j->next = NULL;
	pthread_mutex_lock(&w->lock);
	*w->tail = j;
	w->tail = &j->next;
	atomic_fetch_add(&w->queued, 1);
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
	return (0);
}

/* Do jobs wait for a thread (a hint: any thread may take one meanwhile)? */
int
vcl_workers_waiting(struct vcl_workers *w)
{
	return (atomic_load_explicit(&w->queued, memory_order_relaxed) > 0);
}

/* Finish the queued jobs, stop the threads and free the pool. */
void
vcl_workers_free(struct vcl_workers *w)
{
	int	i;

	pthread_mutex_lock(&w->lock);
	w->stop = 1;
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
	for (i = 0; i < w->nthreads; i++)
		pthread_join(w->threads[i], NULL);
	pthread_mutex_destroy(&w->lock);
	pthread_cond_destroy(&w->cond);
	free(w);
}
