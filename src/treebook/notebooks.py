"""Running the chapter notebooks with papermill, under a named parameter profile.

A profile is a YAML file ``notebooks/params/<profile>.yml`` that maps a notebook's stem to the
parameters overriding its ``parameters`` cell. ``book`` is the notebooks' own defaults (no file
needed); ``smoke`` is what the tests run; ``paper`` is the papers' full protocols.
"""

from __future__ import annotations

import json
import os
import random
import resource
import tempfile
import time
from pathlib import Path

import yaml

__all__ = ["project_root", "notebook_path", "load_profile", "notebook_parameters", "execute_notebook",
           "run_notebook", "toc_notebooks"]

#: how jupyter_client reports a kernel that exited before answering its first request
KERNEL_START_FAILURE = "Kernel died before replying to kernel_info"


def execute_notebook(src, dst, *, attempts: int = 3, **kwargs):
    """``papermill.execute_notebook``, started again when the kernel dies before it answers.

    Kernels started at the same moment (a sweep's workers, parallel tests) can race for the same free
    TCP port, and the loser exits with "Address already in use" before any cell runs; such a start is
    retried, up to ``attempts`` times in all. Any other error is raised at once.

    The kernel inherits this process's environment. A non-interactive matplotlib backend named there
    (headless scripts and CI often choose one through ``MPLBACKEND``) would make every ``plt.show()``
    draw nothing, so it is dropped and the kernel keeps its inline backend: figures reach the
    executed notebook.
    """
    import papermill

    if os.environ.get("MPLBACKEND", "").lower() in {"agg", "pdf", "ps", "svg", "cairo", "template"}:
        del os.environ["MPLBACKEND"]

    for attempt in range(1, attempts + 1):
        try:
            return papermill.execute_notebook(str(src), str(dst), **kwargs)
        except RuntimeError as exc:
            if KERNEL_START_FAILURE not in str(exc) or attempt == attempts:
                raise
            time.sleep(0.5 + random.random())


def project_root() -> Path:
    """The checkout's root (the folder holding ``_toc.yml`` and ``notebooks/``)."""
    here = Path(__file__).resolve()
    for parent in (*here.parents, Path.cwd(), *Path.cwd().parents):
        if (parent / "_toc.yml").is_file() and (parent / "notebooks").is_dir():
            return parent
    raise FileNotFoundError("cannot find the treebook checkout (a folder with _toc.yml and notebooks/)")


def notebook_path(notebook) -> Path:
    """Resolve a notebook given as a path, a stem of ``notebooks/<stem>.ipynb`` or a path under
    ``notebooks/`` with or without its suffix (``sweeps/03-shape-search-point``)."""
    p = Path(notebook)
    if p.suffix == ".ipynb" and p.is_file():
        return p.resolve()
    nbdir = project_root() / "notebooks"
    for cand in (nbdir / p.parent / f"{p.stem}.ipynb", nbdir / f"{p.stem}.ipynb"):
        if cand.is_file():
            return cand
    raise FileNotFoundError(f"no notebook {notebook!r} (looked for {p} and notebooks/{p.parent / p.stem}.ipynb)")


def load_profile(profile: str) -> dict:
    """Parameters of every notebook under ``profile`` (``{}`` for ``"book"``, the notebooks' defaults)."""
    if profile == "book":
        return {}
    path = project_root() / "notebooks" / "params" / f"{profile}.yml"
    if not path.is_file():
        raise FileNotFoundError(f"no parameter profile {path}")
    data = yaml.safe_load(path.read_text()) or {}
    if not isinstance(data, dict) or not all(isinstance(v, dict) or v is None for v in data.values()):
        raise ValueError(f"{path}: expected a mapping of notebook stem -> mapping of parameters")
    return {k: (v or {}) for k, v in data.items()}


def notebook_parameters(notebook) -> dict:
    """The names and default values (as source text) of a notebook's ``parameters`` cell."""
    import papermill

    info = papermill.inspect_notebook(str(notebook_path(notebook)))
    return {name: spec.get("default") for name, spec in info.items()}


def toc_notebooks() -> list[str]:
    """Stems of the notebooks listed in ``_toc.yml``, in book order."""
    toc = yaml.safe_load((project_root() / "_toc.yml").read_text())
    files: list[str] = []

    def walk(node):
        if isinstance(node, dict):
            f = node.get("file")
            if isinstance(f, str) and f.startswith("notebooks/"):
                files.append(Path(f).stem)
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(toc)
    return files


def run_notebook(stem: str, profile: str = "smoke", parameters: dict | None = None, output_dir=None,
                 kernel_name: str = "python3", progress: bool = False):
    """Execute ``notebooks/<stem>.ipynb`` and return ``(executed_path, results_dict)``.

    The parameters are the profile's for this notebook, updated with ``parameters``, plus a
    ``result_path`` inside ``output_dir`` (a temporary folder by default) where the notebook
    writes its JSON record. A failing cell raises papermill's ``PapermillExecutionError``.
    The record gains a ``provenance`` entry (commit, date, profile, parameters, CPU model and count,
    wall and CPU seconds of the run; see :func:`treebook.results.provenance`).
    """
    from .results import code_state, provenance

    src = notebook_path(stem)
    params = dict(load_profile(profile).get(src.stem, {}))
    params.update(parameters or {})
    out_dir = Path(output_dir) if output_dir is not None else Path(tempfile.mkdtemp(prefix="treebook-"))
    out_dir.mkdir(parents=True, exist_ok=True)
    result_path = out_dir / f"{src.stem}.json"
    params["result_path"] = str(result_path)
    executed = out_dir / f"{src.stem}.ipynb"
    state = code_state()  # the code the run starts from
    t0, r0 = time.perf_counter(), _cpu_seconds()
    execute_notebook(src, executed, parameters=params, cwd=str(src.parent), kernel_name=kernel_name,
                     progress_bar=progress)
    wall, cpu = time.perf_counter() - t0, _cpu_seconds() - r0
    if not result_path.is_file():
        raise RuntimeError(f"{src.name} ran but wrote no results to its result_path")
    record = json.loads(result_path.read_text())
    record["provenance"] = provenance(profile, params, wall, cpu, state=state)
    tmp = result_path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(record, indent=2, allow_nan=False))
    os.replace(tmp, result_path)
    return executed, record


def _cpu_seconds() -> float:
    """CPU seconds of this process and its finished children (the kernel, once it has exited)."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime
