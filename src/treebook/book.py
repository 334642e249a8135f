"""Building the Jupyter Book from notebooks executed at build time.

``build_book()`` stages the book sources in ``_build/stage``, executes every notebook of
``_toc.yml`` there with papermill (book-scale defaults; a failing cell fails the build), executes
the scorecard page last (it gathers the chapters' JSON records), copies MathJax from the
``django-static-mathjax`` package so that math renders without internet, and runs
``jupyter-book build`` with execution turned off (the notebooks are already executed).

Independent notebooks execute in parallel (``jobs``, one per core by default), the longest first
(by the previous build's times; on a first build by the seconds of ``book/notebook-seconds.json``,
measured on a 2-core machine, and in reverse book order for a notebook it does not list). An executed notebook is reused when neither it, its parameters, the package's source
nor the stored paper-scale records changed since the last build (a content hash), so rebuilding
after an edit of the prose is quick.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

import yaml

from .notebooks import execute_notebook, load_profile, project_root, read_yaml, toc_notebooks

__all__ = ["build_book", "check_html", "image_outputs", "prepare_for_book"]


def _tree_hash(paths) -> str:
    h = hashlib.sha256()
    for p in paths:
        for f in sorted(Path(p).rglob("*")) if Path(p).is_dir() else [Path(p)]:
            if f.is_file() and f.suffix in {".py", ".ipynb", ".yml", ".yaml", ".json"} \
                    and "__pycache__" not in f.parts:
                h.update(str(f.name).encode())
                h.update(f.read_bytes())
    return h.hexdigest()


def _mathjax_dir() -> Path:
    try:
        import mathjax  # django-static-mathjax
    except ImportError as exc:
        raise RuntimeError("MathJax is needed offline: install the 'book' extra (django-static-mathjax)") from exc
    es5 = Path(mathjax.__file__).parent / "static" / "mathjax" / "es5"
    if not (es5 / "tex-chtml.js").is_file():
        raise RuntimeError(f"MathJax files not found in {es5}")
    return es5


_IMAGES = ("image/png", "image/svg+xml", "image/jpeg")


def _is_image(output: dict) -> bool:
    return any(k in output.get("data", {}) for k in _IMAGES)


def prepare_for_book(executed: Path) -> None:
    """Adapt an executed notebook for its page.

    Papermill's injected-parameters cell is hidden (it only sets ``result_path``). A cell with a
    figure caption (MyST-NB's ``mystnb.figure`` metadata) that also prints tables would have every
    output framed as a figure, each with the caption: its image outputs move to a cell of their own
    right after it (no source shown), which alone carries the caption.
    """
    nb = json.loads(executed.read_text())
    cells = []
    for cell in nb.get("cells", []):
        cells.append(cell)
        tags = cell.get("metadata", {}).get("tags", [])
        if "injected-parameters" in tags and "remove-cell" not in tags:
            tags.append("remove-cell")
        outputs = cell.get("outputs", [])
        figure = cell.get("metadata", {}).get("mystnb", {}).get("figure")
        others = [o for o in outputs if not _is_image(o) and o.get("output_type") != "stream"]
        if cell.get("cell_type") != "code" or not figure or not others:
            continue
        cell["outputs"] = [o for o in outputs if not _is_image(o)]
        mystnb = {k: v for k, v in cell["metadata"]["mystnb"].items() if k != "figure"}
        if mystnb:
            cell["metadata"]["mystnb"] = mystnb
        else:
            del cell["metadata"]["mystnb"]
        cells.append({"cell_type": "code", "execution_count": None, "id": f"{cell.get('id', 'fig')}-figure",
                      "metadata": {"tags": ["remove-input"], "mystnb": {"figure": figure}},
                      "source": "# the figure drawn by the cell above",
                      "outputs": [o for o in outputs if _is_image(o)]})
    nb["cells"] = cells
    executed.write_text(json.dumps(nb, indent=1))


def code_key(src: Path, params: dict, src_key: str) -> str:
    """What an execution depends on: the code cells (not the prose, not the captions), the
    parameters and the library's source. A change of prose alone reuses the executed copy."""
    nb = json.loads(Path(src).read_text())
    code = [c["source"] if isinstance(c["source"], str) else "".join(c["source"])
            for c in nb.get("cells", []) if c.get("cell_type") == "code"]
    return hashlib.sha256(json.dumps([src_key, code, params], sort_keys=True).encode()).hexdigest()


def merge_prose(src: Path, raw: Path, dst: Path) -> None:
    """``dst``: the executed ``raw`` notebook with the markdown cells and the code cells' metadata
    (tags, figure captions) of the current source ``src``, whose code is the code ``raw`` ran."""
    nb, run = json.loads(Path(src).read_text()), json.loads(Path(raw).read_text())
    injected = [c for c in run["cells"] if "injected-parameters" in c.get("metadata", {}).get("tags", [])]
    ran = iter(c for c in run["cells"] if c.get("cell_type") == "code" and c not in injected)
    cells = []
    for cell in nb["cells"]:
        if cell.get("cell_type") == "code":
            done = next(ran)
            cell = {**done, "metadata": {**done.get("metadata", {}), **cell.get("metadata", {})}}
            cells.append(cell)
            if "parameters" in cell["metadata"].get("tags", []):
                cells.extend(injected)
        else:
            cells.append(cell)
    run["cells"] = cells
    dst.write_text(json.dumps(run, indent=1))
    prepare_for_book(dst)


def _raw(dst: Path) -> Path:
    return dst.with_suffix(".executed.ipynb")


def _is_current(dst: Path, key: str) -> bool:
    stamp = dst.with_suffix(".key")
    return _raw(dst).is_file() and stamp.is_file() and stamp.read_text() == key


def _execute(src: Path, dst: Path, params: dict, cwd: Path, key: str) -> float:
    """Execute one notebook (in a worker process) into ``dst`` for the book; return its wall seconds.

    Papermill's output is kept beside it (``<stem>.executed.ipynb``) so that a later change of the
    prose alone is merged into it without executing again (:func:`merge_prose`)."""
    t0 = time.perf_counter()
    dst.parent.mkdir(parents=True, exist_ok=True)
    execute_notebook(src, _raw(dst), parameters=params, cwd=str(cwd), kernel_name="python3", progress_bar=False)
    dst.with_suffix(".key").write_text(key)
    return time.perf_counter() - t0


def _run_all(tasks: list[tuple], jobs: int, durations: dict, log) -> None:
    """Execute ``(stem, src, dst, params, cwd, key)`` tasks on ``jobs`` processes, longest first."""
    todo = [t for t in tasks if not _is_current(t[2], t[5])]
    for t in tasks:
        if t not in todo:
            log(f"  {t[0]}: code unchanged, reusing the executed copy")
    try:
        _execute_all(todo, jobs, durations, log)
    finally:
        for t in tasks:  # the current prose and captions, with the outputs of the last execution
            if _is_current(t[2], t[5]):
                merge_prose(t[1], _raw(t[2]), t[2])


def _execute_all(todo: list[tuple], jobs: int, durations: dict, log) -> None:
    if not todo:
        return
    rank = {t[0]: i for i, t in enumerate(todo)}
    todo.sort(key=lambda t: (-durations.get(t[0], 0.0), -rank[t[0]]))
    t0 = time.perf_counter()
    with ProcessPoolExecutor(max_workers=max(1, min(jobs, len(todo)))) as pool:
        futures = {}
        for t in todo:
            futures[pool.submit(_execute, t[1], t[2], t[3], t[4], t[5])] = t[0]
        log(f"  executing {len(todo)} notebook(s) on {min(jobs, len(todo))} process(es): "
            + ", ".join(t[0] for t in todo))
        failed = []
        for done, fut in enumerate(as_completed(futures), 1):
            stem = futures[fut]
            try:
                durations[stem] = fut.result()
                log(f"  [{done}/{len(todo)}] {stem}: {durations[stem]:.0f} s "
                    f"(build at {time.perf_counter() - t0:.0f} s)")
            except Exception as exc:  # report every failing notebook, then fail the build
                failed.append(stem)
                log(f"  [{done}/{len(todo)}] {stem}: FAILED: {type(exc).__name__}: {str(exc)[-2000:]}")
    if failed:
        raise RuntimeError(f"notebook(s) failed to execute: {', '.join(failed)}")


def stage_sources(root: Path, stage: Path) -> None:
    """Copy the book's configuration, prose pages and the offline MathJax into ``stage``."""
    stage.mkdir(parents=True, exist_ok=True)
    for name in ("_config.yml", "_toc.yml"):
        shutil.copy2(root / name, stage / name)
    if (stage / "book").exists():
        shutil.rmtree(stage / "book")
    shutil.copytree(root / "book", stage / "book", ignore=shutil.ignore_patterns("*.ipynb"))
    static = stage / "_assets"
    if (stage / "_static").exists():
        shutil.rmtree(stage / "_static")
    if not (static / "mathjax" / "tex-chtml.js").is_file():
        if static.exists():
            shutil.rmtree(static)
        shutil.copytree(_mathjax_dir(), static / "mathjax")


def run_jupyter_book(stage: Path, log_file: Path) -> Path:
    """``jupyter-book build`` of the staged, executed sources (execution off); return the HTML folder."""
    cfg = yaml.safe_load((stage / "_config.yml").read_text())
    if cfg.get("execute", {}).get("execute_notebooks") != "off":
        raise RuntimeError("_config.yml must set execute.execute_notebooks: 'off' (notebooks run here)")
    stage = Path(stage).resolve()
    cmd = [str(Path(sys.executable).parent / "jupyter-book"), "build", str(stage), "--builder", "html"]
    proc = subprocess.run(cmd, cwd=stage, text=True, capture_output=True)
    log_file.parent.mkdir(parents=True, exist_ok=True)
    log_file.write_text(proc.stdout + proc.stderr)
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout[-4000:] + proc.stderr[-4000:])
        raise RuntimeError(f"jupyter-book build failed (see {log_file})")
    return stage / "_build" / "html"


