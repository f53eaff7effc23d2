/* early.h - what early.c and early_lib.c share. */
#ifndef START_EARLY_H
#define START_EARLY_H

#include <sys/types.h>

#define START_EARLY_EVENTS 1000

/*
 * Record one event tagged `where` (in the caller), fork a child that
 * records START_EARLY_EVENTS events and exits, wait for it; its pid, or -1.
 * In early_lib.c, so that the library's constructor can call it.
 */
pid_t start_early_fork(const char *where);
/* The child the library's constructor forked (library mode), else -1. */
pid_t start_early_lib_child(void);

#endif
