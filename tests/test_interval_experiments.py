"""The Figure 5 protocol as the authors run it (tdhock/mmit-paper mmit.predictions.py, cart.predictions.py,
constant.predictions.R, penaltyLearning.predictions.R; aldro61/mmit mmit/model_selection.py), at toy scale."""


import numpy as np
import pytest
from sklearn.model_selection import GridSearchCV, KFold

from treebook.interval import experiments
from treebook.interval.baselines import IntervalCARTRegressor
from treebook.interval.experiments import (
    AUTHORS_MAX_DEPTHS,
    AUTHORS_PROTOCOL,
    MinErrorConstantRegressor,
    MMITGridSearchCV,
    authors_fold_ids,
    cart_grid_search_nested,
    cross_validate_methods,
    make_methods,
    margin_grid,
    min_samples_split_grid,
    paper_methods,
    paper_param_grid,
    paper_protocol_summary,
)
from treebook.interval.metrics import interval_mse_scorer
from treebook.interval.simulate import simulated_dataset
from treebook.interval.tree import MMITRegressor


def test_margin_grid_has_zero_and_spans_the_limits_range():
    # finite limits 0, 1, 0.5, 3, 0.5, 0.5 -> sorted 0, .5, .5, .5, 1, 3: smallest positive gap 0.5, range 3 - 0 = 3
    y = np.array([[0.0, 1.0], [0.5, np.inf], [-np.inf, 3.0], [0.5, 0.5]])
    g = margin_grid(y, 3, include_zero=True)
    np.testing.assert_allclose(g, [0.0, 0.5, np.sqrt(0.5 * 3.0), 3.0])
    assert g[0] == 0.0 and np.all(np.diff(g) > 0) and g[-1] == pytest.approx(3.0)
    assert len(margin_grid(y, 20, include_zero=True)) == 21
    np.testing.assert_allclose(margin_grid(y, 3), g[1:])  # without 0: the Interval-CART and moves.R grid
    assert margin_grid(np.array([[1.0, np.inf], [-np.inf, 1.0]]), 5, include_zero=True).tolist() == [0.0]


def test_min_samples_split_grid_is_the_authors_truncated_logspace():
    # floor(2 * 80^(k/9)), k = 0..9 (the last is 159: logspace gives 159.999...)
    assert min_samples_split_grid(160) == [2, 3, 5, 8, 14, 22, 37, 60, 98, 159]
    assert min_samples_split_grid(2734) == [2, 4, 9, 22, 49, 110, 246, 549, 1225, 2734]
    assert min_samples_split_grid(20) == [2, 3, 4, 5, 7, 9, 11, 15, 20]  # the repeated 2 dropped
    assert min_samples_split_grid(1) == [2]


def test_paper_grids_have_the_authors_sizes():
    assert AUTHORS_MAX_DEPTHS == (1, 2, 3, 4, 6, 9, 12, 16, 22, 30)
    assert AUTHORS_PROTOCOL["inner_folds"] == 10 and AUTHORS_PROTOCOL["inner_random_state"] == 42
    assert AUTHORS_PROTOCOL["outer_folds"] == 5 and AUTHORS_PROTOCOL["n_margins"] == 20
    X, y, _ = simulated_dataset("sin", n_samples=200, n_features=20, random_state=0)
    methods = paper_methods()
    assert set(methods) == {"MMIT-linear", "MMIT-squared", "L1-Linear", "Interval-CART", "constant"}
    for name in ("MMIT-linear", "MMIT-squared"):
        grid = methods[name].param_grid(X[:160], y[:160])
        assert len(grid["margin"]) == 21 and grid["margin"][0] == 0.0
        lim = y[:160][np.isfinite(y[:160])]
        assert grid["margin"][-1] == pytest.approx(lim.max() - lim.min())  # the range of the limits
        assert grid["max_depth"] == list(AUTHORS_MAX_DEPTHS)
        assert grid["min_samples_split"] == [2, 3, 5, 8, 14, 22, 37, 60, 98, 159]
        cv = methods[name].inner_cv
        assert cv.get_n_splits() == 10 and cv.shuffle and cv.random_state == 42
    cart = methods["Interval-CART"].param_grid(X[:160], y[:160])
    assert len(cart["margin"]) == 20 and cart["margin"][0] > 0  # cart.predictions.py: no margin 0
    assert cart["max_depth"] == list(AUTHORS_MAX_DEPTHS) and len(cart["min_samples_split"]) == 10
    assert paper_methods(cart_zero_margin=True)["Interval-CART"].param_grid(X, y)["margin"][0] == 0.0
    small = paper_methods(n_margins=4, n_min_samples_split=3, max_depths=(1, 3), inner_folds=3)
    g = small["MMIT-squared"].param_grid(X, y)
    assert (len(g["margin"]), len(g["min_samples_split"]), len(g["max_depth"])) == (5, 3, 2)
    assert small["MMIT-squared"].inner_cv.get_n_splits() == 3
    full = paper_protocol_summary(160).set_index("setting")
    assert full.loc["MMIT candidates", "authors"] == 21 * 10 * 10
    assert (full["shrink factor"].drop("MMIT trees grown per outer fold (depths nested)") == 1).all()
    shrunk = paper_protocol_summary(160, n_margins=4, n_min_samples_split=3, max_depths=(1, 3),
                                    inner_folds=3).set_index("setting")
    assert shrunk.loc["MMIT candidates", "shrink factor"] == pytest.approx(2100 / (5 * 3 * 2))
    assert shrunk.loc["inner folds", "shrink factor"] == pytest.approx(10 / 3)


