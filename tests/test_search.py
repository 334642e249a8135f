"""Random points in sweep grids and chapter 3's random hyperparameter search."""

import numpy as np
import pandas as pd
import pytest

from treebook.datasets.shape_trees import FOLD_SEEDS, SHAPE_DATASETS, paper_split
from treebook.notebooks import notebook_parameters, project_root
from treebook.shape import LiteratiClassifier, ShapeCARTClassifier
from treebook.shape.search import (
    METHODS,
    POINT_NOTEBOOK,
    evaluate_config,
    paper_search_space,
    random_search,
    read_search,
    search_configs,
    search_fold,
    search_grid,
    select_on_validation,
    summarize_selection,
)
from treebook.sweep import expand_grid, load_grid
from treebook.tree import CARTClassifier

SPACE = {"k": {"int": [2, 6]}, "u": {"uniform": [-1.0, 2.5]}, "g": {"loguniform": [0.001, 100.0]},
         "c": {"choice": ["a", 0.5, None]}}


def _random(**block):
    return expand_grid({"random": {"n": 60, "space": SPACE, **block}})


def test_random_points_are_deterministic_distinct_and_within_bounds():
    points = _random(seed=3)
    assert points == _random(seed=3) and points != _random(seed=4)
    assert _random() == _random(seed=0)
    assert len(points) == 60 and len({tuple(sorted(p.items(), key=str)) for p in points}) == 60
    for p in points:
        assert set(p) == set(SPACE)
        assert type(p["k"]) is int and 2 <= p["k"] <= 6
        assert -1.0 <= p["u"] <= 2.5 and 0.001 <= p["g"] <= 100.0
        for x in (p["u"], p["g"]):
            assert type(x) is float and x == float(f"{x:.4g}")  # rounded: stable point ids
        assert p["c"] in ("a", 0.5, None)
    assert {p["k"] for p in points} == {2, 3, 4, 5, 6} and {p["c"] for p in points} == {"a", 0.5, None}
    # log-uniform: about as many draws in each decade of [1e-3, 1e2]
    decades = np.histogram(np.log10([p["g"] for p in points]), bins=5, range=(-3, 2))[0]
    assert decades.min() >= 4


def test_a_small_discrete_space_yields_each_configuration_once():
    points = expand_grid({"random": {"n": 200, "space": {"d": {"int": [2, 6]}, "b": {"choice": [0, 1]}}}})
    assert len(points) == 10 and {(p["d"], p["b"]) for p in points} == {(d, b) for d in range(2, 7) for b in (0, 1)}
    assert len(expand_grid({"random": {"n": 5, "space": {"x": {"uniform": [1.0, 1.0]}}}})) == 1


def test_random_configurations_are_crossed_with_the_grid_and_points_added():
    grid = {"grid": {"dataset": ["a", "b"], "fold_seed": [1, 2, 3]}, "random": {"n": 4, "seed": 1, "space": SPACE},
            "points": [{"dataset": "z"}]}
    points = expand_grid(grid)
    assert len(points) == 2 * 3 * 4 + 1 and points[-1] == {"dataset": "z"}
    configs = expand_grid({"random": grid["random"]})
    by_cell = {}
    for p in points[:-1]:
        by_cell.setdefault((p["dataset"], p["fold_seed"]), []).append({k: p[k] for k in SPACE})
    assert len(by_cell) == 6 and all(c == configs for c in by_cell.values())


def test_conditional_blocks_sample_only_their_own_parameters():
    blocks = [{"n": 200, "fixed": {"method": "CART"}, "space": {"max_depth": {"int": [2, 6]}}},
              {"n": 30, "seed": 1, "fixed": {"method": "Literati", "time_limit": 2.0},
               "space": {"max_depth": {"int": [2, 6]}, "lam": {"loguniform": [0.1, 10.0]}}}]
    points = expand_grid({"grid": {"dataset": ["a"]}, "random": blocks}, {"dataset", "method", "max_depth", "lam",
                                                                          "time_limit"})
    cart = [p for p in points if p["method"] == "CART"]
    lit = [p for p in points if p["method"] == "Literati"]
    assert len(cart) == 5 and all(set(p) == {"dataset", "method", "max_depth"} for p in cart)
    assert len(lit) == 30 and all(set(p) == {"dataset", "method", "max_depth", "lam", "time_limit"} for p in lit)
    assert all(p["time_limit"] == 2.0 and 0.1 <= p["lam"] <= 10.0 for p in lit)


