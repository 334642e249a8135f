"""Faults of `treebook sweep` and `treebook run`: damaged, missing and concurrent records, workers that die,
a sweep killed mid-run, bad arguments; and the data checksum cache."""

import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

import dask
import distributed  # noqa: F401 - loads its configuration before dask.config.set changes part of it
import nbformat
import pandas as pd
import pytest
import yaml

from treebook.cli import main as cli_main
from treebook.datasets import DataError, data_dir, data_file
from treebook.results import save_results
from treebook.sweep import LOCK_NAME, SweepLockError, point_id, run_sweep

POINT_SOURCE = """\
import os
import signal
import time

from treebook.results import save_results

while hold and os.path.exists(hold):
    time.sleep(0.1)
if die == "kernel":
    os._exit(3)
if die == "worker":  # the process that started this kernel: its parent, or that of its fork server
    os.kill(int(os.environ["JPY_PARENT_PID"]), signal.SIGKILL)
    time.sleep(60)
save_results(result_path, {"x": x, "x_type": type(x).__name__, "y": y})
"""


@pytest.fixture
def point_nb(tmp_path):
    """A point notebook that returns its parameters; it waits while the file ``hold`` exists, and with
    ``die`` it kills its kernel or its Dask worker."""
    nb = nbformat.v4.new_notebook()
    params = nbformat.v4.new_code_cell('result_path = None\nx = 1\ny = None\nhold = ""\ndie = ""')
    params.metadata["tags"] = ["parameters"]
    nb.cells = [params, nbformat.v4.new_code_cell(POINT_SOURCE)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = tmp_path / "point.ipynb"
    nbformat.write(nb, path)
    return path


@pytest.fixture(scope="module")
def scheduler():
    """One Dask scheduler with a single worker, shared by this file's sweeps (a cluster and its workers'
    imports cost seconds). Like any scheduler given by address, it runs with Dask's defaults, which hand a
    worker more points than it has threads; a point is never retried after its worker dies
    (``allowed-failures`` 0), so that a dying worker fails everything it held at once."""
    from dask.distributed import LocalCluster

    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        cluster = LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None)
    yield cluster.scheduler_address
    cluster.close()


def _write_grid(path, points):
    path.write_text(yaml.safe_dump({"points": points}))
    return path


def _run_dir(out, point):
    return out / "runs" / point_id(point)


def _leftovers(out):
    return sorted(str(p.relative_to(out)) for p in out.rglob(".*") if p.name.endswith((".tmp", ".running"))
                  or p.name == ".notebook.partial.ipynb")