def test_mmit_grid_search_is_unpruned_and_matches_a_plain_grid_search():
    X, y, _ = simulated_dataset("abs", n_samples=90, n_features=3, random_state=2)
    grid = paper_param_grid(y, n_margins=2, n_min_samples_split=3, max_depths=(1, 2, 4))
    nested = MMITGridSearchCV("squared", grid, cv=3, tie_break="first").fit(X, y)
    plain = MMITGridSearchCV("squared", grid, cv=3, tie_break="first", nested_depths=False).fit(X, y)
    np.testing.assert_allclose(nested.cv_results_.cv_mse, plain.cv_results_.cv_mse, rtol=1e-12, atol=1e-15)
    sk = GridSearchCV(MMITRegressor(loss="squared"), grid, scoring=interval_mse_scorer,
                      cv=KFold(3, shuffle=True, random_state=42)).fit(X, y)
    np.testing.assert_allclose(-sk.cv_results_["mean_test_score"], nested.cv_results_.cv_mse, rtol=1e-9, atol=1e-12)
    assert nested.best_params_ == plain.best_params_
    assert nested.best_score_ == pytest.approx(sk.best_score_)
    best = nested.best_estimator_
    assert best.ccp_alpha == 0.0 and best.tree_ is best.full_tree_  # unpruned
    assert best.max_depth == nested.best_params_["max_depth"]
    np.testing.assert_allclose(nested.predict(X), MMITRegressor(loss="squared", **nested.best_params_).fit(X, y)
                               .predict(X))


@pytest.mark.parametrize("kind, seed", [("abs", 2), ("sin", 5), ("ties", 0)])
def test_nested_interval_cart_search_is_gridsearchcv_to_the_last_bit(kind, seed):
    if kind == "ties":
        # few distinct feature values and repeated intervals: equal split costs across features and equal
        # candidate scores (the deeper depths never split further)
        rng = np.random.default_rng(seed)
        X = rng.integers(0, 3, size=(60, 4)).astype(float)
        lo = rng.integers(0, 3, size=60).astype(float)
        y = np.column_stack([np.where(rng.random(60) < 0.2, -np.inf, lo), lo + rng.integers(1, 3, size=60)])
    else:
        X, y, _ = simulated_dataset(kind, n_samples=80, n_features=3, random_state=seed)
    grid = {"margin": margin_grid(y, 3).tolist(), "max_depth": [1, 2, 3, 4, 6, 30],
            "min_samples_split": min_samples_split_grid(60, 3)}
    cv = KFold(4, shuffle=True, random_state=42)
    sk = GridSearchCV(IntervalCARTRegressor(), grid, scoring=interval_mse_scorer, cv=cv).fit(X, y)
    est, params, mean = cart_grid_search_nested(X, y, grid, cv)
    np.testing.assert_array_equal(mean, sk.cv_results_["mean_test_score"])
    assert params == sk.best_params_
    np.testing.assert_array_equal(est.predict(X), sk.best_estimator_.predict(X))
    if kind == "ties":
        assert np.unique(mean).size < mean.size  # the tie rule was exercised


