/* vcl_io.h - socket helpers: blocking full reads and writes, address parsing. */
#ifndef VCL_IO_H
#define VCL_IO_H

#include <sys/types.h>
#include <sys/uio.h>

#include <stddef.h>

int	vcl_io_read_full(int, void *, size_t);
void	vcl_io_advance(struct iovec **, int *, size_t);
int	vcl_io_writev_full(int, struct iovec *, int);
int	vcl_io_split_hostport(const char *, char *, size_t, char *, size_t);
int	vcl_io_connect(const char *, const char *, int, char *, size_t);
void	vcl_io_tune(int);
void	vcl_io_peer_name(int, char *, size_t);
void	vcl_io_timeout(int, int);
void	vcl_io_keepalive(int, int);

#endif
