// The book in a real browser: headless Chromium (driven over its DevTools pipe, no npm packages)
// opens every page from the file system and checks that no link is broken, no console error is
// logged, math is rendered by KaTeX with no raw $...$ left; then clicks a code pointer of lesson
// 06's note and checks the code pane's file and line, follows a link onward inside the code; on the
// pages of lessons 05, 06 and 11 checks that each flag opens its declaration and that no box covers
// the text and nothing is cut; and takes screenshots.   node browser_test.mjs BOOK_DIR SCREENSHOT_DIR REPO_ROOT
import {spawn} from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import {pathToFileURL} from "node:url";

const [book, shots, root] = process.argv.slice(2);
const failures = [];
const fail = (what) => { failures.push(what); console.error("FAIL: " + what); };

const profile = fs.mkdtempSync(path.join(os.tmpdir(), "ladder-book-chromium-"));
const chromium = spawn("chromium", ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
  "--disable-component-update", "--no-first-run", "--disable-sync", "--user-data-dir=" + profile,
  "--remote-debugging-pipe", "about:blank"], {stdio: ["ignore", "ignore", "ignore", "pipe", "pipe"]});

// The DevTools protocol over the pipe: JSON messages ended by a NUL byte.
let nextId = 1, pending = Buffer.alloc(0);
const waiting = new Map(), listeners = [];
chromium.stdio[4].on("data", (chunk) => {
  pending = Buffer.concat([pending, chunk]);
  for (let end; (end = pending.indexOf(0)) >= 0; pending = pending.subarray(end + 1)) {
    const message = JSON.parse(pending.subarray(0, end).toString("utf8"));
    if (message.id && waiting.has(message.id)) {
      const {resolve, reject} = waiting.get(message.id);
      waiting.delete(message.id);
      if (message.error) reject(new Error(JSON.stringify(message.error))); else resolve(message.result);
    } else for (const listen of listeners) listen(message);
  }
});
function send(method, params = {}, sessionId = undefined) {
  const id = nextId++;
  chromium.stdio[3].write(JSON.stringify({id, method, params, sessionId}) + "\0");
  return new Promise((resolve, reject) => waiting.set(id, {resolve, reject}));
}
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const {targetInfos} = await send("Target.getTargets");
const {sessionId} = await send("Target.attachToTarget", {targetId: targetInfos.find((t) => t.type === "page").targetId, flatten: true});
const page = (method, params) => send(method, params, sessionId);
let consoleErrors = [], loaded = false;
listeners.push((m) => {
  if (m.sessionId !== sessionId) return;
  if (m.method === "Runtime.exceptionThrown") consoleErrors.push(m.params.exceptionDetails.exception?.description ?? m.params.exceptionDetails.text);
  if (m.method === "Runtime.consoleAPICalled" && m.params.type === "error") consoleErrors.push(m.params.args.map((a) => a.value ?? a.description).join(" "));
  if (m.method === "Log.entryAdded" && m.params.entry.level === "error") consoleErrors.push(m.params.entry.text + " " + (m.params.entry.url ?? ""));
  if (m.method === "Page.loadEventFired") loaded = true;
});
for (const domain of ["Page", "Runtime", "Log"]) await page(domain + ".enable");
await page("Emulation.setDeviceMetricsOverride", {width: 1400, height: 900, deviceScaleFactor: 1, mobile: false});

async function evaluate(expression) {
  const {result, exceptionDetails} = await page("Runtime.evaluate", {expression, returnByValue: true, awaitPromise: true});
  if (exceptionDetails) throw new Error(expression + ": " + exceptionDetails.text);
  return result.value;
}
async function until(expression, what) {
  for (let i = 0; i < 100; ++i) {
    if (await evaluate(expression)) return true;
    await sleep(50);
  }
  fail(what);
  return false;
}
async function open(file) {
  loaded = false;
  consoleErrors = [];
  await page("Page.navigate", {url: pathToFileURL(path.resolve(book, file)).href});
  for (let i = 0; i < 200 && !loaded; ++i) await sleep(25);
  await sleep(150);  // KaTeX and the code pane run on DOMContentLoaded
}
const sourceLines = (file) => fs.readFileSync(path.join(root, file), "utf8").split("\n");

