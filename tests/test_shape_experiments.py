"""The chapter 3 experiments' fits (treebook.shape.experiments): deterministic under an expansion budget,
read back from a sweep folder as the notebook reads them, refused when a fit is missing, and the paper
profile's points written in the grid file that the README's sweep command runs."""

import ast
import itertools
import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from treebook.datasets.shape_trees import FOLD_SEEDS
from treebook.notebooks import notebook_parameters, project_root, read_yaml
from treebook.results import to_jsonable
from treebook.shape.experiments import (
    ABLATION_VARIANTS,
    TRAIN_NOTEBOOK,
    compression_match,
    experiment_points,
    fit_outcome,
    fit_point,
    outcome,
    rank_at_budget,
    rank_at_time,
    read_experiments,
    root_attribution,
    run_training,
    training_benchmark,
    training_points,
)
from treebook.sweep import copy_finished, load_grid, point_id, read_runs

ROOT = project_root()
SWEEP = ROOT / "results" / "sweeps" / "03-experiments"
BOOK_FITS = ROOT / "results" / "sweeps" / "03-book-experiments"
BOOK_TRAIN = ROOT / "results" / "sweeps" / "03-book-train"
#: the peers of the book's training comparison: every one, as the README's setup installs them
BOOK_PEERS = ["ConTree", "STreeD", "SGT-ShapeCART", "SGT-ShapeTAO"]


def _book_params():
    return {k: ast.literal_eval(v) for k, v in notebook_parameters("03-shape-trees").items()}


def _book_train_points(p):
    """The training points the chapter's section 5 asks for with the parameters ``p`` (as its cell does)."""
    fold = FOLD_SEEDS.index(p["seed"])
    pts = training_points(p["datasets"], p["depths"], fold, Ks=p["Ks"], expansions=p["expansions"],
                          candidates=p["candidates"], peers=BOOK_PEERS, peer_time_limit=p["peer_time_limit"])
    return pts + training_points(p["datasets"], p["depths"], fold, Ks=p["all_Ks"], expansions=p["all_expansions"],
                                 candidates="all", baselines=(), peers=(), peer_time_limit=p["peer_time_limit"])


def _chapter_points(p):
    """The points the chapter notebook asks for with the parameters ``p`` (as its cell does)."""
    return experiment_points(
        seed=p["seed"], candidates=p["candidates"], anytime_dataset=p["anytime_dataset"],
        anytime_depth=p["anytime_depth"], anytime_expansions=p["anytime_expansions"],
        ablation_datasets=p["ablation_datasets"], ablation_depth=p["ablation_depth"],
        ablation_expansions=p["ablation_expansions"], compression_dataset=p["compression_dataset"],
        compression_depth=p["compression_depth"], compression_lams=p["compression_lams"],
        compression_expansions=p["compression_expansions"], k1_datasets=p["k1_datasets"] or p["datasets"],
        k1_depths=p["k1_depths"], k1_expansions=p["k1_expansions"],
        contree_time_limit=p["contree_time_limit"] if p["use_peers"] else 0.0,
        similarity_dataset=p["similarity_dataset"], similarity_expansions=p["similarity_expansions"])


def test_the_grid_file_holds_the_paper_profiles_fits():
    p = {k: ast.literal_eval(v) for k, v in notebook_parameters("03-shape-trees").items()}
    p.update(read_yaml(ROOT / "notebooks" / "params" / "paper.yml")["03-shape-trees"])
    assert p["experiments_out"] == "../results/sweeps/03-experiments"
    points = _chapter_points(p)
    assert load_grid(ROOT / "notebooks" / "sweeps" / "03-experiments.yml")["points"] == points
    kinds = [q["experiment"] for q in points]
    assert kinds.count("ablation") == 7 * len(p["ablation_datasets"]) and kinds.count("anytime") == 3
    assert len({point_id(q) for q in points}) == len(points)


