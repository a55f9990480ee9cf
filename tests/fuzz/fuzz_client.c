/* fuzz_client.c - libFuzzer: libvcl against a server that sends the input. */
#include <sys/mman.h>
#include <sys/wait.h>

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sanitizer/lsan_interface.h>

#include "fuzz_client.h"

/*
 * Each input is what a server sends libvcl, in turns (fuzz_client.h). The
 * input runs in a child forked for it (fuzz_client_run.c says why): the
 * child makes the fixed call sequence of fuzz_client_calls, through a
 * libvcl connected to this process, releases what it made and runs the
 * leak check; this process sends the turns. Every call must return: a
 * child that dies, leaks, or is not done within FUZZ_CHILD_MS is the
 * input's failure here, which libFuzzer records.
 *
 * Coverage: the child's counters (the __sancov_cntrs section, libvcl's
 * included; fuzz_client_cntrs.c) are copied into a shared page at its
 * end, and merged into this process's before libFuzzer reads them.
 */

/* Set in a build with source-based coverage (tests/fuzz/coverage.sh). */
int		 __llvm_profile_write_file(void) __attribute__((weak));

static uint8_t	*fuzz_cntrs;		/* the program's counters */
static uint8_t	*fuzz_shared;		/* ... the child's */
static size_t	 fuzz_ncntrs;

/* The turns of one input. */
struct fuzz_turns {
	const uint8_t	*data;
	size_t		 size;
	size_t		 off;		/* where the next turn starts */
	int		 done;		/* all sent */
};

/* The next turn of t, or hang up (1) when none is left. */
static int
fuzz_next_turn(struct fuzz_turns *t, uint8_t **out, size_t *len)
{
	const uint8_t	*p;
	size_t		 n;

	if (t->done)
		return (1);
	p = memmem(t->data + t->off, t->size - t->off, FUZZ_TURN,
	    FUZZ_TURN_LEN);
	n = p != NULL ? (size_t)(p - t->data) - t->off : t->size - t->off;
	if (n > 0) {
		if ((*out = malloc(n)) == NULL)
			return (1);
		memcpy(*out, t->data + t->off, n);
		*len = n;
	}
	if (p == NULL)
		t->done = 1;
	else
		t->off += n + FUZZ_TURN_LEN;
	return (0);
}

/* fuzz_answer_fn: a turn on connect, per request frame, and when idle. */
static int
fuzz_answer(void *arg, const Vcl__Request *req, uint64_t bulk, size_t frame,
    uint8_t **out, size_t *len)
{
	(void)req;
	(void)bulk;
	(void)frame;
	return (fuzz_next_turn(arg, out, len));
}

/* The child: the calls, the leak check, its counters handed back. */
static int
fuzz_child(void *arg)
{
	int	rc = 0;

	(void)arg;
	(void)fuzz_client_calls(getenv("VCL_FUZZ_TRACE") != NULL);
	if (__lsan_do_recoverable_leak_check() != 0) {
		fprintf(stderr, "fuzz_client: libvcl leaked (above)\n");
		rc = 3;
	}
	if (fuzz_shared != NULL)
		memcpy(fuzz_shared, fuzz_cntrs, fuzz_ncntrs);
	/* The child ends by _exit: its profile is written here. */
	if (__llvm_profile_write_file != NULL)
		(void)__llvm_profile_write_file();
	return (rc);
}

int	LLVMFuzzerInitialize(int *, char ***);
int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	signal(SIGPIPE, SIG_IGN);
	if ((fuzz_cntrs = fuzz_client_counters(&fuzz_ncntrs)) != NULL) {
		fuzz_shared = mmap(NULL, fuzz_ncntrs, PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (fuzz_shared == MAP_FAILED)
			fuzz_shared = NULL;
	}
	if (fuzz_shared == NULL)
		fprintf(stderr, "fuzz_client: no coverage from the child\n");
	return (0);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_turns	 t = { data, size, 0, 0 };
	size_t			 i;
	pid_t			 child;
	char			 port[16];
	int			 lfd, status;

	if (fuzz_shared != NULL)
		memset(fuzz_shared, 0, fuzz_ncntrs);
	/* A listener per input: no connection of an input before waits. */
	if ((lfd = fuzz_client_listen(port, sizeof port)) == -1 ||
	    (child = fuzz_client_spawn(lfd, port, fuzz_child, NULL)) == -1) {
		perror("fuzz_client: listen, fork");
		abort();
	}
	(void)fuzz_client_serve(lfd, child, fuzz_answer, &t);
	if (fuzz_client_reap(child, &status) != 0) {
		fprintf(stderr, "fuzz_client: libvcl still busy after %d ms: "
		    "a call hangs\n", FUZZ_CHILD_MS);
		abort();
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "fuzz_client: the client %s %d\n",
		    WIFEXITED(status) ? "exited" : "died of signal",
		    WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
		abort();
	}
	for (i = 0; fuzz_shared != NULL && i < fuzz_ncntrs; i++)
		if (fuzz_shared[i] > fuzz_cntrs[i])
			fuzz_cntrs[i] = fuzz_shared[i];
	return (0);
}
