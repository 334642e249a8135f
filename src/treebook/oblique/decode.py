r"""OF-AE decoding: the l1 linear program of a code, solved per sample.

For a code (one leaf per tree) the paths give half-spaces ``A x >= b`` (paper: right branch
``<w, x> >= t``, left branch ``<-w, x> >= -t``). The decoder solves

.. math::  \min_x \|x\|_1 \quad \text{s.t.}\quad A x \ge b,\; \ell \le x \le u,

as a linear program. With ``x = x^+ - x^-`` (``x^\pm \ge 0``) the objective is ``1^T (x^+ + x^-)``; when the
box has ``\ell \ge 0`` the objective is simply ``1^T x`` and ``x^-`` is dropped (images), halving the columns.

Solvers (all return the same optimum; tests compare them):

* ``"highs"`` — the model handed to HiGHS directly (highspy), one fresh model per sample, samples in
  parallel over processes (``n_jobs``);
* ``"highs-lowrank"`` — the same LP with the HHCART structure made explicit: a reflected split's normal is
  ``e_j + gamma e_k + beta d`` with ``d`` the node's direction; when all directions of the forest span a space
  of dimension ``r`` much below ``p`` (PCA/SVD directions lie in the span of the training data when
  ``max_features = 1``), ``z = V^T x`` replaces the dense parts (see :func:`l1_decode_highs_lowrank`);
* ``"pulp"`` — the same LP written with PuLP, the readable reference (CBC);
* ``"cvxpy"`` — the authors' approach: a CVXPY problem ``min ||x||_1 s.t. A x >= b`` per sample, solved in
  sequence (optional dependency, the ``compare`` extra).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.utils._param_validation import HasMethods, StrOptions, validate_params

from treebook.validation import check_array, check_magnitude, int_interval, real_interval

__all__ = [
    "SOLVERS",
    "InfeasibleCodeWarning",
    "report_infeasible",
    "check_lp",
    "l1_decode_highs_lowrank",
    "lowrank_structure",
    "decode_forest",
    "l1_decode_cvxpy",
    "l1_decode_highs",
    "l1_decode_pulp",
    "system_with_margin",
]

SOLVERS = ("highs", "highs-lowrank", "pulp", "cvxpy")


class InfeasibleCodeWarning(UserWarning):
    """Some codes handed to a decoder describe no point: the cells of their leaves do not meet (within
    the box). Their rows are named in the message and listed in the decoder's ``info["infeasible"]``."""


def report_infeasible(info, on_infeasible="warn"):
    """Warn (``InfeasibleCodeWarning``) or raise ``ValueError`` naming the rows of ``info["infeasible"]``
    with their status; nothing when every row was decoded."""
    rows = np.flatnonzero(info["infeasible"])
    if len(rows) == 0:
        return
    status = info.get("status")
    shown = ", ".join(f"{r} ({status[r]})" if status is not None else str(r) for r in rows[:20])
    more = f" and {len(rows) - 20} more" if len(rows) > 20 else ""
    msg = (f"{len(rows)} of {len(info['infeasible'])} codes describe no point (rows {shown}{more}); "
           "no point reaches those leaves together")
    if on_infeasible == "raise":
        raise ValueError(msg)
    import warnings

    warnings.warn(msg + "; their rows hold a fallback point", InfeasibleCodeWarning, stacklevel=3)

#: HiGHS takes a bound of this magnitude for an infinite one, and rejects larger matrix entries than
#: ``_MAX_COEF``: beyond them the LP would silently change, so the decoders refuse such input
_MAX_BOUND = 1e20
_MAX_COEF = 1e15