def _long_grid(experiment, name):
    short = [q for q in load_grid(ROOT / "notebooks" / "sweeps" / "03-experiments.yml")["points"]
             if q["experiment"] == experiment]
    long = load_grid(ROOT / "notebooks" / "sweeps" / name)["points"]
    assert all(q["expansions"] == 300_000 for q in long)
    key = sorted(json.dumps({**q, "expansions": 0}, sort_keys=True) for q in short)
    assert sorted(json.dumps({**q, "expansions": 0}, sort_keys=True) for q in long) == key
    return short, long


def test_the_long_compression_grid_is_the_paper_profiles_path_at_a_larger_budget():
    short, long = _long_grid("compression", "03-compression-long.yml")
    assert len(long) == len(short) == 14
    assert [q["lam"] for q in long[:2]] == [0.0, 0.0]  # the fits the row turns on come first


def test_the_long_ablation_grid_is_the_paper_profiles_ablation_at_a_larger_budget():
    short, long = _long_grid("ablation", "03-ablation-long.yml")
    assert len(long) == len(short) == 28
    # every data set's seven variants together, the two whose rank differs from the paper's first
    assert [q["dataset"] for q in long] == [name for name in ("page", "rice", "fault", "avila") for _ in range(7)]


def test_the_hour_ablation_grid_is_the_long_grid_at_an_hour_of_cpu_per_variant():
    # page's, rice's and fault's seven fits of the long grid with only the budget changed: the states an hour of CPU
    # buys, estimated from the committed 300,000-expansion fits' CPU seconds and rounded up to the next 50,000
    long = load_grid(ROOT / "notebooks" / "sweeps" / "03-ablation-long.yml")["points"]
    grid = load_grid(ROOT / "notebooks" / "sweeps" / "03-ablation-hour.yml")["points"]
    # fault: only Literati's fit, which proved the optimum that every variant had reached at 300,000 expansions
    hour, run_on = grid[:15], grid[15:]
    assert [q["dataset"] for q in hour] == ["page"] * 7 + ["rice"] * 7 + ["fault"]
    assert [{**q, "expansions": 0} for q in hour] == [{**q, "expansions": 0} for q in long[:15]]
    assert (hour[14]["heuristic"], hour[14]["and_rule"]) == ("cart", "round_robin")
    fits = read_experiments(ROOT / "results" / "sweeps" / "03-ablation-long", long[:21])
    assert set(fits.dataset) == {"page", "rice", "fault"}
    for name, g in fits.groupby("dataset"):
        per_hour = 3600 / g.cpu_seconds.mean() * 300_000
        budget = {q["expansions"] for q in hour if q["dataset"] == name}
        assert budget == {int(np.ceil(per_hour / 50_000) * 50_000)}, (name, per_hour, budget)
    fault = read_experiments(ROOT / "results" / "sweeps" / "03-ablation-hour", hour[14:15]).iloc[0]
    assert fault.proved and all(fits[fits.dataset == "fault"].objective == fault.objective)
    # after them, fits run on past their data set's budget (read for the rank at the hour only): each is one of
    # the fourteen with a larger budget
    for q in run_on:
        same = [h for h in hour if {**h, "expansions": 0} == {**q, "expansions": 0}]
        assert len(same) == 1 and q["expansions"] > same[0]["expansions"], q
    p = read_yaml(ROOT / "notebooks" / "params" / "paper.yml")["03-shape-trees"]
    assert p["ablation_hour"] == "results/sweeps/03-ablation-hour"
    assert ast.literal_eval(notebook_parameters("03-shape-trees")["ablation_hour_grid"]) == (
        "notebooks/sweeps/03-ablation-hour.yml")


