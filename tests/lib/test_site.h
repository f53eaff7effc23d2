/*
 * test_site.h - a site made by hand for the tests that feed events to the
 * exporters, the analyzers and ship: valid, of kind with tag and nargs
 * arguments, at a.c:7 in f.
 */
#ifndef RT_TEST_SITE_H
#define RT_TEST_SITE_H

#include <stdint.h>
#include <string.h>

#include "decode/sites.h"

static inline struct rt_site test_site(uint8_t kind, const char *tag, unsigned nargs)
{
	struct rt_site site;
	memset(&site, 0, sizeof(site));
	site.valid = 1;
	site.kind = kind;
	site.nargs = (uint8_t)nargs;
	site.tag = tag;
	site.tag_length = (uint32_t)strlen(tag);
	site.file = "a.c";
	site.file_length = 3;
	site.func = "f";
	site.func_length = 1;
	site.line = 7;
	return site;
}

#endif /* RT_TEST_SITE_H */
