#include "docs/source_index.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;

namespace ladder::docs {
namespace {

enum class Kind { name, punct, literal, number };

struct Token {
  Kind kind;
  std::string text;
  int line = 0;  // 1-based, where the token starts
};

bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Keywords that cannot precede a declared name the way a type does (`return x;` declares nothing).
const std::set<std::string> kNotTypes = {"return", "throw", "case", "goto", "new", "delete", "else", "do", "sizeof",
                                         "alignof", "typeid", "co_return", "co_await", "co_yield", "using", "namespace",
                                         "template", "typename", "operator", "public", "private", "protected", "if",
                                         "while", "for", "switch", "catch", "static_assert", "decltype", "noexcept",
                                         "requires", "and", "or", "not", "default", "break", "continue", "this"};
const std::set<std::string> kKeywords = {"return", "throw", "case", "goto", "new", "delete", "else", "do", "sizeof",
                                         "if", "while", "for", "switch", "catch", "const", "constexpr", "static",
                                         "inline", "auto", "void", "int", "float", "double", "bool", "char", "long",
                                         "unsigned", "signed", "short", "struct", "class", "enum", "union", "true",
                                         "false", "nullptr", "this", "override", "final", "virtual", "explicit",
                                         "public", "private", "protected", "template", "typename", "operator",
                                         "namespace", "using", "default", "break", "continue", "mutable", "friend"};

// A C++ tokenizer good enough to find names: comments and preprocessor lines are dropped (a
// #define yields its name, an #include "..." its path, kept apart), literals are kept whole,
// "::" "->" "&&" are one token each.
class Lexer {
 public:
  explicit Lexer(const std::string& s) : s_(s) {}

  std::vector<Token> tokens() {
    std::vector<Token> out;
    bool line_start = true;
    int line = 1;
    size_t counted = 0;  // s_[0, counted) has been counted into line
    while (i_ < s_.size()) {
      const char c = s_[i_];
      line += static_cast<int>(std::count(s_.begin() + static_cast<std::ptrdiff_t>(counted), s_.begin() + static_cast<std::ptrdiff_t>(i_), '\n'));
      counted = i_;
      const size_t before = out.size();
      if (c == '\n') line_start = true;
      if (std::isspace(static_cast<unsigned char>(c))) {
        ++i_;
      } else if (c == '/' && peek(1) == '/') {
        skip_past("\n");
      } else if (c == '/' && peek(1) == '*') {
        skip_past("*/");
      } else if (c == '#' && line_start) {
        directive(out);
      } else if (c == '"' || c == '\'') {
        out.push_back({Kind::literal, quoted(c)});
      } else if (std::isdigit(static_cast<unsigned char>(c)) || (c == '.' && std::isdigit(static_cast<unsigned char>(peek(1))))) {
        out.push_back({Kind::number, number()});
      } else if (word_char(c)) {
        std::string word = identifier();
        const bool prefix = word == "R" || word == "u8R" || word == "LR" || word == "uR" || word == "UR";
        if (prefix && peek(0) == '"') {
          out.push_back({Kind::literal, raw_string()});
        } else if ((word == "u8" || word == "u" || word == "U" || word == "L") && (peek(0) == '"' || peek(0) == '\'')) {
          out.push_back({Kind::literal, quoted(peek(0))});
        } else {
          out.push_back({Kind::name, word});
        }
      } else {
        const std::string two = s_.substr(i_, 2);
        const bool pair = two == "::" || two == "->" || two == "&&";
        out.push_back({Kind::punct, pair ? two : std::string(1, c)});
        i_ += pair ? 2 : 1;
      }
      for (size_t t = before; t < out.size(); ++t) out[t].line = line;
      if (c != '\n' && !std::isspace(static_cast<unsigned char>(c))) line_start = false;
    }
    return out;
  }

  // The paths of the file's #include "..." lines, as written; filled by tokens().
  const std::vector<std::string>& includes() const { return includes_; }

 private:
  char peek(size_t ahead) const { return i_ + ahead < s_.size() ? s_[i_ + ahead] : '\0'; }

  void skip_past(const std::string& end) {
    const size_t at = s_.find(end, i_ + 2);
    i_ = at == std::string::npos ? s_.size() : at + end.size();
  }

  std::string identifier() {
    const size_t begin = i_;
    while (i_ < s_.size() && word_char(s_[i_])) ++i_;
    return s_.substr(begin, i_ - begin);
  }

