#!/usr/bin/env bash
# check_one_cpu.sh BERTH CONFIG WORK REPEAT THREADS...
# check_threads.sh with the process pinned to one cpu (the first it may
# use), as taskset, a cpuset or a one-core container leave it: every
# thread count must run one thread, say so, and give the same outputs.
set -u
first=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*\([0-9]*\).*/\1/p' /proc/self/status)
[ -n "$first" ] || { echo "FAIL: no Cpus_allowed_list in /proc/self/status"; exit 1; }
exec taskset -c "$first" "$(dirname "$0")/check_threads.sh" "$@"
