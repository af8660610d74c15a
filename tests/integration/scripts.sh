#!/bin/sh
# scripts.sh — the project's shell scripts end with an explicit status.  A
# suite's last line is `done_testing` (its exit says whether every test
# passed); any other script's last line is `exit …` or one plain command,
# never an `A && B` (or `A || B`) list, a closing `fi`/`done`/`}` or `esac`,
# whose status is whatever the last test inside it happened to return (a
# suite ending in `[ -z "$had_user" ] && userdel vigil` failed after every
# check had passed, wherever the user existed).
cd "$(dirname "$0")/../.." || exit 2
. tests/integration/lib.sh

# the last line that is neither blank nor a comment
last_line() { grep -v '^[[:space:]]*\(#.*\)\{0,1\}$' "$1" | tail -1 | sed 's/^[[:space:]]*//; s/[[:space:]]*$//'; }

bad=""
for f in tests/integration/*.sh; do
    [ "$f" = tests/integration/lib.sh ] && continue
    [ "$(last_line "$f")" = done_testing ] || bad="$bad $f"
done
is "every integration suite ends with done_testing" "$bad" ""

bad=""
for f in tests/run tests/deps.sh .ci/run fuzz/run scripts/*; do
    [ -f "$f" ] || continue
    l=$(last_line "$f")
    case "$l" in
    exit | "exit "*) ;;
    *"&&"* | *"||"* | fi | done | "}" | esac | ";;") bad="$bad $f($l)" ;;
    esac
done
is "every other script ends with exit or one plain command" "$bad" ""

# done_testing itself: exit 0 when every test passed, 1 when one failed
is "done_testing after passing tests: exit 0" "$(sh -c '. tests/integration/lib.sh; ok a; false; done_testing' >/dev/null; echo $?)" 0
is "done_testing after a failed test: exit 1" "$(sh -c '. tests/integration/lib.sh; nok a; ok b; done_testing' >/dev/null; echo $?)" 1
done_testing
