/* collect/trace_writer.c - to be written */
