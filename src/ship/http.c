/*
 * http.c - the HTTP requests, through libcurl.
 *
 * libcurl is loaded when the first client is made, not linked: with the
 * TLS, HTTP/2, SSH, LDAP and Kerberos libraries it brings, linking it
 * would load some thirty libraries into every run of the tool, about 6 MiB
 * more of each command's memory, for the one command that speaks HTTP.
 *
 * ClickHouse answers most errors with status 500 and "Code: N, ..." in the
 * body; which of them are worth another try is told by the code.
 */
#include <curl/curl.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ship/http.h"

/* The functions of libcurl used here, found in the loaded library. */
static struct {
	CURLcode (*global_init)(long flags);
	CURL *(*easy_init)(void);
	void (*easy_cleanup)(CURL *curl);
	void (*easy_reset)(CURL *curl);
	CURLcode (*easy_setopt)(CURL *curl, CURLoption option, ...);
	CURLcode (*easy_perform)(CURL *curl);
	CURLcode (*easy_getinfo)(CURL *curl, CURLINFO info, ...);
	const char *(*easy_strerror)(CURLcode code);
	char *(*easy_escape)(CURL *curl, const char *s, int length);
	void (*free)(void *p);
	struct curl_slist *(*slist_append)(struct curl_slist *list, const char *s);
	void (*slist_free_all)(struct curl_slist *list);
} curl;

#define CURL_LIBRARY "libcurl.so.4"

