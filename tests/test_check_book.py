"""The book checker: page discovery, the raw-TeX heuristic, URLs, the local server (no browser), and
a check of a small fake site in headless Chromium when Chromium and Selenium are installed."""

import importlib.util
import json
import shutil
import struct
import urllib.error
import urllib.request
import zlib
from pathlib import Path

import pytest

from treebook import check_book as cb


@pytest.mark.parametrize("text, found", [
    ("The area is $x^2$.", ["$x^2$"]),
    ("Let $n$ be the sample size and $x_1$ the first.", ["$n$", "$x_1$"]),
    (r"with $\alpha$ fixed", [r"$\alpha$"]),
    ("a set $\\{a, b\\}$ here", ["$\\{a, b\\}$"]),
    ("display $$\\sum_i w_i$$ end", ["$$\\sum_i w_i$$"]),
    (r"inline \(a+b\) and \[c = d\]", [r"\(a+b\)", r"\[c = d\]"]),
    (r"an environment \begin{align} a &= b \end{align}", [r"\begin{align}"]),
    ("It costs $5 and $10.", []),
    ("It costs $5-$10, or $20.", []),
    ("between $ 3 and 4 $ dollars", []),
    ("Set $HOME and $PATH", []),
    ("the word $total$ is not math", []),
    (r"an escaped \$x^2\$ is text", []),
    ("no math at all", []),
    ("$5 for $x^2$", ["$x^2$"]),
])
def test_find_raw_tex(text, found):
    assert cb.find_raw_tex(text) == found


@pytest.mark.parametrize("content, tex", [
    ("x", True), ("x2", True), ("f'", True), ("a^b", True), ("x_i", True), (r"\beta", True), ("{a}", True),
    ("5", False), ("5 and ", False), ("total", False), ("", False), ("HOME and ", False),
])
def test_looks_like_tex(content, tex):
    assert cb.looks_like_tex(content) is tex


def test_long_raw_tex_is_cut():
    (item,) = cb.find_raw_tex("$" + "x_1 + " * 40 + "y$")
    assert len(item) == 80 and item.startswith("$x_1") and item.endswith("...")


def test_discover_pages(tmp_path):
    for rel in ["index.html", "intro.html", "book/ch1.html", "notebooks/00_tree.html", "genindex.html",
                "search.html", "_static/x.html", "_sources/a.html", "_images/b.html", "book/_static/c.html",
                "style.css", "book/notes.txt"]:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("<html></html>")
    assert cb.discover_pages(tmp_path) == ["index.html", "book/ch1.html", "intro.html", "notebooks/00_tree.html"]


def test_screenshot_name():
    assert cb.screenshot_name("index.html") == "index.png"
    assert cb.screenshot_name("book/sub/intro.html") == "book__sub__intro.png"


def test_external_urls():
    origin = "http://127.0.0.1:8123"
    urls = [f"{origin}/_static/a.js", f"{origin}/b.css", "data:image/png;base64,AAAA", "about:blank",
            "blob:http://127.0.0.1:8123/x", "", None, "https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-chtml.js",
            "http://127.0.0.1:9999/other-port.js", "//fonts.googleapis.com/css", "http://localhost:8123/x.js",
            "https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-chtml.js"]
    assert cb.external_urls(urls, origin) == [
        "https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-chtml.js", "http://127.0.0.1:9999/other-port.js",
        "//fonts.googleapis.com/css", "http://localhost:8123/x.js"]


def test_local_server_serves_the_folder_and_records_failures(tmp_path):
    (tmp_path / "index.html").write_text("<p>hello</p>")
    with cb.serve(tmp_path) as (origin, errors, lock):
        assert origin.startswith("http://127.0.0.1:")
        with urllib.request.urlopen(f"{origin}/index.html", timeout=10) as r:
            assert r.read() == b"<p>hello</p>"
        with pytest.raises(urllib.error.HTTPError):
            urllib.request.urlopen(f"{origin}/missing%20file.png", timeout=10)
        with lock:
            assert errors == [("/missing file.png", 404)]


