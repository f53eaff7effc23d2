/*
 * demangle.c - rt_demangle through the C++ runtime, and the short form of
 * what it gives (see demangle.h).
 *
 * The short form is read off the demangled text in one pass: outside
 * brackets, a space ends a return type, '<' and '[' open what is dropped
 * (template arguments, ABI tags), '(' opens a parameter list (dropped; the
 * name ends there unless "::" follows), '{' an unnamed entity; the word
 * "operator" takes the operator's own characters with it, so that the
 * '<' of "operator<" or the "()" of "operator()" stay in the name.
 */
#include "symbols/demangle.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/*
 * The demangler's entry point as the Itanium C++ ABI defines it, with C
 * linkage; <cxxabi.h> declares it only for C++.
 */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

char *rt_demangle(const char *name)
{
	/* Only "_Z" names are C++ symbols: __cxa_demangle would also read a
	   plain C name such as "f" or "i" as a type and turn it into "float". */
	if (name == NULL || strncmp(name, "_Z", 2) != 0)
		return NULL;
	int status = 0;
	char *out = __cxa_demangle(name, NULL, NULL, &status);
	if (status != 0) {
		free(out);
		return NULL;
	}
	return out;
}

/* ---- short names ------------------------------------------------------------ */

/* The short name being written: buf holds at most size - 1 bytes and a NUL. */
struct short_name {
	char *buf;
	size_t size, len;
	size_t start; /* where the name proper starts (after a thunk prefix) */
};

static void put(struct short_name *b, const char *s, size_t n)
{
	if (n > b->size - 1 - b->len)
		n = b->size - 1 - b->len;
	memcpy(b->buf + b->len, s, n);
	b->len += n;
}

static int is_ident(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '$';
}

/* Whether s[i...] is the word `word`, not part of a longer identifier. */
static int word_at(const char *s, size_t i, const char *word)
{
	size_t n = strlen(word);
	return (i == 0 || !is_ident(s[i - 1])) && strncmp(s + i, word, n) == 0 &&
	       !is_ident(s[i + n]);
}

/*
 * Past the end of the group that opens at s[i] ('<', '(', '[' or '{'), or
 * at the end of s when it never closes.  Angle brackets count only outside
 * the other kinds: "A<void (*)(int), B<C> >" is one group.
 */
static size_t group_end(const char *s, size_t i)
{
	const char open = s[i];
	const char close = (char)(open == '<' ? '>' : open == '(' ? ')' : open == '[' ? ']' : '}');
	int depth = 0, others = 0;
	for (; s[i]; i++) {
		char c = s[i];
		if (open != '<') {
			if (c == open)
				depth++;
			else if (c == close && --depth == 0)
				return i + 1;
		} else if (c == '(' || c == '[' || c == '{') {
			others++;
		} else if (c == ')' || c == ']' || c == '}') {
			others -= others > 0;
		} else if (!others && c == '<') {
			depth++;
		} else if (!others && c == '>' && --depth == 0) {
			return i + 1;
		}
	}
	return i;
}

/* The operators a name can end with, longer ones first. */
static const char *const operator_symbols[] = {
    "->*", "<<=", ">>=", "<=>", "()", "[]", "->", "<<", ">>", "<=", ">=", "==",	 "!=", "&&",
    "||",  "++",  "--",	 "+=",	"-=", "*=", "/=", "%=", "&=", "|=", "^=", "<",	 ">",  "+",
    "-",   "*",	  "/",	 "%",	"^",  "&",  "|",  "~",	"!",  "=",  ",",  "\"\""};

