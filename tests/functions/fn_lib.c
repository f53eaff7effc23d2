/*
 * fn_lib.c - a shared object of instrumented functions, for the module
 * exclusion tests: calls.c calls lib_outer(), which calls lib_inner().
 */
int lib_inner(int x);
int lib_outer(int x);

int lib_inner(int x)
{
	return x * 3;
}

int lib_outer(int x)
{
	return lib_inner(x) + 1;
}