  std::string number() {
    const size_t begin = i_;
    while (i_ < s_.size()) {
      const char c = s_[i_];
      const bool sign = (c == '+' || c == '-') && std::string("eEpP").find(s_[i_ - 1]) != std::string::npos;
      if (!word_char(c) && c != '.' && c != '\'' && !sign) break;
      ++i_;
    }
    return s_.substr(begin, i_ - begin);
  }

  // A "..." or '...' literal; an unterminated one ends at the line's end.
  std::string quoted(char quote) {
    std::string text;
    for (++i_; i_ < s_.size() && s_[i_] != quote && s_[i_] != '\n'; ++i_) {
      if (s_[i_] == '\\' && i_ + 1 < s_.size()) ++i_;
      text += s_[i_];
    }
    ++i_;
    return text;
  }

  std::string raw_string() {  // at the '"' of R"delim( ... )delim"
    const size_t open = s_.find('(', i_);
    if (open == std::string::npos) return quoted('"');
    const std::string end = ")" + s_.substr(i_ + 1, open - i_ - 1) + "\"";
    const size_t close = s_.find(end, open);
    const size_t stop = close == std::string::npos ? s_.size() : close;
    std::string text = s_.substr(open + 1, stop - open - 1);
    i_ = close == std::string::npos ? s_.size() : close + end.size();
    return text;
  }

  void directive(std::vector<Token>& out) {
    std::string line;
    while (i_ < s_.size() && s_[i_] != '\n') {
      if (s_[i_] == '\\' && peek(1) == '\n') ++i_;
      line += s_[i_++];
    }
    std::istringstream words(line.substr(1));
    std::string directive, name;
    words >> directive >> name;
    if (directive == "define") {
      name = name.substr(0, name.find('('));
      out.push_back({Kind::punct, "#define"});
      out.push_back({Kind::name, name});
      out.push_back({Kind::punct, ";"});
    } else if (directive == "include" && name.size() > 2 && name.front() == '"') {
      includes_.push_back(name.substr(1, name.find('"', 1) - 1));
    }
  }

  const std::string& s_;
  size_t i_ = 0;
  std::vector<std::string> includes_;
};

// A flag's declaration: option("--steps", ...), cli.choice("--cell", ...), flag("--quick", ...),
// add_flag("--lines,!--stream", ...) and set_help_flag("-h,--help", ...) (each name of them), or a
// kind setting's .flag = "--chunk", or .flag = kBlockFlag, a constant the file set to the flag.
void find_flag_declarations(const std::string& file, const std::vector<Token>& t, std::map<std::string, std::vector<Declaration>>& out) {
  static const std::set<std::string> kDeclaring = {"option", "choice", "flag", "add_flag", "set_help_flag"};
  std::map<std::string, std::string> constants;  // kBlockFlag -> "--attention-block"
  for (size_t i = 3; i < t.size(); ++i) {
    const bool setting = t[i - 1].text == "=" && t[i - 2].text == "flag" && t[i - 3].text == ".";
    std::string names;
    if (t[i].kind == Kind::literal && t[i].text.starts_with("-")) {
      if (t[i - 1].text == "=" && t[i - 2].kind == Kind::name) constants[t[i - 2].text] = t[i].text;
      const bool call = t[i - 1].text == "(" && t[i - 2].kind == Kind::name && kDeclaring.count(t[i - 2].text);
      if (call || setting) names = t[i].text;
    } else if (setting && t[i].kind == Kind::name && constants.count(t[i].text)) {
      names = constants.at(t[i].text);
    }
    std::istringstream each(names);
    for (std::string name; std::getline(each, name, ',');) {
      if (name.starts_with("!")) name.erase(0, 1);  // CLI11's negation: --lines,!--stream
      if (name.starts_with("--")) out[name].push_back({file, {}, t[i].line});
    }
  }
}

bool type_like(const Token& t) {
  if (t.kind == Kind::name) return !kNotTypes.count(t.text);
  return t.text == ">" || t.text == "*" || t.text == "&" || t.text == "&&";
}

bool ends_declarator(const Token& t) {
  static const std::set<std::string> ends = {"(", ";", "=", "{", "[", ",", ")", ":"};
  return t.kind == Kind::punct && ends.count(t.text);
}

// Walks the tokens of one file with a stack of scopes and records what is declared where.
class DeclarationFinder {
 public:
  DeclarationFinder(const std::string& file, const std::vector<Token>& tokens,
                    std::map<std::string, std::vector<Declaration>>& out)
      : file_(file), t_(tokens), out_(out) {}

