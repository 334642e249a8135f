"""Checking the built HTML book in a real browser, the way a reader sees it.

``python -m treebook.check_book [--html _build/html] [--out _build/screenshots]`` serves the built
book on an ephemeral port of 127.0.0.1 (``http.server`` in a thread), opens every page in headless
Chromium (driven by Selenium through Debian's ``/usr/bin/chromedriver``), waits for MathJax 3 to
finish typesetting (``MathJax.startup.promise``, on the pages that load MathJax) and for the images
to settle, saves a full-page screenshot of each page as ``<out>/<page path, "/" as "__">.png``, and
reports per page:

* math errors: MathJax's ``mjx-merror`` / ``[data-mjx-error]`` elements with MathJax's message and
  the TeX source, undefined macros (which MathJax shows in red), and a MathJax script that never
  started or never finished;
* broken images: ``<img>`` elements that finished loading with ``naturalWidth == 0`` and that the
  browser cannot decode (or that never finished loading);
* raw TeX: ``$...$``, ``$$...$$``, ``\\(...\\)``, ``\\[...\\]`` or ``\\begin{...}`` left as text
  outside code, scripts and rendered math (``find_raw_tex``; a ``$...$`` pair counts only when its
  content looks like TeX, so prices such as "$5 and $10" do not);
* external loads: scripts, stylesheets or any other resource whose URL is not on the local server
  (the browser is kept off the network: every other host resolves to nothing);
* missing files: other requests the local server answered with an error (a 404 font or script);
* the number of ``<img>`` elements (the summary's first column).

On the scorecard page (``book/scorecard.html``, read as static HTML beside the stored paper-scale records
of ``--records``) it also fails on a figure panel without a numeric row and on a verdict that breaks the
page's rule (a ``differs: scale`` row whose paper-scale run does not agree), see ``scorecard_problems``.

It prints one line per page and exits 1 when any problem was found, 0 when none, 2 when the check
could not run. ``check_book(html_dir, out_dir)`` does the same and returns the problems as strings.

Chromium comes from Debian's ``chromium`` and ``chromium-driver`` packages; when they are missing
and the process runs as root they are installed with ``apt-get``; nothing else is downloaded
(Selenium Manager is never used: the driver's path is given).
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import functools
import http.server
import json
import math
import os
import re
import socket
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

__all__ = ["check_book", "scorecard_problems", "discover_pages", "find_raw_tex", "looks_like_tex", "external_urls",
           "screenshot_name", "serve", "ensure_browser", "PageReport", "format_summary", "main"]

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
APT_PACKAGES = ("chromium", "chromium-driver")
CHROMIUM_FLAGS = ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                  "--window-size=1280,1600")
# Keep the browser's own services quiet (no update checks, no sync, no safe-browsing lists).
QUIET_FLAGS = ("--no-first-run", "--no-default-browser-check", "--disable-background-networking",
               "--disable-component-update", "--disable-sync", "--disable-extensions",
               "--disable-default-apps", "--disable-domain-reliability",
               "--disable-client-side-phishing-detection", "--metrics-recording-only",
               "--disable-features=Translate,OptimizationHints,MediaRouter,AutofillServerCommunication")

SKIP_PAGES = {"genindex.html", "search.html"}
SKIP_DIRS = {"_static", "_sources", "_images", "_downloads"}
PAGE_LOAD_TIMEOUT = 60.0  # seconds for one page's load event
SETTLE_TIMEOUT = 45.0  # seconds for MathJax and the images, after the load event
MAX_SCREENSHOT_HEIGHT = 30000  # CSS pixels; longer pages are cut there

# ---------------------------------------------------------------------------------------------------
# Raw TeX in text (pure Python, applied to the text the browser returns)

_SINGLE_VARIABLE = re.compile(r"[A-Za-z][0-9]*'*")
_TEX_CHARS = re.compile(r"[\\^_{]")
_DISPLAY_DOLLARS = re.compile(r"(?<!\\)\$\$(.+?)(?<!\\)\$\$", re.DOTALL)
# pandoc / markdown-it "dollarmath" rules: no space after the opening or before the closing dollar,
# no digit right after the closing one; the content is on one line and has no dollar.
_INLINE_DOLLARS = re.compile(r"(?<![\\$])\$(?![\s$])([^$\n]*?[^\s\\$])\$(?![$\d])")
_PAREN = re.compile(r"\\\((.+?)\\\)", re.DOTALL)
_BRACKET = re.compile(r"\\\[(.+?)\\\]", re.DOTALL)
_BEGIN = re.compile(r"\\begin\{[A-Za-z]+\*?\}")


def looks_like_tex(content: str) -> bool:
    """Whether the text between two dollars looks like math: it has ``\\``, ``^``, ``_`` or ``{``, or
    it is a single variable (``x``, ``n``, ``x2``, ``f'``)."""
    content = content.strip()
    return bool(content) and (bool(_TEX_CHARS.search(content)) or bool(_SINGLE_VARIABLE.fullmatch(content)))


def _snippet(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def find_raw_tex(text: str) -> list[str]:
    """The pieces of TeX left unrendered in ``text``, in order of appearance (empty when none).

    Detected: ``$$...$$``, ``\\(...\\)``, ``\\[...\\]`` and ``\\begin{env}`` always (with content),
    and ``$...$`` when the content looks like TeX (``looks_like_tex``), so that "costs $5 and $10"
    or "$HOME" is not reported. An escaped ``\\$`` is no delimiter.
    """
    found: list[tuple[int, str]] = []
    taken = [False] * (len(text) + 1)

    def take(m: re.Match, ok: bool) -> None:
        if ok and not any(taken[m.start():m.end()]):
            found.append((m.start(), _snippet(m.group(0))))
            taken[m.start():m.end()] = [True] * (m.end() - m.start())

    for m in _DISPLAY_DOLLARS.finditer(text):
        take(m, bool(m.group(1).strip()) and looks_like_tex(m.group(1)))
    for pattern in (_PAREN, _BRACKET):
        for m in pattern.finditer(text):
            take(m, bool(m.group(1).strip()))
    for m in _BEGIN.finditer(text):
        take(m, True)
    masked = "".join("\0" if t else c for c, t in zip(text, taken))  # what is reported is not re-used
    for m in _INLINE_DOLLARS.finditer(masked):
        take(m, "\0" not in m.group(0) and looks_like_tex(m.group(1)))
    return [s for _, s in sorted(found)]


# ---------------------------------------------------------------------------------------------------
# Pages, URLs, file names

def discover_pages(html_dir) -> list[str]:
    """The book's pages under ``html_dir``, as POSIX paths relative to it, ``index.html`` first.

    Sphinx's generated ``genindex.html`` and ``search.html`` and the asset folders (``_static``,
    ``_sources``, ``_images``, ``_downloads``) are left out.
    """
    root = Path(html_dir)
    pages = []
    for p in root.rglob("*.html"):
        rel = p.relative_to(root)
        if not p.is_file() or set(rel.parts[:-1]) & SKIP_DIRS or rel.as_posix() in SKIP_PAGES:
            continue
        pages.append(rel.as_posix())
    return sorted(pages, key=lambda s: (s != "index.html", s))


def screenshot_name(page: str) -> str:
    """``book/intro.html`` -> ``book__intro.png``."""
    stem = page[:-5] if page.endswith(".html") else page
    return stem.replace("/", "__") + ".png"


_LOCAL_SCHEMES = {"data", "blob", "about", "javascript", "mailto", "chrome", "chrome-error", ""}


def external_urls(urls, origin: str) -> list[str]:
    """The URLs of ``urls`` that are not served by ``origin`` (``http://127.0.0.1:PORT``), deduplicated
    in order; ``data:``, ``blob:``, ``about:`` URLs and relative ones count as local."""
    local = urlsplit(origin)
    out: list[str] = []
    for url in urls:
        if not url:
            continue
        parts = urlsplit(url)
        if parts.scheme.lower() in _LOCAL_SCHEMES and not url.startswith("//"):
            continue
        if parts.scheme.lower() == local.scheme and parts.netloc.lower() == local.netloc.lower():
            continue
        if url not in out:
            out.append(url)
    return out


# ---------------------------------------------------------------------------------------------------
# The local server

class _Handler(http.server.SimpleHTTPRequestHandler):
    """Serves the folder quietly and records the requests it answered with an error."""

    errors: list[tuple[str, int]]
    lock: threading.Lock

    def log_message(self, format, *args):
        pass

    def log_request(self, code="-", size="-"):
        with contextlib.suppress(TypeError, ValueError):
            if int(code) >= 400:
                with self.lock:
                    self.errors.append((unquote(urlsplit(self.path).path), int(code)))


@contextlib.contextmanager
def serve(html_dir):
    """Serve ``html_dir`` on an ephemeral port of 127.0.0.1 in a thread; yield ``(origin, errors, lock)``,
    where ``errors`` is the live list of ``(path, status)`` of the requests that failed (guarded by
    ``lock``)."""
    errors: list[tuple[str, int]] = []
    lock = threading.Lock()
    handler = type("BookHandler", (_Handler,), {"errors": errors, "lock": lock})
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(handler, directory=str(html_dir)))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, name="check-book-server", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", errors, lock
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


# ---------------------------------------------------------------------------------------------------
# The browser

class BrowserMissing(RuntimeError):
    """Chromium, its driver or Selenium is not installed (and could not be installed here)."""


def ensure_browser(log=print) -> None:
    """Make sure ``/usr/bin/chromium`` and ``/usr/bin/chromedriver`` exist: install Debian's
    ``chromium`` and ``chromium-driver`` with apt-get when running as root, else raise
    ``BrowserMissing`` saying what to install."""
    missing = [p for p in (CHROMIUM, CHROMEDRIVER) if not os.access(p, os.X_OK)]
    if not missing:
        return
    hint = "apt-get update && apt-get install -y " + " ".join(APT_PACKAGES)
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        raise BrowserMissing(f"{', '.join(missing)} not found: install Debian's packages as root: {hint}")
    log(f"check_book: {', '.join(missing)} not found; installing {' '.join(APT_PACKAGES)} with apt-get")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    try:
        subprocess.run(["apt-get", "update"], check=True, env=env)
        subprocess.run(["apt-get", "install", "-y", *APT_PACKAGES], check=True, env=env)
    except (OSError, subprocess.CalledProcessError) as exc:
        raise BrowserMissing(f"installing the browser failed ({exc}); run: {hint}") from exc
    missing = [p for p in (CHROMIUM, CHROMEDRIVER) if not os.access(p, os.X_OK)]
    if missing:
        raise BrowserMissing(f"{', '.join(missing)} still missing after installing {' '.join(APT_PACKAGES)}")


def _closed_port() -> socket.socket:
    """A loopback port that is bound but never listens: the browser's proxy, so that any request to
    another host (even an IP address) is refused at once instead of reaching the network."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 0))
    return s


def _make_driver(proxy_port: int):
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.options import Options
        from selenium.webdriver.chrome.service import Service
    except ImportError as exc:
        raise BrowserMissing("the 'selenium' package is needed: pip install selenium (the 'book' extra)") from exc
    opts = Options()
    opts.binary_location = CHROMIUM
    for flag in (*CHROMIUM_FLAGS, *QUIET_FLAGS):
        opts.add_argument(flag)
    # Loopback is never proxied (Chromium's implicit bypass rules); every other host is unresolvable
    # and, for IP addresses, sent to a closed local port.
    opts.add_argument("--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1")
    opts.add_argument(f"--proxy-server=http://127.0.0.1:{proxy_port}")
    opts.page_load_strategy = "normal"
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)
    driver.set_page_load_timeout(PAGE_LOAD_TIMEOUT)
    driver.set_script_timeout(SETTLE_TIMEOUT + 15)
    return driver


# Runs in the page (execute_async_script): waits for MathJax and the images, then collects.
# arguments[0]: the settle timeout in milliseconds; the last argument is Selenium's callback.
COLLECT_JS = r"""
const done = arguments[arguments.length - 1];
const limit = arguments[0];
const t0 = Date.now();
const sleep = ms => new Promise(r => setTimeout(r, ms));
const left = () => Math.max(0, limit - (Date.now() - t0));
const timeout = (p, ms) => Promise.race([p.then(() => true, () => true), sleep(ms).then(() => false)]);
const EXCLUDED = 'script, style, code, pre, kbd, samp, textarea, noscript, template, mjx-container, '
               + 'mjx-assistive-mml, .MathJax, .MathJax_Preview, .MathJax_Display';
const BLOCK = 'p, li, dt, dd, td, th, caption, figcaption, blockquote, h1, h2, h3, h4, h5, h6, '
            + 'div, section, article, aside, header, footer, nav, main, body';
(async () => {
  const out = {mathjax: false, math_errors: [], images: 0, broken_images: [], texts: [], urls: []};
  // MathJax 3: the page loads it when it has math; wait for startup.promise (the first typesetting).
  const mjScript = Array.from(document.scripts).find(s => /mathjax|tex-(chtml|svg|mml)/i.test(s.src || ''));
  if (mjScript || (window.MathJax && window.MathJax.startup)) {
    out.mathjax = true;
    // (after the load event the script has run or failed: then 5 s is plenty for it to start)
    const started = () => window.MathJax && window.MathJax.startup && window.MathJax.startup.promise;
    const t1 = Date.now();
    while (!started() && left() > 0 && !(document.readyState === 'complete' && Date.now() - t1 > 5000)) {
      await sleep(100);
    }
    const mj = window.MathJax;
    if (!(mj && mj.startup && mj.startup.promise)) {
      out.math_errors.push('MathJax did not start (' + (mjScript ? mjScript.getAttribute('src') : 'no script') + ')');
    } else if (!(await timeout(mj.startup.promise, left()))) {
      out.math_errors.push('MathJax did not finish typesetting within ' + Math.round(limit / 1000) + ' s');
    }
  }
  // Images: load lazy ones now, then wait until each has loaded or failed.
  const imgs = Array.from(document.images);
  out.images = imgs.length;
  imgs.forEach(img => { if (img.loading === 'lazy') img.loading = 'eager'; });
  await timeout(Promise.all(imgs.map(img => img.complete ? Promise.resolve() : new Promise(r => {
    img.addEventListener('load', r, {once: true});
    img.addEventListener('error', r, {once: true});
  }))), left());
  for (const img of imgs) {
    const src = img.getAttribute('src') || img.currentSrc || '';
    if (!img.complete) {
      out.broken_images.push({src: src, url: img.currentSrc || img.src, why: 'did not finish loading'});
    } else if (img.naturalWidth === 0) {
      // An SVG without an intrinsic size also has naturalWidth 0: only an image that cannot be decoded is broken.
      let broken = true;
      if (img.currentSrc || img.src) {
        try { await Promise.race([img.decode(), sleep(2000).then(() => { throw 0; })]); broken = false; }
        catch (e) { broken = true; }
      }
      if (broken) out.broken_images.push({src: src, url: img.currentSrc || img.src, why: 'not loaded'});
    }
  }
  // MathJax errors, with the TeX source when MathJax still knows it.
  const items = [];
  try { if (window.MathJax && MathJax.startup && MathJax.startup.document) {
    for (const item of MathJax.startup.document.math) items.push(item);
  } } catch (e) {}
  const seen = new Set();
  for (const el of document.querySelectorAll('mjx-merror, [data-mjx-error]')) {
    const box = el.closest('mjx-container') || el;
    if (seen.has(box)) continue;
    seen.add(box);
    const msg = el.getAttribute('data-mjx-error') || el.getAttribute('title') || el.textContent || 'math error';
    const item = items.find(i => i.typesetRoot === box);
    out.math_errors.push(msg.trim() + (item && item.math ? ' in: ' + String(item.math).trim() : ''));
  }
  // An undefined macro is no error for MathJax (its "noundefined" extension shows it in red).
  for (const item of items) {
    try {
      const mml = MathJax.startup.toMML(item.root);
      for (const m of mml.matchAll(/<mtext mathcolor="red">(\\[^<]*)<\/mtext>/g)) {
        out.math_errors.push('Undefined control sequence ' + m[1] + ' in: ' + String(item.math).trim());
      }
    } catch (e) {}
  }
  // Text outside code, scripts and rendered math, joined per block, where a delimiter could be.
  const groups = new Map();
  const walker = document.createTreeWalker(document.body || document.documentElement, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const parent = n.parentElement;
    if (!parent || parent.closest(EXCLUDED)) continue;
    const block = parent.closest(BLOCK) || parent;
    groups.set(block, (groups.get(block) || '') + n.data);
  }
  for (const text of groups.values()) {
    if (/\$|\\[(\[]|\\begin\{/.test(text)) out.texts.push(text.slice(0, 20000));
    if (/Math (Processing|input|output) Error/i.test(text)) out.math_errors.push(text.trim().slice(0, 200));
  }
  // Everything the page loaded or refers to as a script, stylesheet, frame or media.
  const urls = [];
  document.querySelectorAll('script[src]').forEach(s => urls.push(s.src));
  document.querySelectorAll('link[href]').forEach(l => {
    if (/(^|\s)(stylesheet|preload|modulepreload|prefetch|icon|manifest)(\s|$)/i.test(l.rel)) urls.push(l.href);
  });
  document.querySelectorAll('iframe[src], embed[src], video[src], audio[src], source[src], track[src]')
    .forEach(e => urls.push(e.src));
  document.querySelectorAll('object[data]').forEach(e => urls.push(e.data));
  imgs.forEach(img => urls.push(img.currentSrc || img.src));
  performance.getEntriesByType('resource').forEach(e => urls.push(e.name));
  out.urls = urls;
  return out;
})().then(done, e => done({error: String(e && e.stack || e)}));
"""


def _screenshot(driver, path: Path) -> None:
    """A full-page PNG (Chrome DevTools: capture beyond the viewport, clipped to the content)."""
    metrics = driver.execute_cdp_cmd("Page.getLayoutMetrics", {})
    size = metrics.get("cssContentSize") or metrics.get("contentSize")
    width = max(1, math.ceil(size["width"]))
    height = max(1, min(math.ceil(size["height"]), MAX_SCREENSHOT_HEIGHT))
    shot = driver.execute_cdp_cmd("Page.captureScreenshot", {
        "format": "png", "captureBeyondViewport": True,
        "clip": {"x": 0, "y": 0, "width": width, "height": height, "scale": 1}})
    path.write_bytes(base64.b64decode(shot["data"]))


# ---------------------------------------------------------------------------------------------------
# Checking

@dataclass
class PageReport:
    """What was found on one page."""

    page: str
    images: int = 0
    math_errors: list[str] = field(default_factory=list)
    broken_images: list[str] = field(default_factory=list)
    raw_tex: list[str] = field(default_factory=list)
    external: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)  # other local requests that failed (404 ...)
    failures: list[str] = field(default_factory=list)  # the page could not be checked
    screenshot: str | None = None

    def problems(self) -> list[str]:
        kinds = [("page not checked", self.failures), ("math error", self.math_errors),
                 ("broken image", self.broken_images), ("raw TeX", self.raw_tex),
                 ("external load", self.external), ("missing file", self.missing)]
        return [f"{self.page}: {kind}: {item}" for kind, items in kinds for item in items]


def _check_page(driver, origin: str, page: str, out_dir: Path, server_errors: list, lock) -> PageReport:
    from selenium.common.exceptions import TimeoutException

    report = PageReport(page)
    with lock:
        server_errors.clear()
    try:
        driver.get(f"{origin}/{page}")
    except TimeoutException:
        report.failures.append(f"the page did not load within {PAGE_LOAD_TIMEOUT:.0f} s")
        with contextlib.suppress(Exception):
            driver.execute_script("window.stop();")
    try:
        data = driver.execute_async_script(COLLECT_JS, int(SETTLE_TIMEOUT * 1000))
    except TimeoutException:
        data = {"error": f"the page's checks did not finish within {SETTLE_TIMEOUT + 15:.0f} s"}
    if not isinstance(data, dict) or "error" in data:
        report.failures.append(str(data.get("error") if isinstance(data, dict) else data))
        data = {}
    report.images = int(data.get("images", 0))
    report.math_errors = list(data.get("math_errors", []))
    report.broken_images = [b["src"] + ("" if b["why"] == "not loaded" else f" ({b['why']})")
                            for b in data.get("broken_images", [])]
    for text in data.get("texts", []):
        report.raw_tex.extend(find_raw_tex(text))
    report.external = external_urls(data.get("urls", []), origin)
    try:
        path = out_dir / screenshot_name(page)
        _screenshot(driver, path)
        report.screenshot = str(path)
    except Exception as exc:  # a screenshot that fails is reported, the check goes on
        report.failures.append(f"screenshot failed: {type(exc).__name__}: {exc}".strip())
    time.sleep(0.1)  # late requests (fonts) reach the server's list
    broken_paths = {unquote(urlsplit(b.get("url") or "").path) for b in data.get("broken_images", [])}
    with lock:
        errors = list(server_errors)
    for path_, status in errors:  # the browser asks for /favicon.ico by itself; broken images are reported
        if path_.endswith("/favicon.ico") or path_ in broken_paths:
            continue
        item = f"{path_} (HTTP {status})"
        if item not in report.missing:
            report.missing.append(item)
    return report


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else ""


def format_summary(reports: list[PageReport]) -> str:
    """One line per page: images, math errors, broken images, raw TeX, external loads, missing files."""
    cols = ("images", "math err", "broken img", "raw TeX", "external", "missing")
    width = max([len("page"), *(len(r.page) for r in reports)])
    lines = [f"{'page':<{width}}  " + "  ".join(f"{c:>10}" for c in cols)]
    for r in reports:
        counts = (r.images, len(r.math_errors), len(r.broken_images), len(r.raw_tex), len(r.external),
                  len(r.missing))
        flag = "  NOT CHECKED" if r.failures else ""
        lines.append(f"{r.page:<{width}}  " + "  ".join(f"{n:>10}" for n in counts) + flag)
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------------
# The scorecard page (static HTML: its tables and printed lines need no browser)

SCORECARD_PAGE = "book/scorecard.html"
_PANEL = re.compile(r"chapter ([^:;]+?): (\d+) numeric rows?")


class _PageText(HTMLParser):
    """The text of an HTML page (``text``) and its tables as rows of cell texts (``tables``)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.text, self.tables = [], []
        self._cell = None
        self._skip = 0

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style"):
            self._skip += 1
        elif tag == "table":
            self.tables.append([])
        elif tag == "tr" and self.tables:
            self.tables[-1].append([])
        elif tag in ("td", "th") and self.tables and self.tables[-1]:
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("script", "style"):
            self._skip = max(0, self._skip - 1)
        elif tag in ("td", "th") and self._cell is not None:
            self.tables[-1][-1].append(" ".join("".join(self._cell).split()))
            self._cell = None

    def handle_data(self, data):
        if self._skip:
            return
        self.text.append(data)
        if self._cell is not None:
            self._cell.append(data)


def scorecard_problems(html: str, records: dict) -> list[str]:
    """What is wrong with the built scorecard page ``html`` given the stored paper-scale ``records``
    (notebook name: record): a figure panel with no numeric row or no list of the panels, a verdict that
    is not one of ``VERDICTS``, and a ``differs: scale`` row whose stored paper-scale run does not agree
    (the page's own rule: such a row takes the paper-scale verdict)."""
    from .results import VERDICTS, chapter_label

    page = _PageText()
    page.feed(html)
    text = " ".join("".join(page.text).split())
    problems = []
    panels = [(m.group(1).strip(), int(m.group(2))) for line in re.findall(r"panels: ([^\n]*)", text)
              for m in _PANEL.finditer(line)]
    if not panels:
        problems.append("the page lists no figure panel ('panels: chapter ...: n numeric rows')")
    problems += [f"the figure panel of chapter {ch} has no numeric row" for ch, n in panels if n == 0]
    stored = {(chapter_label(stem), " ".join(str(row.get("quantity", "")).split())): row.get("verdict")
              for stem, rec in records.items() for row in rec.get("scorecard", [])}
    table = next((t for t in page.tables if t and {"chapter", "quantity", "verdict", "paper-scale"} <= set(t[0])),
                 None)
    if table is None:
        return problems + ["the page has no table of every row (chapter, quantity, paper-scale, verdict)"]
    col = {name: i for i, name in enumerate(table[0])}
    for cells in table[1:]:
        if len(cells) != len(col):
            continue
        chapter, quantity, verdict = cells[col["chapter"]], cells[col["quantity"]], cells[col["verdict"]]
        where = f"chapter {chapter}, {quantity!r}"
        if verdict not in VERDICTS:
            problems.append(f"{where}: verdict {verdict!r} is not one of {', '.join(VERDICTS)}")
        paper = stored.get((chapter, quantity))
        if verdict == "differs: scale" and paper not in (None, "agrees", "differs: scale"):
            problems.append(f"{where}: says 'differs: scale' while its paper-scale run says {paper!r}")
    if len(table) < 2:
        problems.append("the table of every row is empty")
    return problems


def _scorecard_check(html_dir: Path, records_dir: Path | None) -> list[str]:
    page = html_dir / SCORECARD_PAGE
    if not page.is_file():
        return []
    records = {}
    if records_dir is not None and Path(records_dir).is_dir():
        records = {p.stem: json.loads(p.read_text()) for p in sorted(Path(records_dir).glob("*.json"))}
    return [f"{SCORECARD_PAGE}: {p}" for p in scorecard_problems(page.read_text(encoding="utf-8"), records)]


def check_book(html_dir="_build/html", out_dir="_build/screenshots", log=print,
               records_dir="results/paper") -> list[str]:
    """Check every page of the built book in headless Chromium; return the problems (empty: all good).

    Screenshots go to ``out_dir`` (one PNG per page) with ``report.json`` beside them; the summary and
    the problems are written with ``log``. Raises ``FileNotFoundError`` when ``html_dir`` is not a
    built book and ``BrowserMissing`` when no browser can be had.
    """
    html_dir, out_dir = Path(html_dir), Path(out_dir)
    if not (html_dir / "index.html").is_file():
        raise FileNotFoundError(f"{html_dir}/index.html not found: build the book first (make book)")
    pages = discover_pages(html_dir)
    ensure_browser(log=log)
    out_dir.mkdir(parents=True, exist_ok=True)
    reports: list[PageReport] = []
    blocker = _closed_port()
    with serve(html_dir) as (origin, server_errors, lock), contextlib.closing(blocker):
        driver = _make_driver(blocker.getsockname()[1])
        try:
            for page in pages:
                t0 = time.perf_counter()
                try:
                    report = _check_page(driver, origin, page, out_dir, server_errors, lock)
                except Exception as exc:  # the browser itself failed: report it, start a new one
                    report = PageReport(page, failures=[f"{type(exc).__name__}: {_first_line(exc)}"])
                    with contextlib.suppress(Exception):
                        driver.quit()
                    driver = _make_driver(blocker.getsockname()[1])
                reports.append(report)
                log(f"  {page}: {len(report.problems())} problem(s), {time.perf_counter() - t0:.1f} s")
        finally:
            with contextlib.suppress(Exception):
                driver.quit()
    problems = [p for r in reports for p in r.problems()] + _scorecard_check(html_dir, records_dir)
    (out_dir / "report.json").write_text(json.dumps([asdict(r) for r in reports], indent=1))
    log(format_summary(reports))
    if problems:
        log(f"\n{len(problems)} problem(s):")
        for p in problems:
            log(f"  {p}")
    else:
        log(f"\nall {len(reports)} pages are fine; screenshots in {out_dir}")
    return problems


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m treebook.check_book", description=__doc__.split("\n\n")[0],
                                epilog="Exit status: 0 no problem, 1 problems found, 2 the check could not run.")
    p.add_argument("--html", default="_build/html", help="the built book (default: _build/html)")
    p.add_argument("--out", default="_build/screenshots", help="folder for the screenshots (default: %(default)s)")
    p.add_argument("--records", default="results/paper",
                   help="the stored paper-scale records the scorecard page is checked against (default: %(default)s)")
    args = p.parse_args(argv)
    try:
        problems = check_book(args.html, args.out, records_dir=args.records)
    except (FileNotFoundError, BrowserMissing) as exc:
        print(f"check_book: {exc}", file=sys.stderr)
        return 2
    return 1 if problems else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