def build_book(profile: str = "book", only: list[str] | None = None, jobs: int | None = None,
               log=print) -> Path:
    """Execute the notebooks (``jobs`` at a time, default: the number of cores) and build the HTML
    book; return the path of ``index.html``."""
    jobs = jobs or os.cpu_count() or 1
    if jobs < 1:
        raise ValueError(f"jobs must be >= 1; got {jobs}")
    root = project_root()
    stage = root / "_build" / "stage"
    stage_sources(root, stage)

    params_all = load_profile(profile)
    src_key = _tree_hash([root / "src" / "treebook", root / "notebooks" / "params", root / "results" / "paper"])
    results = stage / "results"
    results.mkdir(exist_ok=True)
    timings = stage / "durations.json"
    durations = json.loads(timings.read_text()) if timings.is_file() else {}
    expected = root / "book" / "notebook-seconds.json"  # a first build's order
    if not durations and expected.is_file():
        durations = {k: float(v) for k, v in json.loads(expected.read_text()).items() if not k.startswith("_")}
    log(f"treebook: executing notebooks ({profile} profile)")
    tasks = []
    for stem in toc_notebooks():
        src = root / "notebooks" / f"{stem}.ipynb"
        params = dict(params_all.get(stem, {}))
        params["result_path"] = f"../results/{stem}.json"
        key = code_key(src, params, src_key)
        dst = stage / "notebooks" / f"{stem}.ipynb"
        if only and stem not in only:
            if not dst.is_file():
                raise RuntimeError(f"{stem} has never been executed; build it once without --only")
            continue
        tasks.append((stem, src, dst, params, stage / "notebooks", key))
    try:
        _run_all(tasks, jobs, durations, log)
    finally:
        timings.write_text(json.dumps(durations, indent=1))

    scorecard = root / "book" / "scorecard.ipynb"
    if scorecard.is_file():
        paper_dir = root / "results" / "paper"
        res_key = code_key(scorecard, {}, hashlib.sha256(
            b"".join(p.read_bytes() for p in sorted(results.glob("*.json")))
            + b"".join(p.read_bytes() for p in sorted(paper_dir.glob("*.json")))).hexdigest())
        _run_all([("scorecard", scorecard, stage / "book" / "scorecard.ipynb",
                   {"results_dir": "../results", "paper_dir": "../../../results/paper"}, stage / "book", res_key)],
                 1, durations, log)

    log("treebook: jupyter-book build")
    run_jupyter_book(stage, log_file=root / "_build" / "book-build.log")
    pages = {f"notebooks/{stem}": stage / "notebooks" / f"{stem}.ipynb" for stem in toc_notebooks()}
    if scorecard.is_file():
        pages["book/scorecard"] = stage / "book" / "scorecard.ipynb"
    problems = check_html(stage / "_build" / "html", pages)
    if problems:
        raise RuntimeError("the built book lost what its notebooks computed:\n  " + "\n  ".join(problems))
    html = root / "_build" / "html"
    if html.exists():
        shutil.rmtree(html)
    shutil.copytree(stage / "_build" / "html", html)
    index = write_root_index(html, read_yaml(root / "_toc.yml")["root"])
    log(f"treebook: book written to {index.relative_to(root)}")
    return index


