#!/bin/sh
# The book's browser test (ctest label "browser"): quick runs of lessons 05, 06 and 11 for the book to show,
# the book built from them into BUILD/book_test/, then headless Chromium through browser_test.mjs.
#   browser_test.sh REPO_ROOT BUILD_DIR
set -eu
root="$1" build="$2"
command -v chromium >/dev/null || { echo "chromium is missing: ./ladder setup --browser installs it" >&2; exit 1; }
command -v node >/dev/null || { echo "node is missing: ./ladder setup --browser installs it" >&2; exit 1; }
# Names an attacker could give: a runs folder whose name would close an attribute and add a
# handler (the book shows the run of lesson 06 in it, by its path), and a comparison whose folder
# name and text carry HTML and script. The page test below finds that none of it runs.
top="$(mktemp -d)"
trap 'rm -rf "$top"' EXIT
runs="$top/runs\" onerror=\"window.pwned='folder'\" x=\""
mkdir -p "$runs"
# Lessons 05 and 11 too, whose pages' layout the test checks with their run's box. The three run
# side by side, one thread each: this test runs alone.
"$build/lessons/lesson_06_gated_rnn" --quick --threads 1 --out "$runs/06_gated_rnn" >/dev/null & lesson06=$!
"$build/lessons/lesson_05_rnn" --quick --threads 1 --out "$runs/05_rnn" >/dev/null & lesson05=$!
"$build/lessons/lesson_11_gpt" --quick --threads 1 --out "$runs/11_gpt" >/dev/null
wait "$lesson06"
wait "$lesson05"
comparison="$runs/compare_\$1 <img src=x onerror=window.pwned=1>"
mkdir -p "$comparison"
cp "$runs/06_gated_rnn/perplexity.png" "$comparison/"
printf '# Lesson 06: <script>window.pwned="title"</script>\n\n<img src=x onerror="window.pwned=2">\n\n![perplexity](perplexity.png)\n' \
  > "$comparison/comparison.md"
rm -rf "$build/book_test"
"$build/tools/book/ladder_book" --root "$root" --lessons "$build/lessons" --runs "$runs" --out "$build/book_test"
node "$root/tests/book/browser_test.mjs" "$build/book_test" "$build" "$root"
