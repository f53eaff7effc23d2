/* read/trace_set.c - to be written */