def test_mmit_grid_search_breaks_ties_by_the_smaller_tree():
    # two groups whose intervals overlap: every tree predicts inside every interval (CV MSE 0 exactly),
    # but the margin makes the root cost positive, so min_samples_split=2 splits and 1000 does not
    X = np.repeat([[0.0], [1.0]], 30, axis=0) + np.linspace(0, 0.1, 60)[:, None]
    y = np.repeat([[0.0, 1.0], [0.5, 1.5]], 30, axis=0)
    grid = {"margin": [0.4], "max_depth": [1], "min_samples_split": [2, 1000]}
    first = MMITGridSearchCV("linear", grid, cv=3, tie_break="first").fit(X, y)
    assert (first.cv_results_.cv_mse == 0).all()
    assert first.best_params_["min_samples_split"] == 2 and first.best_estimator_.tree_.n_leaves == 2
    small = MMITGridSearchCV("linear", grid, cv=3).fit(X, y)  # the authors' rule
    assert small.best_params_["min_samples_split"] == 1000 and small.best_estimator_.tree_.n_leaves == 1


def test_min_error_constant_is_the_authors_constant():
    X = np.zeros((4, 1))
    # finite limits 0, 1, 1.5, 2, 2.5, 3: candidates all but 3; 1.5 is the first that excludes no interval
    y = np.array([[0.0, 2.0], [1.0, np.inf], [1.5, 3.0], [-np.inf, 2.5]])
    est = MinErrorConstantRegressor().fit(X, y)
    assert est.constant_ == 1.5 and est.n_errors_ == 0
    np.testing.assert_array_equal(est.predict(np.ones((2, 1))), [1.5, 1.5])
    # the largest limit is never a candidate (the script's limit.vec[-1] - diff(limit.vec))
    y2 = np.array([[5.0, np.inf]] * 3 + [[-np.inf, 1.0]])
    assert MinErrorConstantRegressor().fit(X, y2).constant_ == 1.0


def test_authors_fold_ids_are_balanced():
    ids = authors_fold_ids(11, 5, random_state=0)
    assert sorted(np.bincount(ids)[1:]) == [2, 2, 2, 2, 3] and set(ids) == {1, 2, 3, 4, 5}


def test_cross_validation_with_the_paper_methods_on_a_tiny_data_set():
    X, y, _ = simulated_dataset("sin", n_samples=60, n_features=3, random_state=0)
    methods = paper_methods(n_margins=2, n_min_samples_split=2, max_depths=(1, 2), inner_folds=2, l1="both",
                            constant_mse=True, random_state=0)
    assert set(methods) == {"MMIT-linear", "MMIT-squared", "L1-Linear", "L1-LP", "Interval-CART", "constant",
                            "constant-MSE"}
    folds = authors_fold_ids(len(X), 3, random_state=0)
    df = cross_validate_methods(X, y, methods, dataset="sin", fold_ids=folds)
    assert len(df) == 3 * len(methods) and sorted(df.fold.unique()) == [1, 2, 3]
    assert np.isfinite(df.mse).all() and (df.mse >= 0).all()
    per_fold = df.pivot_table(index="method", columns="fold", values="mse")
    assert per_fold.shape == (len(methods), 3)
    mmit = df[df.method == "MMIT-squared"].params.iloc[0]
    assert set(mmit) == {"margin", "max_depth", "min_samples_split"}
    lp = df[df.method == "L1-LP"].params.iloc[0]
    assert lp["margin"] == 0.0
    # without fixed fold ids: the shuffled KFold of the first protocol
    df2 = cross_validate_methods(X, y, {"constant": methods["constant"]}, n_folds=4, random_state=0)
    assert list(df2.fold) == [1, 2, 3, 4]


