// The book's glue: math by KaTeX, the code pane (a pointer's file loaded from code/FILE.js,
// highlighted by highlight.js, scrolled to its line), and the #code=FILE:LINE links.
"use strict";

const ladderBook = {
  files: {},        // file -> {language, html}, as code/FILE.js hands them over
  pending: null,    // the {file, line} asked for while its script loads
  current: null,    // the {file, line} the pane shows

  // Called by code/FILE.js once loaded.
  code(file, language, html) {
    this.files[file] = {language, html};
    if (this.pending && this.pending.file === file) this.show(file, this.pending.line);
  },

  open(file, line) {
    if (this.files[file]) return this.show(file, line);
    this.pending = {file, line};
    const script = document.createElement("script");
    script.src = "code/" + file + ".js";
    script.onerror = () => console.error("the book has no code page for " + file);
    document.head.appendChild(script);
  },

  show(file, line) {
    const body = document.getElementById("code-body");
    if (!this.current || this.current.file !== file) {
      const {language, html} = this.files[file];
      const lines = html.split("\n").length - (html.endsWith("\n") ? 1 : 0);  // a last newline ends a line, starts none
      let numbers = "";
      for (let i = 1; i <= lines; ++i) numbers += i + "\n";
      body.innerHTML = '<div class="code-lines"><pre class="gutter">' + numbers + '</pre><pre class="source"><code class="' +
                       language + '">' + html + '</code></pre><div id="code-mark"></div></div>';
      hljs.highlightBlock(body.querySelector("code"));
    }
    this.current = {file, line};
    document.getElementById("code-path").textContent = file + ":" + line;
    const height = parseFloat(getComputedStyle(body.querySelector("pre.source")).lineHeight);
    const mark = document.getElementById("code-mark");
    mark.style.top = (line - 1) * height + "px";
    mark.style.height = height + "px";
    mark.dataset.line = line;
    body.scrollTop = Math.max(0, (line - 1) * height - body.clientHeight / 3);
  },

  route() {
    const match = /^#code=(.+):(\d+)$/.exec(decodeURIComponent(location.hash));
    if (match) this.open(match[1], Number(match[2]));
  },

  renderMath() {
    for (const equation of document.querySelectorAll("x-equation")) {
      const display = equation.getAttribute("type") === "display";
      katex.render(equation.textContent, equation, {displayMode: display, throwOnError: false});
    }
  },

  // Formulas and code blocks wider than the note, made smaller until they fit (KaTeX sizes
  // everything in em); code that would fall below 70% is wrapped instead.
  fitWidths() {
    const fit = (element, smallest) => {
      element.style.fontSize = "";
      element.classList.remove("wrapped");
      let scale = 1;
      for (let tries = 0; tries < 4 && element.scrollWidth > element.clientWidth; ++tries) {
        scale *= element.clientWidth / element.scrollWidth;
        if (scale < smallest) break;
        element.style.fontSize = Math.floor(scale * 1000) / 10 + "%";
      }
      if (element.scrollWidth > element.clientWidth && element.tagName === "PRE") {
        element.style.fontSize = "";
        element.classList.add("wrapped");
      }
    };
    for (const formula of document.querySelectorAll("#note .katex-display")) fit(formula, 0);
    for (const code of document.querySelectorAll("#note pre")) fit(code, 0.7);
  },
};

// Debian's highlight.js 9 prints an end-of-life notice on first use; the book only highlights its own files.
hljs.configure({hideUpgradeWarningAcceptNoSupportOrSecurityUpdates: true});
window.addEventListener("hashchange", () => ladderBook.route());
window.addEventListener("resize", () => ladderBook.fitWidths());
document.addEventListener("DOMContentLoaded", () => {
  ladderBook.renderMath();
  ladderBook.fitWidths();
  document.fonts.ready.then(() => ladderBook.fitWidths());  // KaTeX's fonts change the widths once loaded
  ladderBook.route();
});