def test_the_root_hour_grid_repeats_the_hour_fits_of_literati_and_impurity():
    # section 7b at the hour: for rice then page, Literati's and impurity's round-robin fits of the hour grid,
    # each at the largest budget that grid gives it (the one run on past the hour where there is one)
    hour = load_grid(ROOT / "notebooks" / "sweeps" / "03-ablation-hour.yml")["points"]
    grid = load_grid(ROOT / "notebooks" / "sweeps" / "03-root-hour.yml")["points"]
    want = []
    for name in ("rice", "page"):
        for h in ("cart", "impurity"):
            same = [q for q in hour if q["dataset"] == name and q["heuristic"] == h and q["and_rule"] == "round_robin"]
            want.append(max(same, key=lambda q: q["expansions"]))
    assert grid == want
    p = read_yaml(ROOT / "notebooks" / "params" / "paper.yml")["03-shape-trees"]
    assert p["root_hour"] == "results/sweeps/03-root-hour"
    assert ast.literal_eval(notebook_parameters("03-shape-trees")["root_hour_grid"]) == (
        "notebooks/sweeps/03-root-hour.yml")


def test_the_seeds_ablation_grid_is_rices_hour_grid_on_the_other_fold_seeds():
    hour = load_grid(ROOT / "notebooks" / "sweeps" / "03-ablation-hour.yml")["points"]
    seeds = load_grid(ROOT / "notebooks" / "sweeps" / "03-ablation-seeds.yml")["points"]
    rice = [q for q in hour if q["dataset"] == "rice"]
    others = [s for s in FOLD_SEEDS if s != rice[0]["fold_seed"]]
    # a seed's seven variants together, in the hour grid's order, the budget the only other change
    assert seeds == [{**q, "fold_seed": s, "expansions": 75_000} for s in others for q in rice]
    assert len(seeds) == 28

    p = read_yaml(ROOT / "notebooks" / "params" / "paper.yml")["03-shape-trees"]
    assert p["ablation_seeds"] == "results/sweeps/03-ablation-seeds"


def test_the_penalty_ablation_grid_is_rices_seeds_budget_with_lam_1_and_4():
    hour = load_grid(ROOT / "notebooks" / "sweeps" / "03-ablation-hour.yml")["points"]
    grid = load_grid(ROOT / "notebooks" / "sweeps" / "03-ablation-lambda.yml")["points"]
    rice = [q for q in hour if q["dataset"] == "rice"]
    # a penalty's seven variants together, in the hour grid's order, with this notebook's fold seed
    assert grid == [{**q, "lam": lam, "expansions": 75_000} for lam in (1.0, 4.0) for q in rice]
    p = read_yaml(ROOT / "notebooks" / "params" / "paper.yml")["03-shape-trees"]
    assert p["ablation_lambda"] == "results/sweeps/03-ablation-lambda"
    assert ast.literal_eval(notebook_parameters("03-shape-trees")["ablation_lambda_grid"]) == (
        "notebooks/sweeps/03-ablation-lambda.yml")


def test_a_fit_run_on_past_a_budget_repeats_the_shorter_fit():
    # what section 7 asserts before it reads a longer fit for the rank at the hour
    short = np.asarray(fit_point("ablation", "raisin", 3, 30, K=3, warm_start=0.0)["trace"])
    long = np.asarray(fit_point("ablation", "raisin", 3, 60, K=3, warm_start=0.0)["trace"])
    assert np.array_equal(long[long[:, 3] < 30][:, 1:], short[short[:, 3] < 30][:, 1:])
    assert long[-1, 3] > short[-1, 3] and long[-1, 1] <= short[-1, 1]


def test_a_fit_is_the_same_twice_and_within_its_budget():
    a = fit_point("ablation", "raisin", 3, 25, K=3, heuristic="admissible", and_rule="worst_primal", warm_start=0.0)
    b = fit_point("ablation", "raisin", 3, 25, K=3, heuristic="admissible", and_rule="worst_primal", warm_start=0.0)
    assert outcome(a) == outcome(b) and a["n_expanded"] <= 25
    tr = np.asarray(a["trace"])
    assert tr.shape[1] == 4 and np.all(np.diff(tr[:, 1]) <= 1e-9) and np.all(tr[:, 2] <= tr[:, 1] + 1e-9)
    assert a["objective"] == tr[-1, 1] and a["errors"] == round((1 - a["accuracy"]) * a["n"])
    assert a["seconds"] > 0 and a["cpu_seconds"] > 0


