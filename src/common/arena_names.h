/*
 * arena_names.h - where arenas live and what they are called, shared by
 * the recording library (which names them) and the tool (which finds them).
 *
 * A program with no RINGTRACE_ARENA records into
 *   RT_ARENA_DIR "/" RT_ARENA_PREFIX "PROGRAM.PID" RT_ARENA_SUFFIX
 * and removes it when it exits cleanly.  A program that finds an arena of
 * a previous run at its path keeps it as PATH RT_ARENA_LAST_SUFFIX (the
 * "last" arena, as ACRN keeps the logs of the last crashed run apart from
 * the current ones), replacing an older last arena.
 */
#ifndef RT_COMMON_ARENA_NAMES_H
#define RT_COMMON_ARENA_NAMES_H

#define RT_ARENA_DIR "/dev/shm"
#define RT_ARENA_PREFIX "ringtrace-"
#define RT_ARENA_SUFFIX ".arena"
#define RT_ARENA_LAST_SUFFIX ".last"

#endif /* RT_COMMON_ARENA_NAMES_H */
