"""Every tour notebook runs headless, top to bottom, without an error; the
committed files carry no outputs and no widget state."""

import json
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[2] / "notebooks").glob("*.ipynb"))
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def ids(paths):
    return [path.stem for path in paths]


def test_the_tour_is_there():
    names = {path.stem for path in NOTEBOOKS}
    for expected in ("01_prune_a_sklearn_tree", "02_lightgbm_and_xgboost", "03_leaf_medoids_digits",
                     "04_tsdt_versus_greedy_trees", "05_mabsplit_forests"):
        assert expected in names


@pytest.mark.parametrize("path", NOTEBOOKS, ids=ids(NOTEBOOKS))
def test_committed_without_outputs_or_widget_state(path):
    notebook = json.loads(path.read_text())
    assert "widgets" not in notebook["metadata"], "strip metadata.widgets before committing"
    for cell in notebook["cells"]:
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [] and cell["execution_count"] is None, "clear the outputs before committing"


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=ids(NOTEBOOKS))
def test_notebook_runs(path, tmp_path):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    notebook = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        notebook, timeout=240, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()  # raises CellExecutionError with the cell and traceback on failure
    panels = ("TreeView(", "PruningPanel(", "MedoidPanel(", "ComparisonPanel(")
    # every panel the code builds is displayed once, without an error
    built = sum(
        "".join(cell["source"]).count(f"btt.{name}") for cell in notebook.cells if cell.cell_type == "code"
        for name in panels
    )
    shown = []
    for cell in notebook.cells:
        outputs = cell.get("outputs", [])
        for k, output in enumerate(outputs):
            data = output.get("data", {})
            if WIDGET_VIEW not in data:
                continue
            text = "".join(data.get("text/plain", ""))
            if text.startswith(panels):
                shown.append(text)
                # every panel is preceded by its script-free picture (static
                # viewers, a saved notebook reopened without its kernel)
                twin = "".join(outputs[k - 1].get("data", {}).get("text/html", "")) if k else ""
                assert "btt-static-twin" in twin and "<script" not in twin.lower()
    assert len(shown) == built, f"{built} panels built, {len(shown)} displayed: {shown}"
    assert not [text for text in shown if "(error=" in text], shown
