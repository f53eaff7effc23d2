/* collect/collector.c - to be written */
