#include "docs/rules.h"

#include <fnmatch.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <regex>
#include <sstream>

namespace fs = std::filesystem;

namespace ladder::docs {
namespace {

const std::set<std::string> kFileExtensions = {"h", "cpp", "md", "py", "json", "png", "svg", "csv", "safetensors", "dot", "txt", "sh"};
// Folders that runs and builds create: named in the notes, never in the repository.
const std::vector<std::string> kOutputFolders = {"runs/", "build/"};

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

std::string extension(const std::string& path) {
  const size_t slash = path.rfind('/'), dot = path.rfind('.');
  return dot == std::string::npos || (slash != std::string::npos && dot < slash) ? "" : path.substr(dot + 1);
}

bool path_like(const std::string& s) {
  static const std::regex chars(R"([A-Za-z0-9_./*~-]+)");
  if (!std::regex_match(s, chars)) return false;
  if (s[0] == '.' && !starts_with(s, "./") && !starts_with(s, "../")) return false;  // ".cpp": an extension
  return s.find('/') != std::string::npos || kFileExtensions.count(extension(s));
}

bool identifier_like(const std::string& s) {
  static const std::regex name(R"(~?[A-Za-z_]\w*(::~?[A-Za-z_]\w*)*(\(\))?)");
  return std::regex_match(s, name);
}

std::vector<std::string> split(const std::string& s, const std::string& by) {
  std::vector<std::string> parts;
  size_t begin = 0;
  for (size_t at = s.find(by); at != std::string::npos; at = s.find(by, begin)) {
    parts.push_back(s.substr(begin, at - begin));
    begin = at + by.size();
  }
  parts.push_back(s.substr(begin));
  return parts;
}

std::string join(const std::set<std::string>& items, const std::string& by) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : by) + item;
  return out;
}

std::string scope_str(const std::vector<std::string>& scope) {
  std::string out;
  for (const std::string& s : scope) out += s + "::";
  return out;
}

std::string lesson_of(const std::string& note_path) {
  const std::string base = fs::path(note_path).filename().string();
  const bool numbered = base.size() > 3 && std::isdigit(static_cast<unsigned char>(base[0])) &&
                        std::isdigit(static_cast<unsigned char>(base[1])) && base[2] == '_';
  return numbered ? base.substr(0, 2) : "";
}

// The declaration's scope ends with the qualifiers the note wrote (`io::` for ladder::io).
bool scope_ends_with(const std::vector<std::string>& scope, const std::vector<std::string>& qualifiers) {
  return scope.size() >= qualifiers.size() && std::equal(qualifiers.rbegin(), qualifiers.rend(), scope.rbegin());
}

// "core/ops/nn.cpp" -> also "core/ops/nn.h": a name cited with either half of a pair is in the pair.
std::string sibling(const std::string& file) {
  const std::string ext = extension(file);
  if (ext == "cpp") return file.substr(0, file.size() - 3) + "h";
  if (ext == "h") return file.substr(0, file.size() - 1) + "cpp";
  return "";
}

