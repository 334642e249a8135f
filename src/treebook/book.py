"""Building the Jupyter Book from notebooks executed at build time.

``build_book()`` stages the book sources in ``_build/stage``, executes every notebook of
``_toc.yml`` there with papermill (book-scale defaults; a failing cell fails the build), executes
the scorecard page last (it gathers the chapters' JSON records), copies MathJax from the
``django-static-mathjax`` package so that math renders without internet, and runs
``jupyter-book build`` with execution turned off (the notebooks are already executed).

An executed notebook is reused when neither it, its parameters nor the package's source changed
since the last build (a content hash), so rebuilding after an edit of the prose is quick.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import yaml

from .notebooks import execute_notebook, load_profile, project_root, toc_notebooks

__all__ = ["build_book"]


def _tree_hash(paths) -> str:
    h = hashlib.sha256()
    for p in paths:
        for f in sorted(Path(p).rglob("*")) if Path(p).is_dir() else [Path(p)]:
            if f.is_file() and f.suffix in {".py", ".ipynb", ".yml", ".yaml"} and "__pycache__" not in f.parts:
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


def _tag_injected(executed: Path) -> None:
    """Hide papermill's injected-parameters cell in the rendered page (it only sets result_path)."""
    nb = json.loads(executed.read_text())
    for cell in nb.get("cells", []):
        tags = cell.get("metadata", {}).get("tags", [])
        if "injected-parameters" in tags and "remove-cell" not in tags:
            tags.append("remove-cell")
    executed.write_text(json.dumps(nb, indent=1))


def _execute(src: Path, dst: Path, params: dict, cwd: Path, key: str, log) -> None:
    stamp = dst.with_suffix(".key")
    if dst.is_file() and stamp.is_file() and stamp.read_text() == key:
        log(f"  {src.name}: unchanged, reusing the executed copy")
        return
    t0 = time.perf_counter()
    log(f"  executing {src.name} ...")
    dst.parent.mkdir(parents=True, exist_ok=True)
    execute_notebook(src, dst, parameters=params, cwd=str(cwd), kernel_name="python3", progress_bar=False)
    _tag_injected(dst)
    stamp.write_text(key)
    log(f"  {src.name}: {time.perf_counter() - t0:.0f} s")


def build_book(profile: str = "book", only: list[str] | None = None, log=print) -> Path:
    """Execute the notebooks and build the HTML book; return the path of ``index.html``."""
    root = project_root()
    stage = root / "_build" / "stage"
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

    params_all = load_profile(profile)
    src_key = _tree_hash([root / "src" / "treebook", root / "notebooks" / "params"])
    results = stage / "results"
    results.mkdir(exist_ok=True)
    log(f"treebook: executing notebooks ({profile} profile)")
    for stem in toc_notebooks():
        src = root / "notebooks" / f"{stem}.ipynb"
        params = dict(params_all.get(stem, {}))
        params["result_path"] = f"../results/{stem}.json"
        key = hashlib.sha256((src_key + src.read_text() + json.dumps(params, sort_keys=True)).encode()).hexdigest()
        if only and stem not in only:
            if not (stage / "notebooks" / f"{stem}.ipynb").is_file():
                raise RuntimeError(f"{stem} has never been executed; build it once without --only")
            continue
        _execute(src, stage / "notebooks" / f"{stem}.ipynb", params, stage / "notebooks", key, log)

    scorecard = root / "book" / "scorecard.ipynb"
    if scorecard.is_file():
        res_key = hashlib.sha256(b"".join(p.read_bytes() for p in sorted(results.glob("*.json")))
                                 + scorecard.read_bytes()).hexdigest()
        _execute(scorecard, stage / "book" / "scorecard.ipynb", {"results_dir": "../results"}, stage / "book",
                 res_key, log)

    cfg = yaml.safe_load((stage / "_config.yml").read_text())
    if cfg.get("execute", {}).get("execute_notebooks") != "off":
        raise RuntimeError("_config.yml must set execute.execute_notebooks: 'off' (notebooks run here)")
    log("treebook: jupyter-book build")
    cmd = [str(Path(sys.executable).parent / "jupyter-book"), "build", str(stage), "--builder", "html"]
    proc = subprocess.run(cmd, cwd=stage, text=True, capture_output=True)
    (root / "_build").mkdir(exist_ok=True)
    (root / "_build" / "book-build.log").write_text(proc.stdout + proc.stderr)
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout[-4000:] + proc.stderr[-4000:])
        raise RuntimeError("jupyter-book build failed (see _build/book-build.log)")
    html = root / "_build" / "html"
    if html.exists():
        shutil.rmtree(html)
    shutil.copytree(stage / "_build" / "html", html)
    index = html / "index.html"
    log(f"treebook: book written to {index.relative_to(root)}")
    return index
