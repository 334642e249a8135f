"""The two kinds of state of the AND/OR graph (Sec. 3.1 of the paper).

Both carry the three estimates the search keeps per state: ``lower`` (admissible, the dual bound
``V``), ``upper`` (the best tree found below the state, the primal bound ``Vbar``) and ``estimate`` (the
non-admissible secondary heuristic ``V~`` that orders the OR choice), clipped to ``lower <= estimate <= upper``.
A state is ``solved`` when ``lower`` meets ``upper``.
"""

from __future__ import annotations

__all__ = ["DataState", "ShapeState"]


class DataState:
    """OR state ``(D_s, d)``: stop as a leaf, or open a shape function on a feature with a first breakpoint.

    ``samples`` are the row indices of ``D_s`` and ``depth`` is ``d``; ``level`` is the distance from the root
    (it selects the local CART's leaf budget ``B_d``).  Once expanded, ``candidates[j]`` holds the sorted
    candidate breakpoints of feature ``j``, ``pieces[j]`` the piece index of every sample and ``counts[j]``
    the class counts per piece; ``actions`` are the materialised first-breakpoint shape states and ``queue``
    the pending ones (:mod:`treebook.shape.literati.queue`).  ``best`` is the action of the incumbent
    (``None``: a leaf).
    """

    __slots__ = (
        "actions", "best", "candidates", "counts", "depth", "estimate", "expanded", "key", "label", "leaf_error",
        "level", "lower", "pieces", "presorted", "queue", "samples", "solved", "upper",
    )

    def __init__(self, samples, depth, level, leaf_error, label):
        self.samples = samples
        self.depth = depth
        self.level = level
        self.leaf_error = leaf_error
        self.label = label
        self.lower = 0.0
        self.upper = leaf_error
        self.estimate = leaf_error
        self.solved = False
        self.expanded = False
        self.actions = []
        self.best = None
        self.pieces = None
        self.counts = None
        self.candidates = None
        self.queue = None
        self.key = None
        self.presorted = None  # (X, y, per-feature sort orders) of the samples, built on first need


class ShapeState:
    """OR state ``(D_s, d, j, k)``: refine with a breakpoint beyond the last one (cost ``alpha``) or commit.

    ``owner`` is the data state ``(D_s, d)``; ``breakpoints`` are indices into ``owner.candidates[feature]``
    (``thresholds`` their values); pieces alternate sides, the first going left, and ``counts_left`` /
    ``counts_right`` are the class counts of the two sides.  The commit yields the AND pair ``left``,
    ``right`` of data states of depth ``d - 1`` (created on expansion; ``commit_pruned`` once the commit
    cannot beat the incumbent).  ``refinements`` are the materialised refined states and ``queue`` the
    pending ones; ``best`` is ``"commit"`` or the refinement of the incumbent; ``turn`` is the round-robin
    AND pointer.  ``estimate_left`` / ``estimate_right`` are ``V~`` of the two children before they exist.
    ``child_splits`` holds the children's depth-1 splits of an exact depth-2 state's tree until it is read.
    """

    __slots__ = (
        "best", "breakpoints", "child_splits", "commit_pruned", "counts_left", "counts_right", "estimate",
        "estimate_left", "estimate_right", "expanded", "feature", "left", "lower", "owner", "queue", "refinements",
        "right", "solved", "thresholds", "turn", "upper",
    )

    def __init__(self, owner, feature, breakpoints, thresholds, counts_left, counts_right):
        self.owner = owner
        self.feature = feature
        self.breakpoints = breakpoints
        self.thresholds = thresholds
        self.counts_left = counts_left
        self.counts_right = counts_right
        self.solved = False
        self.expanded = False
        self.left = None
        self.right = None
        self.commit_pruned = False
        self.refinements = []
        self.queue = None
        self.best = "commit"
        self.turn = 0
        self.child_splits = None