  void run() {
    for (size_t i = 0; i < t_.size(); ++i) {
      const Token& tok = t_[i];
      line_ = tok.line;
      if (tok.kind == Kind::punct) {
        punct(i);
      } else if (tok.kind == Kind::name) {
        name(i);
      }
    }
  }

 private:
  struct Scope {
    std::vector<std::string> names;
    bool is_enum;
  };

  const Token& at(size_t i) const {
    static const Token none{Kind::punct, ""};
    return i < t_.size() ? t_[i] : none;
  }

  std::vector<std::string> chain() const {
    std::vector<std::string> names;
    for (const Scope& s : stack_) names.insert(names.end(), s.names.begin(), s.names.end());
    return names;
  }

  void declare(const std::string& name, std::vector<std::string> qualifiers = {}) {
    std::vector<std::string> scope = chain();
    scope.insert(scope.end(), qualifiers.begin(), qualifiers.end());
    out_[name].push_back({file_, scope, line_});
  }

  void punct(size_t i) {
    const std::string& p = t_[i].text;
    if (p == "{") {
      stack_.push_back({pending_, pending_enum_});
      pending_.clear();
      pending_enum_ = false;
    } else if (p == "}") {
      if (!stack_.empty()) stack_.pop_back();
    } else if (p == ";") {
      pending_.clear();
      pending_enum_ = false;
    }
  }

  void name(size_t i) {
    const std::string& word = t_[i].text;
    const Token& prev = i > 0 ? t_[i - 1] : at(t_.size());
    if (word == "namespace") return namespace_head(i);
    if (word == "enum" || ((word == "class" || word == "struct" || word == "union") && prev.text != "enum")) return type_head(i);
    if (kKeywords.count(word)) return;
    if (prev.text == "#define") return declare(word);
    if (prev.text == "}" && (at(i + 1).text == ";" || at(i + 1).text == ",")) return declare(word);  // struct S {...} s;
    if (!stack_.empty() && stack_.back().is_enum && (prev.text == "{" || prev.text == ",")) return declare(word);
    if (!ends_declarator(at(i + 1))) return;
    if (prev.text == "~") return declare("~" + word, qualifiers_before(i - 1));
    if (prev.text == "::") {  // an out-of-line definition has a type before its qualifiers: Tensor Module::f(
      const std::vector<std::string> quals = qualifiers_before(i);
      const size_t first = i - 2 * quals.size();
      if (!quals.empty() && first > 0 && type_like(t_[first - 1])) declare(word, quals);
      return;
    }
    if (i > 0 && type_like(prev)) declare(word);
  }

  // The names of "A :: B ::" just before token i (which is the declared name or its "~").
  std::vector<std::string> qualifiers_before(size_t i) const {
    std::vector<std::string> quals;
    while (i >= 2 && t_[i - 1].text == "::" && t_[i - 2].kind == Kind::name) {
      quals.insert(quals.begin(), t_[i - 2].text);
      i -= 2;
    }
    return quals;
  }

  void namespace_head(size_t i) {
    std::vector<std::string> names;
    size_t j = i + 1;
    for (; at(j).kind == Kind::name || at(j).text == "::"; ++j) {
      if (at(j).kind == Kind::name) {
        declare(at(j).text, names);
        names.push_back(at(j).text);
      }
    }
    if (at(j).text == "{") pending_ = names;
  }

  void type_head(size_t i) {
    size_t j = i + 1;
    const bool is_enum = t_[i].text == "enum";
    if (is_enum && (at(j).text == "class" || at(j).text == "struct")) ++j;
    if (at(j).text == "{") {
      pending_enum_ = is_enum;
      return;
    }
    if (at(j).kind != Kind::name) return;
    const std::string type = at(j).text;
    declare(type);
    size_t k = j + 1;
    if (at(k).text == "final") ++k;
    if (at(k).text == ":")
      while (k < t_.size() && at(k).text != "{" && at(k).text != ";") ++k;
    if (at(k).text == "{") {
      pending_ = {type};
      pending_enum_ = is_enum;
    }
  }

