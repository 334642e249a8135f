"""`treebook run` parameters; the data checksum cache and the SHA256SUMS file."""

import hashlib
import json
import os
import re
import shutil
import time

import nbformat
import pytest

from treebook.cli import main as cli_main
from treebook.datasets import DataError, data_dir, data_file

POINT_SOURCE = """\
import os
import signal
import time

from treebook.results import save_results

while hold and os.path.exists(hold):
    time.sleep(0.1)
if die == "kernel":
    os._exit(3)
if die == "worker":
    os.kill(os.getppid(), signal.SIGKILL)
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
