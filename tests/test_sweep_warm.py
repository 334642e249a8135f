"""Warm sweep points (`treebook.forkserver`, `treebook._inprocess`): a point that changes its process's state
does not reach the next point of the same worker, a point forked without a kernel gives the executed notebook
and the results of a fresh kernel, failures and deaths of forked points are recorded per point, and
wherever the template cannot serve a point it gets a fresh kernel instead."""

import json
import os
import re
import sys
import time
from pathlib import Path

import dask
import distributed  # noqa: F401 - loads its configuration before dask.config.set changes part of it
import nbformat
import pytest

from treebook import forkserver
from treebook.sweep import point_id, run_sweep
from treebook.sweep.execute import _run_point, _warm_server

HEADER = """\
import os
import random
import sys

preloaded = "pandas" in sys.modules  # before this notebook imports anything

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

import treebook
from treebook.results import save_results
"""

LEAKY = HEADER + """
seen = {
    "numpy attribute": hasattr(np, "_leak"),
    "treebook attribute": hasattr(treebook, "_leak"),
    "environment variable": "TREEBOOK_LEAK" in os.environ,
    "rcParams": plt.rcParams["lines.linewidth"] == 7.5,
    "pandas option": pd.get_option("display.max_rows") == 3,
    "sys.path": "/leak" in sys.path,
    "sys.modules": "treebook_leak_module" in sys.modules,
    "np.random seeded": np.random.random() == np.random.RandomState(1234).random_sample(),
    "random seeded": random.random() == random.Random(1234).random(),
}
draws = [float(np.random.random()), random.random()]
cwd = os.getcwd()

np._leak = treebook._leak = True
os.environ["TREEBOOK_LEAK"] = "1"
plt.rcParams["lines.linewidth"] = 7.5
pd.set_option("display.max_rows", 3)
sys.path.append("/leak")
sys.modules["treebook_leak_module"] = treebook
np.random.seed(1234)
random.seed(1234)
os.chdir("/")
save_results(result_path, {"seen": seen, "draws": draws, "cwd": cwd, "preloaded": preloaded,
                           "pid": os.getpid(), "ppid": os.getppid()})
"""

LIGHT = """\
import sys

preloaded = "numpy" in sys.modules

import numpy

from treebook.results import save_results

save_results(result_path, {"preloaded": preloaded})
"""

# what a notebook can observe of its process, beyond its own outputs; identical in a fresh and a warm kernel
FINGERPRINT = """\
import logging
import os
import signal
import sys
import warnings

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from treebook.results import save_results

fig, ax = plt.subplots(figsize=(2, 1.5))
ax.plot([0, 1, 4])
plt.show()
display(pd.DataFrame(np.arange(60).reshape(2, 30)))
print(pd.DataFrame(np.arange(60).reshape(2, 30)))
print(np.linalg.norm(np.ones((300, 300)) @ np.ones((300, 300))))
state = {
    "backend": matplotlib.get_backend(),
    "rcParams": {k: repr(v) for k, v in plt.rcParams.items()},
    "pandas options": {k: repr(pd.get_option(k)) for k in pd._config.config._registered_options},
    "numpy print options": repr(np.get_printoptions()),
    "warnings filters": [repr(f) for f in warnings.filters],
    "sys.path": [p.replace(os.getcwd(), "<cwd>") for p in sys.path],
    "argv0": sys.argv[0],
    "cwd": os.getcwd(),
    "environment": sorted(os.environ),
    "main module": sorted(k for k in vars(sys.modules["__main__"]) if not k.startswith("_")),
    "stdout": type(sys.stdout).__name__,
    "displayhook": type(sys.displayhook).__name__,
    "excepthook": repr(sys.excepthook).split(" at ")[0],
    "signals": {s.name: repr(signal.getsignal(s)).split(" at ")[0] for s in
                (signal.SIGINT, signal.SIGTERM, signal.SIGCHLD, signal.SIGPIPE, signal.SIGHUP)},
    "logging": [logging.getLogger().level, len(logging.getLogger().handlers)],
    "flags": repr(sys.flags),
    "hash": hash("treebook") if os.environ.get("PYTHONHASHSEED") else None,
}
save_results(result_path, {"state": state})
len(state)
"""

