// Notes that cannot drift from the code: every path, name and flag in backticks in docs/*.md
// and README.md exists in the code, and the ```cpp blocks compile against the library headers.
// The rules live in docs/rules.cpp; docs/architecture.md (Tests) states them for note writers.
#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "docs/markdown.h"
#include "docs/next_pointers.h"
#include "docs/rules.h"
#include "docs/snippets.h"
#include "markers.h"
#include "docs/source_index.h"
#include "lessons/lesson_runner.h"

namespace fs = std::filesystem;
using namespace ladder::docs;
using ladder::testing::Ran;
using ladder::testing::run_command;

namespace {

const fs::path kRoot = LADDER_SOURCE_DIR;

std::string read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), "cannot read ", path.string());
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

const SourceIndex& index() {
  static const SourceIndex index(kRoot, {"tests/docs"});  // the test's own words must not vouch for a note
  return index;
}

const Interface& interface() {
  static const Interface interface = read_interface(kRoot, LADDER_LESSON_DIR);
  return interface;
}

std::vector<Note> notes() {
  std::vector<fs::path> paths = {kRoot / "README.md"};
  for (const auto& entry : fs::directory_iterator(kRoot / "docs"))
    if (entry.path().extension() == ".md") paths.push_back(entry.path());
  std::sort(paths.begin(), paths.end());
  std::vector<Note> out;
  for (const fs::path& path : paths) out.push_back(parse_note(fs::relative(path, kRoot).generic_string(), read(path)));
  return out;
}

// Compiles `unit` with -fsyntax-only against the library's include folders.
Ran compile(const std::string& unit, const std::string& tag) {
  const fs::path source = fs::temp_directory_path() / ("ladder_docs_" + std::to_string(getpid()) + "_" + tag + ".cpp");
  std::ofstream(source) << unit;
  const Ran ran = run_command(std::string(LADDER_CXX) + " @" + LADDER_SNIPPET_FLAGS + " -fsyntax-only -x c++ " + source.string());
  fs::remove(source);
  return ran;
}

struct RuleCase {
  const char* note;     // the path the made-up note pretends to have
  const char* text;     // its Markdown
  const char* problem;  // a fragment of the one problem expected, or nullptr when none is
};

const RuleCase kRuleCases[] = {
    // uniform_init was renamed RecurrentModule::register_layer
    {"docs/05_rnn.md", "All four start uniform (`uniform_init`).\n", "not found in the sources"},
    {"docs/05_rnn.md", "All four start uniform (`RecurrentModule::register_layer`, `nn/recurrent.cpp`).\n", nullptr},
    {"docs/05_rnn.md", "All four start uniform (`RNNCell::register_layer`).\n", "declared only as"},
    // a qualified name must be declared or used in a file its sentence cites
    {"docs/00_autograd.md", "`io::save_module` writes it (`io/safetensors.cpp`: a header).\n", "declared in io/checkpoint"},
    {"docs/00_autograd.md", "`io::save_module` writes it (`io/checkpoint.cpp`: a header).\n", nullptr},
    {"docs/00_autograd.md", "See `io/safetensors.h:io::save_module`.\n", "declared in io/checkpoint"},
    {"docs/00_autograd.md", "See `io/checkpoint.h:io::save_module` and `core/ops.h:softmax()`.\n", nullptr},
    {"docs/00_autograd.md", "See `core/ops.h:fast_tanh`.\n", "not in the files its sentence cites"},
    // an unqualified name must appear in a cited file or in the note's lesson
    {"docs/architecture.md", "`stream_nll` (`core/ops/nn.cpp`) reads the stream.\n", "not in the files its sentence cites"},
    {"docs/architecture.md", "`stream_nll` (`models/char_rnn.h`) reads the stream.\n", nullptr},
    {"docs/05_rnn.md", "`train_lm` calls `CharRNN::loss` (`models/char_rnn.cpp`).\n", nullptr},
    {"docs/04_cnn.md", "`train_lm` calls `CharRNN::loss` (`models/char_rnn.cpp`).\n", "lessons/04_cnn.cpp"},
    // flags belong to the note's lesson, or to the lesson a ./ladder command runs
    {"docs/05_rnn.md", "Run `--pad-words 3`.\n", "not a flag of lesson 05"},
    {"docs/01_ngram.md", "Run `--block 8`.\n", "not a flag of lesson 01"},
    {"docs/05_rnn.md", "Run `--block 8 --clip 0`.\n", nullptr},
    {"docs/02_regression.md", "```\n./ladder lesson 05 --order 3    # a comment\n```\n", "not a flag of lesson 05"},
    {"README.md", "Run `./ladder lesson 42`.\n", "there is no lesson 42"},
    {"README.md", "Run `./ladder bench gpu`.\n", "not a benchmark"},
    {"README.md", "Run `./ladder deploy`.\n", "not a command of ./ladder"},
    // paths, the files a lesson writes, and the names inside code
    {"README.md", "See `core/opps.h`.\n", "no such file"},
    {"README.md", "Run `lesson_05_rnn`.\n", nullptr},
    {"README.md", "Run `lesson_05_rnm`.\n", "not found in the sources"},
    {"docs/00_autograd.md", "It writes `weights.png`.\n", "is a string in lessons/00_autograd.cpp"},
    {"docs/00_autograd.md", "It writes `fit.png` and `graph.dot` into `runs/00_autograd/`; see `bench/pytorch/*.py`.\n", nullptr},
    {"docs/01_ngram.md", "It reads `/usr/share/dict/words`.\n", "no source file names this path"},
    {"docs/03_mlp.md", "Call `nn::mlp({2, 3}, {.activaton = nn::ActivationKind::relu})`.\n", "`activaton` is not found"},
    {"docs/03_mlp.md", "Call `nn::mlp({2, 3}, {.activation = nn::ActivationKind::swish})`.\n", "`nn::ActivationKind::swish` is not declared"},
};