def test_a_fit_records_the_root_splits_its_search_went_down():
    # rows (feature, first threshold, iterations, states expanded when first taken), in the order first taken
    fit = fit_point("ablation", "raisin", 4, 200, K=3, warm_start=0.0)
    rc = fit["root_choices"]
    assert rc, "the root was expanded, so the iterations after it went down some root split"
    firsts = [r[3] for r in rc]
    assert firsts[0] == 1  # the first iteration below the root starts after the root's own expansion
    assert firsts == sorted(firsts) and len(set(firsts)) == len(firsts)
    assert all(r[2] > 0 for r in rc) and sum(r[2] for r in rc) <= fit["n_expanded"] - 1
    assert len({(r[0], r[1]) for r in rc}) == len(rc)
    # with a warm start (here 50 of the 200 states) the K = 1 search's iterations are not counted, and the
    # states expanded when a split was first taken include the warm start's, as the trace counts them
    warm = fit_point("ablation", "raisin", 4, 200, K=3, warm_start=0.25)
    assert warm["root_choices"][0][3] > 50
    assert sum(r[2] for r in warm["root_choices"]) <= warm["n_expanded"] - warm["root_choices"][0][3]


def test_k1_and_similarity_fits_search_every_midpoint_with_one_breakpoint():
    on = fit_point("similarity", "raisin", 2, 50, K=3, candidates="cart")  # K and candidates are the kind's
    off = fit_point("similarity", "raisin", 2, 50, similarity=False)
    k1 = fit_point("k1", "raisin", 2, 50, contree_time_limit=0.0)
    assert on["proved"] and k1["proved"] and on["errors"] == k1["errors"]
    # without the bounds the plain search never beats the optimum, and its lower bound never passes it
    assert off["errors"] >= on["errors"] and off["lower_bound"] <= on["errors"] + 1e-9
    assert "contree" not in k1


def test_compression_fits_trade_errors_for_leaves():
    fits = [fit_point("compression", "bank", 3, 30, K=1, lam=lam) for lam in (0.0, 50.0)]
    assert fits[1]["n_leaves"] <= fits[0]["n_leaves"] and fits[1]["errors"] >= fits[0]["errors"]
    # the objective is the errors plus the penalty of every node
    assert fits[1]["objective"] >= fits[1]["errors"] and fits[0]["objective"] == fits[0]["errors"]


def test_bad_fits_are_refused():
    with pytest.raises(ValueError, match="unknown experiment"):
        fit_point("anytimes", "rice", 3, 10)
    with pytest.raises(ValueError, match="positive number"):
        fit_point("anytime", "rice", 3, 0)


def _fake(tmp_path, points):
    for i, p in enumerate(points):
        run = tmp_path / "runs" / f"p{i}"
        run.mkdir(parents=True)
        (run / "params.json").write_text(json.dumps(p))
        fit = {"objective": 3.0, "errors": 3, "lower_bound": "nan", "proved": False, "n_leaves": 4, "n_expanded": 7,
               "trace": [[0.1, 3.0, 0.0, 7.0]], "seconds": 0.2, "cpu_seconds": 0.2, "n": 10, "accuracy": 0.7}
        (run / "result.json").write_text(json.dumps({"results": {"fit": fit}}))
        (run / "run.json").write_text(json.dumps({"seconds": 1.5, "status": "ok"}))
    return tmp_path


def test_fits_are_read_in_the_order_asked_and_a_missing_one_is_named(tmp_path):
    points = experiment_points(anytime_dataset="rice", anytime_depth=3, anytime_Ks=(1, 2), anytime_expansions=10,
                               ablation_datasets=["rice"], ablation_depth=3, ablation_expansions=10,
                               compression_dataset="bank", compression_depth=3, compression_lams=[0.0],
                               compression_expansions=10, k1_datasets=["raisin"], k1_depths=[2], k1_expansions=10,
                               similarity_dataset="raisin", similarity_expansions=10)
    assert len(points) == 2 + len(ABLATION_VARIANTS) + 2 + 1 + 2
    folder = _fake(tmp_path, points[::-1])
    df = read_experiments(folder, points)
    assert list(df.experiment) == [p["experiment"] for p in points] and np.isnan(df.lower_bound).all()
    assert (df.point_seconds == 1.5).all()
    with pytest.raises(ValueError, match="1 of the 14 fits have not finished"):
        read_experiments(_fake(tmp_path / "b", points[1:]), points)
    part = read_experiments(tmp_path / "b", points, partial=True)  # the finished ones, in the order asked
    assert list(zip(part.experiment, part.K)) == [(p["experiment"], p["K"]) for p in points[1:]]
    assert read_experiments(tmp_path / "nothing", points, partial=True).empty


