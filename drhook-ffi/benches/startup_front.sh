#!/bin/sh
# What a two-stage preload would cost at start-up (issue 29, the
# `/bin/true` row): builds, outside the repository, a front library that
# exports the same functions as PRELOAD.so (its dynamic symbol table),
# each a jump through a slot filled by dlsym(RTLD_NEXT) at its first call
# (arguments kept; while dlsym runs, an allocation it makes gets a bump
# arena) and nothing else, then counts the instructions of COMMAND
# (default /bin/true) plainly, under the front library, under PRELOAD.so
# and under LIBMONITOR.so when given. A measurement prototype, not a
# preload: no engine, no lifecycle, thread-unsafe arena.
#
#   sh drhook-ffi/benches/startup_front.sh PRELOAD.so [LIBMONITOR.so] [COMMAND...]
set -eu
preload=$1; shift
libmonitor=
if [ $# -gt 0 ]; then libmonitor=$1; shift; fi
[ $# -gt 0 ] || set -- /bin/true
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
nm -D --defined-only "$preload" | awk '$2=="T"||$2=="W"||$2=="i"{print $3}' |
    sed 's/@.*//' | sort -u > "$work/names"
awk '
BEGIN { print ".text" }
{ printf ".globl %s\n.type %s,@function\n%s:\n  mov slots+%d(%%rip), %%rax\n", $1, $1, $1, 8*(NR-1)
  printf "  test %%rax, %%rax\n  jz 1f\n  jmp *%%rax\n1: mov $%d, %%eax\n  jmp resolve_common\n", NR-1 }
END {
  print "resolve_common:"
  print "  push %rdi; push %rsi; push %rdx; push %rcx; push %r8; push %r9"
  print "  sub $8, %rsp\n  mov %eax, %edi\n  call stub_resolve\n  add $8, %rsp"
  print "  pop %r9; pop %r8; pop %rcx; pop %rdx; pop %rsi; pop %rdi\n  jmp *%rax"
  printf ".bss\n.globl slots\n.hidden slots\n.align 8\nslots: .zero %d\n", 8*NR
  print ".section .note.GNU-stack,\"\",@progbits"
}' "$work/names" > "$work/stubs.S"
{ echo 'const char *const stub_names[] = {'; sed 's/.*/"&",/' "$work/names"; echo '};'; } > "$work/names.c"
cat > "$work/resolve.c" <<'C'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
extern const char *const stub_names[];
__attribute__((visibility("hidden"))) extern void *slots[];
static __thread int busy;
static char arena[1 << 16];
static size_t used;
static void *bump(size_t n) { n = (n + 15) & ~(size_t)15; void *p = arena + used; used += n; return p; }
static void *nothing(void) { return 0; }
__attribute__((visibility("hidden"))) void *stub_resolve(int i) {
  const char *s = stub_names[i];
  if (busy) return (s[0] == 'm' && s[1] == 'a' && s[2] == 'l') ? (void *)bump : (void *)nothing;
  busy = 1;
  void *p = dlsym(RTLD_NEXT, s);
  busy = 0;
  slots[i] = p ? p : (void *)nothing;
  return slots[i];
}
C
gcc -O2 -shared -fPIC -w -o "$work/libfront.so" "$work/stubs.S" "$work/resolve.c" "$work/names.c"
ir() { # instructions of a run (every thread's)
    valgrind --tool=callgrind --callgrind-out-file="$work/cg.%p" "$@" 2>&1 >/dev/null |
        grep -o 'Collected : [0-9]*' | awk '{s += $3} END {print s}'
}
plain=$(ir "$@")
echo "functions exported: $(wc -l < "$work/names")"
echo "plain: $plain"
front=$(LD_PRELOAD=$work/libfront.so ir "$@")
echo "front library: $front ($((front - plain)) over plain)"
echo "$preload, Dr.Hook off: $(( $(LD_PRELOAD=$preload ir "$@") - plain )) over plain"
[ -z "$libmonitor" ] || echo "libmonitor: $(( $(LD_PRELOAD=$libmonitor ir "$@") - plain )) over plain"