def test_page_report_problems_and_summary():
    good = cb.PageReport("index.html", images=3)
    bad = cb.PageReport("book/ch1.html", images=1, math_errors=["Missing argument for \\frac in: \\frac{a}"],
                        broken_images=["fig.png"], raw_tex=["$x^2$"], external=["https://cdn.example/x.js"])
    assert good.problems() == []
    assert bad.problems() == ["book/ch1.html: math error: Missing argument for \\frac in: \\frac{a}",
                              "book/ch1.html: broken image: fig.png", "book/ch1.html: raw TeX: $x^2$",
                              "book/ch1.html: external load: https://cdn.example/x.js"]
    lines = cb.format_summary([good, bad]).splitlines()
    assert lines[0].split()[:3] == ["page", "images", "math"]
    assert lines[1].split() == ["index.html", "3", "0", "0", "0", "0", "0"]
    assert lines[2].split() == ["book/ch1.html", "1", "1", "1", "1", "1", "0"]


def test_the_page_script_skips_code_and_rendered_math():
    for selector in ("script", "style", "code", "pre", "mjx-container", ".MathJax", "textarea"):
        assert selector in cb.COLLECT_JS
    assert "MathJax.startup.promise" in cb.COLLECT_JS and "naturalWidth === 0" in cb.COLLECT_JS


def test_missing_browser_is_a_clear_error_when_not_root(monkeypatch):
    monkeypatch.setattr(cb, "CHROMIUM", "/nonexistent/chromium")
    monkeypatch.setattr(cb.os, "geteuid", lambda: 1000)
    monkeypatch.setattr(cb.subprocess, "run", lambda *a, **k: pytest.fail("must not run apt-get"))
    with pytest.raises(cb.BrowserMissing, match="apt-get install -y chromium chromium-driver"):
        cb.ensure_browser(log=lambda *_: None)


def test_missing_browser_is_installed_with_apt_as_root(monkeypatch):
    calls = []
    monkeypatch.setattr(cb, "CHROMEDRIVER", "/nonexistent/chromedriver")
    monkeypatch.setattr(cb.os, "geteuid", lambda: 0)
    monkeypatch.setattr(cb.subprocess, "run", lambda cmd, **k: calls.append(cmd))
    with pytest.raises(cb.BrowserMissing, match="still missing"):  # the fake apt-get installed nothing
        cb.ensure_browser(log=lambda *_: None)
    assert calls == [["apt-get", "update"], ["apt-get", "install", "-y", "chromium", "chromium-driver"]]


def test_command_line_without_a_built_book(tmp_path, capsys):
    assert cb.main(["--html", str(tmp_path / "nothing"), "--out", str(tmp_path / "shots")]) == 2
    assert "build the book first" in capsys.readouterr().err


