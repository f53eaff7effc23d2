/*
 * grow.c - see grow.h.
 */
#include "analyze/grow.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int rt_analyze_grow(void **array, size_t *capacity, size_t need, size_t size)
{
	if (need <= *capacity)
		return 0;
	size_t n = *capacity ? *capacity * 2 : 64;
	while (n < need)
		n *= 2;
	void *grown = realloc(*array, n * size);
	if (!grown)
		return -ENOMEM;
	memset((char *)grown + *capacity * size, 0, (n - *capacity) * size);
	*array = grown;
	*capacity = n;
	return 0;
}