@pytest.mark.parametrize("random, match", [
    ({"n": 3, "space": {"x": {"normal": [0, 1]}}}, "random key 'x': a spec is one of"),
    ({"n": 3, "space": {"x": {"int": [5, 2]}}}, "random key 'x': int needs lo <= hi"),
    ({"n": 3, "space": {"x": {"uniform": [1.0, 0.5]}}}, "random key 'x': uniform needs lo <= hi"),
    ({"n": 3, "space": {"x": {"int": [1.5, 3]}}}, "random key 'x': int needs \\[lo, hi\\], two integers"),
    ({"n": 3, "space": {"x": {"loguniform": [0.0, 1.0]}}}, "random key 'x': loguniform needs bounds > 0"),
    ({"n": 3, "space": {"x": {"loguniform": [-1.0, 1.0]}}}, "loguniform needs bounds > 0"),
    ({"n": 3, "space": {"x": {"loguniform": ["1e-3", 1.0]}}}, "YAML reads 1e-3 as text"),
    ({"n": 3, "space": {"x": {"choice": []}}}, "random key 'x': choice needs a non-empty list"),
    ({"n": 0, "space": {"x": {"int": [1, 2]}}}, "random block 0: n must be an integer >= 1"),
    ({"n": 2.5, "space": {"x": {"int": [1, 2]}}}, "n must be an integer >= 1"),
    ({"n": 3, "space": {}}, "random block 0: 'space' must map"),
    ({"n": 3, "space": {"x": {"int": [1, 2]}}, "size": 4}, "keys n, seed, space and fixed"),
    ({"n": 3, "space": {"x": {"int": [1, 2]}}, "fixed": {"x": 1}}, r"\['x'\] both fixed and sampled"),
    ({"n": 3, "space": {"d": {"int": [1, 2]}}}, "random key 'd' is not a parameter of the notebook"),
    ({"n": 3, "space": {"x": {"int": [1, 2]}}, "fixed": {"method": "a"}}, "random key 'method' is not a parameter"),
    ({"n": 3, "space": {"a": {"int": [1, 2]}}}, r"keys \['a'\] are in both 'grid' and 'random'"),
    ("nope", "'random' must be a block"),
    ([{"n": 3, "space": {"x": {"int": [1, 2]}}}, {"n": -1, "space": {"x": {"int": [1, 2]}}}],
     "random block 1: n must be"),
])
def test_bad_random_blocks_are_named_errors(random, match):
    with pytest.raises(ValueError, match=match):
        expand_grid({"grid": {"a": [1, 2]}, "random": random}, {"a", "x", "result_path"})


def test_the_paper_grid_file_is_the_documented_search():
    path = project_root() / "notebooks" / "sweeps" / "03-search.yml"
    grid = load_grid(path)
    expansions = grid["grid"]["max_expansions"][0]
    assert grid == search_grid(list(SHAPE_DATASETS), FOLD_SEEDS, 100, METHODS, expansions, seed=0)
    points = expand_grid(grid, set(notebook_parameters(POINT_NOTEBOOK)))
    assert len(points) == 15 * 5 * 3 and {p["n_configs"] for p in points} == {100}
    for method in METHODS:  # every method draws 200 distinct configurations of its own space
        configs = search_configs(method)
        assert len(configs) == 200 and len({tuple(sorted(c.items())) for c in configs}) == 200
        assert {k for c in configs for k in c} == {"method", *paper_search_space()[method]}
    text = path.read_text()
    assert "treebook sweep notebooks/sweeps/03-search-point.ipynb" in text and "read_search" in text


def test_the_second_grid_file_completes_the_search_of_200():
    """03-search.yml and 03-search-more.yml are the two parts of the paper's search of 200 configurations."""
    sweeps = project_root() / "notebooks" / "sweeps"
    first, second = (expand_grid(load_grid(sweeps / name)) for name in ("03-search.yml", "03-search-more.yml"))
    expansions = first[0]["max_expansions"]
    assert first + second == expand_grid(search_grid(list(SHAPE_DATASETS), FOLD_SEEDS, 200, METHODS, expansions,
                                                     seed=0, split=(100,)))
    assert {(p["n_configs"], p["first_config"]) for p in second} == {(200, 100)}
    assert "--grid notebooks/sweeps/03-search-more.yml" in (sweeps / "03-search-more.yml").read_text()


@pytest.mark.parametrize("split, match", [((0,), "split must be"), ((5,), "split must be"), ((3, 2), "split must"),
                                          ((2, 2), "split must be")])
def test_bad_splits_are_named_errors(split, match):
    with pytest.raises(ValueError, match=match):
        search_grid(["raisin"], [42], 5, split=split)


