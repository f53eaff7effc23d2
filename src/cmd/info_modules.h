/*
 * info_modules.h - the module list `ringtrace info` prints per process.
 */
#ifndef RT_CMD_INFO_MODULES_H
#define RT_CMD_INFO_MODULES_H

#include "common/output.h"
#include "read/arena_reader.h"

/* A table of rd's modules after a blank line; nothing when it has none. */
void rt_info_modules_text(struct rt_out *out, const struct rt_reader *rd);
/* ,"modules":[{...},...] to append inside rd's JSON object. */
void rt_info_modules_json(struct rt_out *out, const struct rt_reader *rd);

#endif /* RT_CMD_INFO_MODULES_H */
