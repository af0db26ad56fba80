#!/usr/bin/env bash
# Fails when a source file includes across the layering of DESIGN.md §2:
#   core/ never includes curses, tui/ or views/;
#   the tui/ toolkit never includes core/ or views/ (only tui/main.cpp and tui/cli/ wire the program);
#   views/ never includes curses (only the toolkit's curses binding does);
#   nothing but tui/main.cpp, tui/cli/ itself and the tests includes tui/cli/ (the program's
#   subcommands sit on top: core, views and the toolkit never depend on them).
set -u
root=${1:?usage: check_layering.sh REPO_ROOT}
cd "$root" || exit 2
status=0
report() {
  echo "layering violation: $1"
  status=1
}
while IFS= read -r hit; do report "$hit (core must stay UI-free)"; done < <(
  grep -rnE '#include *[<"](n?curses|ncursesw/|tui/|views/)' core 2>/dev/null)
while IFS= read -r hit; do report "$hit (the toolkit must not know core or views)"; done < <(
  grep -rnE '#include *[<"](core|views)/' tui 2>/dev/null | grep -vE '^tui/(main\.cpp|cli/)')
while IFS= read -r hit; do report "$hit (views draw into a Canvas, never into curses)"; done < <(
  grep -rnE '#include *[<"](n?curses|ncursesw/)' views 2>/dev/null)
while IFS= read -r hit; do report "$hit (only the program and its tests use the subcommands)"; done < <(
  grep -rnE '#include *[<"]tui/cli/' core views tui 2>/dev/null | grep -vE '^tui/(main\.cpp|cli/)')
files=$(find core tui views -name '*.h' -o -name '*.cpp' | wc -l)
[ "$status" -eq 0 ] && echo "layering: $files files checked, no violation"
exit $status
