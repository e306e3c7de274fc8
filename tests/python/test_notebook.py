"""docs/cusp_vs_stock.ipynb runs (nbclient, the venv's python3 kernel) and its outputs hold what
it claims: the mjSpec scene pushed by a Python controller with cusp and stock, the comparison
figure with both runs' lines and the mode bands, one contact loop for both models, an inline
video and a time-stamped frame with the mode legend."""
import base64
import io
import json
import os
import pathlib

import matplotlib.image
import numpy as np
import pytest

import cusp
from cusp import visual

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

REPO = pathlib.Path(__file__).resolve().parents[2]
NOTEBOOK = REPO / "docs" / "cusp_vs_stock.ipynb"


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    assert not any(cell.get("outputs") for cell in notebook.cells if cell.cell_type == "code")
    paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    os.environ["PYTHONPATH"] = os.pathsep.join([str(REPO / "python")] + paths)
    cwd = tmp_path_factory.mktemp("notebook")
    nbclient.NotebookClient(notebook, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(cwd)}}).execute()
    outputs = [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.outputs]
    text = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    assert not [o for o in outputs if o.output_type == "error"]
    return outputs, text


def tagged(text: str, tag: str) -> dict:
    line = next(line for line in text.splitlines() if line.startswith(tag + " "))
    return json.loads(line[len(tag) + 1:])


def png(output) -> np.ndarray:
    image = matplotlib.image.imread(io.BytesIO(base64.b64decode(output["data"]["image/png"])))
    return (image[..., :3] * 255).astype(np.uint8)


def near(image: np.ndarray, rgb, tolerance: int = 12) -> int:
    return int(np.count_nonzero(np.all(np.abs(image.astype(int) - rgb) <= tolerance, axis=-1)))


def test_cusp_and_stock_push_the_box_with_the_controller(executed):
    _, text = executed
    result = tagged(text, "RESULT")
    for label in ("cusp", "stock"):
        assert result[label]["box_x"] > 0.03, result  # pushed at least 3 cm
    assert result["cusp"]["max_penetration_mm"] < 1e-3 < result["stock"]["max_penetration_mm"]
    assert result["cusp"]["slide_steps"] > 100 and result["stock"]["slide_steps"] == 0


def test_comparison_figure_shows_both_runs_and_the_mode_bands(executed):
    outputs, _ = executed
    figures = [png(o) for o in outputs if "image/png" in o.get("data", {})]
    assert figures, "no inline figure"
    figure = figures[0]
    assert figure.shape[0] > 800 and figure.shape[1] > 500  # the stacked panels
    assert near(figure, (31, 119, 180)) > 300  # cusp lines (tab:blue)
    assert near(figure, (255, 127, 14)) > 300  # stock lines (tab:orange)
    stick, slide, contact = (26, 77, 255), (255, 26, 26), (140, 140, 140)  # BAND_COLOURS
    assert near(figure, stick, 3) > 200 and near(figure, slide, 3) > 200
    assert near(figure, contact, 3) > 200  # stock's plain contact band


def test_one_contact_loop_reads_cusp_and_stock(executed):
    _, text = executed
    rows = tagged(text, "CONTACTS")
    assert rows["cusp"]["floor_N"] == pytest.approx(0.5 * 9.81, rel=1e-3)
    assert rows["stock"]["records"] >= 1 and rows["stock"]["modes"] == [0]
    assert cusp.MODE_SLIDE in rows["cusp"]["modes"]


def test_inline_video_and_stamped_frame(executed):
    outputs, _ = executed
    html = [o["data"]["text/html"] for o in outputs if "text/html" in o.get("data", {})]
    videos = [h for h in html if "<video" in h]
    assert videos and len(videos[0]) > 5000  # an embedded H.264 clip, not an empty tag
    frames = [h for h in html if "<img" in h]
    assert frames
    data = frames[0].split("base64,", 1)[1].split('"', 1)[0]
    image = (matplotlib.image.imread(io.BytesIO(base64.b64decode(data)))[..., :3] * 255).astype(
        np.uint8)
    assert image.shape[:2] == (240, 320)
    corner = image[:70, :95]
    for mode in (cusp.MODE_STICK, cusp.MODE_SLIDE, cusp.MODE_BREAK):
        assert visual.marker_pixels(corner, mode) >= 40  # the legend
    assert np.count_nonzero(np.all(corner > 240, axis=-1)) > 20  # the time stamp
