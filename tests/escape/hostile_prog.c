/*
 * hostile_prog.c - a program whose every recorded string holds control
 * characters and bytes of no valid UTF-8, for escape.sh:
 *
 *     hostile_prog DIR [MODULE]
 *
 * Each string starts with a marker of its own ("Zth1", "Zlg", ...) and a
 * newline, then hostile bytes:
 *   threads   named "Zth1\n" ESC "[2J" CR BEL DEL 0xff (the main thread),
 *             "Zth2\n" and C0 bytes, "Zth3\n" and a C1 CSI and an overlong '/'
 *   sites     the source file is "Zfl\n" ESC ... (a #line), tags "Ztg\n" ...,
 *             a span "Zsp\n" ... begun and ended 20 times
 *   messages  RT_LOG of "Zlg\n%s" for every byte 0x01..0x1f, DEL, 0xff, a
 *             C1 CSI, an overlong '/', a cut sequence; a format literal
 *             holding them itself
 *   I/O       a file DIR/"Zio\n" ESC ... written and read (record --io)
 *   modules   MODULE, when given, loaded with dlopen (its path is the
 *             caller's: escape.sh gives it a hostile name)
 * Function calls are traced (-finstrument-functions); their names are
 * ordinary.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <ringtrace.h>

#line 40 "Zfl\n\x1b[31m\x07\x7f\xff.c"

__attribute__((noinline)) static unsigned work(unsigned i)
{
	RT_TRACE("Ztg\n\x1b[31m\r\x07\x7f\xff\xc2\x9b", i);
	return i * 3 + 1;
}

static void *named(void *arg)
{
	pthread_setname_np(pthread_self(), (const char *)arg);
	unsigned sum = 0;
	for (unsigned i = 0; i < 20; i++) {
		RT_BEGIN("Zsp\n\x1b[2J\r\x07\xff", i);
		sum += work(i);
		RT_END("Zsp\n\x1b[2J\r\x07\xff");
	}
	return (void *)(unsigned long)sum;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: hostile_prog DIR [MODULE]\n");
		return 2;
	}
	pthread_setname_np(pthread_self(), "Zth1\n\x1b[2J\r\x07\x7f\xff");
	if (argc > 2 && !dlopen(argv[2], RTLD_NOW))
		fprintf(stderr, "hostile_prog: %s\n", dlerror());

	char text[8];
	for (unsigned c = 1; c <= 0x20; c++) {
		/* every C0 byte, then DEL for the 0x20th */
		snprintf(text, sizeof(text), "<%c>", c < 0x20 ? (char)c : '\x7f');
		RT_LOG(RT_LOG_INFO, "Zlg\n%s", text);
	}
	RT_LOG(RT_LOG_INFO, "Zlg\n%s", "\xff\xfe invalid");
	RT_LOG(RT_LOG_INFO, "Zlg\n%s",
	       "\xc2\x9b"
	       "2J C1");
	RT_LOG(RT_LOG_INFO, "Zlg\n%s", "\xc0\xaf overlong");
	RT_LOG(RT_LOG_INFO, "Zlg\n%s", "cut \xe2\x82");
	RT_LOG(RT_LOG_WARN, "Zlg\n\x1b[2J\r\x07\x7f\xff literal %d", 7);

	char path[4096];
	snprintf(path, sizeof(path), "%s/Zio\n\x1b[31m\r\x07\xff", argv[1]);
	int fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0600);
	if (fd >= 0) {
		char buf[64] = "some bytes";
		if (write(fd, buf, 10) != 10 || pread(fd, buf, 10, 0) != 10)
			perror("hostile_prog: write");
		close(fd);
	}

	static char names[2][16] = {"Zth2\n\x01\x02\x03\x04\x05\x06\x08\x0b\x0c",
				    "Zth3\n\xc2\x9b\xc0\xaf\x0e\x1f"};
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, named, names[i]);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	return 0;
}