  const std::string& file_;
  const std::vector<Token>& t_;
  std::map<std::string, std::vector<Declaration>>& out_;
  std::vector<Scope> stack_;
  std::vector<std::string> pending_;  // names of the scope the next '{' opens
  bool pending_enum_ = false;
  int line_ = 0;  // of the token being read
};

bool skipped(const std::string& relative, const std::vector<std::string>& skip) {
  const std::string first = relative.substr(0, relative.find('/'));
  if (first.rfind("build", 0) == 0 || first == "runs" || first.rfind('.', 0) == 0) return true;
  return std::any_of(skip.begin(), skip.end(), [&](const std::string& s) { return relative.rfind(s + "/", 0) == 0; });
}

}  // namespace

SourceIndex::SourceIndex(const fs::path& root, const std::vector<std::string>& skip) : root_(root) {
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator(); ++it) {
    const std::string relative = fs::relative(it->path(), root).generic_string();
    if (skipped(relative, skip)) {
      if (it->is_directory()) it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file()) continue;
    file_names_.insert(it->path().filename().string());
    const std::string ext = it->path().extension().string();
    const std::string base = it->path().filename().string();
    if (ext == ".h" || ext == ".cpp" || ext == ".py" || base == "CMakeLists.txt" || relative == "ladder") files_.push_back(relative);
  }
  std::sort(files_.begin(), files_.end());
  for (const std::string& file : files_) read_file(file);
}

void SourceIndex::read_file(const std::string& relative) {
  std::ifstream in(root_ / relative, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  texts_.push_back(buffer.str());
  Lexer lexer(texts_.back());
  const std::vector<Token> tokens = lexer.tokens();
  resolve_includes(relative, lexer.includes());
  find_flag_declarations(relative, tokens, flag_declarations_);
  std::map<std::string, int>& first = first_lines_[relative];
  for (const Token& t : tokens) {
    first.emplace(t.text, t.line);  // a name, or a literal's whole content
    if (t.kind == Kind::name) {
      code_names_[relative].insert(t.text);
      all_names_.insert(t.text);
    } else if (t.kind == Kind::literal) {
      literals_[relative].insert(t.text);
      std::string word;
      for (const char c : t.text + " ") {
        if (word_char(c)) {
          word += c;
        } else if (!word.empty()) {
          all_names_.insert(word);
          words_[relative].insert(word);
          first.emplace(word, t.line);
          word.clear();
        }
      }
    }
  }
  const std::string ext = fs::path(relative).extension().string();
  if (ext == ".h" || ext == ".cpp") DeclarationFinder(relative, tokens, declarations_).run();
}

void SourceIndex::resolve_includes(const std::string& file, const std::vector<std::string>& written) {
  std::vector<std::string>& found = includes_[file];
  for (const std::string& path : written) {
    for (const fs::path& candidate : {fs::path(path), fs::path(file).parent_path() / path}) {
      const std::string relative = candidate.lexically_normal().generic_string();
      if (std::binary_search(files_.begin(), files_.end(), relative)) {
        found.push_back(relative);
        break;
      }
    }
  }
}

bool SourceIndex::mentions(const std::string& name) const { return all_names_.count(name) > 0; }

bool SourceIndex::mentions(const std::string& file, const std::string& name) const {
  const auto it = words_.find(file);
  return uses(file, name) || (it != words_.end() && it->second.count(name));
}

bool SourceIndex::uses(const std::string& file, const std::string& name) const {
  const auto it = code_names_.find(file);
  return it != code_names_.end() && it->second.count(name);
}

bool SourceIndex::has_literal(const std::string& file, const std::string& literal) const {
  const auto it = literals_.find(file);
  return it != literals_.end() && it->second.count(literal);
}

bool SourceIndex::text_contains(const std::string& text) const {
  return std::any_of(texts_.begin(), texts_.end(), [&](const std::string& t) { return t.find(text) != std::string::npos; });
}

int SourceIndex::first_line(const std::string& file, const std::string& text) const {
  const auto in_file = first_lines_.find(file);
  if (in_file == first_lines_.end()) return 0;
  const auto it = in_file->second.find(text);
  return it == in_file->second.end() ? 0 : it->second;
}

const std::vector<Declaration>& SourceIndex::declarations(const std::string& name) const {
  static const std::vector<Declaration> none;
  const auto it = declarations_.find(name);
  return it == declarations_.end() ? none : it->second;
}

const std::vector<Declaration>& SourceIndex::flag_declarations(const std::string& flag) const {
  static const std::vector<Declaration> none;
  const auto it = flag_declarations_.find(flag);
  return it == flag_declarations_.end() ? none : it->second;
}

const std::vector<std::string>& SourceIndex::includes(const std::string& file) const {
  static const std::vector<std::string> none;
  const auto it = includes_.find(file);
  return it == includes_.end() ? none : it->second;
}

}  // namespace ladder::docs
