#include <md4c-html.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <deque>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string_view>

#include "book.h"

namespace ladder::book {

namespace {

std::string unescaped(std::string s);

// Whether a link's address may stay in a page made from a run folder's Markdown: a path (a plot
// beside it, another page) or http(s); never a scheme that runs or embeds (javascript:, data:, ...).
bool safe_address(const std::string& address) {
  std::string trimmed;  // browsers drop spaces and control characters from an address before reading its scheme
  for (const char c : address)
    if (static_cast<unsigned char>(c) > ' ') trimmed += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const size_t colon = trimmed.find(':');
  if (colon == std::string::npos || trimmed.find_first_of("/?#") < colon) return true;  // no scheme: a path
  return trimmed.starts_with("http:") || trimmed.starts_with("https:");
}

std::string markdown_to_html(const std::string& markdown, Author author) {
  std::string html;
  const auto append = [](const MD_CHAR* text, MD_SIZE size, void* out) { static_cast<std::string*>(out)->append(text, size); };
  const unsigned flags = MD_DIALECT_GITHUB | MD_FLAG_LATEXMATHSPANS | (author == Author::run_folder ? MD_FLAG_NOHTML : 0);
  if (md_html(markdown.data(), static_cast<MD_SIZE>(markdown.size()), append, &html, flags, 0) != 0)
    throw std::runtime_error("md4c could not parse the note");
  if (author == Author::project) return html;
  static const std::regex kAddress(R"re(\b(href|src)="([^"]*)")re");
  std::string out;
  auto last = html.cbegin();
  for (std::sregex_iterator it(html.begin(), html.end(), kAddress), end; it != end; ++it) {
    const std::smatch& m = *it;
    out.append(last, m[0].first);
    out += safe_address(unescaped(m[2].str())) ? m[0].str() : m[1].str() + "=\"#\"";
    last = m[0].second;
  }
  out.append(last, html.cend());
  return out;
}

std::string unescaped(std::string s) {
  const std::pair<const char*, const char*> entities[] = {{"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&#39;", "'"}, {"&amp;", "&"}};
  for (const auto& [entity, text] : entities)
    for (size_t at = s.find(entity); at != std::string::npos; at = s.find(entity, at + 1)) s.replace(at, std::strlen(entity), text);
  return s;
}

// Runs of spaces and newlines as one space, trimmed: how the resolver keeps a span's text.
std::string squeezed(const std::string& s) {
  std::string out;
  for (const char c : s) {
    const bool space = c == ' ' || c == '\n' || c == '\t';
    if (space && (out.empty() || out.back() == ' ')) continue;
    out += space ? ' ' : c;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

std::string lesson_of(const std::string& note_path) {
  const std::string base = fs::path(note_path).filename().string();
  return base.size() > 3 && std::isdigit(static_cast<unsigned char>(base[0])) && std::isdigit(static_cast<unsigned char>(base[1])) && base[2] == '_'
             ? base.substr(0, 2)
             : "";
}

std::string href_of(const docs::Target& target) {
  if (target.file.ends_with(".md")) return page_of(target.file);
  return "#code=" + target.file + ":" + std::to_string(target.line);
}

// Links between notes and to files of the repository, as the book has them.
std::string rewritten_links(const Book& book, const std::string& note_path, const std::string& html) {
  static const std::regex href(R"(href="([^"#:]*)(#[^"]*)?")");
  std::string out;
  auto last = html.cbegin();
  for (auto it = std::sregex_iterator(html.begin(), html.end(), href); it != std::sregex_iterator(); ++it) {
    const std::smatch& m = *it;
    out.append(last, m[0].first);
    last = m[0].second;
    const std::string target = m[1].str();
    const fs::path resolved = (fs::path(note_path).parent_path() / target).lexically_normal();
    const std::string file = resolved.generic_string();
    if (target.empty()) {
      out += m[0].str();
    } else if (file.ends_with(".md")) {
      out += "href=\"" + page_of(file) + m[2].str() + "\"";
    } else if (std::find(book.index.files().begin(), book.index.files().end(), file) != book.index.files().end()) {
      out += "href=\"#code=" + file + ":1\"";
    } else {
      out += m[0].str();
    }
  }
  out.append(last, html.cend());
  return out;
}

// What the page shows where its note names a plot: the learner's own, or how to make it.
std::string plot_figure(const Book& book, const std::string& lesson, const std::string& plot) {
  const ShownRun shown = shown_run(book, lesson);
  const fs::path& run = shown.folder;
  if (!run.empty() && plain_file(run / plot)) {
    const fs::path copy = book.out / "runs" / run.filename() / plot;
    fs::create_directories(copy.parent_path());
    fs::copy_file(run / plot, copy, fs::copy_options::overwrite_existing);
    const std::string relative = url_path("runs/" + run.filename().string() + "/" + plot);
    return "<figure class=\"run-plot\"><img src=\"" + escaped(relative) + "\" alt=\"" + escaped(plot) + " of your run\"><figcaption>" +
           escaped(plot) + " of " + escaped(shown.label) + " (" + escaped(run.string()) + ")</figcaption></figure>\n";
  }
  return "<p class=\"no-run\">" + plot + ": the run of lesson " + lesson + " in " + escaped((book.runs / "").string()) +
         " has not drawn it yet; <code>./ladder lesson " + lesson + "</code> draws it (or <code>--quick</code>, in seconds).</p>\n";
}

// Puts each plot's figure after the paragraph, list item or table that names it.
std::string with_figures(const std::string& html, const std::vector<std::pair<size_t, std::string>>& figures) {
  std::vector<std::pair<size_t, std::string>> placed;
  for (const auto& [at, figure] : figures) {
    const size_t table_open = html.rfind("<table", at), table_close = html.rfind("</table>", at);
    const bool in_table = table_open != std::string::npos && (table_close == std::string::npos || table_close < table_open);
    size_t end = std::string::npos;
    const std::vector<std::string> closers = in_table ? std::vector<std::string>{"</table>"} : std::vector<std::string>{"</p>", "</li>"};
    for (const std::string& closer : closers) {
      const size_t found = html.find(closer, at);
      if (found != std::string::npos) end = std::min(end, found + closer.size());
    }
    placed.emplace_back(end == std::string::npos ? html.size() : end, figure);
  }
  std::stable_sort(placed.begin(), placed.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string out;
  size_t from = 0;
  for (const auto& [at, figure] : placed) {
    out.append(html, from, at - from);
    out += figure;
    from = at;
  }
  out.append(html, from, std::string::npos);
  return out;
}

}  // namespace

std::string escaped(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '&') out += "&amp;";
    else if (c == '"') out += "&quot;";
    else out += c;
  }
  return out;
}

std::string url_path(const std::string& path) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (const char c : path) {
    const auto byte = static_cast<unsigned char>(c);
    if (std::isalnum(byte) || std::string_view("-._~/").find(c) != std::string_view::npos) out += c;
    else out += {'%', kHex[byte >> 4], kHex[byte & 15]};
  }
  return out;
}

bool plain_file(const fs::path& path) {
  std::error_code error;
  return fs::is_regular_file(fs::symlink_status(path, error));
}

std::string page_of(const std::string& note_path) {
  if (note_path == "README.md") return "index.html";
  return fs::path(note_path).stem().string() + ".html";
}

std::string note_body(const Book& book, const std::string& note_path, const std::string& markdown,
                      const std::vector<docs::Pointer>& pointers, Author author) {
  std::map<std::string, std::deque<docs::Target>> targets;  // span text -> the targets of its occurrences, in order
  for (const docs::Pointer& p : pointers) targets[p.span.text].push_back(p.target);
  const std::string lesson = lesson_of(note_path);
  const std::string html = rewritten_links(book, note_path, markdown_to_html(markdown, author));
  std::string out;
  std::vector<std::pair<size_t, std::string>> figures;
  std::set<std::string> shown;
  size_t from = 0;
  for (size_t at = html.find("<code>"); at != std::string::npos; at = html.find("<code>", from)) {
    const size_t end = html.find("</code>", at);
    if (end == std::string::npos) break;
    out.append(html, from, at - from);
    from = end + 7;
    const std::string code = html.substr(at, from - at);
    if (at >= 5 && html.compare(at - 5, 5, "<pre>") == 0) {  // a fenced block, not a span
      out += code;
      continue;
    }
    const std::string text = squeezed(unescaped(html.substr(at + 6, end - at - 6)));
    auto found = targets.find(text);
    if (found == targets.end() || found->second.empty()) {
      out += code;
      continue;
    }
    const docs::Target target = found->second.front();
    if (found->second.size() > 1) found->second.pop_front();
    out += "<a class=\"pointer\" href=\"" + escaped(href_of(target)) + "\">" + code + "</a>";
    const bool plot = text.ends_with(".png") && text.find('/') == std::string::npos;
    if (plot && !lesson.empty() && shown.insert(text).second) figures.emplace_back(out.size(), plot_figure(book, lesson, text));
  }
  out.append(html, from, std::string::npos);
  return with_figures(out, figures);
}

}  // namespace ladder::book