def test_a_search_in_parts_fits_the_same_configurations_as_one_search():
    whole = search_fold("raisin", 42, "Literati", 3, max_expansions=5)
    parts = (search_fold("raisin", 42, "Literati", 2, max_expansions=5)
             + search_fold("raisin", 42, "Literati", 3, first_config=2, max_expansions=5))
    drop = ("fit_time",)
    assert [{k: v for k, v in r.items() if k not in drop} for r in parts] == [
        {k: v for k, v in r.items() if k not in drop} for r in whole]
    assert [r["config_index"] for r in whole] == [0, 1, 2]
    for bad in (-1, 3):
        with pytest.raises(ValueError, match="first_config must be in"):
            search_fold("raisin", 42, "CART", 3, first_config=bad)


def test_the_chapters_paper_profile_reads_the_committed_search():
    """The paper profile's search is the two grid files' points (configurations 0-99 of 03-search.yml and
    100-199 of 03-search-more.yml), so that the record reuses the sweeps' finished points and runs none."""
    import yaml

    from treebook.sweep.grid import point_id

    sweeps = project_root() / "notebooks" / "sweeps"
    grid_points = [p for name in ("03-search.yml", "03-search-more.yml")
                   for p in expand_grid(load_grid(sweeps / name))]
    profile = yaml.safe_load((project_root() / "notebooks" / "params" / "paper.yml").read_text())["03-shape-trees"]
    ours = expand_grid(search_grid(profile["test_datasets"], FOLD_SEEDS[:profile["test_folds"]],
                                   profile["search_configs"], METHODS, profile["test_expansions"],
                                   split=profile["search_split"]))
    assert profile["search_configs"] == 200 and len(ours) == len(grid_points)
    assert {point_id(p) for p in ours} == {point_id(p) for p in grid_points}
    assert profile["search_out"].endswith("results/sweeps/03-search")


def test_search_fold_fits_the_drawn_configurations_on_one_fold():
    rows = search_fold("raisin", 42, "CART", 4)
    assert [{k: r[k] for k in c} for r, c in zip(rows, search_configs("CART", 4))] == search_configs("CART", 4)
    for r in rows:
        params = {k: r[k] for k in paper_search_space()["CART"]}
        again = evaluate_config("raisin", 42, "CART", **params)
        assert (r["test_acc"], r["val_acc"], r["n_leaves"]) == (again["test_acc"], again["val_acc"], again["n_leaves"])
    lit = search_fold("raisin", 42, "Literati", 2, max_expansions=5)
    assert len(lit) == 2 and all(r["proved"] in (True, False) for r in lit)
    again = search_fold("raisin", 42, "Literati", 2, max_expansions=5)  # an expansion budget: the same rows
    assert [{k: v for k, v in r.items() if k != "fit_time"} for r in lit] == [
        {k: v for k, v in r.items() if k != "fit_time"} for r in again]
    with pytest.raises(ValueError, match="needs a budget"):
        search_fold("raisin", 42, "Literati", 2)
    with pytest.raises(ValueError, match="unknown method"):
        search_configs("GOSDT")


def test_select_on_validation_picks_the_best_validation_row_with_tie_breaks():
    rows = [  # dataset, fold, method, config, val, test, leaves, status
        ("a", 1, "CART", "d2", 0.80, 0.70, 4, "ok"),
        ("a", 1, "CART", "d3", 0.90, 0.75, 8, "ok"),       # best validation
        ("a", 1, "CART", "d4", 0.99, 0.99, 16, "failed"),  # failed runs never count
        ("a", 1, "Literati", "big", 0.85, 0.80, 16, "ok"),
        ("a", 1, "Literati", "small", 0.85, 0.60, 4, "ok"),  # tie on validation: fewer leaves
        ("a", 1, "Literati", "small2", 0.85, 0.65, 4, "ok"),  # tie on both: the first row
        ("a", 2, "CART", "d2", 0.50, 0.55, 4, "ok"),
        ("b", 1, "CART", "d2", 0.60, 0.65, 4, "ok"),
    ]
    table = pd.DataFrame(rows, columns=["dataset", "fold_seed", "method", "config", "val_acc", "test_acc",
                                        "n_leaves", "status"])
    table.loc[2, "val_acc"] = np.nan  # as a failed run's row has
    sel = select_on_validation(table)
    assert list(zip(sel.dataset, sel.fold_seed, sel.method)) == [("a", 1, "CART"), ("a", 1, "Literati"),
                                                                 ("a", 2, "CART"), ("b", 1, "CART")]
    assert list(sel.config) == ["d3", "small", "d2", "d2"]
    assert list(sel.test_acc) == [0.75, 0.60, 0.55, 0.65]
    assert select_on_validation(table.iloc[::-1]).set_index("method").loc["Literati", "config"] == "small2"
    summary = summarize_selection(sel)
    assert list(summary.index) == ["CART", "Literati"]
    assert summary.loc["CART", "test_acc"] == pytest.approx((0.75 + 0.55 + 0.65) / 3)
    assert summary.loc["CART", "folds"] == 3 and summary.loc["CART", "datasets"] == 2
    assert select_on_validation(table.assign(status="failed")).empty
    with pytest.raises(ValueError, match="no column"):
        select_on_validation(table.drop(columns="n_leaves"))