def test_the_book_grid_files_hold_the_book_defaults_points_and_every_one_is_committed():
    p = _book_params()
    assert p["train_cache"] == "results/sweeps/03-book-train"
    assert p["experiments_cache"] == "results/sweeps/03-book-experiments"
    for grid, points, folder, nb in (("03-book-train.yml", _book_train_points(p), BOOK_TRAIN, TRAIN_NOTEBOOK),
                                     ("03-book-experiments.yml", _chapter_points(p), BOOK_FITS,
                                      "sweeps/03-fit-point")):
        assert load_grid(ROOT / "notebooks" / "sweeps" / grid)["points"] == points, grid
        finished = {r.name for r in read_runs(folder, nb) if r.record is not None}
        assert {point_id(q) for q in points} <= finished, f"{grid}: points without a committed record in {folder}"


def test_copy_finished_takes_only_finished_points_with_the_same_parameters(tmp_path):
    pts = [{"x": 1}, {"x": 2}, {"x": 3}, {"x": 4.0, "y": [1, 2]}]

    def put(folder, params, result=True, stored=None, value=None):
        run = folder / "runs" / point_id(params)
        run.mkdir(parents=True)
        (run / "params.json").write_text(json.dumps(stored or params))
        (run / "run.json").write_text(json.dumps({"seconds": 2.5}))
        if result:
            (run / "result.json").write_text(json.dumps({"results": {"v": value}}))

    src, out = tmp_path / "src", tmp_path / "out"
    put(src, pts[0], value="a")
    put(src, pts[1], result=False)  # unfinished
    put(src, pts[2], stored={"x": 99})  # another point's parameters
    put(src, pts[3], value="src")
    put(out, pts[3], value="out")  # finished in the output already: left alone
    before = {q: q.read_bytes() for q in src.rglob("*") if q.is_file()}
    assert copy_finished(src, out, pts) == [point_id(pts[0])]
    assert {q: q.read_bytes() for q in src.rglob("*") if q.is_file()} == before
    runs = {r.name: r for r in read_runs(out, "sweeps/03-fit-point")}
    assert runs[point_id(pts[0])].record["results"] == {"v": "a"} and runs[point_id(pts[0])].seconds == 2.5
    assert runs[point_id(pts[3])].record["results"] == {"v": "out"} and len(runs) == 2
    assert copy_finished(tmp_path / "nowhere", out, pts) == []


def test_committed_book_training_points_are_read_and_reproduce(tmp_path):
    """The chapter reads a committed training point instead of running it; its Literati and baseline rows
    (budgets of expanded states, no time limit) are those a fresh run gives (the peers' rows and every
    time are the machine's and are not compared)."""
    p = _book_params()
    point = _book_train_points(p)[0]  # bank, depth 3: Literati K=1,2,3, CART, ShapeCART and the peers
    df = run_training([point], tmp_path / "out", cache=BOOK_TRAIN)
    assert df.attrs["cached"] == 1 and not (tmp_path / "out" / "runs" / point_id(point) / "notebook.ipynb").exists()
    fresh = training_benchmark([point["dataset"]], [point["depth"]], Ks=tuple(point["Ks"]),
                               max_expansions=point["expansions"], candidates=point["candidates"],
                               baselines=tuple(point["baselines"]), peers=(), seed=FOLD_SEEDS[point["fold"]])
    cols = ["method", "errors", "n_leaves"]
    lit = fresh.method.str.startswith("Literati")
    cols_lit = cols + ["proved", "lower_bound", "n_expanded"]
    assert df[df.method.isin(fresh.method[lit])][cols_lit].reset_index(drop=True).equals(
        fresh[lit][cols_lit].reset_index(drop=True))
    assert df[df.method.isin(fresh.method[~lit])][cols].reset_index(drop=True).equals(
        fresh[~lit][cols].reset_index(drop=True))