_HEAD = re.compile(r"<head\b[^>]*>", re.I)


def write_root_index(html_dir, root_doc: str) -> Path:
    """Make ``index.html`` the book's root page itself, not the redirect that the build writes there (the
    root document, ``root_doc`` of ``_toc.yml``, lives in a subfolder): a copy of the root page whose
    relative links resolve from the root page's folder through a ``<base>`` element. Returns its path."""
    html_dir = Path(html_dir)
    page = html_dir / f"{root_doc}.html"
    if not page.is_file():
        raise FileNotFoundError(f"{page}: the root document of _toc.yml was not built")
    text = page.read_text(encoding="utf-8")
    head = _HEAD.search(text)
    if head is None or re.search(r"<base\b", text, re.I):
        raise ValueError(f"{page}: expected one <head> and no <base> element")
    index = html_dir / "index.html"
    base = f'\n<base href="{root_doc}.html">'
    index.write_text(text[:head.end()] + base + text[head.end():], encoding="utf-8")
    return index


def image_outputs(executed) -> int:
    """Number of image outputs (PNG, SVG, JPEG) in an executed notebook."""
    nb = json.loads(Path(executed).read_text())
    return sum(_is_image(out) for cell in nb.get("cells", []) for out in cell.get("outputs", []))


_EXTERNAL = re.compile(r"""<(?:script|link|img|iframe)\b[^>]*\b(?:src|href)=["']((?:https?:)?//[^"']+)""", re.I)