/* "operator" at s[i] and what names the operator; returns where the name goes on. */
static size_t put_operator(struct short_name *b, const char *s, size_t i)
{
	put(b, "operator", 8);
	i += 8;
	for (size_t k = 0; k < sizeof(operator_symbols) / sizeof(operator_symbols[0]); k++) {
		size_t n = strlen(operator_symbols[k]);
		if (strncmp(s + i, operator_symbols[k], n) != 0)
			continue;
		put(b, s + i, n);
		i += n;
		if (s[i - 1] == '"' &&
		    s[i] == ' ') { /* a literal operator's suffix: operator"" _km */
			size_t end = i + 1;
			while (is_ident(s[end]))
				end++;
			put(b, s + i, end - i);
			i = end;
		}
		if (s[i] == ' ' && s[i + 1] == '<')
			i++; /* "operator< <int>": the space before its template arguments */
		return i;
	}
	if (s[i] != ' ')
		return i;
	static const char *const words[] = {"new", "delete", "co_await"};
	for (size_t k = 0; k < sizeof(words) / sizeof(words[0]); k++)
		if (word_at(s, i + 1, words[k])) {
			size_t n = 1 + strlen(words[k]);
			put(b, s + i, n);
			i += n;
			if (strncmp(s + i, "[]", 2) == 0) {
				put(b, "[]", 2);
				i += 2;
			}
			return i;
		}
	/* a conversion: its type up to the parameter list, without template arguments */
	while (s[i] && s[i] != '(') {
		if (s[i] == '<')
			i = group_end(s, i);
		else
			put(b, s + i++, 1);
	}
	while (b->len && b->buf[b->len - 1] == ' ')
		b->len--; /* "operator void (S::*)()": the type's declarator is dropped */
	return i;
}

/* An unnamed entity, "{lambda(int, int)#1}", without its parameters: "{lambda#1}". */
static size_t put_unnamed(struct short_name *b, const char *s, size_t i)
{
	size_t end = group_end(s, i);
	while (i < end) {
		if (s[i] == '(') {
			size_t next = group_end(s, i);
			i = next < end ? next : end - 1; /* the closing brace stays */
		} else {
			put(b, s + i++, 1);
		}
	}
	return end;
}

size_t rt_demangled_short(const char *full, char *buf, size_t size)
{
	static const char *const prefixes[] = {"non-virtual thunk to ", "virtual thunk to ",
					       "covariant return thunk to ",
					       "transaction clone for "};
	if (!size)
		return 0;
	struct short_name b = {buf, size, 0, 0};
	const char *s = full;
	if (!strchr(s, '('))
		goto whole;
	for (size_t k = 0; k < sizeof(prefixes) / sizeof(prefixes[0]); k++)
		if (strncmp(s, prefixes[k], strlen(prefixes[k])) == 0) {
			put(&b, s, strlen(prefixes[k]));
			s += strlen(prefixes[k]);
			b.start = b.len;
			break;
		}
	size_t i = 0;
	while (s[i]) {
		char c = s[i];
		if (c == 'o' && word_at(s, i, "operator")) {
			i = put_operator(&b, s, i);
		} else if (c == 'd' && word_at(s, i, "decltype")) {
			/* a return type "decltype (expression)": skipped whole */
			i += 8 + (s[i + 8] == ' ');
			if (s[i] == '(')
				i = group_end(s, i);
			b.len = b.start;
		} else if (c == '<' || c == '[') {
			i = group_end(s, i); /* template arguments, an ABI tag */
		} else if (c == '{') {
			i = put_unnamed(&b, s, i);
		} else if (c == '(' && strncmp(s + i, "(anonymous namespace)", 21) == 0) {
			put(&b, s + i, 21);
			i += 21;
		} else if (c == '(' && b.len == b.start && s[i + 1] != ')') {
			/* a declarator around the name, "int (*f(long))(char)": the name is inside
			 */
			for (i++; s[i] == '*' || s[i] == '&'; i++)
				;
		} else if (c == '(') {
			i = group_end(s, i); /* the parameters */
			if (s[i] != ':' || s[i + 1] != ':')
				break; /* what follows qualifies the function: done */
		} else if (c == ' ') {
			b.len = b.start; /* what came before was the return type */
			i++;
		} else {
			put(&b, s + i++, 1);
		}
	}
	if (b.len > b.start) {
		buf[b.len] = 0;
		return b.len;
	}
whole:
	b.len = 0;
	put(&b, full, strlen(full));
	buf[b.len] = 0;
	return b.len;
}