def test_evaluate_config_matches_a_refit_on_the_fold():
    from treebook.datasets.shape_trees import load_shape_dataset

    X, y = load_shape_dataset("raisin")
    tr, va, te = paper_split(y, 63)
    for method, est in [("CART", CARTClassifier(max_depth=2)),
                        ("ShapeCART", ShapeCARTClassifier(max_depth=2, max_breakpoints=2, random_state=0)),
                        ("Literati", LiteratiClassifier(max_depth=2, max_breakpoints=2, lam=1.0, time_limit=None,
                                                        max_expansions=5000, random_state=0))]:
        r = evaluate_config("raisin", 63, method, 2, max_breakpoints=2, lam=1.0, time_limit=None,
                            max_expansions=5000)
        est.fit(X[tr], y[tr])
        assert all(0.5 < r[k] <= 1 for k in ("train_acc", "val_acc", "test_acc"))
        assert r["test_acc"] == est.score(X[te], y[te]) and r["val_acc"] == est.score(X[va], y[va])
        assert r["train_acc"] == est.score(X[tr], y[tr]) and r["n_leaves"] == est.tree_.n_leaves <= 4
        assert r["fit_time"] > 0
        assert r["proved"] is (True if method == "Literati" else None)
    with pytest.raises(ValueError, match="unknown method 'GOSDT'"):
        evaluate_config("raisin", 63, "GOSDT", 2)


def test_random_search_end_to_end_on_a_local_cluster(tmp_path):
    with pytest.raises(ValueError, match="unknown method or data set"):
        search_grid(["raisin", "nope"], [42])
    table, sel = random_search(["raisin"], [42], 2, METHODS, 5, tmp_path / "out", workers=2, progress=False)
    assert len(table) == 6 and (table.status == "ok").all()
    assert sorted(table.method) == sorted(m for m in METHODS for _ in range(2)) and (table.max_expansions == 5).all()
    assert (tmp_path / "out" / "results.csv").is_file()
    assert len(list((tmp_path / "out" / "runs").glob("*/notebook.ipynb"))) == 3
    assert read_search(tmp_path / "out").equals(table)
    # the selection is the best validation row of each method; the records reproduce in process
    assert len(sel) == 3 and set(sel.method) == set(METHODS)
    for method in METHODS:
        rows = search_fold("raisin", 42, method, 2, max_expansions=5)
        best = sel.set_index("method").loc[method]
        assert best.val_acc == max(r["val_acc"] for r in rows)
        mine = table[table.method == method]
        assert list(mine.test_acc) == [r["test_acc"] for r in rows] and list(mine.n_leaves) == [r["n_leaves"] for r in rows]
    # a smaller search into the same folder reads its own points only (they are finished: nothing runs)
    part, part_sel = random_search(["raisin"], [42], 2, ("CART",), 5, tmp_path / "out", workers=1, progress=False)
    assert set(part.method) == {"CART"} and part.equals(table[table.method == "CART"].reset_index(drop=True))
    assert list(part_sel.method) == ["CART"]
    # a larger search in two parts runs only its second part: the first is the finished search of 2
    more, more_sel = random_search(["raisin"], [42], 3, METHODS, 5, tmp_path / "out", workers=1, progress=False,
                                   split=(2,))
    assert len(list((tmp_path / "out" / "runs").glob("*/notebook.ipynb"))) == 6
    assert len(more) == 9 and list(more.config_index) == [0, 1, 2] * 3
    first = more[more.config_index < 2].drop(columns=["n_configs", "first_config"]).reset_index(drop=True)
    mine = table.sort_values(["dataset", "fold_seed", "method", "config_index"]).reset_index(drop=True)
    assert first.equals(mine.drop(columns=["n_configs", "first_config"]))
    third = {m: search_fold("raisin", 42, m, 3, first_config=2, max_expansions=5)[0] for m in METHODS}
    for _, r in more[more.config_index == 2].iterrows():
        assert (r.val_acc, r.test_acc, r.n_leaves) == tuple(third[r.method][k] for k in ("val_acc", "test_acc",
                                                                                          "n_leaves"))
    assert len(more_sel) == 3 and (more_sel.val_acc >= sel.set_index("method").loc[more_sel.method].val_acc.values).all()