def check_html(html_dir, executed: dict) -> list[str]:
    """What the built HTML lost: a chapter page with fewer ``<img>`` than its notebook has image
    outputs, fewer figure captions than it declares, or any page that loads a resource from outside
    the build (the book must work offline). ``executed`` maps a page (its path in the book without
    ``.html``, e.g. ``notebooks/00-tree-core``) to its executed notebook."""
    html_dir = Path(html_dir)
    problems = []
    for stem, path in executed.items():
        page = html_dir / f"{stem}.html"
        if not page.is_file():
            problems.append(f"{stem}: no page {page.name}")
            continue
        text = page.read_text(errors="replace")
        main = text[text.find("<main"):] if "<main" in text else text
        imgs, want = len(re.findall(r"<img\b", main)), image_outputs(path)
        if imgs < want:
            problems.append(f"{stem}: {imgs} <img> on the page, {want} image outputs in the notebook")
        nb = json.loads(Path(path).read_text())
        captions = sum(bool(c.get("metadata", {}).get("mystnb", {}).get("figure", {}).get("caption"))
                       for c in nb.get("cells", []))
        shown = len(re.findall(r"<figcaption\b", main))
        if shown != captions:
            problems.append(f"{stem}: {shown} figure captions on the page, {captions} declared")
    for page in sorted(html_dir.rglob("*.html")):
        for url in _EXTERNAL.findall(page.read_text(errors="replace")):
            problems.append(f"{page.relative_to(html_dir)}: loads {url} from outside the build")
    return problems