def test_l1_factories_are_the_paper_baseline_and_the_lp_variant():
    paper = experiments.l1_linear_paper(random_state=1)
    assert (paper.loss, paper.margin, paper.penalty, paper.random_state) == ("squared_hinge", 1.0, None, 1)
    lp = experiments.l1_linear_lp()
    assert (lp.loss, lp.margin, lp.penalty) == ("linear_hinge", 0.0, 0.01)
    assert set(paper_methods(n_margins=2, inner_folds=2, l1="both")) >= {"L1-Linear", "L1-LP"}


def test_make_methods_keeps_the_linear_hinge_lp():
    X, y, _ = simulated_dataset("linear", n_samples=40, n_features=3, random_state=0)
    est, params = make_methods(inner_cv=2, l1_penalties=(0.01,), random_state=0)["L1-Linear"](X, y)
    assert params == {"margin": 0.0, "penalty": 0.01}
    assert est.loss == "linear_hinge"


def test_a_figure5_point_is_its_cell_of_the_whole_cross_validation():
    from treebook.interval.experiments import figure5_data, figure5_point

    grids = dict(n_margins=2, n_min_samples_split=2, max_depths=[1, 2], inner_folds=2)
    X, y = figure5_data("simulated.sin", seed=3, sim_n_samples=60)
    methods = paper_methods(**grids, random_state=3)
    whole = cross_validate_methods(X, y, methods, n_folds=3, random_state=3)
    for method in ("MMIT-squared", "L1-Linear", "constant"):
        for fold in (1, 3):
            point = figure5_point("simulated.sin", fold, method, n_outer_folds=3, seed=3, sim_n_samples=60, **grids)
            row = whole[(whole.method == method) & (whole.fold == fold)].iloc[0]
            assert point["mse"] == row.mse
    only = cross_validate_methods(X, y, methods, n_folds=3, random_state=3, only_folds=[2])
    assert set(only.fold) == {2}
    with pytest.raises(ValueError, match="not folds"):
        cross_validate_methods(X, y, methods, n_folds=3, random_state=3, only_folds=[7])
    with pytest.raises(ValueError, match="dataset must be"):
        figure5_data("simulated.cos")


def test_figure5_through_the_sweep_equals_the_chapter_cells(tmp_path):
    import yaml

    from treebook.interval.experiments import figure5_point, load_figure5_sweep
    from treebook.sweep import run_sweep

    small = {"n_outer_folds": 3, "sim_n_samples": 60, "fig5_margins": 2, "fig5_min_samples_split": 2,
             "fig5_depths": [1, 2], "fig5_inner_folds": 2, "seed": 5}
    grid = tmp_path / "grid.yml"
    grid.write_text(yaml.safe_dump({"grid": {"dataset": ["simulated.abs"], "fold": [1, 2, 3],
                                             "method": ["constant", "L1-Linear"]}}))
    run_sweep("sweeps/02-figure5-point", grid, tmp_path / "out", base_params=small, workers=2, progress=False)
    variants = {"n_margins": 3, "inner_cv": 3, "mmit_max_depth": 10, "l1_penalties": [0.001, 0.01, 0.1]}
    cv = load_figure5_sweep(tmp_path / "out", ["simulated.abs"], ["constant", "L1-Linear"], 3, **small, **variants)
    assert len(cv) == 6
    row = cv[(cv.method == "L1-Linear") & (cv.fold == 2)].iloc[0]
    point = figure5_point("simulated.abs", 2, "L1-Linear", n_outer_folds=3, seed=5, sim_n_samples=60,
                          n_margins=2, n_min_samples_split=2, max_depths=[1, 2], inner_folds=2)
    assert row.mse == point["mse"] and row.params["penalty"] == point["params"]["penalty"]
    with pytest.raises(ValueError, match="lacks"):
        load_figure5_sweep(tmp_path / "out", ["simulated.abs", "simulated.sin"], ["constant"], 3, **small)
    with pytest.raises(ValueError, match="ran with seed"):
        load_figure5_sweep(tmp_path / "out", ["simulated.abs"], ["constant"], 3, **{**small, "seed": 6})


# ---------------------------------------------------------------------------------------------
# the authors' fixed neuroblastoma folds and the fold-noise study