/* Load libcurl once: 0, or -1 with message filled. */
static int load_curl(char *message, size_t size)
{
	static int loaded; /* 1 done, -1 failed */
	static char why[512];
	if (loaded == 0) {
		void *lib = dlopen(CURL_LIBRARY, RTLD_NOW | RTLD_LOCAL);
		const char *missing = NULL;
#define FIND(field, name)                                                                          \
	do {                                                                                       \
		if (lib && !missing && !(*(void **)&curl.field = dlsym(lib, name)))                \
			missing = name;                                                            \
	} while (0)
		FIND(global_init, "curl_global_init");
		FIND(easy_init, "curl_easy_init");
		FIND(easy_cleanup, "curl_easy_cleanup");
		FIND(easy_reset, "curl_easy_reset");
		FIND(easy_setopt, "curl_easy_setopt");
		FIND(easy_perform, "curl_easy_perform");
		FIND(easy_getinfo, "curl_easy_getinfo");
		FIND(easy_strerror, "curl_easy_strerror");
		FIND(easy_escape, "curl_easy_escape");
		FIND(free, "curl_free");
		FIND(slist_append, "curl_slist_append");
		FIND(slist_free_all, "curl_slist_free_all");
#undef FIND
		if (!lib)
			snprintf(why, sizeof(why),
				 "cannot load libcurl (%s): install the Debian package libcurl4",
				 dlerror());
		else if (missing)
			snprintf(why, sizeof(why), "%s has no %s", CURL_LIBRARY, missing);
		else if (curl.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
			snprintf(why, sizeof(why), "libcurl did not start");
		loaded = why[0] ? -1 : 1;
	}
	if (loaded < 0)
		snprintf(message, size, "%s", why);
	return loaded > 0 ? 0 : -1;
}

struct rt_ship_http {
	CURL *curl;
	char *url;
	char error[CURL_ERROR_SIZE];
};

struct rt_ship_http *rt_ship_http_new(const char *url, char *message, size_t message_size)
{
	if (load_curl(message, message_size) != 0)
		return NULL;
	struct rt_ship_http *h = calloc(1, sizeof(*h));
	if (!h) {
		snprintf(message, message_size, "out of memory");
		return NULL;
	}
	h->url = strdup(url);
	h->curl = curl.easy_init();
	if (!h->url || !h->curl) {
		rt_ship_http_free(h);
		snprintf(message, message_size, "out of memory");
		return NULL;
	}
	return h;
}

void rt_ship_http_free(struct rt_ship_http *h)
{
	if (!h)
		return;
	if (h->curl)
		curl.easy_cleanup(h->curl);
	free(h->url);
	free(h);
}

static size_t take_answer(char *bytes, size_t size, size_t count, void *to)
{
	struct rt_ship_buffer *answer = to;
	size_t n = size * count;
	/* the answer's first MiB is plenty for a count or an error */
	if (answer->length < (1u << 20) && rt_ship_buffer_append(answer, bytes, n))
		return 0;
	return n;
}

/* ClickHouse's error codes that say "later", not "never". */
static int busy_code(long code)
{
	switch (code) {
	case 159: /* TIMEOUT_EXCEEDED */
	case 164: /* READONLY (a replica catching up) */
	case 202: /* TOO_MANY_SIMULTANEOUS_QUERIES */
	case 203: /* NO_FREE_CONNECTION */
	case 209: /* SOCKET_TIMEOUT */
	case 210: /* NETWORK_ERROR */
	case 241: /* MEMORY_LIMIT_EXCEEDED */
	case 242: /* TABLE_IS_READ_ONLY */
	case 252: /* TOO_MANY_PARTS */
	case 319: /* UNKNOWN_STATUS_OF_INSERT */
		return 1;
	default:
		return 0;
	}
}

static char *request_url(struct rt_ship_http *h, const char *statement)
{
	char *escaped = curl.easy_escape(h->curl, statement, 0);
	if (!escaped)
		return NULL;
	const char *url = h->url;
	size_t n = strlen(url);
	const char *joiner;
	if (strchr(url, '?'))
		joiner = "&query=";
	else if (n && url[n - 1] == '/')
		joiner = "?query=";
	else
		joiner = strchr(strstr(url, "://") ? strstr(url, "://") + 3 : url, '/')
			     ? "?query="
			     : "/?query=";
	size_t size = n + strlen(joiner) + strlen(escaped) + 1;
	char *out = malloc(size);
	if (out)
		snprintf(out, size, "%s%s%s", url, joiner, escaped);
	curl.free(escaped);
	return out;
}

enum rt_ship_http_result rt_ship_http_run(struct rt_ship_http *h, const char *statement,
					  const void *body, size_t length,
					  struct rt_ship_buffer *answer, char *message,
					  size_t message_size)
{
	answer->length = 0;
	char *url = request_url(h, statement);
	if (!url) {
		snprintf(message, message_size, "out of memory");
		return RT_SHIP_HTTP_REFUSED;
	}
	CURL *c = h->curl;
	curl.easy_reset(c);
	h->error[0] = 0;
	curl.easy_setopt(c, CURLOPT_URL, url);
	curl.easy_setopt(c, CURLOPT_ERRORBUFFER, h->error);
	curl.easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl.easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 10L);
	/* a server that stops answering mid-way is given up on, and tried again */
	curl.easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curl.easy_setopt(c, CURLOPT_LOW_SPEED_TIME, 60L);
	curl.easy_setopt(c, CURLOPT_POST, 1L);
	curl.easy_setopt(c, CURLOPT_POSTFIELDS, body ? (const char *)body : "");
	curl.easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)(body ? length : 0));
	curl.easy_setopt(c, CURLOPT_WRITEFUNCTION, take_answer);
	curl.easy_setopt(c, CURLOPT_WRITEDATA, answer);
	struct curl_slist *headers = curl.slist_append(NULL, "Expect:");
	curl.easy_setopt(c, CURLOPT_HTTPHEADER, headers);
	CURLcode rc = curl.easy_perform(c);
	curl.slist_free_all(headers);
	free(url);
	if (answer->length == 0 && rt_ship_buffer_append(answer, "", 0)) {
		snprintf(message, message_size, "out of memory");
		return RT_SHIP_HTTP_REFUSED;
	}
	if (rc != CURLE_OK) {
		snprintf(message, message_size, "%s",
			 h->error[0] ? h->error : curl.easy_strerror(rc));
		return RT_SHIP_HTTP_UNREACHABLE;
	}
	long status = 0;
	curl.easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	if (status == 200)
		return RT_SHIP_HTTP_OK;
	/* the server's own words, on one line */
	char *text = (char *)answer->data;
	size_t n = strcspn(text, "\n");
	if (n > 400)
		n = 400;
	snprintf(message, message_size, "HTTP %ld: %.*s", status, (int)n, text);
	long code = -1;
	if (strncmp(text, "Code: ", 6) == 0)
		code = strtol(text + 6, NULL, 10);
	if (status == 502 || status == 503 || status == 504 || busy_code(code))
		return RT_SHIP_HTTP_BUSY;
	return RT_SHIP_HTTP_REFUSED;
}

void rt_ship_url_without_password(const char *url, char *out, size_t size)
{
	const char *scheme = strstr(url, "://");
	const char *authority = scheme ? scheme + 3 : url;
	size_t end = strcspn(authority, "/?#");
	const char *at = memchr(authority, '@', end);
	if (!at) {
		snprintf(out, size, "%s", url);
		return;
	}
	snprintf(out, size, "%.*s%s", (int)(authority - url), url, at + 1);
}