#: what a point forked without a kernel shows differently from a kernel (treebook._inprocess), and its value
NOT_A_KERNEL = {"argv0": "-c", "stdout": "_Stream", "displayhook": "Hook",
                "excepthook": "<bound method InteractiveShell.excepthook of <treebook._inprocess._shell.<locals>.Shell object"}


def _notebook(path: Path, source: str, params: str = "result_path = None\nk = 0") -> Path:
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell(params)
    cell.metadata["tags"] = ["parameters"]
    nb.cells = [cell, nbformat.v4.new_code_cell(source)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, path)
    return path


@pytest.fixture(scope="module")
def one_worker():
    """A Dask scheduler with a single worker (one thread): every point of a sweep runs on that worker, one
    after the other, its kernels forked by that worker's one fork server."""
    from dask.distributed import LocalCluster

    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        cluster = LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None)
    yield cluster.scheduler_address
    cluster.close()


@pytest.fixture(scope="module")
def own_server():
    """This test process's fork server (shared by the tests that ask for the same imports) is stopped after
    this file's tests."""
    yield
    forkserver._close_server()


def _same_environment(monkeypatch):
    """pytest names the running test (and phase) in the environment, which a fork server's kernels must
    share with it: the tests that share a fork server give that variable one value as they start."""
    monkeypatch.setenv("PYTEST_CURRENT_TEST", "tests of warm kernels")


def test_a_point_changing_its_process_does_not_reach_the_next_point_of_its_worker(tmp_path, one_worker):
    nb = _notebook(tmp_path / "leaky.ipynb", LEAKY)
    points = [{"k": k} for k in range(3)]
    table = run_sweep(nb, {"points": points}, tmp_path / "out", scheduler=one_worker, progress=False,
                      log=pytest.fail)
    assert (table.status == "ok").all(), table.error.tolist()
    records = [json.loads((tmp_path / "out" / "runs" / point_id(p) / "result.json").read_text())["results"]
               for p in points]
    # the kernels were forked from one template that had imported pandas, one process per point
    assert all(r["preloaded"] for r in records)
    assert len({r["ppid"] for r in records}) == 1 and len({r["pid"] for r in records}) == 3
    for r in records:
        assert not any(r["seen"].values()), r["seen"]
        assert r["cwd"] == str(nb.parent)
    # each kernel's global generators were seeded anew, not copied from the template
    assert len({tuple(r["draws"]) for r in records}) == 3


def _gone(pid: int, timeout: float = 15) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


def test_a_point_the_template_cannot_serve_gets_a_new_template_or_a_fresh_kernel(tmp_path, own_server, monkeypatch):
    _same_environment(monkeypatch)
    nb = _notebook(tmp_path / "light.ipynb", LIGHT)  # the fork server of the test above serves it

    def run_point(run):
        status = _run_point(str(nb), str(tmp_path / run), {"k": 0}, str(nb.parent))
        assert status["status"] == "ok", status
        kind = json.loads((tmp_path / run / "run.json").read_text())["kernel"]
        return json.loads((tmp_path / run / "result.json").read_text())["results"]["preloaded"], kind

    assert run_point("warm") == (True, "forked")
    first = forkserver._SERVER
    # an environment that differs from the template's (a variable read at import could differ): the point
    # is forked from a new template, started from that environment
    monkeypatch.setenv("TREEBOOK_FORK_TEST", "1")
    assert run_point("other-environment") == (True, "forked")
    assert forkserver._SERVER is not first and forkserver._SERVER.environment["TREEBOOK_FORK_TEST"] == "1"
    monkeypatch.delenv("TREEBOOK_FORK_TEST")
    # the template of that environment refuses a request from another one, and says why
    reply = forkserver._SERVER.run_notebook(nb, tmp_path / "refused.ipynb", {"k": 0}, nb.parent, 2,
                                            tmp_path / "refused.json")
    assert "TREEBOOK_FORK_TEST" in reply["fresh"]
    assert run_point("same-environment-again") == (True, "forked")
    # a platform without fork servers gets none: the point starts a fresh kernel
    monkeypatch.setattr(forkserver, "supported", lambda: False)
    assert forkserver.server_for(forkserver.notebook_preload(nb)) is None
    assert _warm_server(str(nb), str(nb.parent)) is None
    assert run_point("unsupported") == (False, "fresh")


