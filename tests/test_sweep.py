"""``:sweep:`` and ``:sweep-checks:`` on tv-heatmap, and ``:choices:``: real Sphinx builds of
``tests/roots/test-sweep`` (NumPy lesson code, so every execution is a real worker but cheap).

One module-scoped build executes the root once; the other builders and the edit test start from
a copy of its store.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from conftest import Build, copy_root, directive_lines, edit, load_artifacts, run_sphinx, store_dir, write
from sphinx_tensorviz.render.numbers import fmt

pytestmark = pytest.mark.sphinx

SUMMARY_POINTS = 3 + 4 + 1  # index.md: the temperature sweep, the 2x2 sweep, one plain figure
OTHERS = 6 + 2  # failing.md: 2 + 2 points and 2 checks; graph.md: a PyTorch graph at 2 widths
ALL_BUILDERS = ("html", "dirhtml", "singlehtml", "epub", "latex", "text", "man")


@pytest.fixture(scope="module")
def first(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Build]:
    srcdir = copy_root("sweep", tmp_path_factory.mktemp("sweep") / "src")
    return srcdir, run_sphinx(srcdir, "html")


def _copy_with_store(first: tuple[Path, Build], dest: Path) -> Path:
    srcdir = copy_root("sweep", dest)
    shutil.copytree(store_dir(first[0]), store_dir(srcdir))
    return srcdir


def _points(html: str, figure_id: str) -> list[str]:
    """The HTML of each sweep point of one figure."""
    start = html.index(f'<figure id="{figure_id}"')
    figure = html[start:html.index("</figure>", start)]
    return re.findall(r'<div class="tv-sweep-point".*?</svg></div></div>', figure, flags=re.S)


def test_every_point_and_the_cross_sweep_check_execute_once(first: tuple[Path, Build]) -> None:
    srcdir, build = first
    # index: 3 + 4 points, 1 plain figure, 1 cross-sweep check; then failing.md and graph.md
    assert build.summary == (SUMMARY_POINTS + 1 + OTHERS, 0, 0)
    artifacts = load_artifacts(srcdir)
    checks = [a for a in artifacts.values() if a["data"]["kind"] == "sweep-check"]
    assert len(checks) == 3
    temperature = next(a for a in checks if a["checks"][0]["name"] == "entropy_rises")
    assert [p["values"] for p in temperature["data"]["points"]] == [[0.25], [1], [4]]
    for point in temperature["data"]["points"]:  # each point is a stored heatmap of its own
        stored = artifacts[point["contentHash"]]
        assert stored["data"]["kind"] == "heatmap"
        assert stored["request"]["inputs"] == {"temperature": point["values"][0]}
    assert temperature["checks"][0]["passed"] is True


def test_adding_a_value_executes_one_point_and_the_check(first: tuple[Path, Build], tmp_path: Path) -> None:
    srcdir = _copy_with_store(first, tmp_path / "src")
    assert run_sphinx(srcdir).summary[0] == 0  # the copied store covers everything
    edit(srcdir / "index.md", ":sweep: temperature=[0.25, 1, 4]", ":sweep: temperature=[0.25, 1, 2, 4]")
    again = run_sphinx(srcdir)
    assert again.summary == (2, SUMMARY_POINTS + 1 + OTHERS - 1, 0)  # the new point + the re-run check
    html = again.html("index")
    assert len(_points(html, "tv-index-0")) == 4
    assert "temperature = 2" in html


def test_points_share_one_colour_scale(first: tuple[Path, Build]) -> None:
    srcdir, build = first
    html = build.html("index")
    points = _points(html, "tv-index-0")
    assert len(points) == 3
    bars = [re.findall(r'<g class="tv-colour-bar".*?</g>', p, flags=re.S)[0] for p in points]
    ticks = [re.findall(r"<text [^>]*>([^<]*)</text>", bar) for bar in bars]
    assert ticks[0] == ticks[1] == ticks[2]
    artifacts = load_artifacts(srcdir)
    values = [v for t in (0.25, 1, 4) for row in _point_values(artifacts, t) for v in row]
    assert ticks[0][:3] == [fmt(max(values)), fmt((max(values) + min(values)) / 2), fmt(min(values))]
    # the flattest point (temperature 4) alone would span far less than the shared scale
    own = [v for row in _point_values(artifacts, 4) for v in row]
    assert fmt(max(own)) != ticks[0][0]


def _point_values(artifacts: dict[str, Any], temperature: float) -> list[list[float]]:
    """The stored values of the temperature sweep's point (the only figure labelled q0, q1, q2)."""
    return next(a["data"]["values"] for a in artifacts.values() if a["data"]["kind"] == "heatmap"
                and a["request"]["inputs"] == {"temperature": temperature}
                and a["request"]["options"]["rows"] == ["q0", "q1", "q2"])


