"""The README's rigid-object example is docs/examples/rigid_box.py, shown verbatim in README.md,
and it does what the README says: the box dropped on the plane comes to rest on it (no
penetration to speak of, no creep) with one sticking patch contact carrying its weight."""
import pathlib
import runpy

import numpy as np

REPO = pathlib.Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "docs" / "examples" / "rigid_box.py"


def test_readme_shows_the_example_verbatim():
    readme = (REPO / "README.md").read_text()
    assert f"```python\n{EXAMPLE.read_text()}```" in readme
    assert "docs/examples/rigid_box.py" in readme


def test_the_box_rests_on_the_plane(capsys):
    run = runpy.run_path(str(EXAMPLE), run_name="__main__")
    model, data, contacts = run["model"], run["data"], run["contacts"]
    half = 0.05  # m, the box's half height
    assert data.time > 1.99
    assert half - data.qpos[2] < 1e-4  # penetration < 0.1 mm
    assert data.qpos[2] - half < 1e-6  # and resting on it, not hovering
    assert np.abs(data.qvel).max() < 1e-6  # at rest: m/s and rad/s
    assert len(contacts) >= 1 and set(contacts.mode.tolist()) == {1}  # sticking
    weight = model.body("box").mass[0] * -model.opt.gravity[2]
    assert abs(contacts.force[:, 0].sum() - weight) < 1e-6 * weight
    np.testing.assert_allclose(contacts.normal[:, 2], 1.0, atol=1e-12)
    out = capsys.readouterr().out
    assert "contact(s)" in out and "normal force 9.81 N" in out
