/*
 * levels.c - the names of the RT_LOG levels.  RT_LOG_FATAL ... RT_LOG_DEBUG
 * are always there; the short RT_FATAL ... RT_DEBUG of earlier versions only
 * when the program defines RINGTRACE_SHORT_LEVELS before the header.
 *
 *   -DSHORT_LEVELS  asks for the short names, logs with both kinds and with
 *                   -DRINGTRACE_LOG_MIN=RT_WARN as earlier versions allowed
 *   (nothing)       has macros of its own by those names, as RT-Thread has
 *                   RT_ERROR, defined before and after the header: the
 *                   header must neither define nor use them
 *
 * Exits 0 when every name has the value it should; logs "short 3",
 * "long 2" (SHORT_LEVELS) or "own 3" and "own 2".
 */
#ifdef SHORT_LEVELS
#define RINGTRACE_SHORT_LEVELS
#else
#define RT_ERROR "the program's own RT_ERROR"
#endif

#include <ringtrace.h>
#include <string.h>

#ifndef SHORT_LEVELS
#if defined(RT_FATAL) || defined(RT_WARN) || defined(RT_NOTICE) || defined(RT_INFO) ||             \
    defined(RT_DEBUG)
#error "a short level name is defined without RINGTRACE_SHORT_LEVELS"
#endif
#define RT_WARN 42
#endif

int main(void)
{
#ifdef SHORT_LEVELS
	RT_LOG(RT_WARN, "short %d", RT_WARN);
	RT_LOG(RT_LOG_ERROR, "long %d", RT_LOG_ERROR);
	/* filtered out at compile time by RINGTRACE_LOG_MIN=RT_WARN */
	RT_LOG(RT_INFO, "never %d", RT_INFO);
	return RT_FATAL == 1 && RT_ERROR == 2 && RT_WARN == 3 && RT_NOTICE == 4 && RT_INFO == 5 &&
		       RT_DEBUG == 6
		   ? 0
		   : 1;
#else
	RT_LOG(RT_LOG_WARN, "own %d", RT_LOG_WARN);
	RT_LOG(RT_LOG_ERROR, "own %d", RT_LOG_ERROR);
	return RT_WARN == 42 && strcmp(RT_ERROR, "the program's own RT_ERROR") == 0 ? 0 : 1;
#endif
}
