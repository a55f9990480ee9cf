/* fuzz_client.h - libvcl against a fake server: calls, child, server. */
#ifndef FUZZ_CLIENT_H
#define FUZZ_CLIENT_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

#include "vcl.pb-c.h"

/*
 * A fuzz_client input: the server's bytes as turns, split by FUZZ_TURN.
 * Turn 0 goes out when the client connects (its Greeting); turn k answers
 * the client's k-th request frame (1: the Hello, so turn 1 holds the
 * Welcome). A client that sends nothing for FUZZ_IDLE_MS while turns are
 * left gets the next one; with none left the server hangs up.
 */
#define FUZZ_TURN	"\xffVCL~turn"
#define FUZZ_TURN_LEN	(sizeof FUZZ_TURN - 1)
#define FUZZ_IDLE_MS	50

/* The client child's bounds: calls and connects time out at 1 s, the
 * child at 60 s. */
#define FUZZ_CALL_TIMEOUT_MS	"1000"
#define FUZZ_CHILD_MS		60000

/*
 * The server's side of one connection: what to send when the client
 * connects (req NULL) and after each request frame it sent (req, its
 * bulk length, and the frame's index from 1; req is NULL when the frame
 * does not unpack). Writes the bytes to send into *out (malloc'd) and
 * their length into *len; returns 0, or -1 to hang up.
 */
typedef int	(*fuzz_answer_fn)(void *, const Vcl__Request *, uint64_t,
		    size_t, uint8_t **, size_t *);

int	fuzz_client_calls(int);
int	fuzz_client_listen(char *, size_t);
pid_t	fuzz_client_spawn(int, const char *, int (*)(void *), void *);
int	fuzz_client_serve(int, pid_t, fuzz_answer_fn, void *);
int	fuzz_client_reap(pid_t, int *);
uint8_t	*fuzz_client_counters(size_t *);

#endif
