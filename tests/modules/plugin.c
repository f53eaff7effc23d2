/*
 * plugin.c - built twice, as plugin A and plugin B (PLUGIN_VALUE differs):
 * the same size, so that the loader can put B where A was.
 */
int plugin_value(void);

__attribute__((visibility("default"))) int plugin_value(void)
{
	return PLUGIN_VALUE;
}