def test_a_forked_point_executes_a_notebook_as_a_fresh_kernel_does(tmp_path, own_server, monkeypatch):
    _same_environment(monkeypatch)
    nb = _notebook(tmp_path / "fingerprint.ipynb", FINGERPRINT)
    runs = {}
    for mode in ("fresh", "warm"):
        run = tmp_path / mode
        status = _run_point(str(nb), str(run), {"k": 0}, str(nb.parent), warm=mode == "warm")
        assert status["status"] == "ok", status
        assert json.loads((run / "run.json").read_text())["kernel"] == ("forked" if mode == "warm" else "fresh")
        executed = nbformat.read(run / "notebook.ipynb", as_version=4)
        # the kernel's pid is in the names of its cells' files (in a warning's text)
        outputs = [[json.loads(re.sub(r"ipykernel_\d+", "ipykernel_N", json.dumps(
            {k: v for k, v in o.items() if k != "execution_count"}))) for o in cell.get("outputs", [])]
            for cell in executed.cells]
        runs[mode] = (json.loads((run / "result.json").read_text())["results"]["state"], outputs)
    assert forkserver._SERVER is not None and forkserver._SERVER.usable()  # the warm run was forked
    (fresh_state, fresh_outputs), (warm_state, warm_outputs) = runs["fresh"], runs["warm"]
    for key in fresh_state:
        if key in NOT_A_KERNEL:
            assert warm_state[key] == NOT_A_KERNEL[key], key
            assert fresh_state[key] != NOT_A_KERNEL[key], key
        else:
            assert warm_state[key] == fresh_state[key], key
    assert warm_outputs == fresh_outputs
    kinds = [o.get("data", {}).keys() for cell in warm_outputs for o in cell]
    assert any("image/png" in k for k in kinds) and any("text/html" in k for k in kinds)


def test_a_local_sweep_forks_its_points_without_dask_and_isolates_them(tmp_path):
    nb = _notebook(tmp_path / "leaky.ipynb", LEAKY)
    points = [{"k": k} for k in range(4)]
    table = run_sweep(nb, {"points": points}, tmp_path / "out", workers=2, progress=False, log=pytest.fail)
    assert (table.status == "ok").all(), table.error.tolist()
    records = [json.loads((tmp_path / "out" / "runs" / point_id(p) / "result.json").read_text())["results"]
               for p in points]
    assert all(r["preloaded"] for r in records)
    # one template, forked once per point, none of them a Dask worker
    assert len({r["ppid"] for r in records}) == 1 and len({r["pid"] for r in records}) == 4
    # the template is this process's own fork server (no Dask worker ran a point)
    assert forkserver._SERVER is not None and records[0]["ppid"] == forkserver._SERVER.proc.pid
    for r in records:
        assert not any(r["seen"].values()), r["seen"]
        assert r["cwd"] == str(nb.parent)
    assert len({tuple(r["draws"]) for r in records}) == 4
    for p in points:
        assert json.loads((tmp_path / "out" / "runs" / point_id(p) / "run.json").read_text())["kernel"] == "forked"


