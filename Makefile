# ringtrace - the two commands of the README, and the rest.
#   make demo     build, run the example program, show its trace
#   make test     build and run every test (plain, AArch64 under qemu-user, ASan+UBSan, TSan,
#                 FUZZ_TEST_SECONDS of fuzzing)
#   make test-aarch64   only the AArch64 cross build and its tests
#   make bench    run the benchmarks (docs/PERFORMANCE.md)
#   make fuzz     fuzz the readers and check for FUZZ_SECONDS each (docs/FUZZING.md)
#   make install PREFIX=DIR
#   make format / make lint
#   make man      the man pages in docs/man from their sources there (docs/man/*.md)

BUILD     ?= build
PREFIX    ?= /usr/local
JOBS      ?= $(shell nproc)
FUZZ_SECONDS ?= 60
FUZZ_TEST_SECONDS ?= 45
CMAKE_ARGS ?=
BUILD_PKGS = cmake make gcc g++ pkg-config libdw-dev libcurl4-openssl-dev
# the tests build user programs with both compilers, and clang's sanitizers; the file I/O
# tests compare with strace on real programs, sqlite3 among them; the exports are read back
# by protoc (Perfetto), babeltrace2 and its Python bindings (CTF), and opened in speedscope
# in headless chromium (Chrome JSON), fetched by npm (any npm on the PATH will do); `ship`
# inserts into a real clickhouse-server the tests start on loopback; groff and mandoc render
# the man pages to find what they would warn about (each catches what the other lets by)
TEST_PKGS  = clang libclang-rt-14-dev binutils python3 strace sqlite3 protobuf-compiler \
             babeltrace2 python3-bt2 chromium npm:npm clickhouse-server groff-base mandoc
LINT_PKGS  = clang clang-format clang-tidy cppcheck
BENCH_PKGS = liblttng-ust-dev lttng-tools uftrace
# the AArch64 cross build: Debian's cross compilers and qemu-user on this machine, and
# the arm64 libraries of a multiarch install, which the tool links with and qemu loads
# (the arm64 C library among them: see cmake/aarch64-linux-gnu.cmake)
AARCH64_PKGS = gcc-aarch64-linux-gnu g++-aarch64-linux-gnu binutils-aarch64-linux-gnu \
               qemu-user python3 binutils
AARCH64_ARM64_PKGS = libc6 libstdc++6 libdw-dev libelf-dev libcurl4-openssl-dev

.PHONY: all deps build demo test test-plain test-asan test-tsan test-fuzz test-aarch64 fuzz \
	fuzz-build bench install format lint man clean

all: build

deps:
	@scripts/ensure-packages $(BUILD_PKGS)

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_ARGS) >/dev/null
	@cmake --build $(BUILD) -j$(JOBS)

demo: build
	@scripts/demo $(BUILD)

# test-aarch64 after test-plain, whose tool it reads its recordings with
test: test-plain test-aarch64 test-asan test-tsan test-fuzz
	@echo "all test builds passed"

# Tests build with warnings as errors; a user's `make` does not.
test-plain:
	@scripts/ensure-packages $(TEST_PKGS)
	@$(MAKE) --no-print-directory build CMAKE_ARGS="-DRINGTRACE_WERROR=ON $(CMAKE_ARGS)"
	@cd $(BUILD) && ctest --output-on-failure -j$(JOBS)

# The sanitizer builds use clang and the plain one gcc, so both compilers build
# the whole tree with warnings as errors on every test run.
test-asan: deps
	@scripts/ensure-packages $(TEST_PKGS)
	@CC=clang CXX=clang++ cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug \
		-DRINGTRACE_SANITIZE=address -DRINGTRACE_WERROR=ON >/dev/null
	@cmake --build build-asan -j$(JOBS)
	@cd build-asan && ctest --output-on-failure -j$(JOBS) -L sanitize

# Only what the tests labelled threads run (target threads_tests): gcc builds the
# whole tree with warnings as errors in the plain tree already.
test-tsan: deps
	@cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRINGTRACE_SANITIZE=thread \
		-DRINGTRACE_WERROR=ON -DRINGTRACE_BENCH=OFF >/dev/null
	@cmake --build build-tsan -j$(JOBS) --target threads_tests
	@cd build-tsan && ctest --output-on-failure -j$(JOBS) -L threads