@pytest.mark.parametrize("folder", [SWEEP, BOOK_FITS], ids=["paper", "book"])
def test_committed_fits_reproduce(folder):
    """The committed fits (the paper scale's, the book defaults'): the cheapest of every kind that has
    finished ones recomputes to the same tree, bounds and trace (their seconds are the machine's and are
    not compared)."""
    runs = [r for r in read_runs(folder, "sweeps/03-fit-point") if r.record is not None]
    assert runs, f"the committed sweep in {folder} has no finished fit"
    by_kind = {}
    for r in runs:
        by_kind.setdefault(r.params["experiment"], []).append(r)
    cheap = [min(rs, key=lambda r: r.record["results"]["fit"]["cpu_seconds"]) for rs in by_kind.values()]
    cheap = [r for r in cheap if r.record["results"]["fit"]["cpu_seconds"] <= 10]
    # the K=1 fits over every midpoint at depth 2 and 3 and the similarity fit with its bounds take under a second
    assert {r.params["experiment"] for r in cheap} >= {"k1", "similarity"}, [r.params for r in cheap]
    for r in cheap:
        params = {k: v for k, v in r.params.items() if k != "result_path"}
        assert to_jsonable(fit_outcome(**params)) == to_jsonable(outcome(r.record["results"]["fit"])), params


_FIT = st.tuples(st.sampled_from([1, 2]), st.integers(1, 64), st.integers(0, 20).map(lambda a: 0.6 + a / 100))


@given(st.lists(_FIT, min_size=1, max_size=12), st.integers(1, 64))
def test_compression_match_is_the_nearest_threshold_tree_and_the_fewest_k2_leaves_as_accurate(fits, target):
    df = pd.DataFrame(fits, columns=["K", "leaves", "accuracy"])
    if not (df.K == 1).any():
        with pytest.raises(ValueError, match="no K=1 fit"):
            compression_match(df, target)
        return
    k1, leaves2 = compression_match(df, target)
    # brute force: every K=1 fit is at least as far from the target (ties: at least as many leaves)
    rows = [r for r in fits if r[0] == 1]
    assert min((abs(r[1] - target), r[1]) for r in rows) == (abs(k1.leaves - target), k1.leaves)
    assert any(r[1] == k1.leaves and r[2] == k1.accuracy for r in rows)
    as_good = [r[1] for r in fits if r[0] == 2 and r[2] >= k1.accuracy]
    assert leaves2 == (min(as_good) if as_good else None)


def test_compression_match_on_the_papers_example_and_bad_input():
    # the paper's avila example: a 35-leaf threshold tree matched by 25 leaves of K=2
    df = pd.DataFrame({"K": [1, 1, 1, 2, 2, 2], "leaves": [22, 35, 62, 20, 25, 63],
                       "accuracy": [0.69, 0.74, 0.77, 0.70, 0.74, 0.79]})
    k1, leaves2 = compression_match(df, 35)
    assert (k1.leaves, k1.accuracy, leaves2) == (35, 0.74, 25)
    k1, leaves2 = compression_match(df, 64)
    assert (k1.leaves, leaves2) == (62, 63)
    assert compression_match(df[df.leaves != 63], 64)[1] is None  # no K=2 fit reaches 77 %
    with pytest.raises(ValueError, match="lacks the columns"):
        compression_match(df.drop(columns="accuracy"), 35)


def _key(trace, seconds):
    """The last incumbent recorded by ``seconds`` and the time it was first reached (inf, inf before the first)."""
    seen = [(t, obj) for t, obj in trace if t <= seconds]
    if not seen:
        return np.inf, np.inf
    last = min(obj for _, obj in seen)
    return last, min(t for t, obj in seen if obj == last)