def test_a_forked_point_that_fails_or_dies_is_recorded_alone(tmp_path):
    source = HEADER + ("if k == 1:\n    raise ValueError('bad point')\n"
                       "if k == 2:\n    os._exit(3)\n"
                       "if k == 3:\n    import signal\n    os.kill(os.getpid(), signal.SIGKILL)\n"
                       "print('point', k)\n"
                       "save_results(result_path, {'k': k})\n")
    nb = _notebook(tmp_path / "faulty.ipynb", source)
    points = [{"k": k} for k in range(5)]
    out = tmp_path / "out"
    table = run_sweep(nb, {"points": points}, out, workers=2, progress=False, log=pytest.fail)
    assert list(table.status) == ["ok", "failed", "failed", "failed", "ok"], table.error.tolist()
    assert list(table.k.iloc[[0, 4]]) == [0, 4]
    assert table.error.iloc[1].startswith("PapermillExecutionError") and "ValueError: bad point" in table.error.iloc[1]
    # the table's error is one line naming the cell; error.txt keeps that line and the whole traceback
    assert "\n" not in table.error.iloc[1] and "cell [" in table.error.iloc[1]
    trace = (out / "runs" / point_id(points[1]) / "error.txt").read_text()
    assert trace.startswith(table.error.iloc[1]) and "raise ValueError" in trace
    assert "exited with code 3" in table.error.iloc[2] and "killed by signal 9" in table.error.iloc[3]
    failed = nbformat.read(out / "runs" / point_id(points[1]) / "notebook.ipynb", as_version=4)
    errors = [o for c in failed.cells for o in c.get("outputs", []) if o.output_type == "error"]
    assert [(e.ename, e.evalue) for e in errors] == [("ValueError", "bad point")]
    assert failed.metadata.papermill.exception is True
    assert not (out / "runs" / point_id(points[1]) / "result.json").exists()
    assert "ValueError: bad point" in (out / "runs" / point_id(points[1]) / "error.txt").read_text()
    good = nbformat.read(out / "runs" / point_id(points[4]) / "notebook.ipynb", as_version=4)
    assert [o.text for o in good.cells[-1].outputs if o.output_type == "stream"] == ["point 4\n"]
    assert good.cells[1].metadata.tags == ["injected-parameters"] and "k = 4" in good.cells[1].source


def test_a_point_that_kills_its_fork_server_fails_alone(tmp_path, one_worker):
    # the imports of the isolation test's notebook: its worker's fork server serves this one too
    source = HEADER + ("if k == 1:\n    import signal\n    import time\n\n"
                       "    os.kill(os.getppid(), signal.SIGKILL)\n    time.sleep(60)\n"
                       "save_results(result_path, {'k': k, 'preloaded': preloaded, 'server': os.getppid()})\n")
    nb = _notebook(tmp_path / "killer.ipynb", source)
    points = [{"k": k} for k in range(3)]
    table = run_sweep(nb, {"points": points}, tmp_path / "out", scheduler=one_worker, progress=False,
                      log=lambda m: None)
    assert list(table.status) == ["ok", "failed", "ok"], table.error.tolist()
    assert "kernel" in table.error.iloc[1].lower()
    # the point after it was forked by a new fork server
    assert list(table.k.iloc[[0, 2]]) == [0, 2] and table.preloaded.iloc[[0, 2]].all()
    assert table.server.iloc[0] != table.server.iloc[2]


def test_notebook_preload_takes_top_level_imports_of_known_packages(tmp_path):
    source = ("import numpy as np, json\nfrom treebook.results import save_results\nfrom . import x\n"
              "if k:\n    import pandas\ndef f():\n    import scipy\n")
    nb = _notebook(tmp_path / "imports.ipynb", source)
    assert forkserver.notebook_preload(nb) == ("numpy", "treebook.results", "treebook.results.save_results")
    (tmp_path / "numpy.py").write_text("")  # a module of the kernel's folder would shadow numpy
    assert forkserver.notebook_preload(nb, tmp_path) == ("treebook.results", "treebook.results.save_results")


def test_a_changed_source_file_is_seen(tmp_path):
    path = tmp_path / "module.py"
    path.write_text("x = 1\n")
    st = os.stat(path)
    state = {str(path): (st.st_mtime_ns, st.st_size)}
    assert forkserver._source_changed(state) is None
    path.write_text("x = 22\n")
    assert forkserver._source_changed(state) == str(path)
    path.unlink()
    assert forkserver._source_changed(state) == str(path)


DISPLAYS = """\
from IPython.display import clear_output, display

print("before")
handle = display("first", display_id=True)
handle.update("first, updated")
print("kept?")
clear_output(wait=True)
print("after the clear")
display({"a": 1}, raw=False)
print("and", end=" ")
print("on")
"""