def test_without_script_every_point_is_a_labelled_small_multiple(first: tuple[Path, Build]) -> None:
    html = first[1].html("index")
    assert '<div class="tv-sweep-controls" hidden="">' in html  # the script shows the controls
    labels = re.findall(r'<p class="tv-sweep-label">([^<]*)</p>', html)
    assert labels[:3] == ["temperature = 0.25", "temperature = 1", "temperature = 4"]
    assert labels[3:7] == ["scale = 1, kind = tanh", "scale = 1, kind = linear", "scale = 2, kind = tanh",
                           "scale = 2, kind = linear"]
    # numbers get a slider with a visible value; names a select
    assert re.search(r'<input type="range" id="tv-index-0-sweep-0" min="0" max="2"', html)
    assert re.search(r'<output for="tv-index-0-sweep-0"[^>]*>0.25</output>', html)
    assert re.search(r'<select id="tv-index-\d+-sweep-1" data-tv-param="1"><option value="0">tanh</option>', html)
    ids = re.findall(r' id="([^"]+)"', html)
    assert len(ids) == len(set(ids))


def test_alt_text_summarises_the_sweep(first: tuple[Path, Build]) -> None:
    html = first[1].html("index")
    assert "3 heatmaps of attention weight (3 rows by 4 columns), one for each value of temperature" in html
    assert re.search(r"the largest value falls steadily from [\d.]+ to [\d.]+ and the mean row entropy "
                     r"\(nats\) rises steadily", html)
    assert "Verified claims across the sweep" in html


def test_failing_cross_sweep_check_warns_at_the_directive(first: tuple[Path, Build]) -> None:
    srcdir, build = first
    line = directive_lines(srcdir / "failing.md")[0]
    claims = [w for w in build.tensorviz_warnings() if "[tensorviz.claim]" in w]
    assert any(f"failing.md:{line}:" in w and "claim across the sweep failed" in w for w in claims), claims
    page = build.html("failing")
    assert "FAILED" in page and "The mean row entropy falls with the temperature" in page


def test_choices_check_that_fails_leaves_no_unconfirmed_answer(first: tuple[Path, Build]) -> None:
    srcdir, build = first
    line = directive_lines(srcdir / "failing.md")[1]
    assert any(f"failing.md:{line}:" in w and "the choice marked correct is not confirmed" in w
               for w in build.tensorviz_warnings())
    assert "NOT confirmed by the recorded data" in build.html("failing")


def test_choices_markup_without_script(first: tuple[Path, Build]) -> None:
    html = first[1].html("index")
    start = html.index('<figure id="tv-index-0"')
    figure = html[start:html.index("</figure>", start)]
    reveal = figure.index('<details class="tv-reveal">')
    # the form is hidden until the script runs; the plain list shows the choices before the reveal
    form = re.search(r'<form class="tv-choices" hidden=""[^>]*>.*?</form>', figure, flags=re.S)
    assert form and form.start() < reveal
    assert '<fieldset><legend class="tv-visually-hidden">Your prediction:' in form.group(0)  # named, shown once
    assert 'role="status" aria-live="polite"' in form.group(0)
    assert figure.index("A. It gets flatter (closer to uniform)") < reveal
    answer = figure.index("Answer:")
    assert answer > reveal and "confirmed by the recorded data" in figure[answer:]
    assert "Dividing the scores by a larger temperature shrinks their differences" in figure[reveal:]


@pytest.mark.parametrize("builder", ALL_BUILDERS)
def test_every_builder_is_warning_free(first: tuple[Path, Build], tmp_path: Path, builder: str) -> None:
    srcdir = _copy_with_store(first, tmp_path / "src")
    (srcdir / "failing.md").unlink()  # its claims fail on purpose
    build = run_sphinx(srcdir, builder, warningiserror=True)
    assert build.statuscode == 0 and build.summary[0] == 0, build.warnings
    out = build.outdir
    if builder == "latex":
        tex = next(out.glob("*.tex")).read_text("utf-8")
        grids = re.findall(r"\\begin\{tabular\}\{(c+)\}(.*?)\\end\{tabular\}", tex, flags=re.S)
        assert [(cols, body.count("\\includegraphics")) for cols, body in grids] == [("ccc", 3), ("ccc", 4)]
        for name in re.findall(r"\\includegraphics\[[^]]*\]\{([^}]+)\}", tex):
            assert (out / name).read_bytes().startswith(b"%PDF")
        assert "temperature = 0.25" in tex
    elif builder in ("text", "man"):
        text = "\n".join(p.read_text("utf-8") for p in out.rglob("*") if p.suffix in (".txt", ".1"))
        flat = " ".join(re.sub(r"\*\*|\\f[BPIR]|\\", "", text).split())  # no bold markup (text, man)
        for value in ("0.25", "1", "4"):  # each point's alt text
            assert f"temperature = {value}: Heatmap of attention weight" in flat


