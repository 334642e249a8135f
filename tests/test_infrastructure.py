"""Data checksums, result records, notebook conventions, the sweep and the CLI."""

import ast
import json
import shutil
from pathlib import Path

import nbformat
import numpy as np
import pytest
import yaml

from treebook.cli import main as cli_main
from treebook.datasets import DataError, data_dir, data_file
from treebook.notebooks import load_profile, notebook_parameters, notebook_path, project_root, toc_notebooks
from treebook.sweep import expand_grid, run_sweep

ROOT = project_root()


def test_every_data_file_is_listed_and_verified():
    listed = {line.split()[1].removeprefix("./") for line in (data_dir() / "SHA256SUMS").read_text().splitlines()
              if line.strip()}
    on_disk = {str(p.relative_to(data_dir())) for p in data_dir().rglob("*") if p.is_file()
               and p.name not in ("SHA256SUMS", "SOURCE.md") and not p.name.endswith(".README.txt")}
    assert listed == on_disk
    for chapter in {rel.split("/")[0] for rel in listed}:
        assert (data_dir() / chapter / "SOURCE.md").is_file(), f"{chapter} has no SOURCE.md"


def test_corrupted_or_missing_data_is_a_clear_error(tmp_path, monkeypatch):
    copy = tmp_path / "data"
    shutil.copytree(data_dir() / "mmit", copy / "mmit")
    shutil.copy(data_dir() / "SHA256SUMS", copy / "SHA256SUMS")
    monkeypatch.setenv("TREEBOOK_DATA", str(copy))
    assert data_file("mmit", "neuroblastomaProcessed_targets.csv").is_file()
    target = copy / "mmit" / "neuroblastomaProcessed_targets.csv"
    target.write_text(target.read_text().replace("1", "2", 1))
    with pytest.raises(DataError, match="corrupted.*neuroblastomaProcessed_targets.csv"):
        data_file("mmit", "neuroblastomaProcessed_targets.csv")
    (copy / "mmit" / "neuroblastomaProcessed_features.csv").unlink()
    with pytest.raises(DataError, match="missing"):
        data_file("mmit", "neuroblastomaProcessed_features.csv")
    with pytest.raises(DataError, match="not listed"):
        data_file("mmit", "nope.csv")


def _notebooks():
    return [p for folder in ("notebooks", "notebooks/sweeps", "book") for p in sorted((ROOT / folder).glob("*.ipynb"))]


@pytest.mark.parametrize("path", _notebooks(), ids=lambda p: p.name)
def test_notebooks_are_stored_clean_with_a_parameters_cell(path):
    # every cell carries a unique id in the stored file (nbformat only warns when one is missing, and adds it)
    ids = [c.get("id") for c in json.loads(path.read_text())["cells"]]
    assert None not in ids and len(set(ids)) == len(ids), f"{path.name}: a cell without an id, or a repeated one"
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(not c.outputs and c.execution_count is None for c in code), f"{path.name} is stored with outputs"
    params = [c for c in code if "parameters" in c.metadata.get("tags", [])]
    assert len(params) == 1, f"{path.name} needs exactly one cell tagged 'parameters'"
    assert code[0] is params[0], "the parameters cell must be the first code cell"
    # plain literals only, every one of them visible to papermill (which sweeps and profiles rely on)
    tree = ast.parse(params[0].source)
    names = set()
    for stmt in tree.body:
        assert isinstance(stmt, ast.Assign) and len(stmt.targets) == 1, f"{path.name}: not a plain assignment"
        ast.literal_eval(stmt.value)
        names.add(stmt.targets[0].id)
    if ROOT / "notebooks" in path.parents:
        assert set(notebook_parameters(path)) == names, f"papermill cannot parse some parameters of {path.name}"


def test_toc_notebooks_exist_and_have_a_notebook_test():
    stems = toc_notebooks()
    assert stems and stems[0] == "00-tree-core"
    tests_text = "\n".join(p.read_text() for p in (ROOT / "tests").glob("test_nb_*.py"))
    for stem in stems:
        assert (ROOT / "notebooks" / f"{stem}.ipynb").is_file()
        assert f'"{stem}"' in tests_text, f"no test runs {stem}"
    for profile in ("smoke", "paper"):
        prof = load_profile(profile)
        assert set(prof) <= set(stems) | {p.stem for p in (ROOT / "notebooks").glob("*.ipynb")}
    assert set(load_profile("smoke")) >= set(stems), "every book notebook needs smoke parameters"