def test_outputs_of_a_notebook_run_without_a_kernel_are_a_kernels(tmp_path):
    """Displays updated by id, cleared outputs and a stream written in parts, run by papermill's kernel and by
    treebook._inprocess (in a process of its own, as a forked point is)."""
    import subprocess

    import papermill

    nb = _notebook(tmp_path / "displays.ipynb", DISPLAYS)
    papermill.execute_notebook(str(nb), str(tmp_path / "kernel.ipynb"), parameters={"k": 1}, progress_bar=False,
                               kernel_name="python3")
    code = ("import sys; from treebook._inprocess import execute; "
            "execute(sys.argv[1], sys.argv[2], {'k': 1})")
    subprocess.run([sys.executable, "-c", code, str(nb), str(tmp_path / "inprocess.ipynb")], check=True,
                   cwd=tmp_path)

    def outputs(name):
        executed = nbformat.read(tmp_path / name, as_version=4)
        return [[{k: v for k, v in o.items() if k != "execution_count"} for o in c.get("outputs", [])]
                for c in executed.cells], [c.get("execution_count") for c in executed.cells]

    assert outputs("inprocess.ipynb") == outputs("kernel.ipynb")


def test_an_interrupted_local_sweep_stops_its_points_and_resumes(tmp_path):
    import signal
    import subprocess

    gate = tmp_path / "gate"
    gate.touch()
    source = ("import os, time\nfrom treebook.results import save_results\n"
              "open(f'{gate}-{k}.pid', 'w').write(str(os.getpid()))\n"
              "while os.path.exists(gate):\n    time.sleep(0.1)\n"
              "save_results(result_path, {'k': k, 'pid': os.getpid()})\n")
    nb = _notebook(tmp_path / "held.ipynb", source, params=f"result_path = None\nk = 0\ngate = {str(gate)!r}")
    grid = tmp_path / "g.yml"
    grid.write_text("k: [0, 1, 2, 3]\n")
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "treebook.cli", "sweep", str(nb), "--grid", str(grid), "--out", str(out),
           "--workers", "2", "--no-progress"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 120
        while len(list(tmp_path.glob("gate-*.pid"))) < 2:  # two points are held at the gate
            assert proc.poll() is None and time.monotonic() < deadline, "the points did not start"
            time.sleep(0.1)
        time.sleep(0.2)
        held = [int(p.read_text()) for p in tmp_path.glob("gate-*.pid")]
        proc.send_signal(signal.SIGINT)
        proc.wait(60)  # the held points would wait for ever: the interrupt stops them
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert b"KeyboardInterrupt" in proc.stderr.read()
    assert sorted(p.parent.name for p in out.glob("runs/*/error.txt")) == sorted(
        p.parent.name for p in out.glob("runs/*/params.json"))  # the stopped points: no point started after them
    assert len(list(out.glob("runs/*/params.json"))) == 2 and not list(out.glob("runs/*/result.json"))
    assert len(held) == 2 and all(_gone(pid, 5) for pid in held)  # the held points' processes were stopped
    gate.unlink()
    table = run_sweep(nb, grid, out, workers=2, progress=False, log=lambda m: None)
    assert (table.status == "ok").all() and sorted(table.k) == [0, 1, 2, 3]


def test_the_cli_names_a_failing_point_and_its_parameters(tmp_path, capsys):
    from treebook.cli import main as cli_main

    nb = _notebook(tmp_path / "faulty.ipynb", HEADER + "if k == 1:\n    raise ValueError('bad point')\n"
                   "save_results(result_path, {'k': k})\n")
    (tmp_path / "grid.yml").write_text("grid:\n  k: [0, 1]\n")
    out = tmp_path / "out"
    code = cli_main(["sweep", str(nb), "--grid", str(tmp_path / "grid.yml"), "--workers", "1", "--out", str(out),
                     "--no-progress"])
    err = [line for line in capsys.readouterr().err.splitlines() if line.startswith(("failed:", "  traceback:"))]
    assert code == 1 and len(err) == 2, err
    assert f"run {point_id({'k': 1})} {{'k': 1}}: PapermillExecutionError: cell [" in err[0]
    assert "ValueError: bad point" in err[0]
    assert err[1].endswith(f"runs/{point_id({'k': 1})}/error.txt")
