/* read/trace_file.c - to be written */