def test_notebook_path_resolves_stems_and_paths_under_notebooks(tmp_path, monkeypatch):
    point = ROOT / "notebooks" / "sweeps" / "03-search-point.ipynb"
    assert notebook_path("00-tree-core") == ROOT / "notebooks" / "00-tree-core.ipynb"
    assert notebook_path("sweeps/03-search-point") == point
    assert notebook_path("sweeps/03-search-point.ipynb") == point
    monkeypatch.chdir(tmp_path)  # a relative path that is not a file here is looked up under notebooks/
    assert notebook_path("notebooks/00-tree-core.ipynb") == ROOT / "notebooks" / "00-tree-core.ipynb"
    with pytest.raises(FileNotFoundError, match="no notebook 'sweeps/nope'"):
        notebook_path("sweeps/nope")


def test_grid_validation():
    allowed = {"a", "b", "c"}
    assert expand_grid({"a": [1, 2], "b": ["x"]}, allowed) == [{"a": 1, "b": "x"}, {"a": 2, "b": "x"}]
    assert expand_grid({"points": [{"a": 1}, {"c": 2}]}, allowed) == [{"a": 1}, {"c": 2}]
    assert len(expand_grid({"grid": {"a": [1, 2]}, "points": [{"b": 0}]}, allowed)) == 3
    with pytest.raises(ValueError, match="'d' is not a parameter"):
        expand_grid({"a": [1], "d": [2]}, allowed)
    with pytest.raises(ValueError, match="non-empty list"):
        expand_grid({"a": 3}, allowed)
    with pytest.raises(ValueError, match="result_path"):
        expand_grid({"result_path": ["x"]}, allowed | {"result_path"})


def test_sweep_on_a_local_cluster(tmp_path):
    grid = tmp_path / "grid.yml"
    # two good points and one that fails inside the notebook (an unknown data set)
    grid.write_text(yaml.safe_dump({"points": [{"dataset": "iris"}, {"dataset": "wine"}, {"dataset": "nope"}]}))
    base = {"n_repeats": 1, "max_depth": 2}
    out = tmp_path / "out"
    table = run_sweep("00-tree-core", grid, out, base_params=base, workers=2, progress=False)
    assert len(table) == 3
    ok = table[table.status == "ok"].set_index("dataset")
    assert set(ok.index) == {"iris", "wine"}
    assert (ok["mismatch_nodes"] == 0).all() and (ok["fits"] == 6).all()
    failed = table[table.status == "failed"]
    assert list(failed.dataset) == ["nope"] and "ValueError: dataset must be one of" in failed.error.iloc[0]
    assert (out / "results.csv").is_file() and (out / "results.parquet").is_file()
    assert len(list((out / "runs").glob("*/notebook.ipynb"))) == 3
    # each kernel's own log goes to its run folder, not to the console
    assert len(list((out / "runs").glob("*/kernel.log"))) == 3
    # a second run skips the finished points: their executed notebooks are not rewritten
    done = {p: p.stat().st_mtime_ns for p in (out / "runs").glob("*/result.json")}
    runs = {p.parent.name: json.loads(p.read_text()) for p in (out / "runs").glob("*/run.json")}
    again = run_sweep("00-tree-core", grid, out, base_params=base, workers=1, progress=False)
    assert {p: p.stat().st_mtime_ns for p in (out / "runs").glob("*/result.json")} == done
    assert (again.status == "ok").sum() == 2
    # every run folder records its wall time, status and kernel, and keeps them when a later sweep skips it
    assert len(runs) == 3 and sorted(r["status"] for r in runs.values()) == ["failed", "ok", "ok"]
    assert all(r["seconds"] > 0 and r["kernel"] in ("forked", "fresh") for r in runs.values())
    assert all(len(r["load"]) == 2 and all(v >= 0 for v in r["load"]) and r["cpus"] >= 1 for r in runs.values())
    assert {p.parent.name: json.loads(p.read_text()) for p in (out / "runs").glob("*/run.json")
            if json.loads(p.read_text())["status"] == "ok"} == {k: v for k, v in runs.items() if v["status"] == "ok"}