_TRACE = st.lists(st.tuples(st.integers(0, 6), st.integers(0, 5)), min_size=1, max_size=4).map(
    lambda rows: sorted(rows, key=lambda r: r[0]))


@given(st.lists(_TRACE, min_size=1, max_size=4), st.integers(1, 7), st.booleans(), st.booleans())
def test_rank_at_time_bounds_every_way_the_short_runs_could_have_gone_on(traces, seconds, break_ties, proved):
    named = {f"v{i}": np.asarray(tr, dtype=float) for i, tr in enumerate(traces)}
    # with ``proved``, the least incumbent of all the traces is a proved optimum: no run can go below it
    optimum = float(min(obj for tr in traces for _, obj in tr)) if proved else None
    lo, hi = rank_at_time(named, "v0", seconds, break_ties=break_ties, optimum=optimum)
    # brute force: a run that ended before ``seconds`` may have gone on to any incumbent below its last (and not
    # below the optimum), reached at any time after it ended (the values of the traces and one below them all
    # suffice, and half-second times cover every order against the traces' whole seconds); take the rank in
    # every such continuation
    values = sorted({obj for tr in traces for _, obj in tr} | {-1})
    if optimum is not None:
        values = [v for v in values if v >= optimum]
    times = [h / 2 for h in range(2 * seconds + 1)]
    choices = []
    for tr in traces:
        last, first = _key(tr, seconds)
        choices.append([(last, first)] + ([] if tr[-1][0] >= seconds else
                                          [(v, t) for v in values if v < last for t in times if t > tr[-1][0]]))
    if not break_ties:
        choices = [[(v, 0) for v, _ in c] for c in choices]
    ranks = [1 + sum(k < at[0] for k in at[1:]) for at in itertools.product(*choices)]
    assert (lo, hi) == (min(ranks), max(ranks))


def test_rank_at_time_on_the_ablation_at_the_hour_and_bad_input():
    hour = 3600.0
    traces = {"literati": [(10, 80), (2000, 70), (3000, 66), (4500, 66)],  # ran past the hour: 66 there
              "impurity": [(10, 90), (1000, 58), (3500, 58)],  # ended before the hour at 58: at most 58
              "tie": [(10, 70), (3000, 66), (3800, 66)],  # 66 at the hour, reached as soon as Literati
              "slow": [(10, 110), (3300, 104)]}  # ended before the hour at 104: may have gone below 66
    assert rank_at_time(traces, "literati", hour) == (2, 3)
    # every run reaches 2500 s: Literati's 70 against 58, 70 (reached at 10 s, sooner than Literati's 2000 s), 110
    assert rank_at_time(traces, "literati", 2500) == (3, 3)
    assert rank_at_time(traces, "literati", 2500, break_ties=False) == (2, 2)
    assert rank_at_time(traces, "impurity", hour) == (1, 2)  # only slow, unknown at the hour, may beat 58
    # a tie goes to the run that first reached the incumbent sooner, unless ties share the rank
    sooner = {**traces, "tie": [(10, 70), (2900, 66), (3800, 66)]}
    assert rank_at_time(sooner, "literati", hour) == (3, 4)
    assert rank_at_time(sooner, "literati", hour, break_ties=False) == (2, 3)
    assert rank_at_time(sooner, "tie", hour) == (2, 3)
    # a run that ended before the hour at Literati's incumbent, reached sooner, is surely better; reached later,
    # it may be
    assert rank_at_time({**traces, "tie": [(10, 70), (2900, 66), (3100, 66)]}, "literati", hour) == (3, 4)
    assert rank_at_time({**traces, "tie": [(10, 70), (3050, 66), (3100, 66)]}, "literati", hour) == (2, 4)
    with pytest.raises(ValueError, match="not one of the traces"):
        rank_at_time(traces, "cart", hour)
    with pytest.raises(ValueError, match="must be positive"):
        rank_at_time(traces, "literati", 0)
    with pytest.raises(ValueError, match="time order"):
        rank_at_time({**traces, "tie": [(3000, 66), (10, 70)]}, "literati", hour)
    with pytest.raises(ValueError, match="non-empty"):
        rank_at_time({**traces, "tie": []}, "literati", hour)
    # a proved optimum of 58: impurity ended before the hour at it, so it is final there and surely ahead of
    # Literati; slow may still have reached anything down to 58, but only after impurity did
    assert rank_at_time(traces, "literati", hour, optimum=58.0) == (2, 3)
    assert rank_at_time(traces, "impurity", hour, optimum=58.0) == (1, 1)
    # Literati's own fit ended before the hour at the optimum: its rank is known, the runs that reached it
    # sooner are ahead (fault's reading: every variant ends at the proved optimum, so speed decides)
    at_opt = {"literati": [(10, 70), (1500, 66), (1700, 66)], "a": [(10, 70), (900, 66), (1000, 66)],
              "b": [(10, 80), (1600, 66), (1800, 66)], "c": [(10, 90), (2000, 70)]}
    assert rank_at_time(at_opt, "literati", hour) == (1, 4)
    # a ended at 66 sooner; c ended at 2000 s, after Literati reached 66, so it cannot beat it; b reached it later
    assert rank_at_time(at_opt, "literati", hour, optimum=66.0) == (2, 2)
    with pytest.raises(ValueError, match="below the proved optimum"):
        rank_at_time(traces, "literati", hour, optimum=60.0)
    with pytest.raises(ValueError, match="finite"):
        rank_at_time(traces, "literati", hour, optimum=float("nan"))