def _png(width: int, height: int) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(b"\x00" + b"\x20\x60\xa0" * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def _page(body: str) -> str:
    return f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>t</title></head><body>{body}</body></html>"


HAVE_BROWSER = (shutil.which("chromium") is not None and Path(cb.CHROMEDRIVER).is_file()
                and importlib.util.find_spec("selenium") is not None)


@pytest.mark.skipif(not HAVE_BROWSER, reason="needs Debian's chromium and chromium-driver and selenium")
def test_check_a_fake_site_in_chromium(tmp_path):
    site, shots = tmp_path / "html", tmp_path / "shots"
    (site / "book").mkdir(parents=True)
    (site / "_static").mkdir()
    (site / "_static" / "figure.png").write_bytes(_png(40, 20))
    (site / "index.html").write_text(_page(
        "<h1>A good page</h1><p>Prices such as $5 and $10 are no math.</p>"
        "<p>Code keeps its dollars: <code>$x^2$</code></p><pre>$$\\alpha$$</pre>"
        "<img src='_static/figure.png' alt='a figure'>"))
    (site / "book" / "broken.html").write_text(_page("<p>A figure is missing.</p><img src='missing.png'>"))
    (site / "raw.html").write_text(_page("<p>The area is $x^2$, computed <em>quickly</em>.</p>"))
    (site / "genindex.html").write_text(_page("<p>$y^2$ not checked</p>"))
    logged = []

    problems = cb.check_book(site, shots, log=logged.append)

    assert problems == ["book/broken.html: broken image: missing.png", "raw.html: raw TeX: $x^2$"]
    assert sorted(p.name for p in shots.glob("*.png")) == ["book__broken.png", "index.png", "raw.png"]
    assert all(p.read_bytes().startswith(b"\x89PNG") for p in shots.glob("*.png"))
    report = {r["page"]: r for r in json.loads((shots / "report.json").read_text())}
    assert {page: r["images"] for page, r in report.items()} == {"index.html": 1, "book/broken.html": 1,
                                                                 "raw.html": 0}
    summary = "\n".join(logged)
    assert "book/broken.html" in summary and "2 problem(s):" in summary


def test_the_root_index_is_the_root_page_itself(tmp_path):
    """index.html is written as the root page (not a meta-refresh redirect), its relative links resolving
    from the root page's folder; a missing root page or one that already has a <base> is refused."""
    from treebook.book import write_root_index

    (tmp_path / "book").mkdir()
    page = ('<!DOCTYPE html>\n<html data-content_root="../"><head>\n<link href="../_static/a.css" rel="stylesheet">'
            '</head><body><a href="../notebooks/ch.html">chapter</a><a href="scorecard.html">scores</a></body></html>')
    (tmp_path / "book" / "intro.html").write_text(page)
    (tmp_path / "index.html").write_text('<meta http-equiv="Refresh" content="0; url=book/intro.html" />')
    index = write_root_index(tmp_path, "book/intro")
    text = index.read_text()
    assert "Refresh" not in text and text.replace('\n<base href="book/intro.html">', "") == page
    assert text.index("<base") < text.index("_static/a.css")  # before any relative URL of the head
    with pytest.raises(FileNotFoundError, match="root document"):
        write_root_index(tmp_path, "book/missing")
    (tmp_path / "book" / "based.html").write_text("<html><head><base href='x/'></head></html>")
    with pytest.raises(ValueError, match="<base>"):
        write_root_index(tmp_path, "book/based")


def _scorecard_html(panels, rows):
    head = "<tr><th>chapter</th><th>quantity</th><th>paper</th><th>ours</th><th>paper-scale</th><th>verdict</th></tr>"
    body = "".join(f"<tr><td>{ch}</td><td>{q}</td><td>1</td><td>2</td><td></td><td>{v}</td></tr>"
                   for ch, q, v in rows)
    return (f"<html><body><script>var panels = 'chapter x: 0 numeric rows';</script>"
            f"<pre>panels: {panels}</pre><table>{head}{body}</table></body></html>")


def test_scorecard_problems_follow_the_pages_rule():
    """The scorecard page fails on a panel without numeric rows, a missing panel list, a verdict outside
    the list and a 'differs: scale' row whose stored paper-scale run does not agree; a page that keeps
    the rule passes (scripts are not read as the page's text)."""
    from treebook.check_book import scorecard_problems

    records = {"03-shape-trees": {"scorecard": [
        {"quantity": "proof rate % K=3, D=3", "verdict": "differs: scale"},
        {"quantity": "train accuracy %", "verdict": "agrees"}]}}
    good = _scorecard_html("chapter 3 shape: 2 numeric rows",
                           [("3 shape", "proof rate % K=3, D=3", "differs: scale"),
                            ("3 shape", "train accuracy %", "differs: scale"),
                            ("3 shape", "test accuracy &gt; 80 %", "agrees")])
    assert scorecard_problems(good, records) == []
    bad = _scorecard_html("chapter 3 shape: 2 numeric rows; chapter 4 oblique: 0 numeric rows",
                          [("3 shape", "proof rate % K=3, D=3", "differs: scale"), ("3 shape", "x", "fine")])
    records["03-shape-trees"]["scorecard"][0]["verdict"] = "differs: unexplained"
    problems = scorecard_problems(bad, records)
    assert any("chapter 4 oblique has no numeric row" in p for p in problems)
    assert any("proof rate" in p and "'differs: unexplained'" in p for p in problems)
    assert any("'fine' is not one of" in p for p in problems)
    assert len(problems) == 3
    assert any("lists no figure panel" in p for p in scorecard_problems("<table></table>", {}))
    assert any("no table of every row" in p for p in scorecard_problems("<p>panels: chapter 1: 3 numeric rows</p>", {}))
