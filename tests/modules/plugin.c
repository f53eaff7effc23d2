/*
 * plugin.c - built twice, as plugin A and plugin B (PLUGIN_VALUE differs):
 * the same size, so that the loader can put B where A was.  Built with
 * -finstrument-functions too (PLUGIN_WORK names its inner function
 * plugin_a_work or plugin_b_work, the same length), so that function
 * events at the same addresses must be named after the plugin loaded there
 * at the time.
 */
#ifndef PLUGIN_WORK
#define PLUGIN_WORK plugin_work
#endif

int plugin_value(void);
int PLUGIN_WORK(int x);

__attribute__((noinline)) int PLUGIN_WORK(int x)
{
	return x + PLUGIN_VALUE;
}

__attribute__((visibility("default"))) int plugin_value(void)
{
	return PLUGIN_WORK(0);
}