def test_r_sample_folds_matches_r():
    """R 4.2.2 with RNGversion("3.4.0"): set.seed(1); sample(rep(1:5, l=20)) and the first values and
    counts of the n = 3418 draw (the authors' neuroblastoma folds)."""
    from treebook.datasets.mmit import r_sample_folds

    assert r_sample_folds(20, 5, seed=1).tolist() == [1, 3, 1, 1, 4, 4, 5, 4, 4, 1, 3, 2, 5, 5, 5, 2, 2, 2, 3, 3]
    f = r_sample_folds(3418, 5, seed=1)
    assert f[:20].tolist() == [3, 2, 2, 2, 4, 2, 4, 4, 1, 1, 2, 2, 5, 3, 1, 4, 2, 4, 3, 3]
    assert np.bincount(f).tolist() == [0, 684, 684, 684, 683, 683]


def test_r_sample_folds_is_a_permutation_of_rep():
    from treebook.datasets.mmit import r_sample_folds

    for n, k, s in [(1, 1, 0), (7, 3, 42), (50, 5, 123456789), (13, 13, 2**31 - 1)]:
        f = r_sample_folds(n, k, seed=s)
        assert sorted(f.tolist()) == sorted((np.arange(n) % k + 1).tolist())
    assert not np.array_equal(r_sample_folds(100, 5, seed=1), r_sample_folds(100, 5, seed=2))
    with pytest.raises(ValueError, match="positive"):
        r_sample_folds(0, 5)


def test_neuroblastoma_authors_folds():
    from treebook.datasets.mmit import neuroblastoma_authors_folds

    f = neuroblastoma_authors_folds()
    assert f.shape == (3418,) and set(np.unique(f)) == {1, 2, 3, 4, 5}


def test_figure5_point_refuses_authors_folds_elsewhere():
    from treebook.interval.experiments import figure5_point

    with pytest.raises(ValueError, match="neuroblastoma only"):
        figure5_point("simulated.linear", 1, "constant", folds="authors")
    with pytest.raises(ValueError, match="folds must be one of"):
        figure5_point("neuroblastoma", 1, "constant", folds="mine")


def test_fold_draw_differences_and_interval():
    import pandas as pd
    from scipy import stats

    from treebook.interval.experiments import difference_interval, fold_draw_differences

    rng = np.random.default_rng(0)
    rows = pd.DataFrame([{"draw": d, "method": m, "fold": f, "mse": float(rng.uniform(0.1, 2.0))}
                         for d in ["a", "b", "c"] for m in ["MMIT-linear", "MMIT-squared", "Interval-CART"]
                         for f in range(1, 6)])
    table = fold_draw_differences(rows)
    assert list(table.index) == ["a", "b", "c"]
    for d, g in rows.groupby("draw"):
        logs = {m: np.log10(g[g.method == m].mse.mean()) for m in ["MMIT-linear", "MMIT-squared", "Interval-CART"]}
        want = min(logs["MMIT-linear"], logs["MMIT-squared"]) - logs["Interval-CART"]
        assert abs(table.loc[d, "difference"] - want) < 1e-12
    x = np.array([-0.1, 0.05, 0.02, -0.03])
    ci = difference_interval(x)
    half = stats.t.ppf(0.975, 3) * x.std(ddof=1) / 2
    assert abs(ci["low"] - (x.mean() - half)) < 1e-12 and abs(ci["high"] - (x.mean() + half)) < 1e-12
    assert ci["n"] == 4 and ci["negative"] == 2
    assert np.isnan(difference_interval([0.3])["low"])
    with pytest.raises(ValueError):
        fold_draw_differences(rows.iloc[:0])
    with pytest.raises(ValueError):
        difference_interval([np.nan])


