/*
 * sym_lib.c - a shared object for the symbol tests, loaded with dlopen.
 *
 * The checker expects each marked function's entry at the line of its
 * marker, so the head and the brace share a line: compilers put the entry
 * at the brace, gcc at the head for some C++ templates.
 */
int sym_lib_square(int x);
int sym_lib_cube(int x);
void *sym_lib_helper_address(void);

// clang-format off
static int sym_lib_helper(int x) { // @lib_helper
	return x * 3;
}

int sym_lib_square(int x) { // @lib_square
	return x * x + sym_lib_helper(0);
}

int sym_lib_cube(int x) { // @lib_cube
	return x * x * x;
}
// clang-format on

/* for the checker: a static function's address */
void *sym_lib_helper_address(void)
{
	return (void *)sym_lib_helper;
}
