#!/bin/sh
# The book's browser test (ctest label "browser"): a quick run of lesson 06 for the book to show,
# the book built from it into BUILD/book_test/, then headless Chromium through browser_test.mjs.
#   browser_test.sh REPO_ROOT BUILD_DIR
set -eu
root="$1" build="$2"
command -v chromium >/dev/null || { echo "chromium is missing: ./ladder setup --browser installs it" >&2; exit 1; }
command -v node >/dev/null || { echo "node is missing: ./ladder setup --browser installs it" >&2; exit 1; }
runs="$(mktemp -d)"
trap 'rm -rf "$runs"' EXIT
"$build/lessons/lesson_06_gated_rnn" --quick --threads 1 --out "$runs/06_gated_rnn" >/dev/null
rm -rf "$build/book_test"
"$build/tools/book/ladder_book" --root "$root" --lessons "$build/lessons" --runs "$runs" --out "$build/book_test"
node "$root/tests/book/browser_test.mjs" "$build/book_test" "$build" "$root"
