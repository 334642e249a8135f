"""Text export and matplotlib drawing of a :class:`~treebook.tree.structure.Tree`."""

from __future__ import annotations

import numpy as np

from .structure import LEAF, Tree

__all__ = ["export_text", "plot_tree"]


def _leaf_text(tree: Tree, node: int, class_names, decimals: int) -> str:
    v = tree.value[node]
    if class_names is not None and v.size == len(class_names) and v.size > 1:
        return f"class: {class_names[int(np.argmax(v))]}  (n={tree.n_node_samples[node]})"
    shown = ", ".join(f"{x:.{decimals}f}" for x in v)
    return f"value: [{shown}]  (n={tree.n_node_samples[node]})"


def export_text(tree: Tree, feature_names=None, class_names=None, decimals: int = 3) -> str:
    """The tree as indented text, one line per branch, in the style of scikit-learn's ``export_text``.

    A branch line shows the condition that sends samples left, and ``not (...)`` for the right.
    """
    lines: list[str] = []
    stack = [(0, 0, None)]
    while stack:
        node, indent, label = stack.pop()
        pad = "|   " * indent
        if label is not None:
            lines.append(f"{pad}|--- {label}")
            pad = "|   " * (indent + 1)
        if tree.children_left[node] == LEAF:
            lines.append(f"{pad}|--- {_leaf_text(tree, node, class_names, decimals)}")
            continue
        cond = tree.splits[node].describe(feature_names, decimals)
        nxt = indent + 1 if label is not None else indent
        stack.append((tree.children_right[node], nxt, f"not ({cond})"))
        stack.append((tree.children_left[node], nxt, cond))
    return "\n".join(lines) + "\n"


def plot_tree(tree: Tree, ax=None, feature_names=None, class_names=None, decimals: int = 2,
              fontsize: int = 8, max_depth: int | None = None):
    """Draw the tree: internal nodes show their (left) condition, leaves their prediction.

    Leaves are spread evenly along the x axis and parents centred over their children; edges to
    the left child are labelled "yes". Returns the matplotlib ``Axes``.
    """
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(min(2.2 * max(tree.n_leaves, 2), 24), 1.6 * (tree.max_depth + 1)))
    limit = tree.max_depth if max_depth is None else max_depth
    x = np.zeros(tree.n_nodes)
    counter = [0]

    def place(node: int) -> float:
        if tree.children_left[node] == LEAF or tree.depth[node] >= limit:
            x[node] = counter[0]
            counter[0] += 1
            return x[node]
        a = place(tree.children_left[node])
        b = place(tree.children_right[node])
        x[node] = (a + b) / 2
        return x[node]

    place(0)
    width = max(counter[0] - 1, 1)
    for node in range(tree.n_nodes):
        if tree.depth[node] > limit:
            continue
        xn, yn = x[node] / width, -tree.depth[node]
        truncated = tree.children_left[node] != LEAF and tree.depth[node] >= limit
        if tree.children_left[node] == LEAF or truncated:
            text = _leaf_text(tree, node, class_names, decimals).replace("  (", "\n(")
            if truncated:
                text = "(subtree)\n" + text
            face = "#e8f4e8"
        else:
            text = tree.splits[node].describe(feature_names, decimals) + f"\nn={tree.n_node_samples[node]}"
            face = "#e8eef8"
            for child, lab in ((tree.children_left[node], "yes"), (tree.children_right[node], "no")):
                xc, yc = x[child] / width, -tree.depth[child]
                ax.plot([xn, xc], [yn, yc], color="0.5", lw=1, zorder=1)
                ax.text((xn + xc) / 2, (yn + yc) / 2, lab, fontsize=fontsize - 1, color="0.3",
                        ha="center", va="center", backgroundcolor="white", zorder=2)
        ax.text(xn, yn, text, ha="center", va="center", fontsize=fontsize, zorder=3,
                bbox=dict(boxstyle="round,pad=0.3", fc=face, ec="0.4"))
    ax.set_xlim(-0.08, 1.08)
    ax.set_ylim(-limit - 0.5, 0.5)
    ax.axis("off")
    return ax