# AArch64, cross-built in build-aarch64 and run under qemu-aarch64: the tests labelled
# aarch64 (tests/CMakeLists.txt says which), the fences real (no TSan build).  What they
# record is read by this machine's tool, built in BUILD as test-plain builds it.
test-aarch64: deps
	@scripts/ensure-packages $(AARCH64_PKGS)
	@scripts/ensure-packages --arch arm64 $(AARCH64_ARM64_PKGS)
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRINGTRACE_WERROR=ON \
		$(CMAKE_ARGS) >/dev/null
	@cmake --build $(BUILD) -j$(JOBS) --target ringtrace_tool
	@cmake -S . -B build-aarch64 -DCMAKE_TOOLCHAIN_FILE=$(CURDIR)/cmake/aarch64-linux-gnu.cmake \
		-DCMAKE_BUILD_TYPE=RelWithDebInfo -DRINGTRACE_WERROR=ON -DRINGTRACE_BENCH=OFF \
		-DRINGTRACE_HOST_TOOL=$(abspath $(BUILD))/ringtrace >/dev/null
	@cmake --build build-aarch64 -j$(JOBS) --target aarch64_tests
	@cd build-aarch64 && ctest --output-on-failure -j$(JOBS) -L aarch64

# libFuzzer with ASan+UBSan: clang only, in its own build directory.
fuzz-build: deps
	@scripts/ensure-packages $(TEST_PKGS)
	@CC=clang CXX=clang++ cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo \
		-DRINGTRACE_SANITIZE=address -DRINGTRACE_FUZZ=ON -DRINGTRACE_WERROR=ON >/dev/null
	@cmake --build build-fuzz -j$(JOBS) --target fuzz_arena fuzz_trace fuzz_check

fuzz: fuzz-build
	@scripts/fuzz build-fuzz $(FUZZ_SECONDS)
	@scripts/fuzz build-fuzz $(FUZZ_SECONDS) build-fuzz/fuzz-trace trace
	@scripts/fuzz build-fuzz $(FUZZ_SECONDS) build-fuzz/fuzz-check check

# make test: a bounded run from a fresh copy of the checked-in corpus; a crash fails it
# A fuzzer is one process on one core: the arena and trace targets run side by
# side (CI has two cores), each for the whole time, then check.
test-fuzz: fuzz-build
	@rm -rf build-fuzz/fuzz-test build-fuzz/fuzz-test-trace build-fuzz/fuzz-test-check
	@scripts/fuzz build-fuzz $(FUZZ_TEST_SECONDS) build-fuzz/fuzz-test >build-fuzz/fuzz-test.out 2>&1 & \
		arena=$$!; \
		scripts/fuzz build-fuzz $(FUZZ_TEST_SECONDS) build-fuzz/fuzz-test-trace trace; \
		trace=$$?; wait $$arena; arena=$$?; cat build-fuzz/fuzz-test.out; \
		[ $$arena -eq 0 ] && [ $$trace -eq 0 ]
	@scripts/fuzz build-fuzz $(FUZZ_TEST_SECONDS) build-fuzz/fuzz-test-check check

# The peers' packages come before the build: the LTTng comparison is built
# only when cmake finds liblttng-ust-dev.
bench: deps
	@scripts/ensure-packages $(BENCH_PKGS) || echo "bench: LTTng or uftrace not installed: their comparisons will be skipped"
	@$(MAKE) --no-print-directory build
	@scripts/bench $(BUILD)

# Builds what it installs, in BUILD as `make build` does.  Both paths are given with
# their type: an untyped -D of a PATH the cache holds already (any build tree configured
# before) is made absolute against the current directory, lib/ then meaning the source
# tree's.  The prefix is made absolute here, so that PREFIX=out means ./out.
INSTALL_TARGETS = ringtrace ringtrace_static ringtrace_io ringtrace_tool
install: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
		-DCMAKE_INSTALL_PREFIX:PATH=$(abspath $(PREFIX)) -DCMAKE_INSTALL_LIBDIR:PATH=lib \
		$(CMAKE_ARGS) >/dev/null
	@cmake --build $(BUILD) -j$(JOBS) --target $(INSTALL_TARGETS)
	@cmake --install $(BUILD)

format:
	@scripts/ensure-packages clang-format
	@clang-format -i $$(git ls-files '*.c' '*.h' '*.cc')

lint: build
	@scripts/ensure-packages $(LINT_PKGS)
	@scripts/lint $(BUILD)

# the pages are checked in, so that a build needs no generator; the docs test says when
# one is stale
man:
	@scripts/ensure-packages python3
	@scripts/gen-man

clean:
	rm -rf $(BUILD) build-asan build-tsan build-fuzz build-aarch64
