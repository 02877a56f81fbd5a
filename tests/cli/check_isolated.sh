#!/bin/sh
# berth check on a module that segfaults, hangs or calls exit() on the op
# case 'sigmoid' (tests/executor/fault_module.c): the check must survive
# it, say what happened, in which part and case, print the rest of the
# report and the summary line, and end with status 1; a hung module's
# process must be gone afterwards.
#   check_isolated.sh BERTH MODULE segv|hang|exit WORKDIR
set -u
berth=$1 module=$2 fault=$3 dir=$4
mkdir -p "$dir"
md="$dir/check-$fault.md" pidfile="$dir/check-$fault.pid"
rm -f "$md" "$pidfile"
out=$(BERTH_FX_PIDFILE="$pidfile" "$berth" check "$module" --no-onnx --timeout-s 3 --markdown "$md" 2>&1)
rc=$?
fail=0
expect() {
    printf '%s\n' "$out" | grep -Eq "$1" || { echo "check_isolated: no line matches: $1" >&2; fail=1; }
}
case $fault in
segv) what='killed by SIGSEGV' ;;
hang) what='timed out after 3 s and was killed' ;;
exit) what='the module called exit\(3\)' ;;
*) echo "check_isolated: unknown fault $fault" >&2; exit 2 ;;
esac
where="during the op cases on the module, in case 'sigmoid'"
# the contract ran whole before the faulty part
expect '^  ok   upload: ownership'
# the faulty case in the table, the part's failure under it
expect "^  sigmoid +[0-9]+  FAIL 1/[0-9]+: sigmoid: $what $where"
expect "^  FAIL $what $where\$"
# the summary, with the module's cases before the fault counted
expect "^berth check .*: FAILED; contract 11 ok, 0 failed; op cases [1-9][0-9]* passed, 0 unsupported, 1 failed; did not finish: $what $where\$"
grep -Eq "^\*\*FAIL\*\*: $what $where\$" "$md" || { echo "check_isolated: the Markdown report does not say it" >&2; fail=1; }
grep -q '^## Summary' "$md" || { echo "check_isolated: the Markdown report has no summary" >&2; fail=1; }
[ "$rc" = 1 ] || { echo "check_isolated: exit status $rc, expected 1" >&2; fail=1; }
if [ "$fault" = hang ]; then
    pid=$(cat "$pidfile" 2>/dev/null)
    if [ -z "$pid" ]; then
        echo "check_isolated: the module never hung (no pid file)" >&2; fail=1
    elif kill -0 "$pid" 2>/dev/null; then
        echo "check_isolated: the hung module's process $pid is still there" >&2; fail=1
        kill -9 "$pid"
    fi
fi
[ "$fail" = 0 ] || { printf '%s\n' "$out" >&2; exit 1; }
echo "check_isolated: $fault reported: $what $where"