// The span without its string literals ("tanh" in unary_op("tanh", x, f, df) names no code).
std::string without_literals(const std::string& s) {
  static const std::regex literal(R"("([^"\\]|\\.)*")");
  return std::regex_replace(s, literal, "\"\"");
}

// The files a lesson is built from, nearest first: its source, then what it includes, include by
// include, each header followed by its .cpp (a breadth-first walk).
std::vector<std::string> built_from(const SourceIndex& index, const std::string& source) {
  std::vector<std::string> order = {source};
  std::set<std::string> seen = {source};
  const auto indexed = [&](const std::string& file) { return std::binary_search(index.files().begin(), index.files().end(), file); };
  for (size_t next = 0; next < order.size(); ++next)
    for (const std::string& included : index.includes(order[next]))
      for (const std::string& file : {included, sibling(included)})
        if (!file.empty() && indexed(file) && seen.insert(file).second) order.push_back(file);
  return order;
}

}  // namespace

void read_ladder_usage(const std::string& script, Interface& interface) {
  const size_t begin = script.find("cat <<'TEXT'"), end = script.find("\nTEXT", begin);
  if (begin == std::string::npos) return;
  std::istringstream usage(script.substr(begin, end - begin));
  // "  bench [name]   ... (names: core, cnn, rnn; ...)", and continuation lines "   busy: ..."
  static const std::regex command(R"(^  ([a-z][a-z-]*[a-z])\b.*)"), names(R"(names: ([^;)]*))"), named(R"(^   +([a-z]+):.*)");
  std::string line, entry;
  std::smatch m;
  while (std::getline(usage, line)) {
    if (std::regex_match(line, m, command)) interface.ladder_commands.insert(entry = m[1]);
    if (entry != "bench") continue;
    if (std::regex_search(line, m, names))
      for (std::string name : split(m[1], ",")) interface.bench_names.insert(name.substr(name.find_first_not_of(' ')));
    if (std::regex_match(line, m, named)) interface.bench_names.insert(m[1]);
  }
}

Interface read_interface(const fs::path& root, const std::string& lesson_dir) {
  Interface i;
  static const std::regex lesson(R"(\d\d_\w+)"), flag(R"(--[A-Za-z][\w-]*)");
  for (const auto& entry : fs::directory_iterator(root / "lessons")) {
    const std::string stem = entry.path().stem().string();
    if (entry.path().extension() != ".cpp" || !std::regex_match(stem, lesson)) continue;
    const std::string number = stem.substr(0, 2);
    i.lesson_sources[number] = "lessons/" + stem + ".cpp";
    const std::string command = lesson_dir + "/lesson_" + stem + " --help 2>&1";
    FILE* pipe = popen(command.c_str(), "r");
    if (!pipe) throw std::runtime_error("cannot run " + command);
    std::string help;
    char buffer[4096];
    while (const size_t n = fread(buffer, 1, sizeof buffer, pipe)) help.append(buffer, n);
    if (pclose(pipe) != 0) throw std::runtime_error("lesson_" + stem + " --help failed (is the lesson built?): " + help);
    for (auto it = std::sregex_iterator(help.begin(), help.end(), flag); it != std::sregex_iterator(); ++it)
      i.lesson_flags[number].insert(it->str());
    i.lesson_help[number] = help;
  }
  std::ifstream script(root / "ladder");
  std::stringstream text;
  text << script.rdbuf();
  read_ladder_usage(text.str(), i);
  if (i.ladder_commands.empty()) throw std::runtime_error("no commands found in the usage text (cat <<'TEXT' ... TEXT) of ./ladder");
  return i;
}

const std::map<std::string, std::string>& allowed_spans() {
  static const std::map<std::string, std::string> allowed = {
      {"key_padding_mask", "PyTorch's name for its padding mask"},
      {"is_causal", "PyTorch's name for its causal flag"},
      {"valid_lens", "d2l's name for its valid lengths"},
      {"GFDL", "a file of /usr/share/common-licenses"},
      {"GPL", "a file of /usr/share/common-licenses"},
      {"LGPL", "a file of /usr/share/common-licenses"},
      {"libdnnl2", "the Debian package of oneDNN, which PyTorch uses"},
      {"tanhf", "libm's tanh for float, which fast_tanh replaced"},
      {"__builtin_expect_with_probability", "a GCC builtin that was tried and did not help"},
      {"weight_hh_l0_reverse", "a recurrent parameter name, built at run time"},
      {"bias_hh_l1_reverse", "a recurrent parameter name, built at run time"},
  };
  return allowed;
}

DocsChecker::DocsChecker(const SourceIndex& index, Interface interface, std::map<std::string, std::string> allowed)
    : index_(index), interface_(std::move(interface)), allowed_(std::move(allowed)) {
  for (const auto& [lesson, source] : interface_.lesson_sources) lesson_files_[lesson] = built_from(index_, source);
}

std::vector<std::string> DocsChecker::unused_allowances() const {
  std::vector<std::string> unused;
  for (const auto& [span, reason] : allowed_)
    if (!used_allowances_.count(span)) unused.push_back(span);
  return unused;
}

std::optional<Declaration> unique_definition(const SourceIndex& index, const std::string& name) {
  const std::vector<Declaration>& all = index.declarations(name);
  if (all.empty()) return std::nullopt;
  const auto stem = [](const std::string& file) { return file.substr(0, file.rfind('.')); };
  std::optional<Declaration> chosen;
  for (const Declaration& d : all) {
    if (stem(d.file) != stem(all[0].file)) return std::nullopt;
    if (!chosen || (extension(d.file) == "cpp" && extension(chosen->file) != "cpp")) chosen = d;
  }
  return chosen;
}

std::vector<Problem> DocsChecker::check(const Note& note, std::vector<Pointer>* pointers) {
  std::vector<Problem> problems;
  std::string lesson = lesson_of(note.path);
  if (!interface_.lesson_sources.count(lesson)) lesson.clear();  // a note written before its lesson
  for (const CodeSpan& span : note.spans) {
    Context c{lesson, files_cited(note, span.sentence), note.path + ":" + std::to_string(span.line), span.text, problems};
    for (const CodeSpan& other : note.spans)
      if (other.sentence == span.sentence && c.cited_files.count(other.text)) c.named.insert(other.text);
    check_span(c);
    if (pointers && c.target) pointers->push_back({span, *c.target});
  }
  for (const Fence& fence : note.fences) {
    if (fence.info == "cpp") continue;
    for (size_t i = 0; i < fence.lines.size(); ++i) {
      std::string line = fence.lines[i].substr(0, fence.lines[i].find('#'));
      line = line.substr(0, line.find_last_not_of(' ') + 1);
      if (line != "./ladder" && !starts_with(line, "./ladder ")) continue;
      Context c{lesson, {}, note.path + ":" + std::to_string(fence.first_line + static_cast<int>(i)), line, problems};
      check_command(c, line);
    }
  }
  return problems;
}

void DocsChecker::check_span(Context& c) {
  const std::string& s = c.span;
  if (s.empty()) return;
  if (allowed_.count(s)) {
    used_allowances_.insert(s);
  } else if (s == "./ladder" || starts_with(s, "./ladder ")) {
    check_command(c, s);
  } else if (starts_with(s, "--")) {
    check_flags(c, s);
  } else if (s[0] == '-' && s.size() > 1 && std::isalpha(static_cast<unsigned char>(s[1]))) {
    // a compiler option (-O3): not ladder's
  } else if (starts_with(s, "std::") || starts_with(s, "torch.")) {
    // the C++ standard library, PyTorch
  } else if (std::smatch m; std::regex_match(s, m, std::regex(R"(([\w./-]+\.(?:h|cpp)):(~?[A-Za-z_][\w:~]*)(?:\(\))?)"))) {
    check_path(c, m[1]);  // "io/checkpoint.h:save_module": the name in that file (or its .cpp), not elsewhere
    c.cited_files = {m[1].str(), sibling(m[1])};
    c.named = {m[1].str()};
    c.lesson.clear();
    c.target.reset();  // the name's line, not the file's first
    check_name(c, m[2], true);
  } else if (path_like(s)) {
    check_path(c, s);
  } else if (identifier_like(s)) {
    check_name(c, s.substr(0, s.size() - (s.ends_with("()") ? 2 : 0)), true);
  } else {
    check_expression(c, s);
  }
}

void DocsChecker::check_command(Context& c, const std::string& line) {
  std::istringstream words(line);
  std::string program, command, argument;
  words >> program >> command >> argument;
  if (command.empty()) return;  // the script itself
  if (!interface_.ladder_commands.count(command)) {
    c.problems.push_back({c.where, c.span, "'" + command + "' is not a command of ./ladder (its commands: " + join(interface_.ladder_commands, " ") + ")"});
    return;
  }
  if (command == "bench" && !argument.empty()) {
    for (const std::string& name : split(argument, "|"))
      if (!interface_.bench_names.count(name))
        c.problems.push_back({c.where, c.span, "'" + name + "' is not a benchmark of ./ladder bench (names: " + join(interface_.bench_names, " ") + ")"});
  }
  if (command != "lesson") return;
  if (std::all_of(argument.begin(), argument.end(), [](unsigned char ch) { return std::isdigit(ch); }) && !interface_.lesson_sources.count(argument)) {
    c.problems.push_back({c.where, c.span, "there is no lesson " + argument + " (no lessons/" + argument + "_*.cpp)"});
    return;
  }
  Context lesson_context = c;
  lesson_context.lesson = interface_.lesson_sources.count(argument) ? argument : "";
  check_flags(lesson_context, line);
}

std::set<std::string> DocsChecker::flags_of(const std::string& lesson) const {
  if (!lesson.empty()) return interface_.lesson_flags.at(lesson);
  std::set<std::string> all;
  for (const auto& [number, flags] : interface_.lesson_flags) all.insert(flags.begin(), flags.end());
  return all;
}

void DocsChecker::check_flags(Context& c, const std::string& text) {
  static const std::regex flag(R"(--[A-Za-z][\w-]*)");
  const std::set<std::string> known = flags_of(c.lesson);
  for (auto it = std::sregex_iterator(text.begin(), text.end(), flag); it != std::sregex_iterator(); ++it) {
    if (known.count(it->str())) {
      if (!c.target) c.target = flag_target(c.lesson, it->str());
      if (!c.target)
        c.problems.push_back({c.where, c.span, it->str() + " is a flag, but no option(\"" + it->str() + "\", ...) declares it in the files " +
                                                   (c.lesson.empty() ? "of the sources" : "lesson " + c.lesson + " is built from") +
                                                   ", so the book cannot point at it"});
      continue;
    }
    const std::string whose = c.lesson.empty() ? "of any lesson" : "of lesson " + c.lesson;
    c.problems.push_back({c.where, c.span, it->str() + " is not a flag " + whose + " (--help lists: " + join(known, " ") + ")"});
  }
}

std::optional<Target> DocsChecker::flag_target(const std::string& lesson, const std::string& flag) const {
  const std::string source = lesson.empty() ? "" : interface_.lesson_sources.at(lesson);
  const std::string own_folder = source.empty() ? "" : source.substr(0, source.size() - 4) + "/";
  // Lower is nearer. On a lesson's page: its source, its own folder, its families' folders, the
  // harness, the rest; on another page the harness first, whose flags every lesson has.
  const auto rank = [&](const std::string& file) {
    if (source.empty()) return starts_with(file, "harness/") ? 0 : starts_with(file, "lessons/") ? 1 : 2;
    if (file == source) return 0;
    if (starts_with(file, own_folder)) return 1;
    return starts_with(file, "lessons/") ? 2 : starts_with(file, "harness/") ? 3 : 4;
  };
  std::optional<std::pair<std::pair<int, size_t>, Target>> nearest;
  for (const Declaration& d : index_.flag_declarations(flag)) {
    size_t position = 0;  // in the walk of the lesson's includes
    if (!source.empty()) {
      const std::vector<std::string>& files = lesson_files_.at(lesson);
      position = static_cast<size_t>(std::find(files.begin(), files.end(), d.file) - files.begin());
      if (position == files.size()) continue;  // another lesson's declaration
    }
    const std::pair<int, size_t> key = {rank(d.file), position};
    if (!nearest || key < nearest->first) nearest = {key, Target{d.file, d.line}};
  }
  if (!nearest) return std::nullopt;
  return nearest->second;
}

void DocsChecker::check_path(Context& c, const std::string& path) {
  if (std::any_of(kOutputFolders.begin(), kOutputFolders.end(), [&](const std::string& f) { return starts_with(path, f); })) return;
  if (path[0] == '/') {
    const std::string bare = path.back() == '/' ? path.substr(0, path.size() - 1) : path;
    if (!index_.text_contains(bare)) c.problems.push_back({c.where, c.span, "no source file names this path"});
    return;
  }
  std::string pattern = path;
  if (const size_t at = pattern.find("NN_name"); at != std::string::npos) pattern.replace(at, 7, "[0-9][0-9]_*");
  if (pattern.find_first_of("*[") != std::string::npos) {
    const fs::path dir = index_.root() / fs::path(pattern).parent_path();
    bool found = false;
    if (fs::is_directory(dir))
      for (const auto& entry : fs::directory_iterator(dir))
        found = found || fnmatch(fs::path(pattern).filename().c_str(), entry.path().filename().c_str(), 0) == 0;
    if (!found) c.problems.push_back({c.where, c.span, "no file in the repository matches this pattern"});
    return;
  }
  if (path.find('/') != std::string::npos) {
    const bool dir = path.back() == '/';
    const fs::path full = index_.root() / path;
    if (dir ? !fs::is_directory(full) : !fs::exists(full))
      c.problems.push_back({c.where, c.span, std::string(dir ? "no such folder" : "no such file") + " in the repository"});
    else if (std::find(index_.files().begin(), index_.files().end(), path) != index_.files().end() || extension(path) == "md")
      c.target = Target{path, 1};
    return;
  }
  // A bare file name: a file of the repository, or one that a lesson writes (its name or stem is a string literal there).
  if (index_.has_file_named(path)) return;
  const std::string stem = path.substr(0, path.rfind('.'));
  // A lesson's files are written by its source, its own folder, the folders its family shares and the harness.
  const auto writes_for_lesson = [&](const std::string& file) {
    const std::string& source = interface_.lesson_sources.at(c.lesson);  // lessons/NN_name.cpp
    const std::string own_folder = source.substr(0, source.size() - 4) + "/";
    const bool family_folder = starts_with(file, "lessons/") && !std::isdigit(static_cast<unsigned char>(file[8]));
    return file == source || starts_with(file, own_folder) || family_folder || starts_with(file, "harness/");
  };
  for (const std::string& file : index_.files()) {
    const bool writer = c.lesson.empty() ? starts_with(file, "lessons/") || starts_with(file, "harness/") : writes_for_lesson(file);
    if (writer && (index_.has_literal(file, path) || index_.has_literal(file, stem))) {
      c.target = Target{file, index_.first_line(file, index_.has_literal(file, path) ? path : stem)};
      return;
    }
  }
  const std::string where = c.lesson.empty() ? "any lesson" : interface_.lesson_sources.at(c.lesson) + ", its folder, its family's folders or harness/";
  c.problems.push_back({c.where, c.span, "no file of this name in the repository, and neither \"" + path + "\" nor \"" + stem + "\" is a string in " + where});
}

std::set<std::string> DocsChecker::files_cited(const Note& note, int sentence) const {
  std::set<std::string> files;
  for (const CodeSpan& span : note.spans) {
    if (span.sentence != sentence || !path_like(span.text) || span.text[0] == '/') continue;
    const std::string path = span.text.back() == '/' ? span.text : span.text + "/";
    for (const std::string& file : index_.files()) {
      if (file == span.text || file == sibling(span.text) || starts_with(file, path)) files.insert(file);
    }
  }
  return files;
}

void DocsChecker::check_name(Context& c, const std::string& name, bool cited) {
  const std::vector<std::string> parts = split(name, "::");
  const std::string last = parts.back();
  const std::string bare = last[0] == '~' ? last.substr(1) : last;
  if (parts.size() == 1) {
    static const std::regex executable(R"(lesson_(\d\d)_\w+)");  // lesson_05_rnn, built from lessons/05_rnn.cpp
    std::smatch m;
    if (std::regex_match(bare, m, executable) && interface_.lesson_sources.count(m[1]) &&
        interface_.lesson_sources.at(m[1]) == "lessons/" + bare.substr(7) + ".cpp") {
      c.target = Target{interface_.lesson_sources.at(m[1]), 1};
      return;
    }
    if (!index_.mentions(bare)) {
      c.problems.push_back({c.where, c.span, "`" + name + "` is not found in the sources"});
      return;
    }
    locate_name(c, bare, index_.declarations(bare));
    if (!cited || c.cited_files.empty()) return;
    std::set<std::string> files = c.cited_files;
    if (!c.lesson.empty()) files.insert(interface_.lesson_sources.at(c.lesson));
    if (std::none_of(files.begin(), files.end(), [&](const std::string& f) { return index_.mentions(f, bare); }))
      c.problems.push_back({c.where, c.span, "`" + name + "` is not in the files its sentence cites: " + join(files, ", ")});
    return;
  }
  const std::vector<std::string> qualifiers(parts.begin(), parts.end() - 1);
  std::vector<Declaration> matches;
  std::set<std::string> elsewhere;
  for (const Declaration& d : index_.declarations(last)) {
    if (scope_ends_with(d.scope, qualifiers)) {
      matches.push_back(d);
    } else {
      elsewhere.insert(scope_str(d.scope) + last + " (" + d.file + ")");
    }
  }
  if (matches.empty()) {
    const std::string found = elsewhere.empty() ? "no declaration of `" + last + "` in the sources" : "declared only as " + join(elsewhere, ", ");
    c.problems.push_back({c.where, c.span, "`" + name + "` is not declared: " + found});
    return;
  }
  locate_name(c, bare, matches);
  if (!cited || c.cited_files.empty()) return;
  const auto home = [&](const std::string& f) { return index_.uses(f, bare); };
  if (std::none_of(c.cited_files.begin(), c.cited_files.end(), home)) {
    std::set<std::string> homes;
    for (const Declaration& d : matches) homes.insert(d.file);
    c.problems.push_back({c.where, c.span, "`" + name + "` is declared in " + join(homes, ", ") + ", and neither declared nor used in the files its sentence cites: " + join(c.cited_files, ", ")});
  }
}

// The line a reader opens for `name`: among `matches` (its declarations), one in a file the
// sentence cites or the note's lesson, the .cpp's first (the body); else its one definition;
// else where those files use it; else its first declaration, or its first use anywhere.
void DocsChecker::locate_name(Context& c, const std::string& name, const std::vector<Declaration>& matches) {
  if (c.target) return;
  std::set<std::string> files = c.cited_files;
  if (!c.lesson.empty()) files.insert(interface_.lesson_sources.at(c.lesson));
  const auto best = [](const std::vector<Declaration>& among) {
    const auto cpp = std::find_if(among.begin(), among.end(), [](const Declaration& d) { return extension(d.file) == "cpp"; });
    return cpp != among.end() ? *cpp : among.front();
  };
  std::vector<Declaration> cited;
  std::copy_if(matches.begin(), matches.end(), std::back_inserter(cited), [&](const Declaration& d) { return files.count(d.file); });
  std::vector<Declaration> named;
  std::copy_if(cited.begin(), cited.end(), std::back_inserter(named), [&](const Declaration& d) { return c.named.count(d.file); });
  if (!cited.empty()) {
    const Declaration d = best(named.empty() ? cited : named);
    c.target = Target{d.file, d.line};
  } else if (const std::optional<Declaration> d = unique_definition(index_, name); d && !matches.empty()) {
    const Declaration& chosen = std::find_if(matches.begin(), matches.end(), [&](const Declaration& m) { return m.file == d->file; }) != matches.end() ? *d : best(matches);
    c.target = Target{chosen.file, chosen.line};
  } else {
    for (const std::string& file : files)
      if (!c.target && index_.first_line(file, name) > 0) c.target = Target{file, index_.first_line(file, name)};
    if (!c.target && !matches.empty()) c.target = Target{best(matches).file, best(matches).line};
    for (const std::string& file : index_.files())
      if (!c.target && index_.first_line(file, name) > 0) c.target = Target{file, index_.first_line(file, name)};
  }
  if (!c.target) c.problems.push_back({c.where, c.span, "`" + name + "` exists but no line of the sources holds it, so the book cannot point at it"});
}

// Code with arguments, designated initializers, or a formula: the qualified names must be
// declared, and the called functions, types and members must exist.
void DocsChecker::check_expression(Context& c, const std::string& text) {
  const std::string code = without_literals(text);
  static const std::regex qualified(R"((?:[A-Za-z_]\w*::)+~?[A-Za-z_]\w*)");
  static const std::regex call(R"((^|[^\w.:>])([A-Za-z_]\w*)\()");
  static const std::regex member(R"([\w)\]](?:\.|->)([A-Za-z_]\w*))");
  static const std::regex designator(R"((?:^|[{,(]\s*)\.([A-Za-z_]\w*)\s*=)");
  // the called function or built type at the start: f(...), T{...}, or T name(...)
  static const std::regex leading(R"(^((?:[A-Za-z_]\w*::)*[A-Za-z_]\w*)(?:\(|\{| [A-Za-z_]\w*\())");
  std::smatch m;
  const bool has_leading = std::regex_search(code, m, leading);
  const std::string lead = has_leading ? m[1].str() : "";
  if (has_leading) check_name(c, lead, false);
  for (auto it = std::sregex_iterator(code.begin(), code.end(), qualified); it != std::sregex_iterator(); ++it)
    if (!starts_with(it->str(), "std::") && it->str() != lead) check_name(c, it->str(), false);
  for (const std::regex* re : {&call, &member, &designator}) {
    const int group = re == &call ? 2 : 1;
    for (auto it = std::sregex_iterator(code.begin(), code.end(), *re); it != std::sregex_iterator(); ++it) {
      const std::string name = (*it)[group].str();
      if (name != lead && !index_.mentions(name)) c.problems.push_back({c.where, c.span, "`" + name + "` is not found in the sources"});
    }
  }
}

}  // namespace ladder::docs