def test_cli_reports_a_wrong_grid_key(tmp_path, capsys):
    grid = tmp_path / "grid.yml"
    grid.write_text("max_dept: [1, 2]\n")
    code = cli_main(["sweep", "00-tree-core", "--grid", str(grid), "--out", str(tmp_path / "o")])
    assert code == 2
    assert "'max_dept' is not a parameter" in capsys.readouterr().err


def test_profiles_override_only_known_parameters():
    for profile in ("smoke", "paper"):
        for stem, params in load_profile(profile).items():
            known = set(notebook_parameters(stem))
            unknown = set(params) - known
            assert not unknown, f"{profile}.yml sets {sorted(unknown)} that {stem} does not have"


def test_an_unknown_profile_is_refused_with_the_known_names():
    with pytest.raises(FileNotFoundError, match="no parameter profile 'nosuch'; the profiles are book, paper, smoke"):
        load_profile("nosuch")


def test_a_failing_cell_is_reported_in_two_lines(tmp_path, capsys):
    """A bad parameter value: the CLI names the cell and the error, and where the whole traceback is."""
    code = cli_main(["run", "00-tree-core", "-p", "dataset", "nosuchdata", "--out", str(tmp_path)])
    err = capsys.readouterr().err.strip().splitlines()
    err = err[next(i for i, line in enumerate(err) if line.startswith("treebook run:")):]  # after the progress bar
    assert code == 1 and len(err) == 2, err
    assert "ValueError: dataset must be one of ['breast_cancer', 'diabetes', 'iris', 'wine']; got 'nosuchdata'" in err[0]
    assert err[1].endswith(str(tmp_path / "00-tree-core.ipynb")) and (tmp_path / "00-tree-core.ipynb").is_file()


def test_the_one_class_error_prints_plain_labels():
    from treebook.validation import check_classification_targets

    with pytest.raises(ValueError, match=r"y has 1 class\(es\) \[0\.0\]; at least 2"):
        check_classification_targets(np.zeros(4))


def test_result_json_schema_of_chapter_0(tmp_path, monkeypatch):
    from treebook.notebooks import run_notebook

    monkeypatch.chdir(tmp_path)  # a relative output folder is the caller's, not the notebooks folder's
    _, res = run_notebook("00-tree-core", profile="smoke", parameters={"n_repeats": 1}, output_dir="out")
    assert json.loads((tmp_path / "out" / "00-tree-core.json").read_text()) == res
    assert set(res) == {"results", "scorecard", "slices", "provenance"}
    for row in res["scorecard"]:
        assert set(row) == {"quantity", "paper", "ours", "difference", "tolerance", "verdict", "digits", "note"}


def test_a_kernel_that_dies_at_start_is_started_again(monkeypatch, tmp_path):
    """A kernel that loses the race for a port dies before any cell runs: that start is retried; a failure
    inside the notebook is not."""
    import papermill

    from treebook.notebooks import KERNEL_START_FAILURE, execute_notebook

    calls = []

    def flaky(src, dst, **kwargs):
        calls.append(src)
        if len(calls) < 3:
            raise RuntimeError(KERNEL_START_FAILURE)
        return "ran"

    monkeypatch.setattr(papermill, "execute_notebook", flaky)
    monkeypatch.setattr("treebook.notebooks.time.sleep", lambda s: None)
    assert execute_notebook("a.ipynb", tmp_path / "b.ipynb") == "ran" and len(calls) == 3
    calls.clear()
    with pytest.raises(RuntimeError, match="kernel_info"):
        execute_notebook("a.ipynb", tmp_path / "b.ipynb", attempts=2)
    assert len(calls) == 2

    def broken(src, dst, **kwargs):
        calls.append(src)
        raise RuntimeError("a cell failed")

    calls.clear()
    monkeypatch.setattr(papermill, "execute_notebook", broken)
    with pytest.raises(RuntimeError, match="a cell failed"):
        execute_notebook("a.ipynb", tmp_path / "b.ipynb")
    assert len(calls) == 1