def _check_bound(v, name, p):
    try:
        a = np.asarray(v, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a number or an array of numbers, got {v!r}") from None
    if a.ndim > 1 or (a.ndim == 1 and a.shape[0] != p):
        raise ValueError(f"{name} must be a scalar or have {p} entries (one per column of A), got shape {a.shape}")
    a = np.broadcast_to(a, (p,)).astype(float)
    if np.isnan(a).any():
        raise ValueError(f"{name} contains NaN")
    fin = a[np.isfinite(a)]
    check_magnitude(fin, _MAX_BOUND, name=name, reason="the LP solver takes such bounds for infinite ones; "
                    "use -inf/inf for no bound")
    return a


def check_lp(A, b, lo, hi, *, n_free=0):
    """Validate the decoding LP ``min ||x||_1 s.t. A x >= b, lo <= x <= hi``: returns ``(A, b, lo, hi)``
    with ``A`` a finite float matrix (dense, or sparse CSR if given sparse), ``b`` finite with one entry
    per row, ``lo``/``hi`` float arrays of length ``A.shape[1] - n_free`` (scalars are broadcast; ``-inf``
    / ``inf`` mean no bound). Raises a ``ValueError``/``TypeError`` naming the argument otherwise."""
    if sp.issparse(A):
        A = sp.csr_matrix(A)
        if A.dtype.kind not in "biuf":
            raise TypeError(f"A must be numeric, got dtype {A.dtype}")
        A = A.astype(float)
        if A.ndim != 2 or A.shape[1] == 0:
            raise ValueError(f"A must be 2-D with at least one column, got shape {A.shape}")
        if not np.isfinite(A.data).all():
            raise ValueError("A contains NaN or infinite values")
        coef = A.data
    else:
        A = check_array(A, name="A", min_samples=0)
        coef = A
    check_magnitude(coef, _MAX_COEF, name="A", reason="the LP solver rejects larger coefficients")
    b = check_array(b, name="b", ensure_2d=False, min_samples=0)
    if b.shape[0] != A.shape[0]:
        raise ValueError(f"b has {b.shape[0]} entries but A has {A.shape[0]} rows")
    check_magnitude(b, _MAX_BOUND, name="b", reason="the LP solver takes such bounds for infinite ones")
    p = A.shape[1] - n_free
    lo = _check_bound(lo, "lo", p)
    hi = _check_bound(hi, "hi", p)
    if (lo > hi).any():
        raise ValueError(f"lo > hi at columns {np.flatnonzero(lo > hi)[:10].tolist()}")
    if np.isposinf(lo).any() or np.isneginf(hi).any():
        raise ValueError("lo must be < inf and hi > -inf")
    return A, b, lo, hi


def _columns(lo, hi):
    """Variables of the split form: x+ in [max(lo,0), max(hi,0)], x- in [max(-hi,0), max(-lo,0)]."""
    lo_p, hi_p = np.maximum(lo, 0.0), np.maximum(hi, 0.0)
    lo_m, hi_m = np.maximum(-hi, 0.0), np.maximum(-lo, 0.0)
    need_minus = hi_m > 0
    return lo_p, hi_p, lo_m, hi_m, need_minus


_HIGHS_READY = False


def _new_highs():
    """A bare HiGHS instance (the compiled class: no Python callback machinery), silent.
    HiGHS prints a banner when the first instance of a process is built; it is sent to the null device.

    The ``threads`` option is left at its default: HiGHS keeps one global thread scheduler per process,
    and an instance asking for another thread count than the scheduler's (say, after a solve through
    pulp in the same process) refuses to run. The dual simplex used here is serial anyway; the decoder
    parallelises over samples with processes."""
    global _HIGHS_READY
    import os
    import sys

    from highspy._core import _Highs

    if not _HIGHS_READY:
        sys.stdout.flush()
        saved = os.dup(1)
        try:
            with open(os.devnull, "w") as null:
                os.dup2(null.fileno(), 1)
                h = _Highs()
                h.setOptionValue("output_flag", False)
        finally:
            os.dup2(saved, 1)
            os.close(saved)
        _HIGHS_READY = True
    else:
        h = _Highs()
        h.setOptionValue("output_flag", False)
    return h


def _highs_solve(M, row_lower, row_upper, lo, hi, n_free=0):
    """``min ||x||_1`` over the first ``p = M.shape[1] - n_free`` columns of ``M`` (the others are free
    variables of cost 0), subject to ``row_lower <= M [x; z] <= row_upper`` and ``lo <= x <= hi``.
    Columns ``x-`` are appended only for features whose box allows negative values."""
    import highspy

    M = sp.csc_matrix(M)
    p = M.shape[1] - n_free
    lo_p, hi_p, lo_m, hi_m, need_minus = _columns(lo, hi)
    idx_m = np.flatnonzero(need_minus)
    if len(idx_m):
        M = sp.hstack([M, -M[:, idx_m]], format="csc")
    ncol = M.shape[1]
    inf = highspy.kHighsInf
    col_lower = np.concatenate([lo_p, np.full(n_free, -np.inf), lo_m[idx_m]])
    col_upper = np.concatenate([hi_p, np.full(n_free, np.inf), hi_m[idx_m]])
    h = _new_highs()
    lp = highspy.HighsLp()
    lp.num_col_ = ncol
    lp.num_row_ = M.shape[0]
    lp.col_cost_ = np.concatenate([np.ones(p), np.zeros(n_free), np.ones(len(idx_m))])
    lp.col_lower_ = np.where(np.isinf(col_lower), -inf, col_lower)
    lp.col_upper_ = np.where(np.isinf(col_upper), inf, col_upper)
    lp.row_lower_ = np.where(np.isinf(row_lower), -inf, row_lower)
    lp.row_upper_ = np.where(np.isinf(row_upper), inf, row_upper)
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = M.indptr.astype(np.int32)
    lp.a_matrix_.index_ = M.indices.astype(np.int32)
    lp.a_matrix_.value_ = M.data.astype(float)
    lp.a_matrix_.num_col_ = ncol
    lp.a_matrix_.num_row_ = M.shape[0]
    h.passModel(lp)
    h.run()
    st = h.getModelStatus()
    if st == highspy.HighsModelStatus.kOptimal:
        sol = np.asarray(h.getSolution().col_value)
        x = sol[:p].copy()
        x[idx_m] -= sol[p + n_free:]
        return x, "optimal", float(h.getInfo().objective_function_value)
    name = {highspy.HighsModelStatus.kInfeasible: "infeasible",
            highspy.HighsModelStatus.kUnbounded: "unbounded",
            highspy.HighsModelStatus.kUnboundedOrInfeasible: "infeasible"}.get(st, str(st))
    return None, name, np.nan


def l1_decode_highs(A, b, lo, hi):
    """Solve ``min ||x||_1 s.t. A x >= b, lo <= x <= hi`` with HiGHS. Returns ``(x, status, objective)``;
    status is ``"optimal"``, ``"infeasible"``, ``"unbounded"`` or HiGHS's status text.

    The objective is ``1^T (x+ + x-)``; ``x-`` columns exist only where the box allows negative values, so
    for images (``lo >= 0``) the LP is ``min 1^T x``. ``A`` may be sparse; ``lo``, ``hi`` are scalars or
    arrays with one entry per column (see :func:`check_lp`)."""
    A, b, lo, hi = check_lp(A, b, lo, hi)
    return _highs_solve(A, b, np.full(len(b), np.inf), lo, hi)


def l1_decode_highs_lowrank(A_sparse, dense, V, b, lo, hi):
    """The same LP when every row is ``a_i = s_i + V c_i`` with ``s_i`` sparse and ``V`` (p x r) a common
    basis: with ``z = V^T x`` (r extra free variables and r equality rows) the rows become
    ``s_i . x + c_i . z >= b_i``, so the matrix holds ``nnz(S) + m r + p r`` entries instead of ``m p``."""
    V = check_array(V, name="V", min_samples=1, min_features=0)
    r = V.shape[1]
    S, b, lo, hi = check_lp(A_sparse if sp.issparse(A_sparse) else np.asarray(A_sparse), b, lo, hi)
    dense = check_array(dense, name="dense", min_samples=0, min_features=0)
    if S.shape[1] != V.shape[0] or dense.shape != (S.shape[0], r):
        raise ValueError(f"shapes do not fit: A_sparse {S.shape}, dense {dense.shape}, V {V.shape} "
                         "(expected (m, p), (m, r), (p, r))")
    A_sparse = S
    M = sp.vstack([sp.hstack([sp.csr_matrix(A_sparse), sp.csr_matrix(dense)]),
                   sp.hstack([sp.csr_matrix(V.T), -sp.identity(r, format="csr")])])
    row_lower = np.concatenate([b, np.zeros(r)])
    row_upper = np.concatenate([np.full(len(b), np.inf), np.zeros(r)])
    return _highs_solve(M, row_lower, row_upper, lo, hi, n_free=r)


def l1_decode_pulp(A, b, lo, hi):
    """Reference formulation with PuLP (CBC): variables ``x+``, ``x-`` per feature,
    ``min sum(x+ + x-)`` subject to ``sum_j A_ij (x+_j - x-_j) >= b_i`` and the box."""
    import pulp

    A, b, lo, hi = check_lp(A, b, lo, hi)
    if sp.issparse(A):
        A = A.toarray()
    m, p = A.shape
    prob = pulp.LpProblem("ofae_decode", pulp.LpMinimize)
    lo_p, hi_p, lo_m, hi_m, _ = _columns(lo, hi)

    def bound(v):
        return None if np.isinf(v) else float(v)

    xp = [prob.add_variable(f"xp{j}", bound(lo_p[j]), bound(hi_p[j])) for j in range(p)]
    xm = [prob.add_variable(f"xm{j}", bound(lo_m[j]), bound(hi_m[j])) for j in range(p)]
    prob += pulp.lpSum(xp) + pulp.lpSum(xm)
    for i in range(m):
        nz = np.flatnonzero(A[i])
        prob += pulp.lpSum(float(A[i, j]) * (xp[j] - xm[j]) for j in nz) >= float(b[i])
    import warnings

    with warnings.catch_warnings():  # the bundled CBC is an independent solver: the point of a reference
        warnings.simplefilter("ignore", DeprecationWarning)
        prob.solve(pulp.PULP_CBC_CMD(msg=False))
    status = pulp.LpStatus[prob.status].lower()
    if status != "optimal":
        return None, status, np.nan
    x = np.array([xp[j].value() - xm[j].value() for j in range(p)], dtype=float)
    return x, "optimal", float(pulp.value(prob.objective))


def l1_decode_cvxpy(A, b, lo, hi):
    """The authors' decoder: one CVXPY problem per sample, ``min ||x||_1 s.t. A x >= b`` (+ box).
    Needs the optional ``cvxpy`` package."""
    try:
        import cvxpy as cp
    except ImportError as exc:  # optional dependency
        raise ImportError("the 'cvxpy' solver needs the optional package cvxpy (extra 'compare')") from exc
    A, b, lo, hi = check_lp(A, b, lo, hi)
    if sp.issparse(A):
        A = A.toarray()
    p = A.shape[1]
    x = cp.Variable(p)
    cons = [A @ x >= b]
    if np.isfinite(lo).any():
        cons.append(x >= np.where(np.isfinite(lo), lo, -1e30))
    if np.isfinite(hi).any():
        cons.append(x <= np.where(np.isfinite(hi), hi, 1e30))
    prob = cp.Problem(cp.Minimize(cp.norm1(x)), cons)
    try:
        prob.solve()
    except cp.error.SolverError:
        return None, "solver error", np.nan
    if prob.status not in ("optimal", "optimal_inaccurate"):
        return None, str(prob.status), np.nan
    return np.asarray(x.value, dtype=float), "optimal", float(prob.value)


_FUNCS = {"highs": l1_decode_highs, "pulp": l1_decode_pulp, "cvxpy": l1_decode_cvxpy}


def system_with_margin(W, bias, rows, signs, margin):
    """``A x >= b`` of one path set, each side pushed inward by ``margin * (1 + |t|)``."""
    A = signs[:, None] * W[rows]
    t = bias[rows]
    b = signs * t + margin * (1.0 + np.abs(t))
    return A, b


def _decode_chunk(W, bias, path_rows, path_signs, gcodes, lo, hi, margin, solver, progress=False,
                  structure=None):
    import time

    from threadpoolctl import threadpool_limits

    cpu0 = time.process_time()
    n, p = len(gcodes), W.shape[1]
    X = np.empty((n, p))
    status = np.empty(n, dtype=object)
    objective = np.full(n, np.nan)
    used_margin = np.zeros(n, dtype=bool)
    fallback = np.clip(0.0, lo, hi)
    it = range(n)
    if progress:
        from tqdm.auto import tqdm

        it = tqdm(it, desc="decode")
    with threadpool_limits(1):
        for i in it:
            rows = path_rows[gcodes[i]].ravel()
            signs = path_signs[gcodes[i]].ravel().astype(float)
            keep = rows >= 0
            rows, signs = rows[keep], signs[keep]
            x, st = None, "not solved"
            for mg in ((margin, 0.0) if margin > 0 else (0.0,)):
                t = bias[rows]
                b = signs * t + mg * (1.0 + np.abs(t))
                try:
                    if solver == "highs-lowrank":
                        S, coef, V = structure
                        x, st, obj = l1_decode_highs_lowrank(S[rows].multiply(signs[:, None]),
                                                             (signs * 1.0)[:, None] * coef[rows], V, b, lo, hi)
                    else:
                        x, st, obj = _FUNCS[solver](signs[:, None] * W[rows], b, lo, hi)
                except (ValueError, RuntimeError, ArithmeticError) as exc:
                    x, st, obj = None, f"error: {exc}", np.nan
                if x is not None:
                    used_margin[i] = mg > 0
                    break
            if x is None:
                X[i] = fallback
                status[i] = st
            else:
                X[i] = x
                status[i] = "optimal"
                objective[i] = obj
    return X, status, objective, used_margin, time.process_time() - cpu0


def lowrank_structure(forest, tol=1e-10):
    """``(S, C, V)`` with ``weights_ = S + C V^T``: ``S`` sparse (CSR), ``V`` an orthonormal basis (p x r) of
    the span of the HHCART directions, ``C`` (n_rows x r) the coordinates of each row's direction part."""
    D = forest.directions_
    beta = forest.dir_coef_
    S = forest.weights_ - beta[:, None] * D
    S[np.abs(S) < 1e-13] = 0.0
    used = beta != 0
    if used.any():
        _, sv, Vt = np.linalg.svd(D[used], full_matrices=False)
        r = int((sv > sv[0] * tol).sum())
        V = Vt[:r].T
    else:
        V = np.zeros((D.shape[1], 0))
    C = (beta[:, None] * D) @ V
    return sp.csr_matrix(S), C, V


@validate_params(
    {"forest": [HasMethods(["check_codes"])], "codes": ["array-like"], "solver": [StrOptions(set(SOLVERS))],
     "n_jobs": [int_interval(1, None, closed="left"), None], "progress": ["boolean"],
     "margin": [real_interval(0, None, closed="left"), None]},
    prefer_skip_nested_validation=True,
)
def decode_forest(forest, codes, solver="highs", n_jobs=1, progress=False, margin=None):
    """Decode every code row of a fitted :class:`ObliqueForestEmbedding` (or any object with the same
    arrays) by the l1 LP. Returns ``(X, info)``; ``info`` holds per-sample ``status`` ("optimal" or the
    reason a fallback point — the box point nearest to 0 — was used), ``objective`` (``||x||_1``) and
    ``margin_used``, the boolean mask ``infeasible`` of the rows that were not decoded (no point satisfies
    their code, or the solver failed; ``status`` says which) and ``n_failed``, the number of those rows.
    Samples are decoded in parallel over ``n_jobs`` processes. This function does not warn; the
    estimators' ``inverse_transform`` does (:func:`report_infeasible`)."""
    g = forest.check_codes(codes)
    lo, hi = forest._box
    for end, v in (("lo", lo), ("hi", hi)):
        check_magnitude(v[np.isfinite(v)], _MAX_BOUND, name=f"box {end}",
                        reason="the LP solver takes such bounds for infinite ones; use -inf/inf for no bound")
    margin = forest.margin if margin is None else margin
    args = (forest.weights_, forest.bias_, forest.path_rows_, forest.path_signs_)
    structure = lowrank_structure(forest) if solver == "highs-lowrank" else None
    n = len(g)
    n_jobs = max(1, min(int(n_jobs or 1), n))
    if n_jobs == 1:
        parts = [_decode_chunk(*args, g, lo, hi, margin, solver, progress, structure)]
    else:
        from joblib import Parallel, delayed

        chunks = np.array_split(np.arange(n), n_jobs)
        parts = Parallel(n_jobs=n_jobs, backend="loky")(
            delayed(_decode_chunk)(*args, g[c], lo, hi, margin, solver, False, structure) for c in chunks)
    X = np.vstack([q[0] for q in parts])
    info = {"status": np.concatenate([q[1] for q in parts]),
            "objective": np.concatenate([q[2] for q in parts]),
            "margin_used": np.concatenate([q[3] for q in parts])}
    info["infeasible"] = info["status"] != "optimal"
    info["n_failed"] = int(info["infeasible"].sum())  # rows, not (row, feature) pairs
    info["cpu_s"] = float(sum(q[4] for q in parts))  # CPU seconds spent in the decoding processes
    return X, info
