"""What the notebook tests check of an executed notebook's figures."""

import json
import re

DRAWS = re.compile(r"\bplt\.(subplots|figure)\(")


def assert_figures(executed, minimum: int) -> int:
    """Every cell that draws a figure shows one, with a caption for the book; at least ``minimum``."""
    nb = json.loads(open(executed).read())
    drawn = 0
    for cell in nb["cells"]:
        if cell["cell_type"] != "code" or not DRAWS.search("".join(cell["source"])):
            continue
        images = sum(any(k.startswith("image/") for k in out.get("data", {})) for out in cell.get("outputs", []))
        first = "".join(cell["source"]).strip().splitlines()[0]
        assert images >= 1, f"a figure cell shows no image: {first!r}"
        caption = cell["metadata"].get("mystnb", {}).get("figure", {})
        assert caption.get("caption") and caption.get("name"), f"a figure cell without a caption: {first!r}"
        drawn += images
    assert drawn >= minimum, f"{drawn} figures, expected at least {minimum}"
    return drawn
