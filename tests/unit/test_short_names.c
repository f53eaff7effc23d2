/*
 * test_short_names.c - rt_demangled_short (src/symbols/demangle.c): the
 * short form of demangled C++ names, case by case, as libstdc++'s
 * demangler writes them; names that are no demangled function come back
 * whole; a small buffer cuts the name and still ends it.
 */
#include <stdio.h>
#include <string.h>

#include "symbols/demangle.h"

static int failures;

static void expect(const char *full, const char *want)
{
	char buf[512];
	size_t n = rt_demangled_short(full, buf, sizeof(buf));
	if (strcmp(buf, want) != 0 || n != strlen(buf)) {
		failures++;
		fprintf(stderr, "%s\n  gave   '%s' (%zu)\n  wanted '%s'\n", full, buf, n, want);
	}
}

int main(void)
{
	/* no parameter list: as it is */
	expect("main", "main");
	expect("fib", "fib");
	expect("foo.part.0", "foo.part.0");
	expect("libfoo.so+0x1a2b", "libfoo.so+0x1a2b");
	expect("my lib.so+0x10", "my lib.so+0x10");
	expect("0x7f00deadbeef", "0x7f00deadbeef");
	expect("_GLOBAL__sub_I_main", "_GLOBAL__sub_I_main");
	/* parameters, qualifiers, return types */
	expect("geo::area(int, int)", "geo::area");
	expect("geo::area(double)", "geo::area");
	expect("geo::inner::Box<int>::get() const", "geo::inner::Box::get");
	expect("S::f() const &&", "S::f");
	expect("S::g() volatile noexcept", "S::g");
	expect("int geo::twice<int>(int)", "geo::twice");
	expect("long geo::inner::Box<int>::as<long>() const", "geo::inner::Box::as");
	expect("unsigned long long std::hash<int>::operator()(int) const", "std::hash::operator()");
	expect("int const* std::__miter_base<int const*>(int const*)", "std::__miter_base");
	expect("void std::sort<__gnu_cxx::__normal_iterator<int*, std::vector<int, "
	       "std::allocator<int> > > >(__gnu_cxx::__normal_iterator<int*, std::vector<int, "
	       "std::allocator<int> > >, __gnu_cxx::__normal_iterator<int*, std::vector<int, "
	       "std::allocator<int> > >)",
	       "std::sort");
	expect("__gnu_cxx::__normal_iterator<int*, std::vector<int, std::allocator<int> > "
	       ">::difference_type __gnu_cxx::operator-<int*, std::vector<int, std::allocator<int> "
	       "> >(__gnu_cxx::__normal_iterator<int*, std::vector<int, std::allocator<int> > > "
	       "const&, __gnu_cxx::__normal_iterator<int*, std::vector<int, std::allocator<int> > "
	       "> const&)",
	       "__gnu_cxx::operator-");
	expect("std::enable_if<true, void>::type f<int>(int)", "f");
	expect("decltype ({parm#1}.begin()) std::begin<std::vector<int> >(std::vector<int>&)",
	       "std::begin");
	expect("void (*geo::handler(int))(double)", "geo::handler");
	expect("int (&pick<3>())[3]", "pick");
	/* constructors and destructors */
	expect("geo::inner::Box<int>::Box(int)", "geo::inner::Box::Box");
	expect("geo::inner::Box<int>::~Box()", "geo::inner::Box::~Box");
	expect("std::_Vector_base<int, std::allocator<int> >::_Vector_impl::~_Vector_impl()",
	       "std::_Vector_base::_Vector_impl::~_Vector_impl");
	/* operators */
	expect("geo::Point::operator+(geo::Point const&) const", "geo::Point::operator+");
	expect("geo::Point::operator<(geo::Point const&) const", "geo::Point::operator<");
	expect("geo::Point::operator[](int)", "geo::Point::operator[]");
	expect("bool __gnu_cxx::operator< <int*, std::vector<int> >(int const&, int const&)",
	       "__gnu_cxx::operator<");
	expect("bool __gnu_cxx::operator==<int*>(int* const&, int* const&)",
	       "__gnu_cxx::operator==");
	expect("std::ostream& operator<< <char>(std::ostream&, char const*)", "operator<<");
	expect("S::operator>>=(int)", "S::operator>>=");
	expect("S::operator->() const", "S::operator->");
	expect("S::operator->*(int)", "S::operator->*");
	expect("S::operator<=>(S const&) const", "S::operator<=>");
	expect("bool __gnu_cxx::__ops::_Iter_less_iter::operator()<int*, int*>(int*, int*) const",
	       "__gnu_cxx::__ops::_Iter_less_iter::operator()");
	expect("operator new(unsigned long)", "operator new");
	expect("operator delete[](void*)", "operator delete[]");
	expect("S::operator bool() const", "S::operator bool");
	expect("S::operator unsigned long() const", "S::operator unsigned long");
	expect("S::operator std::vector<int, std::allocator<int> >() const",
	       "S::operator std::vector");
	expect("S::operator void (S::*)()() const", "S::operator void");
	expect("operator\"\" _km(unsigned long long)", "operator\"\" _km");
	expect("operator_helper(int)", "operator_helper");
	/* scopes: anonymous, local, unnamed */
	expect("(anonymous namespace)::hidden(int)", "(anonymous namespace)::hidden");
	expect("a::(anonymous namespace)::B<int>::f()", "a::(anonymous namespace)::B::f");
	expect("main::{lambda(int, int)#1}::operator()(int, int) const",
	       "main::{lambda#1}::operator()");
	expect("f(int)::Local::get() const", "f::Local::get");
	expect("std::vector<int> g<std::vector<int> >()::{lambda()#2}::operator()() const",
	       "g::{lambda#2}::operator()");
	expect("void std::_Function_handler<void (), main::{lambda()#1}>::_M_invoke(std::_Any_data "
	       "const&)",
	       "std::_Function_handler::_M_invoke");
	expect("std::thread::_State_impl<std::thread::_Invoker<std::tuple<void (*)(int), int> > "
	       ">::_M_run()",
	       "std::thread::_State_impl::_M_run");
	expect("{unnamed type#1}::f()", "{unnamed type#1}::f");
	/* ABI tags, clones, thunks */
	expect("std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > "
	       "f[abi:cxx11](int)",
	       "f");
	expect("geo::area(int, int) [clone .constprop.0]", "geo::area");
	expect("foo(int) [clone .cold]", "foo");
	expect("non-virtual thunk to Derived::f(int)", "non-virtual thunk to Derived::f");
	expect("virtual thunk to Derived::~Derived()", "virtual thunk to Derived::~Derived");
	/* broken or unbalanced text: something, never past the buffer */
	expect("(", "(");
	expect("f(", "f");
	expect("a<b(", "a");
	expect("()", "()");
	/* a buffer too small: cut, ended */
	char small[5];
	size_t n = rt_demangled_short("geo::inner::Box<int>::get() const", small, sizeof(small));
	if (n != 4 || strcmp(small, "geo:") != 0) {
		failures++;
		fprintf(stderr, "small buffer: '%s' (%zu)\n", small, n);
	}
	n = rt_demangled_short("main", small, 1);
	if (n != 0 || small[0]) {
		failures++;
		fprintf(stderr, "one-byte buffer: '%s' (%zu)\n", small, n);
	}
	if (failures)
		fprintf(stderr, "%d failure%s\n", failures, failures == 1 ? "" : "s");
	return failures ? 1 : 0;
}
