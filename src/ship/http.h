/*
 * http.h - statements to a ClickHouse server over its HTTP interface
 * (libcurl): the statement in the URL's `query` parameter, the rows of an
 * INSERT as the request's body.  One connection, kept alive between
 * requests.
 */
#ifndef RT_SHIP_HTTP_H
#define RT_SHIP_HTTP_H

#include <stddef.h>

#include "ship/buffer.h"

struct rt_ship_http;

/*
 * A client of the server at url ("http://host:8123", with user:password@
 * or URL parameters such as ?database=db when needed).  NULL with message
 * filled when libcurl cannot be loaded or started, or out of memory.
 */
struct rt_ship_http *rt_ship_http_new(const char *url, char *message, size_t message_size);
void rt_ship_http_free(struct rt_ship_http *h);

enum rt_ship_http_result {
	RT_SHIP_HTTP_OK = 0,
	/* the server could not be reached or stopped answering: worth another try */
	RT_SHIP_HTTP_UNREACHABLE = 1,
	/* the server answered with an error that is worth another try (overloaded...) */
	RT_SHIP_HTTP_BUSY = 2,
	/* the server refused the statement (no such table, bad SQL...): trying again won't help */
	RT_SHIP_HTTP_REFUSED = 3,
};

/*
 * Run statement with body (NULL, 0: none) as its data.  The server's
 * answer goes into *answer (emptied first); on anything but OK, message
 * says what happened (the server's own words when it answered).
 */
enum rt_ship_http_result rt_ship_http_run(struct rt_ship_http *h, const char *statement,
					  const void *body, size_t length,
					  struct rt_ship_buffer *answer, char *message,
					  size_t message_size);

/* url without its user:password@, into out (for messages and the journal). */
void rt_ship_url_without_password(const char *url, char *out, size_t size);

#endif /* RT_SHIP_HTTP_H */