// Every page: links, images, console, math.
const pages = fs.readdirSync(book).filter((f) => f.endsWith(".html")).sort();
let equations = 0, pointers = 0;
for (const file of pages) {
  await open(file);
  const found = await evaluate(`(() => {
    const note = document.querySelector("#note").cloneNode(true);
    for (const e of note.querySelectorAll("pre, code, .katex")) e.remove();
    return {
      links: [...document.querySelectorAll("a[href]")].map((a) => a.getAttribute("href")),
      images: [...document.querySelectorAll("img")].map((i) => ({src: i.getAttribute("src"), ok: i.complete && i.naturalWidth > 0})),
      equations: document.querySelectorAll("x-equation").length,
      rendered: document.querySelectorAll("x-equation .katex").length,
      dollars: (note.textContent.match(/\\$/g) || []).length,
    };
  })()`);
  for (const href of found.links) {
    if (/^[a-z]+:/.test(href)) continue;  // a site outside the book: not opened offline
    const code = /^#code=(.+):(\d+)$/.exec(decodeURIComponent(href));
    if (code) {
      ++pointers;
      if (!fs.existsSync(path.join(book, "code", code[1] + ".js"))) fail(`${file}: ${href}: no code page`);
      else if (Number(code[2]) < 1 || Number(code[2]) > sourceLines(code[1]).length) fail(`${file}: ${href}: no such line`);
    } else if (!href.startsWith("#") && !fs.existsSync(path.join(book, decodeURIComponent(href.split("#")[0])))) {
      fail(`${file}: broken link ${href}`);
    }
  }
  for (const image of found.images) if (!image.ok) fail(`${file}: image ${image.src} does not load`);
  if (found.rendered !== found.equations) fail(`${file}: ${found.equations - found.rendered} of ${found.equations} equations not rendered by KaTeX`);
  if (found.dollars > 0) fail(`${file}: ${found.dollars} raw $ left in the text`);
  equations += found.rendered;
  for (const error of consoleErrors) fail(`${file}: console error: ${error}`);
  const pwned = await evaluate("window.pwned ?? null");  // set by the hostile names of browser_test.sh, if any ran
  if (pwned !== null) fail(`${file}: script from a run folder ran (window.pwned = ${pwned})`);
}
const comparisons = pages.filter((f) => f.startsWith("compare_"));
if (comparisons.length !== 1) fail(`the book has ${comparisons.length} comparison pages, not the one browser_test.sh wrote`);
else {
  await open(comparisons[0]);
  const shown = await evaluate(`document.querySelector("#note").textContent`);
  if (!shown.includes("<script>") || !shown.includes("<img src=x")) fail(`${comparisons[0]} does not show its HTML as text`);
}
if (equations === 0) fail("no page has math rendered by KaTeX");
if (pointers < 500) fail(`only ${pointers} code pointers in the whole book`);

