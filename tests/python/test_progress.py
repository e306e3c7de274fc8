"""cusp.progress draws a redrawn bar only on a terminal; into a pipe or a log it writes plain
lines (start, each quarter, end) and never a carriage return."""
import io

from cusp.progress import Progress


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_plain_lines_when_not_a_terminal():
    out = io.StringIO()
    with Progress(2.0, "scene cusp", stream=out) as bar:
        for k in range(201):
            bar.update(0.01 * k, force=True)
    text = out.getvalue()
    assert "\r" not in text
    lines = text.splitlines()
    assert [line.split()[2] for line in lines] == ["0%", "25%", "50%", "75%", "100%"], lines
    assert all(line.startswith("scene cusp ") and line.endswith(" s") for line in lines)


def test_a_run_ending_early_still_ends_with_100_percent_once():
    out = io.StringIO()
    with Progress(10.0, "x", stream=out) as bar:
        bar.update(3.0)
    assert [line.split()[1] for line in out.getvalue().splitlines()] == ["0%", "30%", "100%"]


def test_redrawn_bar_on_a_terminal():
    out = Terminal()
    with Progress(1.0, "scene", width=10, stream=out) as bar:
        bar.update(0.5, force=True)
    text = out.getvalue()
    assert text.startswith("\rscene [..........]   0%") and text.endswith("100%   0.0 s\n")
    assert "\rscene [#####.....]  50%" in text
    assert text.count("\n") == 1


def test_a_closed_stream_is_not_a_terminal():
    out = io.StringIO()
    out.close()
    assert not Progress(1.0, stream=out).terminal
