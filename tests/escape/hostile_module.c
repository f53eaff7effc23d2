/* hostile_module.c - a shared object for hostile_prog to load from a path escape.sh names. */
int hostile_module_value(void);
int hostile_module_value(void)
{
	return 42;
}