std::string describe(const std::vector<Problem>& problems) {
  std::string text;
  for (const Problem& p : problems) text += p.where + ": `" + p.span + "`: " + p.why + "\n";
  return text;
}

}  // namespace

TEST_CASE("every path, name, flag and ./ladder command in backticks in docs/*.md and README.md exists") {
  DocsChecker checker(index(), interface(), allowed_spans());
  size_t spans = 0;
  for (const Note& note : notes()) {
    spans += note.spans.size();
    for (const Problem& p : checker.check(note)) FAIL_CHECK(p.where << ": `" << p.span << "`: " << p.why);
  }
  CHECK(spans > 500);  // the notes were read
  for (const std::string& unused : checker.unused_allowances())
    FAIL_CHECK("allow-list entry `" << unused << "` (" << allowed_spans().at(unused) << ") matches no span: remove it");
}

// The lines of a file of the repository.
std::vector<std::string> lines_of(const std::string& file) {
  std::istringstream in(read(kRoot / file));
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST_CASE("every code pointer of the notes opens a line of the sources, and a name the line that declares or holds it") {
  DocsChecker checker(index(), interface(), allowed_spans());
  size_t names = 0;
  for (const Note& note : notes()) {
    std::vector<Pointer> pointers;
    checker.check(note, &pointers);
    for (const Pointer& p : pointers) {
      INFO(note.path, ":", p.span.line, ": `", p.span.text, "` -> ", p.target.file, ":", p.target.line);
      REQUIRE(fs::exists(kRoot / p.target.file));
      const std::vector<std::string> lines = lines_of(p.target.file);
      REQUIRE((p.target.line >= 1 && p.target.line <= static_cast<int>(std::max<size_t>(1, lines.size()))));
      std::string name = p.span.text.substr(p.span.text.rfind(':') == std::string::npos ? 0 : p.span.text.rfind(':') + 1);
      if (name.ends_with("()")) name.resize(name.size() - 2);
      const bool plain_name = std::all_of(name.begin(), name.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
      if (!plain_name || name.empty() || name.starts_with("lesson_") || p.target.file.ends_with(".md")) continue;
      ++names;
      CHECK(lines[static_cast<size_t>(p.target.line - 1)].find(name) != std::string::npos);
    }
  }
  CHECK(names > 300);
}

TEST_CASE("a pointer opens the definition its sentence cites, else the name's one definition") {
  DocsChecker checker(index(), interface(), {});
  const auto target = [&](const char* note, const char* text) {
    std::vector<Pointer> pointers;
    CHECK(checker.check(parse_note(note, text), &pointers).empty());
    REQUIRE(!pointers.empty());
    return pointers.front().target;
  };
  const Target gates = target("docs/06_gated_rnn.md", "`LSTMCell::gates` (`nn/recurrent.cpp`) computes them.\n");
  CHECK(gates.file == "nn/recurrent.cpp");
  CHECK(lines_of(gates.file)[static_cast<size_t>(gates.line - 1)].find("LSTMCell::gates(") != std::string::npos);
  const Target declared = target("docs/06_gated_rnn.md", "`LSTMCell::gates` (`nn/recurrent.h`) computes them.\n");
  CHECK(declared.file == "nn/recurrent.h");
  const Target train_lm = target("docs/05_rnn.md", "The loop is `train_lm`.\n");
  CHECK(train_lm.file == "lessons/05_rnn.cpp");
  const Target path = target("README.md", "See `core/ops.h`.\n");
  CHECK((path.file == "core/ops.h" && path.line == 1));
  const Target flag = target("docs/05_rnn.md", "Run `--clip 0`.\n");
  CHECK(lines_of(flag.file)[static_cast<size_t>(flag.line - 1)].find("--clip") != std::string::npos);
}

TEST_CASE("a flag opens where it is declared: a common flag in the harness, a lesson's own flag where its lesson declares it") {
  DocsChecker checker(index(), interface(), {});
  const auto opens = [&](const char* note, const std::string& text) {
    INFO(note, ": ", text);
    std::vector<Pointer> pointers;
    CHECK(checker.check(parse_note(note, text + "\n"), &pointers).empty());
    REQUIRE(!pointers.empty());
    const Target t = pointers.front().target;
    return t.file + ": " + lines_of(t.file)[static_cast<size_t>(t.line - 1)];
  };
  const auto declares = [](const std::string& opened, const std::string& file, const std::string& flag) {
    INFO(opened);
    CHECK(opened.starts_with(file + ": "));
    CHECK(opened.find("(\"" + flag) != std::string::npos);  // option("--steps", ...), add_flag("--lines,!--stream", ...)
  };
  // Before: --steps, --lr and --batch opened a list of flags that --load refuses in lessons/11_gpt.cpp,
  // --threads on note 05 a line of lessons/16_data_parallel.cpp.
  for (const char* flag : {"--steps", "--lr", "--batch", "--threads"}) declares(opens("docs/05_rnn.md", "Run `" + std::string(flag) + " 2`."), "harness/cli.cpp", flag);
  declares(opens("docs/11_gpt.md", "Run `--lr 0.01`."), "harness/cli.cpp", "--lr");
  declares(opens("docs/05_rnn.md", "Run `--stream`."), "harness/cli.cpp", "--lines");
  declares(opens("docs/05_rnn.md", "Run `--hidden 8`."), "lessons/05_rnn.cpp", "--hidden");
  declares(opens("docs/16_data_parallel.md", "Run `--embd 32`."), "lessons/16_data_parallel.cpp", "--embd");
  declares(opens("docs/12_linear_attention.md", "Run `--embd 32`."), "lessons/attention_kinds/gpt_comparison.cpp", "--embd");
  declares(opens("docs/07_seq2seq.md", "Run `--data pairs.tsv`."), "lessons/translation/task_flags.cpp", "--data");
  declares(opens("docs/11_gpt.md", "Run `--data text.txt`."), "harness/cli.cpp", "--data");
  declares(opens("docs/14_transformer_vq.md", "Run `--codes 8`."), "lessons/14_transformer_vq.cpp", "--codes");
  declares(opens("README.md", "Run `--threads 1`."), "harness/cli.cpp", "--threads");
}

TEST_CASE("every flag of every lesson's --help opens a line that declares it, in a file the lesson is built from") {
  DocsChecker checker(index(), interface(), {});
  size_t flags = 0;
  for (const auto& [lesson, listed] : interface().lesson_flags) {
    const std::string note = "docs/" + lesson + "_any.md";
    for (const std::string& flag : listed) {
      std::vector<Pointer> pointers;
      const std::vector<Problem> problems = checker.check(parse_note(note, "`" + flag + "`\n"), &pointers);
      INFO("lesson ", lesson, ": ", flag, "\n", describe(problems));
      CHECK(problems.empty());
      if (pointers.empty()) continue;
      const Target& t = pointers.front().target;
      const std::string line = lines_of(t.file)[static_cast<size_t>(t.line - 1)];
      // option("--steps", ...), add_flag("--lines,!--stream", ...), or a kind's setting, .flag = kBlockFlag
      const bool declares = line.find(flag) != std::string::npos || line.find(".flag = k") != std::string::npos;
      CHECK_MESSAGE(declares, t.file, ":", t.line, ": ", line);
      ++flags;
    }
  }
  CHECK(flags > 300);
}

TEST_CASE("the rules catch a renamed function, a wrong file, an unknown flag and a missing path") {
  DocsChecker checker(index(), interface(), {});
  for (const RuleCase& rule : kRuleCases) {
    const std::vector<Problem> found = checker.check(parse_note(rule.note, rule.text));
    INFO(rule.note, ": ", rule.text, "problems:\n", describe(found));
    if (!rule.problem) {
      CHECK(found.empty());
    } else {
      CHECK(found.size() == 1);
      CHECK((!found.empty() && found[0].why.find(rule.problem) != std::string::npos));
    }
  }
}

TEST_CASE("the ```cpp blocks of the notes compile against the library headers") {
  std::vector<std::string> headers;
  for (const std::string& file : index().files()) {
    const std::string top = file.substr(0, file.find('/'));
    const bool library = top == "core" || top == "nn" || top == "optim" || top == "io" || top == "data" || top == "models";
    if (library && file.ends_with(".h")) headers.push_back(file);
  }
  const std::string unit = snippet_unit(notes(), headers);
  REQUIRE(unit.find("#line") != std::string::npos);  // the notes have cpp blocks
  const Ran ran = compile(unit, "notes");
  CHECK_MESSAGE(ran.status == 0, "```cpp blocks do not compile (mark a block that is not meant to, such as a shape sketch, ```text):\n", ran.output);
}

TEST_CASE("a cpp block that does not compile fails, with the note's line in the message") {
  const Note note = parse_note("docs/00_autograd.md", "Text.\n\n```cpp\nauto model = nn::mlp({1, 32, 1}, tanh);\n```\n");
  const Ran ran = compile(snippet_unit({note}, {"nn/sequential.h", "core/ops.h"}), "broken");
  INFO(ran.output);
  CHECK(ran.status != 0);
  CHECK(ran.output.find("docs/00_autograd.md:4:") != std::string::npos);
}

TEST_CASE("blocks that define functions or types go to namespace scope; statements into a function") {
  const auto first = [](const std::string& text) { return parse_note("docs/x.md", "```cpp\n" + text + "```\n").fences.at(0); };
  CHECK(at_namespace_scope(first("Tensor tanh(const Tensor& x) {  // d/dx = 1 - y^2\n  return x;\n}\n")));
  CHECK(at_namespace_scope(first("// a comment first\nstruct Options {\n  int n = 1;\n};\n")));
  CHECK(at_namespace_scope(first("template <class F>\nvoid apply(F f) { f(); }\n")));
  CHECK_FALSE(at_namespace_scope(first("auto model = nn::mlp({1, 32, 1});\nmodel->eval();\n")));
  CHECK_FALSE(at_namespace_scope(first("for (int i = 0; i < 3; ++i) {\n}\n")));
}

TEST_CASE("the Markdown reader finds spans over line breaks, escaped pipes, sentences and indented fences") {
  const Note note = parse_note("docs/x.md",
                               "A `first` span. And `a\nlong` one, then ``a ` tick``.\n\n"
                               "| `cell` | P(w \\| h) |\n"
                               "- item `one`\n  ```cpp\n  int x = 1;\n  ```\n");
  REQUIRE(note.spans.size() == 5);
  CHECK(note.spans[0].text == "first");
  CHECK(note.spans[1].text == "a long");
  CHECK(note.spans[1].line == 1);
  CHECK(note.spans[2].text == "a ` tick");
  CHECK(note.spans[0].sentence != note.spans[1].sentence);
  CHECK(note.spans[1].sentence == note.spans[2].sentence);
  CHECK(note.spans[3].text == "cell");
  CHECK(note.spans[4].line == 5);
  REQUIRE(note.fences.size() == 1);
  CHECK(note.fences[0].info == "cpp");
  CHECK(note.fences[0].first_line == 7);
  CHECK(note.fences[0].lines == std::vector<std::string>{"int x = 1;"});
}

TEST_CASE("every lesson's next: line names a section of its note by the number and title the note gives it") {
  size_t lessons = 0;
  for (const auto& entry : fs::directory_iterator(kRoot / "lessons")) {
    const std::string file = fs::relative(entry.path(), kRoot).generic_string();
    if (entry.path().extension() != ".cpp") continue;
    const std::vector<NextPointer> pointers = next_pointers(file, read(entry.path()));
    if (pointers.empty()) continue;
    ++lessons;
    for (const NextPointer& p : pointers) {
      if (!fs::exists(kRoot / p.note)) {
        FAIL_CHECK(p.where << ": " << p.note << " does not exist");
        continue;
      }
      for (const Problem& problem : check_next_pointer(p, read(kRoot / p.note))) FAIL_CHECK(problem.where << ": `" << problem.span << "`: " << problem.why);
    }
  }
  CHECK(lessons == 18);  // every lesson, 00 to 17, points somewhere
}

TEST_CASE("a next: line with a wrong section number or title is caught") {
  const std::string note = "# 10\n\n## 1. Attention\n\n## 7. Reading the attention maps (part 4)\n\n## Exercises\n";
  const auto problems = [&](const std::string& source) {
    const std::vector<NextPointer> pointers = next_pointers("lessons/10_transformer.cpp", source);
    REQUIRE(pointers.size() == 1);
    std::string why;
    for (const Problem& p : check_next_pointer(pointers[0], note)) why += p.why;
    return why;
  };
  CHECK(problems(R"src(run.finish(m, n, "docs/10_transformer.md, section 7 (Reading the attention maps); then "
                                  "lesson 11");)src") == "");
  CHECK(problems(R"src(f("docs/10_transformer.md, section 4 (Reading the attention maps); then lesson 11");)src").find("no section 4") != std::string::npos);
  CHECK(problems(R"src(f("docs/10_transformer.md, section 1 (Transformers are RNNs)");)src").find("is \"Attention\"") != std::string::npos);
  CHECK(problems(R"src(f("docs/10_transformer.md, \"Exercises\"; then");)src") == "");
  CHECK(problems(R"src(f("docs/10_transformer.md, \"Exorcises\"; then");)src").find("no section \"Exorcises\"") != std::string::npos);
}