@given(st.lists(_TRACE, min_size=1, max_size=4), st.integers(1, 7), st.booleans())
def test_rank_at_budget_ranks_by_incumbent_then_by_the_expansions_to_reach_it(traces, budget, break_ties):
    named = {f"v{i}": np.asarray(tr, dtype=float) for i, tr in enumerate(traces)}
    # a trace that ends before the budget keeps its last incumbent (a proved optimum): its key at the budget is
    # that of its whole trace
    keys = [_key(tr, budget) for tr in traces]
    if not break_ties:
        keys = [(v, 0) for v, _ in keys]
    assert rank_at_budget(named, "v0", budget, break_ties=break_ties) == 1 + sum(k < keys[0] for k in keys[1:])



def test_root_attribution_under_a_shared_root_the_rules_prove_the_same_optimum():
    # a proof under a restricted root does not depend on the OR rule that found it, and the free optimum is no
    # worse than any restricted one
    rng = np.random.default_rng(5)
    X = rng.normal(size=(60, 3))
    y = (X[:, 0] + 0.5 * X[:, 1] ** 2 + 0.3 * rng.normal(size=60) > 0.4).astype(int)
    for depth in (2, 3):
        df = root_attribution(X, y, 10**6, max_depth=depth, K=2)
        assert df.proved.all()
        assert len(df) == 6 and set(df.heuristic) == {"cart", "impurity"}
        free = df[df.root_of == "free"].set_index("heuristic")
        restricted = df[df.root_of != "free"]
        assert free.objective.nunique() == 1 and free.objective.iloc[0] <= restricted.objective.min() + 1e-9
        for r, g in restricted.groupby("root_of"):
            assert g.objective.nunique() == 1  # the same optimum under the same root, whichever rule
            assert (g.root_feature == free.root_feature[r]).all() and (g.root_threshold == free.root_threshold[r]).all()
            assert (g.root_actions_taken == 1).all() and (g.share_first_root == 1).all()
        assert ((df.share_first_root > 0) & (df.share_first_root <= 1)).all()
    # at depth 3 the first root splits are not the optimum's: the free fits leave them and do better
    assert (free.root_actions_taken > 1).all() and free.objective.iloc[0] < restricted.objective.min()
    with pytest.raises(ValueError, match="two classes"):
        root_attribution(X, np.zeros(60), 100, max_depth=2, K=2)
