#!/bin/sh
# fences.sh OBJDUMP PROGRAM TOOL - the ring protocol's ordering, as the AArch64
# build compiled it.
#
# x86-64 orders stores with stores and loads with loads by itself, and the
# TSan build turns the fences into compiler barriers: only a weakly ordered
# CPU needs the instructions, and no test on x86-64 can miss them.  So here:
# the fast path of one RT_TRACE (record_event in PROGRAM, counter.c) reads
# the virtual counter after an isb, has a barrier (dmb ish: the release fence
# that makes reserve visible before the slots) and publishes head with a
# store-release (stlr); the tool, which reads rings while they are written,
# has acquire fences (dmb ishld).  qemu-user runs the program on an x86-64
# host, which orders memory more strongly than AArch64 does: the tests run
# under it show the code right, not that a weaker CPU needs each fence.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../e2e/lib.sh"
objdump=$1
program=$2
tool=$3

"$objdump" -d --no-show-raw-insn --disassemble=record_event "$program" >"$work/fast" || true
"$objdump" -d --no-show-raw-insn "$tool" >"$work/tool" || true

# has FILE PATTERN: an instruction line of FILE matches the extended regular expression
has() {
	grep -Eq "^ *[0-9a-f]+:[[:space:]]+$2" "$1"
}
check "record_event was disassembled" has "$work/fast" "ret"
check "fast path: isb before the counter" has "$work/fast" "isb"
check "fast path: reads cntvct_el0" has "$work/fast" "mrs[[:space:]]+x[0-9]+, cntvct_el0"
check "fast path: the release fence (dmb ish)" has "$work/fast" "dmb[[:space:]]+ish$"
check "fast path: head stored with release (stlr)" has "$work/fast" "stlr[[:space:]]"
check "tool: acquire fences (dmb ishld)" has "$work/tool" "dmb[[:space:]]+ishld"
finish