def test_records_are_replaced_whole_or_not_at_all(tmp_path, monkeypatch):
    path = tmp_path / "result.json"
    save_results(path, {"a": 1})
    before = path.read_bytes()

    def killed(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", killed)
    with pytest.raises(KeyboardInterrupt):
        save_results(path, {"a": 2, "b": list(range(1000))})
    monkeypatch.undo()
    # the old record is intact and the interrupted write left nothing behind
    assert path.read_bytes() == before and os.listdir(tmp_path) == ["result.json"]
    save_results(path, {"a": 2})
    assert json.loads(path.read_text())["results"] == {"a": 2} and os.listdir(tmp_path) == ["result.json"]


def _params_json(point):
    return json.dumps(point, sort_keys=True, default=str)  # as every version of the sweep writes it


def test_damaged_and_missing_records_run_again_and_the_table_keeps_every_run(point_nb, tmp_path, scheduler):
    out = tmp_path / "out"
    first = [{"x": 1}, {"die": "kernel"}]
    table = run_sweep(point_nb, {"points": first}, out, scheduler=scheduler, progress=False, log=pytest.fail)
    assert list(table.status) == ["ok", "failed"] and table.x.iloc[0] == 1
    # a kernel that dies fails its own point only
    assert "kernel" in table.error.iloc[1].lower()
    assert (_run_dir(out, first[1]) / "error.txt").is_file()
    assert all((_run_dir(out, p) / "notebook.ipynb").is_file() for p in first)
    assert _leftovers(out) == [] and not (out / LOCK_NAME).exists()

    damaged = _run_dir(out, {"x": 1}) / "result.json"
    damaged.write_text(damaged.read_text()[:20])  # truncated mid-write
    # a run killed after it wrote its parameters, before its result
    missing = _run_dir(out, {"x": 2}) / "result.json"
    missing.parent.mkdir()
    (missing.parent / "params.json").write_text(_params_json({"x": 2}))
    # a finished point of another grid, kept as the repository keeps them: params.json and result.json only
    kept = _run_dir(out, {"x": 3})
    kept.mkdir()
    (kept / "params.json").write_text(_params_json({"x": 3}))
    save_results(kept / "result.json", {"x": 3, "x_type": "int", "y": None})
    kept_mtime = (kept / "result.json").stat().st_mtime_ns

    messages = []
    second = [{"x": 1}, {"x": 2}]
    table = run_sweep(point_nb, _write_grid(tmp_path / "g.yml", second), out, scheduler=scheduler,
                      progress=False, log=messages.append)
    assert list(table.x) == [1, 2] and (table.status == "ok").all()  # this grid's points only
    assert any(str(damaged) in m and "damaged" in m for m in messages), messages
    assert any(str(missing) in m and "missing" in m for m in messages), messages
    assert len(messages) == 2, messages
    assert (damaged.parent / "result.json.damaged").is_file()
    assert json.loads(damaged.read_text())["results"]["x"] == 1
    assert json.loads(missing.read_text())["results"]["x"] == 2
    assert (kept / "result.json").stat().st_mtime_ns == kept_mtime

    # the tables hold every run of the folder, this grid's first, not only the smaller grid's
    for merged in (pd.read_csv(out / "results.csv"), pd.read_parquet(out / "results.parquet")):
        assert len(merged) == 4 and merged.run_id.is_unique
        assert set(merged.run_id) == {p.name for p in (out / "runs").iterdir()}
        assert list(merged.run_id[:2]) == [point_id(p) for p in second]
        assert sorted(merged.status) == ["failed", "ok", "ok", "ok"]
        assert sorted(merged.x.dropna().astype(float)) == [1, 2, 3]
    assert _leftovers(out) == [] and not (out / LOCK_NAME).exists()


def test_a_worker_that_dies_fails_its_point_only(point_nb, tmp_path, scheduler):
    out = tmp_path / "out"
    points = [{"die": "worker"}, {"x": 1}, {"x": 2}]
    # the single worker holds the next point too when the first one kills it: Dask fails both, and the
    # sweep submits again the one that had not started
    messages = []
    table = run_sweep(point_nb, {"points": points}, out, scheduler=scheduler, progress=False,
                      log=messages.append)
    assert list(table.status) == ["failed", "ok", "ok"] and list(table.x[1:]) == [1, 2]
    assert "KilledWorker" in table.error.iloc[0]
    assert "KilledWorker" in (_run_dir(out, points[0]) / "error.txt").read_text()
    assert len(messages) <= 1 and all("died before it started; submitted again" in m for m in messages), messages


def _wait_for(condition, timeout, proc, what):
    deadline = time.monotonic() + timeout
    while not condition():
        if proc.poll() is not None:
            raise AssertionError(f"the sweep exited ({proc.returncode}) before {what}")
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.2)