TEST_CASE("every figure marker of the lesson notes follows its figure and names a key (docs/architecture.md)") {
  size_t markers = 0;
  for (const Note& note : notes()) {
    const std::string stem = fs::path(note.path).stem().string();
    if (!note.path.starts_with("docs/") || stem.size() < 3 || !std::isdigit(static_cast<unsigned char>(stem[0]))) continue;
    const ladder::check_notes::Markers found = ladder::check_notes::read_markers(note.path, read(kRoot / note.path));
    markers += found.found.size();
    for (const std::string& problem : found.problems) FAIL_CHECK(problem);
  }
  CHECK(markers > 50);  // the notes carry markers
}

TEST_CASE("./ladder's usage text gives its commands and benchmark names") {
  Interface i;
  read_ladder_usage("usage() {\n  cat <<'TEXT'\nusage: ./ladder <command>\n\n"
                    "  setup [--bench]     install packages\n                      --bench adds PyTorch\n"
                    "  bench [name]        run benchmarks (names: core, cnn; default: all)\n"
                    "                      busy: lessons beside busy processes\n"
                    "  clean               remove the build folders\nTEXT\n}\n",
                    i);
  CHECK(i.ladder_commands == std::set<std::string>{"setup", "bench", "clean"});
  CHECK(i.bench_names == std::set<std::string>{"core", "cnn", "busy"});
}
