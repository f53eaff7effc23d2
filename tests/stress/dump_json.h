/*
 * dump_json.h - reading one line of `ringtrace dump --json` (the schema in
 * docs/JSON.md) into a struct, for tests that check the tool's output.
 *
 * Strict where the contract is: one object per line, known fields of the
 * right type, integers exact over the whole int64/uint64 range.  Fields it
 * does not know are skipped, as the contract asks of every consumer.
 */
#ifndef RT_TEST_DUMP_JSON_H
#define RT_TEST_DUMP_JSON_H

#include <stddef.h>
#include <stdint.h>

/* An integer as written: its sign, and its value as a 64-bit pattern. */
struct json_int {
	int negative;  /* written with a '-' */
	uint64_t bits; /* two's complement when negative */
};

#define DUMP_MAX_ARGS 8

struct dump_line {
	char kind[16]; /* trace, lost, last_event */
	int64_t tid;
	int has_ts, has_seq;
	int64_t ts_ns;
	uint64_t seq;
	int64_t cpu;
	char thread[64];
	char tag[128];
	char file[512];
	int64_t line;
	char func[128];
	int nargs; /* -1 when there was no "args" */
	struct json_int args[DUMP_MAX_ARGS];
	uint64_t count;
	char reason[32];
	int has_offset; /* a damaged loss: the bytes of its region */
	uint64_t offset, length;
};

/*
 * Parse one line (without its newline).  Returns 0, or -1 with what was
 * wrong and where in error.
 */
int dump_json_parse(const char *text, struct dump_line *out, char *error, size_t error_size);

#endif /* RT_TEST_DUMP_JSON_H */