def test_load_fold_draws_keeps_only_finished_draws(tmp_path):
    import json

    from treebook.interval.experiments import NOISE_METHODS, load_fold_draws

    def point(i, **params):
        run = tmp_path / "runs" / f"p{i:03d}"
        run.mkdir(parents=True)
        (run / "params.json").write_text(json.dumps({"dataset": "neuroblastoma", **params}))
        (run / "result.json").write_text(json.dumps({"results": {"mse": 0.5 + i, "log10_mse": 0.0}}))
        (run / "run.json").write_text(json.dumps({"seconds": 1.0, "status": "ok"}))

    i = 0
    for seed in (1, 2):
        for m in NOISE_METHODS:
            for f in range(1, 6):
                if seed == 2 and m == "Interval-CART" and f == 5:
                    continue  # draw 2 has not finished
                point(i, seed=seed, method=m, fold=f)
                i += 1
    rows, finished = load_fold_draws({"one": (tmp_path, {"seed": 1}), "two": (tmp_path, {"seed": 2})})
    assert finished == {"one": 15, "two": 14}
    assert set(rows.draw) == {"one"} and len(rows) == 15


# ---------------------------------------------------------------------------------------------
# the committed Figure 5 points of the book's defaults


def _book_figure5_points():
    import ast

    from treebook.interval.experiments import figure5_points
    from treebook.notebooks import notebook_parameters

    p = {k: ast.literal_eval(v) for k, v in notebook_parameters("02-interval-trees").items()}
    assert p["fig5_cache"] == "results/sweeps/02-book-figure5" and not p["nb_max_samples"]
    grids = dict(n_margins=p["fig5_margins"], n_min_samples_split=p["fig5_min_samples_split"],
                 max_depths=p["fig5_depths"], inner_folds=p["fig5_inner_folds"])
    # the chapter's methods: the authors' (in paper_methods' order), then its two variants
    methods = [*paper_methods(**grids, random_state=p["seed"]), "MMIT-squared (pruned, ours)",
               "L1-LP, linear hinge, margin 0"]
    datasets = [f"simulated.{k}" for k in ("linear", "sin", "abs")] + ["neuroblastoma"]
    return figure5_points(datasets, methods, p["n_outer_folds"], seed=p["seed"], nb_folds=p["nb_folds"],
                          sim_n_samples=p["sim_n_samples"], fig5_margins=p["fig5_margins"],
                          fig5_min_samples_split=p["fig5_min_samples_split"], fig5_depths=p["fig5_depths"],
                          fig5_inner_folds=p["fig5_inner_folds"], n_margins=p["n_margins"], inner_cv=p["inner_cv"],
                          mmit_max_depth=p["mmit_max_depth"], l1_penalties=p["l1_penalties"])


def test_the_book_figure5_grid_holds_the_book_defaults_points_and_every_one_is_committed():
    from treebook.interval.experiments import FIGURE5_NOTEBOOK
    from treebook.notebooks import project_root
    from treebook.sweep import load_grid, point_id, read_runs

    root = project_root()
    points = _book_figure5_points()
    assert len(points) == 4 * 5 * 7
    assert load_grid(root / "notebooks" / "sweeps" / "02-book-figure5.yml")["points"] == points
    finished = {r.name for r in read_runs(root / "results" / "sweeps" / "02-book-figure5", FIGURE5_NOTEBOOK)
                if r.record is not None}
    assert {point_id(q) for q in points} <= finished


def test_committed_book_figure5_points_are_read_and_reproduce(tmp_path):
    from treebook.interval.experiments import figure5_point, run_figure5
    from treebook.notebooks import project_root

    # two methods whose fits use no BLAS (an LP's or an eigenvector's last bits may follow the processor's kernel)
    picks = [q for q in _book_figure5_points() if q["dataset"] == "simulated.linear" and q["fold"] == 2
             and q["method"] in ("Interval-CART", "MMIT-linear")]
    cv = run_figure5(picks, tmp_path / "out", cache=project_root() / "results" / "sweeps" / "02-book-figure5")
    assert cv.attrs["cached"] == 2 and list(cv.method) == ["MMIT-linear", "Interval-CART"]
    for q, row in zip(picks, cv.itertuples()):
        fresh = figure5_point(q["dataset"], q["fold"], q["method"], n_outer_folds=q["n_outer_folds"], seed=q["seed"],
                              sim_n_samples=q["sim_n_samples"], n_margins=q["fig5_margins"],
                              n_min_samples_split=q["fig5_min_samples_split"], max_depths=q["fig5_depths"],
                              inner_folds=q["fig5_inner_folds"], folds=q["folds"])
        assert fresh["mse"] == row.mse and fresh["params"] == row.params, q["method"]
