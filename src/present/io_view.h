/*
 * io_view.h - file I/O calls as a printer shows them: a call as the event
 * model gives it (event/io_calls.h: parsed, its descriptors named), in text.
 */
#ifndef RT_PRESENT_IO_VIEW_H
#define RT_PRESENT_IO_VIEW_H

#include <stddef.h>
#include <stdint.h>

#include "decode/fd_names.h"
#include "decode/io_event.h"
#include "event/io_calls.h"
#include "format/records.h"

/*
 * Whether the path a printer shows for the call is the one the call named
 * (open, unlink, rename, fopen of a path; the name a rundown or named
 * record gives its descriptor), else the name its descriptor had then
 * (rt_io_shown.names.fd).
 */
int rt_io_shows_named_path(const struct rt_io_event *ev);

/*
 * The text of a call: "FileIO/Read fd 3 '/etc/hosts' pos=0x0 516b 3.1us"
 * and a newline, into buf (size bytes; RT_IO_TEXT_MAX always fits).
 * Returns the length.
 */
#define RT_IO_TEXT_MAX (4 * (RT_LOG_PAYLOAD_MAX + 2 * RT_FD_NAME_MAX) + 512)
size_t rt_io_text(char *buf, size_t size, const struct rt_io_shown *s);

#endif /* RT_PRESENT_IO_VIEW_H */