def test_bad_sweep_and_choices_options_are_located_errors(tmp_path: Path) -> None:
    srcdir = copy_root("sweep", tmp_path / "src")
    for name in ("failing.md", "graph.md"):
        (srcdir / name).unlink()
    bad = {
        ":sweep: temperature=[" + ", ".join(str(n) for n in range(51)) + "]": "at most 50",
        ":sweep: a=[1]; b=[2]; c=[3]": "one or 2 parameters",
        ":sweep: temperature=[1, 1]": "listed twice",
        ":sweep: temperature=1": "write name=[value",
        ":sweep-checks: entropy_rises": ":sweep-checks: needs a :sweep:",
        ":sweep: seed=[1, 2]\n:inputs: {seed: 3}": "also set in :inputs:",
        ":choices: [a, b]": "mark exactly one",
        ":prediction: Which?\n:choices: [{text: a, correct: true}, {text: b, correct: true}]": "mark exactly one",
        ":choices: [{text: a, correct: true}, b]": ":choices: needs a :prediction:",
        ":prediction: Which?\n:choices-check: entropy_rises": ":choices-check: needs :choices:",
    }
    body = "# Bad\n\n" + "\n".join(f"```{{tv-heatmap}}\n:source: models/softmax.py\n:function: weights\n{opts}\n```\n"
                                   for opts in bad)
    write(srcdir / "index.md", body)
    build = run_sphinx(srcdir)
    lines = directive_lines(srcdir / "index.md")
    warnings = build.tensorviz_warnings()
    for line, expected in zip(lines, bad.values()):
        found = [w for w in warnings if f"index.md:{line}:" in w]
        assert len(found) == 1 and expected in found[0] and "[tensorviz.option]" in found[0], (expected, found)
    assert not list(store_dir(srcdir).glob("*.json"))  # nothing executed


def test_sweep_check_hash_follows_the_points(first: tuple[Path, Build]) -> None:
    """The cross-sweep check is named by its points: a changed point means a new check artifact."""
    artifacts = load_artifacts(first[0])
    for artifact in artifacts.values():
        if artifact["data"]["kind"] != "sweep-check":
            continue
        hashed = artifact["request"]["inputs"]["points"]
        assert [h for _, h in hashed] == [p["contentHash"] for p in artifact["data"]["points"]]
        assert all(h in artifacts for _, h in hashed)
        assert set(artifact["request"]["options"]) == {"checks"}


def test_swept_graph_is_one_figure_per_point_with_activations_following(first: tuple[Path, Build]) -> None:
    srcdir, build = first
    graphs = {a["request"]["options"]["model_args"]["width"]: a for a in load_artifacts(srcdir).values()
              if a["data"]["kind"] == "graph"}
    assert sorted(graphs) == [4, 8]  # passed like :model-args:, one traced artifact per width
    assert graphs[8]["data"]["activations"]["up"]["metrics"]["width"] == 8
    html = build.html("graph")
    assert re.findall(r'<figure id="(tv-graph-0-p\d)"', html) == ["tv-graph-0-p0", "tv-graph-0-p1"]
    assert html.count("Predict first:") == 1 and html.count('<form class="tv-choices"') == 1  # asked once
    assert '<div class="tv-sweep tv-sweep-figures" data-tv-sizes="2" id="tv-graph-0">' in html
    follower = html.index('data-tv-follows="tv-graph-0"')
    assert "up: token 2, 4 features" in html[follower:] and "up: token 2, 8 features" in html[follower:]
    assert 'id="small"' in html  # the :name: still resolves


def test_swept_graph_refuses_a_diagram_and_a_choices_check(tmp_path: Path) -> None:
    srcdir = copy_root("sweep", tmp_path / "src")
    for name in ("failing.md", "graph.md"):
        (srcdir / name).unlink()
    write(srcdir / "index.md", "# Bad\n\n```{tv-graph}\n:sweep: width=[1, 2]\n\npanel: {nodes: [{id: a, x: 0, y: 0, "
          "label: a}]}\n```\n\n```{tv-graph}\n:model: models/small.py:Small\n:sweep: width=[1, 2]\n"
          ":prediction: Which?\n:choices: [{text: a, correct: true}, b]\n:choices-check: anything\n```\n")
    warnings = run_sphinx(srcdir).tensorviz_warnings()
    lines = directive_lines(srcdir / "index.md", "tv-graph")
    assert any(f"index.md:{lines[0]}:" in w and "needs a traced model" in w for w in warnings), warnings
    assert any(f"index.md:{lines[1]}:" in w and "not available on a swept tv-graph" in w for w in warnings), warnings
