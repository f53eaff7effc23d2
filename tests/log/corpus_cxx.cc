/*
 * corpus_cxx.cc - the conformance corpus built as C++: RT_LOG's argument
 * types then come from templates, not _Generic, and the inline path must
 * lay out the same payload.
 */
#include "corpus.c"