def test_a_sweep_killed_mid_run_resumes_without_losing_or_repeating_points(point_nb, tmp_path, scheduler,
                                                                           capsys):
    out, gate = tmp_path / "out", tmp_path / "gate"
    gate.touch()
    points = [{"x": 1}, *({"x": k, "hold": str(gate)} for k in (2, 3))]
    grid = _write_grid(tmp_path / "g.yml", points)
    log = (tmp_path / "sweep.log").open("wb")
    proc = subprocess.Popen([sys.executable, "-m", "treebook.cli", "sweep", str(point_nb), "--grid", str(grid),
                             "--out", str(out), "--workers", "2", "--no-progress"],
                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        _wait_for(lambda: (_run_dir(out, points[0]) / "result.json").is_file()
                  and all((_run_dir(out, p) / ".running").is_file() for p in points[1:]), 180, proc,
                  "the first point to finish and the two others to run at once")
        # a second sweep on the same folder is refused, naming the lock and its holder
        with pytest.raises(SweepLockError, match=re.escape(f"{out / LOCK_NAME} (pid {proc.pid} on ")):
            run_sweep(point_nb, grid, out, workers=1, progress=False)
        assert cli_main(["sweep", str(point_nb), "--grid", str(grid), "--out", str(out)]) == 2
        assert f"holds the lock {out / LOCK_NAME} (pid {proc.pid} on " in capsys.readouterr().err
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(30)
        log.close()
    assert (out / LOCK_NAME).is_file()  # left behind by the killed sweep, as are the interrupted points
    assert all((_run_dir(out, p) / ".running").is_file() and not (_run_dir(out, p) / "result.json").exists()
               for p in points[1:])
    first = _run_dir(out, points[0]) / "result.json"
    first.write_text(first.read_text()[: len(first.read_text()) // 2])
    # the killed workers' kernels run in sessions of their own and outlive the kill by up to a second (each
    # polls its parent every second and exits once it is gone); opening the gate before they are gone
    # would let an orphan finish its point
    time.sleep(3)
    gate.unlink()

    messages = []
    table = run_sweep(point_nb, grid, out, scheduler=scheduler, progress=False, log=messages.append)
    assert any("took over the lock" in m and f"pid {proc.pid} " in m for m in messages), messages
    assert any(str(first) in m and "damaged" in m for m in messages), messages
    for p in points[1:]:
        assert any(str(_run_dir(out, p) / "result.json") in m and "missing" in m for m in messages), messages
    assert len(messages) == 4, messages
    assert (table.status == "ok").all() and sorted(table.x) == [1, 2, 3]
    merged = pd.read_csv(out / "results.csv")
    assert len(merged) == 3 and set(merged.run_id) == {point_id(p) for p in points}
    assert sorted(p.name for p in (out / "runs").iterdir()) == sorted(point_id(p) for p in points)
    for p in points:
        assert json.loads((_run_dir(out, p) / "result.json").read_text())["results"]["x"] == p["x"]
        assert (_run_dir(out, p) / "notebook.ipynb").is_file()
    assert _leftovers(out) == [] and not (out / LOCK_NAME).exists()


def test_sweep_arguments_are_checked(point_nb, tmp_path, capsys, monkeypatch):
    grid = _write_grid(tmp_path / "g.yml", [{"x": 1}])
    for bad in ("0", "-1", "two"):
        with pytest.raises(SystemExit) as exc:
            cli_main(["sweep", str(point_nb), "--grid", str(grid), "--out", str(tmp_path / "o"), "--workers", bad])
        assert exc.value.code == 2
        assert "--workers: must be a positive integer" in capsys.readouterr().err
    for bad in (0, -1, 1.5, True, "2"):
        with pytest.raises(ValueError, match="workers must be a positive integer"):
            run_sweep(point_nb, grid, tmp_path / "o", workers=bad, progress=False)

    broken = tmp_path / "broken.yml"
    broken.write_text("points:\n  - {x: 1}\n  - {x: [2, 3}\n")
    assert cli_main(["sweep", str(point_nb), "--grid", str(broken), "--out", str(tmp_path / "o")]) == 2
    assert f"{broken}, line 3, column" in capsys.readouterr().err
    params = tmp_path / "params.yml"
    params.write_text("x: 1\ny: : 2\n")
    assert cli_main(["sweep", str(point_nb), "--grid", str(grid), "--params", str(params),
                     "--out", str(tmp_path / "o")]) == 2
    assert f"{params}, line 2, column" in capsys.readouterr().err
    assert not (tmp_path / "o" / "runs").exists() or not any((tmp_path / "o" / "runs").iterdir())

    from treebook import notebooks

    (tmp_path / "notebooks" / "params").mkdir(parents=True)
    (tmp_path / "notebooks" / "params" / "bad.yml").write_text("point:\n  x: [1\n")
    monkeypatch.setattr(notebooks, "project_root", lambda: tmp_path)
    with pytest.raises(ValueError, match=r"bad\.yml, line \d+, column \d+: invalid YAML"):
        notebooks.load_profile("bad")


def test_run_refuses_undeclared_parameters_and_reads_values_as_yaml(point_nb, tmp_path, capsys):
    out = tmp_path / "run"
    assert cli_main(["run", str(point_nb), "--profile", "book", "-p", "bogus", "1", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "'bogus'" in err and "its parameters: ['die', 'hold', 'result_path', 'x', 'y']" in err
    assert not out.exists()
    assert cli_main(["run", str(point_nb), "--profile", "book", "-p", "result_path", "r.json", "--out", str(out)]) == 2
    assert "result_path" in capsys.readouterr().err
    assert cli_main(["run", str(point_nb), "--profile", "book", "-p", "y", "[1, 2", "--out", str(out)]) == 2
    assert "parameter 'y'" in capsys.readouterr().err

    assert cli_main(["run", str(point_nb), "--profile", "book", "-p", "x", "1e-3", "-p", "y", "[1, 2]",
                     "--out", str(out)]) == 0
    res = json.loads((out / "point.json").read_text())["results"]
    assert res == {"x": 0.001, "x_type": "float", "y": [1, 2]}


def _data_copy(tmp_path, monkeypatch):
    copy = tmp_path / "data"
    shutil.copytree(data_dir() / "mmit", copy / "mmit")
    shutil.copy(data_dir() / "SHA256SUMS", copy / "SHA256SUMS")
    monkeypatch.setenv("TREEBOOK_DATA", str(copy))
    return copy


def test_checksum_cache_sees_edits_that_keep_size_and_mtime(tmp_path, monkeypatch):
    from treebook.datasets import _core

    copy = _data_copy(tmp_path, monkeypatch)
    name = "neuroblastomaProcessed_targets.csv"
    target = copy / "mmit" / name
    hashed = []
    monkeypatch.setattr(_core, "_hash_file", lambda p: hashed.append(p) or _real_hash(p))
    assert data_file("mmit", name) == target
    # a file changed shortly before its hash is hashed again on its next use
    assert data_file("mmit", name) == target and len(hashed) == 2

    monkeypatch.setattr(_core, "_RECENT_NS", 0)
    data_file("mmit", name)
    data_file("mmit", name)
    assert len(hashed) == 3  # cached once settled: the unchanged file is not hashed again
    time.sleep(0.05)
    st = target.stat()
    text = target.read_text()
    edit = text.replace("1", "2", 1)
    assert edit != text and len(edit) == len(text)
    with open(target, "r+") as fh:  # same size, same mtime
        fh.write(edit)
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert target.stat().st_size == st.st_size and target.stat().st_mtime_ns == st.st_mtime_ns
    with pytest.raises(DataError, match=f"{name} is corrupted"):
        data_file("mmit", name)
    assert len(hashed) == 4

    # the same edit, done to a fresh copy put in place with the old size and mtime (another inode)
    target.write_text(text)
    data_file("mmit", name)
    edited = target.with_suffix(".new")
    edited.write_text(text.replace("1", "2", 1))
    os.utime(edited, ns=(st.st_atime_ns, st.st_mtime_ns))
    os.replace(edited, target)
    with pytest.raises(DataError, match="corrupted"):
        data_file("mmit", name)


def _real_hash(path):
    with open(path, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()


def test_malformed_checksum_lines_are_reported_with_their_number(tmp_path, monkeypatch):
    copy = _data_copy(tmp_path, monkeypatch)
    sums = copy / "SHA256SUMS"
    good = sums.read_text().splitlines()
    for bad in ("nodigest", "abc123  ./mmit/x.csv", "z" * 64 + "  ./mmit/x.csv", "0" * 64 + "   "):
        sums.write_text("\n".join([good[0], "", bad, *good[1:]]) + "\n")
        with pytest.raises(DataError, match=re.escape(f"SHA256SUMS, line 3: malformed line {bad!r}")):
            data_file("mmit", "neuroblastomaProcessed_targets.csv")
    sums.write_text("\n".join([good[0], good[0].replace(good[0][:8], "0" * 8)]) + "\n")
    with pytest.raises(DataError, match="line 2: mmit/neuroblastomaProcessed_features.csv is listed again"):
        data_file("mmit", "neuroblastomaProcessed_targets.csv")
    # sha256sum's binary mode marks names with '*'
    sums.write_text("\n".join(line.replace("  ./", " *./") for line in good) + "\n")
    assert data_file("mmit", "neuroblastomaProcessed_targets.csv").is_file()


def test_run_points_reads_a_caches_points_and_names_failures(tmp_path):
    from treebook.sweep import run_points

    nb = nbformat.v4.new_notebook()
    params = nbformat.v4.new_code_cell("result_path = None\nx = 1")
    params.metadata["tags"] = ["parameters"]
    nb.cells = [params, nbformat.v4.new_code_cell(
        "from treebook.results import save_results\nassert x != 2, 'two'\nsave_results(result_path, {'x': x})")]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = tmp_path / "p.ipynb"
    nbformat.write(nb, path)
    runs, cached = run_points(path, [{"x": 3}, {"x": 1}], tmp_path / "a", workers=1)
    assert cached == 0 and [r.record["results"]["x"] for r in runs] == [3, 1]
    runs, cached = run_points(path, [{"x": 1}, {"x": 4}], tmp_path / "b", cache=tmp_path / "a", workers=1)
    assert cached == 1 and [r.record["results"]["x"] for r in runs] == [1, 4]
    assert not (tmp_path / "b" / "runs" / point_id({"x": 1}) / "notebook.ipynb").exists()  # read, not run
    with pytest.raises(RuntimeError, match=r"1 point\(s\) of .* failed"):
        run_points(path, [{"x": 2}], tmp_path / "c", workers=1)