// A click on a pointer of lesson 06's note opens its definition, highlighted, in the code pane.
async function click(selector, text) {
  return evaluate(`(() => {
    const link = [...document.querySelectorAll(${JSON.stringify(selector)})].find((a) => a.textContent === ${JSON.stringify(text)});
    if (!link) return false;
    link.scrollIntoView({block: "center"});  // as a reader sees it, for the screenshot
    link.click();
    return true;
  })()`);
}
async function pane() {
  return evaluate(`({current: ladderBook.current, path: document.querySelector("#code-path").textContent,
    mark: Number(document.querySelector("#code-mark")?.dataset.line), highlighted: document.querySelectorAll("#code-body .hljs-keyword").length,
    scrolled: document.querySelector("#code-body").scrollTop,
    codeHeight: document.querySelector("#code-body pre.source code").offsetHeight,
    gutterHeight: document.querySelector("#code-body pre.gutter").textContent.trim().split("\\n").length *
                  parseFloat(getComputedStyle(document.querySelector("#code-body pre.gutter")).lineHeight)})`);
}
await open("06_gated_rnn.html");
if (!(await click("a.pointer", "LSTMCell::gates"))) fail("06_gated_rnn.html has no pointer LSTMCell::gates");
await until("ladderBook.current !== null", "the code pane never showed LSTMCell::gates");
let shown = await pane();
if (shown.current?.file !== "nn/recurrent.cpp") fail(`LSTMCell::gates opened ${shown.current?.file}, not nn/recurrent.cpp`);
else {
  if (!sourceLines("nn/recurrent.cpp")[shown.current.line - 1].includes("LSTMCell::gates")) fail(`line ${shown.current.line} of nn/recurrent.cpp does not define LSTMCell::gates`);
  if (shown.path !== `nn/recurrent.cpp:${shown.current.line}` || shown.mark !== shown.current.line) fail(`the pane shows ${shown.path}, marks line ${shown.mark}`);
  if (shown.highlighted === 0) fail("the code is not highlighted by highlight.js");
  // the mark sits on line n of the code only if the code's lines are as tall as the gutter's
  if (Math.abs(shown.codeHeight - shown.gutterHeight) > 2) fail(`the code's lines are ${shown.codeHeight} px tall, its line numbers' ${shown.gutterHeight} px`);
  if (shown.scrolled === 0) fail("the code pane did not scroll to the definition");
  console.log(`pointer LSTMCell::gates -> ${shown.path}`);
}
if (!(await evaluate(`document.querySelectorAll("figure.run-plot img").length > 0`))) fail("06_gated_rnn.html shows no plot of the run");
if (!(await evaluate(`document.querySelectorAll(".run-figures dd").length > 0`))) fail("06_gated_rnn.html shows no figures of the run");
if (!(await evaluate(`[...document.querySelectorAll("figure.run-plot figcaption")].some((c) => c.textContent.includes('onerror="window.pwned'))`)))
  fail("06_gated_rnn.html does not show the run in the hostile runs folder, by its path, as text");
await page("Page.captureScreenshot", {format: "png"}).then(({data}) => fs.writeFileSync(path.join(shots, "book_06_gated_rnn.png"), Buffer.from(data, "base64")));

// The code pane's own links: a name used in the code opens its definition in another file.
const onward = await evaluate(`(() => {
  const link = [...document.querySelectorAll("#code-body code a")].find((a) => !a.getAttribute("href").startsWith("#code=nn/recurrent."));
  if (!link) return null;
  const text = link.textContent, href = link.getAttribute("href");
  link.click();
  return {text, href};
})()`);
if (!onward) fail("the code pane has no link to another file");
else {
  const [, file, line] = /^#code=(.+):(\d+)$/.exec(onward.href);
  await until(`ladderBook.current.file === ${JSON.stringify(file)}`, `the link ${onward.text} did not open ${file}`);
  shown = await pane();
  if (!sourceLines(file)[Number(line) - 1].includes(onward.text)) fail(`${onward.text} opened ${file}:${line}, which does not hold it`);
  console.log(`code link ${onward.text} -> ${shown.path}`);
}
for (const error of consoleErrors) fail(`06_gated_rnn.html after the clicks: console error: ${error}`);

