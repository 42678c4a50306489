#ifndef CUTOVER_CEPOLL_SHIM_H
#define CUTOVER_CEPOLL_SHIM_H

// Linux's epoll, for the thread that waits on every pooled connection's socket at once.
// Swift's Glibc module leaves <sys/epoll.h> out, so it is imported here; nothing needs wrapping.
#ifdef __linux__
#include <sys/epoll.h>
#include <sys/eventfd.h>
#endif

#endif