def test_a_notebook_kernel_is_on_unix_sockets_and_does_not_warn_of_tcp(tmp_path, capfd):
    """execute_notebook starts its kernel on IPC transport: the notebook runs, no network port is opened
    and the kernel prints no warning about unencrypted TCP; a caller's own kernel manager is kept."""
    from treebook.notebooks import execute_notebook

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("from ipykernel.connect import get_connection_info\n"
                                          "print(get_connection_info(unpack=True)['transport'])")]
    src, dst = tmp_path / "a.ipynb", tmp_path / "b.ipynb"
    nbformat.write(nb, src)
    execute_notebook(src, dst, kernel_name="python3", progress_bar=False, cwd=str(tmp_path))
    out = "".join(o.get("text", "") for o in nbformat.read(dst, as_version=4).cells[0].outputs)
    assert out.split()[-1] == "ipc"
    assert "without encryption" not in capfd.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.ipynb", "b.ipynb"]  # no socket files left here


def test_kernels_started_side_by_side_get_socket_directories_of_their_own(tmp_path):
    """Two kernels started from the same working directory at the same time do not share socket files
    (jupyter_client's default IPC prefix is one fixed name in the working directory; two kernels on it
    read each other's messages and fail with 'Invalid Signature'); each directory goes with its kernel."""
    import subprocess
    import sys

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("import time\n"
                                          "from ipykernel.connect import get_connection_info\n"
                                          "print(get_connection_info(unpack=True)['ip'])\n"
                                          "time.sleep(3)")]
    nbformat.write(nb, tmp_path / "a.ipynb")
    run = ("import sys\nfrom treebook.notebooks import execute_notebook\n"
           "execute_notebook('a.ipynb', sys.argv[1], kernel_name='python3', progress_bar=False)")
    procs = [subprocess.Popen([sys.executable, "-c", run, f"out{i}.ipynb"], cwd=tmp_path,
                              stderr=subprocess.PIPE, text=True) for i in range(2)]
    errors = [proc.communicate(timeout=240)[1] for proc in procs]
    assert [proc.returncode for proc in procs] == [0, 0], errors
    assert not any("Invalid Signature" in err for err in errors)
    ips = ["".join(o.get("text", "") for o in nbformat.read(tmp_path / f"out{i}.ipynb", as_version=4)
                   .cells[0].outputs).split()[-1] for i in range(2)]
    assert ips[0] != ips[1]
    assert all(Path(ip).is_absolute() and not Path(ip).parent.exists() for ip in ips)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.ipynb", "out0.ipynb", "out1.ipynb"]


def test_memory_readings_are_this_process_and_the_peak_resets():
    """treebook.memory reads this process's resident memory (Linux /proc): the peak is at least the current
    value, grows with a large allocation, and drops back when reset after freeing it."""
    from treebook.memory import peak_rss_mib, reset_peak_rss, rss_mib

    now, peak = rss_mib(), peak_rss_mib()
    assert 0 < now <= peak
    block = np.ones(40 * 2**20 // 8)  # 40 MiB, touched
    assert peak_rss_mib() >= now + 30
    del block
    if reset_peak_rss():
        assert peak_rss_mib() < rss_mib() + 10


def test_the_warm_up_runs_every_part_of_the_package():
    from treebook.warmup import PARTS, warm_up

    lines = []
    seconds = warm_up(log=lines.append)
    assert list(seconds) == list(PARTS) and all(s >= 0 for s in seconds.values())
    assert len(lines) == len(PARTS) and all(line.startswith("treebook warm-up: ") for line in lines)
    lines = []
    seconds = warm_up(log=lines.append, jobs=2)  # in two processes, the same parts, reported in PARTS' order
    assert list(seconds) == list(PARTS) and len(lines) == len(PARTS)
    with pytest.raises(ValueError, match="jobs"):
        warm_up(jobs=0)


def test_the_first_builds_order_lists_every_book_notebook():
    """``book/notebook-seconds.json`` orders a first build's notebooks (the longest first): it names each notebook
    of the table of contents once, with a positive number of seconds."""
    import json

    seconds = {k: v for k, v in json.loads((project_root() / "book" / "notebook-seconds.json").read_text()).items()
               if not k.startswith("_")}
    assert set(seconds) == set(toc_notebooks())
    assert all(isinstance(v, (int, float)) and v > 0 for v in seconds.values())