// The pages of lessons with a run (browser_test.sh ran 05, 06 and 11): no box (the run's, a plot)
// over a heading, a code block or a formula, no code block squeezed beside one, and nothing cut:
// every formula and code block as wide as its content, the note with nothing beyond its width.
for (const file of ["05_rnn.html", "06_gated_rnn.html", "11_gpt.html"]) {
  await open(file);
  await evaluate("document.fonts.ready.then(() => true)");
  await sleep(100);  // the widths are fitted again once the fonts are in
  const layout = await evaluate(`(() => {
    const note = document.querySelector("#note");
    const name = (e) => e.tagName.toLowerCase() + (e.className ? "." + e.className.split(" ")[0] : "") + " '" + e.textContent.trim().slice(0, 40) + "'";
    const overlap = (a, b) => a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1;
    const boxes = [...note.querySelectorAll(".run-panel, figure.run-plot, .no-run")];
    const blocks = [...note.querySelectorAll("h1, h2, h3, h4, pre, .katex-display")];
    const over = [];
    for (const box of boxes)
      for (const block of blocks)
        if (!box.contains(block) && overlap(box.getBoundingClientRect(), block.getBoundingClientRect())) over.push(name(box) + " over " + name(block));
    const contentWidth = (e) => { const style = getComputedStyle(e); return e.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight); };
    const squeezed = [...note.querySelectorAll("pre")].filter((pre) => pre.getBoundingClientRect().width < contentWidth(pre.parentElement) - 2)
                       .map((pre) => name(pre) + " " + Math.round(pre.getBoundingClientRect().width) + " px of " + Math.round(contentWidth(pre.parentElement)));
    const cut = [...note.querySelectorAll("pre, .katex-display")].filter((e) => e.scrollWidth > e.clientWidth + 1)
                  .map((e) => name(e) + " " + e.scrollWidth + " px in " + e.clientWidth);
    return {panel: note.querySelector(".run-panel .run-figures dd") !== null, over, squeezed, cut,
            wide: note.scrollWidth > note.clientWidth + 1 ? note.scrollWidth + " px in " + note.clientWidth : null,
            fitted: [...note.querySelectorAll("pre, .katex-display")].filter((e) => e.style.fontSize || e.classList.contains("wrapped")).length};
  })()`);
  // Each flag opens its declaration: a common one the harness's, a lesson's own its lesson's.
  const flags = await evaluate(`[...document.querySelectorAll("#note a.pointer")].filter((a) => /^--[a-z][a-z0-9-]*$/.test(a.textContent))
                                  .map((a) => ({flag: a.textContent, href: a.getAttribute("href")}))`);
  if (flags.length === 0) fail(`${file}: no flag links`);
  for (const {flag, href} of flags) {
    const [, target, line] = /^#code=(.+):(\d+)$/.exec(href);
    const declared = sourceLines(target)[Number(line) - 1];
    // option("--steps", ...), add_flag("--lines,!--stream", ...), or a kind's setting, .flag = kBlockFlag
    if (!declared.includes(flag) && !declared.includes(".flag = k")) fail(`${file}: ${flag} opens ${target}:${line}, which does not declare it`);
    if (["--steps", "--lr", "--batch", "--threads", "--seed", "--quick", "--out"].includes(flag) && target !== "harness/cli.cpp")
      fail(`${file}: the common flag ${flag} opens ${target}:${line}, not harness/cli.cpp`);
  }
  const before = failures.length;
  if (!layout.panel) fail(`${file}: no figures of the run in its box`);
  for (const what of layout.over) fail(`${file}: ${what}`);
  for (const what of layout.squeezed) fail(`${file}: squeezed beside a box: ${what}`);
  for (const what of layout.cut) fail(`${file}: cut: ${what}`);
  if (layout.wide) fail(`${file}: the note is wider than its column: ${layout.wide}`);
  if (failures.length === before) console.log(`${file}: ${flags.length} flag links at their declarations, no overlap, nothing cut (${layout.fitted} formulas and code blocks made to fit)`);
}
await page("Page.captureScreenshot", {format: "png"}).then(({data}) => fs.writeFileSync(path.join(shots, "book_11_gpt_top.png"), Buffer.from(data, "base64")));

await open("11_gpt.html");
await click("a.pointer", "MultiheadAttention::forward") || fail("11_gpt.html has no pointer MultiheadAttention::forward");
await until("ladderBook.current !== null", "the code pane never showed MultiheadAttention::forward");
await page("Page.captureScreenshot", {format: "png"}).then(({data}) => fs.writeFileSync(path.join(shots, "book_11_gpt.png"), Buffer.from(data, "base64")));

const exited = new Promise((resolve) => chromium.on("exit", resolve));
await send("Browser.close").catch(() => {});
await Promise.race([exited, sleep(5000)]);
chromium.kill();
fs.rmSync(profile, {recursive: true, force: true, maxRetries: 5});
console.log(`${pages.length} pages, ${pointers} code pointers, ${equations} equations; screenshots in ${shots}`);
if (failures.length > 0) {
  console.error(`${failures.length} failures`);
  process.exit(1);
}
console.log("browser test passed");
