/*
 * names_cxx.cc - C++ functions whose full names are long, for
 * tests/functions/names.sh: overloads, templates (of functions, of classes,
 * of members), namespaces (named, nested, anonymous), operators,
 * constructors and destructors, a const member, a lambda and std::sort.
 * Built with -finstrument-functions at -O0, so each is a call of its own.
 *
 * main calls, once each and in this order: geo::area(int, int),
 * geo::area(double), geo::twice<int>, geo::twice<double>,
 * geo::inner::Box<int>::Box, Box<int>::get, Box<int>::as<long>,
 * geo::Point::operator+, geo::Point::operator<, geo::Point::operator[],
 * (anonymous namespace)::hidden, the lambda, std::sort, then ~Box.
 */
#include <algorithm>
#include <cstdio>
#include <vector>

#define CALLED __attribute__((noinline))

static volatile long sink;

namespace geo
{

CALLED int area(int w, int h)
{
	return w * h;
}

CALLED double area(double r)
{
	return 3.0 * r * r;
}

template <typename T> CALLED T twice(T v)
{
	return v + v;
}

struct Point {
	int x, y;
	CALLED Point operator+(const Point &o) const
	{
		return Point{x + o.x, y + o.y};
	}
	CALLED bool operator<(const Point &o) const
	{
		return x < o.x;
	}
	CALLED int &operator[](int i)
	{
		return i ? y : x;
	}
};

namespace inner
{
template <typename T> struct Box {
	T v;
	CALLED explicit Box(T value) : v(value) {}
	CALLED ~Box()
	{
		sink = 0;
	}
	CALLED T get() const
	{
		return v;
	}
	template <typename U> CALLED U as() const
	{
		return static_cast<U>(v);
	}
};
} // namespace inner

} // namespace geo

namespace
{
CALLED int hidden(int v)
{
	return v * 3;
}
} // namespace

int main()
{
	sink = geo::area(2, 3);
	sink = (long)geo::area(1.5);
	sink = geo::twice(4);
	sink = (long)geo::twice(2.5);
	{
		geo::inner::Box<int> box(7);
		sink = box.get();
		sink = box.as<long>();
		geo::Point a{1, 2}, b{3, 4};
		geo::Point c = a + b;
		sink = c < a;
		sink = c[1];
		sink = hidden(5);
		auto add = [](int p, int q) CALLED { return p + q; };
		sink = add(1, 2);
		std::vector<int> v{5, 3, 4, 1, 2};
		std::sort(v.begin(), v.end());
		sink = v[0];
	}
	return 0;
}
