#!/bin/sh
# Runs a test program (its path and arguments are this script's) up to three
# times while it exits 75: that run was void, its measurement impossible for
# a reason outside the program under test (the test prints which, as
# "VOID: ..."); any other exit status (0, 77 for a skip, a failure) is
# final. Three void runs in a row fail.
for run in 1 2 3; do
  "$@"
  rc=$?
  [ "$rc" -eq 75 ] || exit "$rc"
  echo "retry_void: run $run was void"
done
echo "retry_void: 3 void runs in a row: failing"
exit 1
