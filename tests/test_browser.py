"""The figures in a real headless Chromium: reveal, graph highlight, pan/zoom, tour stepper,
checkpoint selector, and the same pages with JavaScript off.

The course in lessons/ is copied to a temporary directory and built from its committed
artifacts (cache-only: nothing executes); pages are opened through file:// URLs.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Iterator

import pytest

from browser_util import axe_serious, browser_missing, build_lessons, copy_lessons, offline_context, page_opener
from conftest import copy_root

pytestmark = [pytest.mark.browser, pytest.mark.sphinx]

_why = browser_missing()
if _why:
    pytest.skip(f"browser tests need headless Chromium: {_why}", allow_module_level=True)

from playwright.sync_api import Page  # noqa: E402

GRAPH_PAGE = "llama-decoder.html"
OTHER_PAGE = "transformers-03.html"


# ------------------------------------------------------------------------------------------ fixtures


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("tv-browser")
    return build_lessons(copy_lessons(tmp / "src"), tmp / "html")


@pytest.fixture()
def open_page(browser: Any, site: Path) -> Iterator[Any]:
    """open_page(name, hash="", **context options) -> Page; fails the test on a script error."""
    with page_opener(browser, site) as opener:
        yield opener


def _html(site: Path, name: str) -> str:
    return (site / name).read_text(encoding="utf-8")


def _tour(site: Path) -> dict[str, Any]:
    """The first guided tour on the graph page, read from the built HTML."""
    html = _html(site, GRAPH_PAGE)
    section = re.search(r'<section class="tv-steps"[^>]*>', html)
    assert section, f"no <section class=\"tv-steps\"> in {GRAPH_PAGE}"
    attrs = dict(re.findall(r'([\w-]+)="([^"]*)"', section.group(0)))
    steps = [dict(re.findall(r'([\w-]+)="([^"]*)"', li)) for li in re.findall(r'<li class="tv-step"[^>]*>', html)]
    assert len(steps) >= 2, "a tour needs at least two steps"
    return {"id": attrs["id"], "graph": attrs["data-graph"], "opening": attrs.get("data-opening"), "steps": steps}


def _step_index(tour: dict[str, Any], step_id: str | None) -> int:
    for k, step in enumerate(tour["steps"]):
        if step["data-step"] == step_id:
            return k
    return 0


def _current(page: Page, tour: dict[str, Any]) -> list[str]:
    return page.eval_on_selector_all(f'#{tour["id"]} li.tv-step[aria-current="step"]', "els => els.map(e => e.id)")


def _visible_steps(page: Page, tour: dict[str, Any]) -> list[str]:
    return page.eval_on_selector_all(f'#{tour["id"]} li.tv-step',
                                     "els => els.filter(e => e.getClientRects().length > 0).map(e => e.id)")


def _target_has_class(page: Page, tour: dict[str, Any], step: dict[str, Any]) -> None:
    selector = f'#{tour["graph"]} svg.tv-graph g[data-node="{step["data-visible"]}"].tv-step-target'
    page.wait_for_selector(selector, state="attached", timeout=2000)


def _open_reveal(page: Page) -> None:
    page.click("figure.tv-graph details.tv-reveal > summary")
    assert page.eval_on_selector("figure.tv-graph details.tv-reveal", "d => d.open")


# ---------------------------------------------------------------------------------- reveal <details>


@pytest.mark.parametrize("name", [GRAPH_PAGE, OTHER_PAGE])
def test_reveal_opens_on_click(open_page: Any, name: str) -> None:
    page = open_page(name)
    details = page.locator("details.tv-reveal").first
    assert not details.evaluate("d => d.open")
    details.locator("> summary").click()
    assert details.evaluate("d => d.open")
    assert details.locator("svg").first.is_visible()


def test_reveal_opens_with_enter_from_the_keyboard(open_page: Any) -> None:
    page = open_page(OTHER_PAGE)
    page.locator("details.tv-reveal > summary").first.focus()
    page.keyboard.press("Enter")
    assert page.locator("details.tv-reveal").first.evaluate("d => d.open")


def test_beforeprint_opens_every_reveal_and_afterprint_restores(open_page: Any) -> None:
    page = open_page(OTHER_PAGE)
    page.evaluate("window.dispatchEvent(new Event('beforeprint'))")
    assert page.eval_on_selector_all("details.tv-reveal", "ds => ds.every(d => d.open)")
    page.evaluate("window.dispatchEvent(new Event('afterprint'))")
    assert page.eval_on_selector_all("details.tv-reveal", "ds => ds.every(d => !d.open)")


# ------------------------------------------------------------------------------------ graph highlight


def test_hover_highlights_node_edges_neighbours_and_source_lines(open_page: Any) -> None:
    page = open_page(GRAPH_PAGE)
    _open_reveal(page)
    node = page.locator("svg.tv-graph g.tv-node[data-source-lines]").first
    node_id = node.get_attribute("data-node")
    first_line = int(re.match(r"\d+", node.get_attribute("data-source-lines")).group(0))
    node.hover()
    assert "tv-hl" in node.get_attribute("class").split()
    edges = page.eval_on_selector_all("path.tv-edge.tv-hl-edge",
                                      "es => es.map(e => [e.dataset.source, e.dataset.target])")
    assert edges and all(node_id in pair for pair in edges)
    neighbours = page.eval_on_selector_all("g.tv-hl-neighbour", "gs => gs.map(g => g.dataset.node)")
    assert neighbours and node_id not in neighbours
    lines = page.eval_on_selector_all(".tv-line.tv-hl-line", "ls => ls.map(l => +l.dataset.line)")
    assert first_line in lines
    # highlighted edges are thicker, not only another colour
    width = page.eval_on_selector("path.tv-edge.tv-hl-edge", "e => parseFloat(getComputedStyle(e).strokeWidth)")
    assert width >= 2.5
    # moving the pointer away clears every highlight
    page.mouse.move(1, 1)
    assert page.locator(".tv-hl, .tv-hl-edge, .tv-hl-neighbour, .tv-hl-line").count() == 0


def test_tab_reaches_node_links_with_visible_focus_and_highlight(open_page: Any) -> None:
    page = open_page(GRAPH_PAGE)
    page.locator("figure.tv-graph details.tv-reveal > summary").focus()
    page.keyboard.press("Enter")
    info = None
    for _ in range(40):
        page.keyboard.press("Tab")
        info = page.evaluate("""() => {
            const a = document.activeElement;
            const g = a && a.closest && a.closest('g.tv-node');
            if (!g || a.tagName.toLowerCase() !== 'a') return null;
            const shape = g.querySelector('.tv-shape');
            const cs = getComputedStyle(a);
            return {node: g.dataset.node, cls: g.getAttribute('class'),
                    focusVisible: a.matches(':focus-visible'),
                    outline: cs.outlineStyle + ' ' + parseFloat(cs.outlineWidth),
                    stroke: parseFloat(getComputedStyle(shape).strokeWidth)};
        }""")
        if info:
            break
    assert info, "Tab never reached a node link in the graph"
    assert info["focusVisible"]
    assert info["outline"].split()[0] != "none" and float(info["outline"].split()[1]) >= 2
    assert info["stroke"] >= 4
    assert "tv-hl" in info["cls"].split()
    assert page.locator(".tv-line.tv-hl-line").count() >= 1
    # Shift+Tab back out of the node: its highlight goes with the focus
    page.locator("figure.tv-graph details.tv-reveal > summary").focus()
    assert page.locator("g.tv-node.tv-hl").count() == 0


def test_zoom_buttons_and_ctrl_wheel_change_the_viewbox(open_page: Any) -> None:
    page = open_page(GRAPH_PAGE)
    _open_reveal(page)
    svg = page.locator("figure.tv-graph svg.tv-graph")
    home = [float(v) for v in svg.get_attribute("viewBox").split()]
    buttons = page.eval_on_selector_all("figure.tv-graph .tv-zoom button",
                                        "bs => bs.map(b => [b.tagName, b.type, b.getAttribute('aria-label')])")
    assert [b[2] for b in buttons][:3] == ["Zoom in", "Zoom out", "Reset zoom"]
    # Fit / full width (shown only when the graph is wider than its column)
    assert [b[2] for b in buttons][3:] == ["Fit the graph to the column", "Use the full window width"]
    assert all(tag == "BUTTON" and kind == "button" for tag, kind, _ in buttons)
    # the toolbar sits above the svg
    assert page.evaluate("""() => {
        const bar = document.querySelector('figure.tv-graph .tv-zoom');
        const svg = document.querySelector('figure.tv-graph svg.tv-graph');
        return !!(bar.compareDocumentPosition(svg) & Node.DOCUMENT_POSITION_FOLLOWING);
    }""")
    page.click("figure.tv-graph .tv-zoom-in")
    zoomed = [float(v) for v in svg.get_attribute("viewBox").split()]
    assert zoomed[2] < home[2] and zoomed[3] < home[3]
    assert zoomed[2] / zoomed[3] == pytest.approx(home[2] / home[3], rel=1e-3)
    page.click("figure.tv-graph .tv-zoom-out")
    page.click("figure.tv-graph .tv-zoom-reset")
    assert [float(v) for v in svg.get_attribute("viewBox").split()] == pytest.approx(home)
    # Ctrl+wheel zooms around the pointer; the wheel alone scrolls the page and leaves the graph be
    svg.evaluate("s => s.scrollIntoView({block: 'center'})")
    box = svg.bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, 450)
    page.keyboard.down("Control")
    page.mouse.wheel(0, -200)
    page.keyboard.up("Control")
    page.wait_for_function(f"() => parseFloat(document.querySelector('figure.tv-graph svg.tv-graph')"
                           f".getAttribute('viewBox').split(' ')[2]) < {home[2]}", timeout=2000)
    page.click("figure.tv-graph .tv-zoom-reset")
    page.mouse.move(box["x"] + box["width"] / 2, 450)
    page.mouse.wheel(0, 200)
    page.wait_for_timeout(200)
    assert [float(v) for v in svg.get_attribute("viewBox").split()] == pytest.approx(home)


def test_a_question_with_choices_is_shown_once_and_names_the_radio_group(open_page: Any) -> None:
    """The prompt box shows the question; the radio group's legend names the group for a screen
    reader without printing the question a second time."""
    page = open_page("softmax-scaling.html")
    question = "As the divisor grows from 1 to 16, what happens to each query's weights over the eight keys?"
    figure = page.locator("figure.tv-figure", has=page.locator("form.tv-choices"))
    assert figure.count() == 1 and figure.locator("form.tv-choices").is_visible()  # the script ran
    shown = figure.evaluate("""(f, q) => [...f.querySelectorAll('*')].filter(e =>
        [...e.childNodes].some(n => n.nodeType === 3 && n.textContent.includes(q))
        && e.checkVisibility() && e.getBoundingClientRect().width > 1).length""", question)
    assert shown == 1
    assert figure.get_by_role("group", name=question).count() == 1  # the fieldset's accessible name
    assert figure.get_by_role("radio").count() == 3


@pytest.mark.parametrize("width", [360, 1280])
def test_without_javascript_a_sweeps_heatmaps_keep_their_size_side_by_side_without_overlap(
        open_page: Any, width: int) -> None:
    """The small multiples of a swept heatmap (no script) are drawn at their natural size, so their
    text stays 12 px: side by side, each takes the room it needs, never over another, and the
    strip scrolls in the figure's region."""
    page = open_page("kv-cache.html", viewport={"width": width, "height": 800}, java_script_enabled=False)
    page.evaluate("document.querySelectorAll('details.tv-reveal').forEach(d => { d.open = true; })")
    boxes = page.evaluate("""() => [...document.querySelectorAll('.tv-sweep-point svg')].map(s => {
        const r = s.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom,
                                                     r.width / s.viewBox.baseVal.width]; })""")
    assert len(boxes) == 4 and all(scale == pytest.approx(1, abs=0.01) for *_, scale in boxes)
    for k, a in enumerate(boxes):
        for b in boxes[k + 1:]:
            overlap = min(a[2], b[2]) - max(a[0], b[0]) > 1 and min(a[3], b[3]) - max(a[1], b[1]) > 1
            assert not overlap, (a, b)
    assert len({top for _, top, *_ in boxes}) == 1  # one row
    assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")


#: for each catalogue thumbnail: its file and the part of the picture the reader sees, in picture units
_THUMBNAILS = """() => [...document.querySelectorAll('img.tv-thumbnail')].map(img => {
    const box = img.getBoundingClientRect(), fit = getComputedStyle(img).objectFit;
    const scale = (fit === 'cover' ? Math.max : Math.min)(box.width / img.naturalWidth, box.height / img.naturalHeight);
    return {src: img.getAttribute('src'), width: img.naturalWidth, height: img.naturalHeight, scale: scale,
            seenWidth: Math.min(img.naturalWidth, box.width / scale),
            seenHeight: Math.min(img.naturalHeight, box.height / scale)}; })"""


def test_catalogue_thumbnails_show_whole_heatmaps_and_more_of_a_graph_than_its_input(open_page: Any,
                                                                                     site: Path) -> None:
    """A heatmap preview keeps its row labels (nothing cut off); a graph preview shows boxes of the
    graph, not only its legend and input, at a size where they can be told apart (the preview of a
    tall graph is its top part)."""
    page = open_page("index.html")
    thumbnails = page.evaluate(_THUMBNAILS)
    assert len(thumbnails) >= 8
    graphs = 0
    for thumb in thumbnails:
        picture = page.context.new_page()
        picture.goto((site / thumb["src"]).as_uri())
        kind = picture.evaluate("document.documentElement.getAttribute('class')")
        if kind == "tv-svg-heatmap":
            assert thumb["seenWidth"] == pytest.approx(thumb["width"], abs=1), thumb  # row labels included
            assert thumb["seenHeight"] == pytest.approx(thumb["height"], abs=1), thumb
        elif kind == "tv-graph":
            graphs += 1
            scale = thumb["height"] / picture.evaluate("document.documentElement.viewBox.baseVal.height")
            seen = picture.evaluate("""bottom => [...document.querySelectorAll('g.tv-node')]
                .filter(n => n.getBoundingClientRect().bottom <= bottom).length""", thumb["seenHeight"] / scale)
            assert seen >= 3, f"{thumb['src']}: {seen} boxes of the graph in its thumbnail"
            assert thumb["scale"] >= 0.15, thumb  # drawn big enough to tell the boxes apart, not a sliver
        picture.close()
    assert graphs >= 4


@pytest.fixture(scope="module")
def snapshot_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The snapshot root (a tiny graph with a tour and checkpoints, a heatmap), from its committed artifacts."""
    tmp = tmp_path_factory.mktemp("tv-snapshot")
    return build_lessons(copy_root("snapshot", tmp / "src", with_store=True), tmp / "html")


@pytest.mark.parametrize("viewport", [{"width": 360, "height": 800}, {"width": 1280, "height": 900}])
def test_a_short_graph_shows_no_minimap_box_beside_its_zoom_buttons(browser: Any, snapshot_site: Path,
                                                                    viewport: dict[str, int]) -> None:
    """Only a graph taller than the window gets a minimap; on a short one the (SVG) minimap takes no
    room at all (an SVG element has no ``hidden`` property: it stayed a 300x150 bordered box)."""
    with page_opener(browser, snapshot_site, viewport) as open_page:
        page = open_page("lesson.html")
        page.evaluate("document.querySelectorAll('details').forEach(d => { d.open = true; })")
        found = page.evaluate("""() => { const f = document.querySelector('figure.tv-graph');
            const map = f.querySelector('.tv-zoom .tv-minimap'), r = map && map.getBoundingClientRect();
            return {height: +f.querySelector('svg.tv-graph').getAttribute('height'), map: !!map,
                    display: map && getComputedStyle(map).display, size: r && [r.width, r.height]}; }""")
        assert found["map"] and found["height"] < viewport["height"]  # the script ran; the graph is short
        assert found["display"] == "none" and found["size"] == [0, 0], found
        page.click("figure.tv-graph .tv-zoom-in")  # redrawn on zoom: still not shown
        assert page.locator("figure.tv-graph .tv-minimap").bounding_box() is None


# ------------------------------------------------------------------------------------- guided tour


def test_tour_opens_at_its_opening_step(open_page: Any, site: Path) -> None:
    tour = _tour(site)
    page = open_page(GRAPH_PAGE)
    k = _step_index(tour, tour["opening"])
    assert _current(page, tour) == [f'{tour["id"]}-{tour["steps"][k]["data-step"]}']
    assert _visible_steps(page, tour) == _current(page, tour)
    status = page.locator(f'#{tour["id"]} [aria-live="polite"]')
    assert f"Step {k + 1} of {len(tour['steps'])}" in status.inner_text()
    prev, nxt = page.locator(f'#{tour["id"]} button.tv-step-prev'), page.locator(f'#{tour["id"]} button.tv-step-next')
    assert prev.count() == 1 and nxt.count() == 1


def test_tour_next_moves_then_highlights_and_updates_the_url(open_page: Any, site: Path) -> None:
    tour = _tour(site)
    page = open_page(GRAPH_PAGE)
    k = _step_index(tour, tour["opening"])
    if k == len(tour["steps"]) - 1:
        page.click(f'#{tour["id"]} button.tv-step-prev')
        k -= 1
    page.click(f'#{tour["id"]} button.tv-step-next')
    step = tour["steps"][k + 1]
    assert _current(page, tour) == [step["id"]]
    assert _visible_steps(page, tour) == [step["id"]]
    assert f"Step {k + 2} of {len(tour['steps'])}" in page.locator(f'#{tour["id"]} [aria-live="polite"]').inner_text()
    _target_has_class(page, tour, step)
    assert page.locator(f'#{tour["graph"]} svg.tv-graph .tv-step-target').count() == 1
    assert page.eval_on_selector(f'#{tour["graph"]} details.tv-reveal', "d => d.open")
    assert page.url.endswith("#" + step["id"])


def test_tour_arrow_keys_move_between_steps(open_page: Any, site: Path) -> None:
    tour = _tour(site)
    page = open_page(GRAPH_PAGE, reduced_motion="reduce")
    page.click(f'#{tour["id"]} button.tv-step-prev')  # focus inside the tour
    page.keyboard.press("Home")
    assert _current(page, tour) == [tour["steps"][0]["id"]]
    page.keyboard.press("ArrowRight")
    assert _current(page, tour) == [tour["steps"][1]["id"]]
    _target_has_class(page, tour, tour["steps"][1])
    page.keyboard.press("ArrowLeft")
    assert _current(page, tour) == [tour["steps"][0]["id"]]
    _target_has_class(page, tour, tour["steps"][0])
    page.keyboard.press("ArrowLeft")  # stays on the first step
    assert _current(page, tour) == [tour["steps"][0]["id"]]


def test_tour_reduced_motion_highlights_without_delay(open_page: Any, site: Path) -> None:
    tour = _tour(site)
    page = open_page(GRAPH_PAGE, reduced_motion="reduce")
    page.click(f'#{tour["id"]} button.tv-step-prev')
    page.keyboard.press("End")
    step = tour["steps"][-1]
    # checked in the same task as the key press: no timer in between
    assert page.evaluate(f"""() => !!document.querySelector('#{tour["graph"]} g[data-node="{step["data-visible"]}"].tv-step-target')""")


def test_tour_deep_link_starts_at_that_step(open_page: Any, site: Path) -> None:
    tour = _tour(site)
    k = _step_index(tour, tour["opening"])
    step = tour["steps"][(k + 1) % len(tour["steps"])]
    page = open_page(GRAPH_PAGE, "#" + step["id"])
    assert _current(page, tour) == [step["id"]]
    _target_has_class(page, tour, step)
    # a later hash change moves the tour too
    other = tour["steps"][k]
    page.evaluate(f"location.hash = '#{other['id']}'")
    page.wait_for_function(f"() => document.getElementById('{other['id']}').getAttribute('aria-current') === 'step'")
    assert _current(page, tour) == [other["id"]]


def test_tour_step_link_targets_the_node(open_page: Any, site: Path) -> None:
    """Without the script a step's link still lands on (and :target-highlights) its node."""
    tour = _tour(site)
    page = open_page(GRAPH_PAGE, java_script_enabled=False)
    _open_reveal(page)
    link = page.locator(f'#{tour["steps"][0]["id"]} a.tv-step-link')
    href = link.get_attribute("href")
    link.click()
    assert page.url.endswith(href)
    width = page.evaluate(f"""() => parseFloat(getComputedStyle(
        document.querySelector('{href}:target .tv-shape, {href}:target > rect')).strokeWidth)""")
    assert width >= 4


# -------------------------------------------------------------------------------------- checkpoints


def test_checkpoint_select_switches_the_visible_checkpoint(open_page: Any) -> None:
    page = open_page(GRAPH_PAGE)
    box = page.locator("div.tv-activations").first
    checkpoints = box.locator("div.tv-checkpoint")
    n = checkpoints.count()
    assert n >= 2
    select = box.locator("select")
    assert select.count() == 1
    label_for = box.locator("label").first.get_attribute("for")
    assert label_for == select.get_attribute("id")
    assert select.locator("option").count() == n

    def visible() -> list[bool]:
        return [checkpoints.nth(i).is_visible() for i in range(n)]

    assert visible() == [True] + [False] * (n - 1)
    select.select_option(index=n - 1)
    assert visible() == [False] * (n - 1) + [True]
    select.focus()
    page.keyboard.press("ArrowUp")
    assert visible()[n - 2]


# --------------------------------------------------------------------------------- JavaScript off


def test_without_javascript_all_steps_and_checkpoints_show(open_page: Any, site: Path) -> None:
    tour = _tour(site)
    page = open_page(GRAPH_PAGE, java_script_enabled=False)
    assert len(_visible_steps(page, tour)) == len(tour["steps"])
    assert page.eval_on_selector(f'#{tour["id"]} ol.tv-step-list', "ol => getComputedStyle(ol).listStyleType") == "decimal"
    assert page.eval_on_selector_all(f'#{tour["id"]} li.tv-step', "ls => ls.every(l => getComputedStyle(l).display === 'list-item')")
    assert page.locator(".tv-step-controls, .tv-zoom, .tv-checkpoint-picker, div.tv-activations select").count() == 0
    checkpoints = page.locator("div.tv-activations div.tv-checkpoint")
    assert checkpoints.count() >= 2
    assert all(checkpoints.nth(i).is_visible() for i in range(checkpoints.count()))
    _open_reveal(page)
    assert page.locator("figure.tv-graph svg.tv-graph").is_visible()


# ------------------------------------------------------------------------------------------ phones


@pytest.mark.parametrize("name", [GRAPH_PAGE, OTHER_PAGE, "induction-heads.html"])
def test_phone_width_has_no_horizontal_page_overflow(open_page: Any, name: str) -> None:
    page = open_page(name, viewport={"width": 360, "height": 800})
    page.evaluate("document.querySelectorAll('details').forEach(d => { d.open = true; })")
    widths = page.evaluate("() => [document.documentElement.clientWidth, document.documentElement.scrollWidth]")
    assert widths[1] <= widths[0], f"page is {widths[1]}px wide in a {widths[0]}px viewport"


#: the smallest rendered size (px) of the texts of each figure shown: font size times the SVG's scale
_TEXT_SIZES = """() => [...document.querySelectorAll('.tv-svg svg')].filter(svg => svg.getBoundingClientRect().width).map(svg => {
    const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
    const sizes = [...svg.querySelectorAll('text')].map(t => parseFloat(getComputedStyle(t).fontSize) * scale);
    return {cls: svg.getAttribute('class'), texts: sizes.length, smallest: Math.min(...sizes)}; })"""


@pytest.mark.parametrize("name", ["attention-scores.html", "kv-cache.html", "positions.html", "multi-head.html",
                                  "hf-vit.html", GRAPH_PAGE, "induction-heads.html"])
def test_phone_width_keeps_figure_text_at_12px_and_folds_the_reproduce_hashes(open_page: Any, name: str) -> None:
    """A heatmap wider than a phone keeps its text size and scrolls in its region, as graphs do; the
    reproduce lists (file names with their sha256) are folded until asked for."""
    page = open_page(name, viewport={"width": 360, "height": 800})
    page.evaluate("document.querySelectorAll('details.tv-reveal').forEach(d => { d.open = true; })")
    figures = [f for f in page.evaluate(_TEXT_SIZES) if f["texts"]]
    assert any(f["cls"] == "tv-svg-heatmap" for f in figures)
    small = [f for f in figures if f["smallest"] < 12 - 0.01]
    assert not small, f"text drawn under 12 px at a 360 px viewport: {small}"
    outside = page.evaluate("""() => [...document.querySelectorAll('.tv-svg svg')].filter(svg => {
        const region = svg.closest('.tv-scroll');  // the figure scrolls in its region, not the page
        return !region || region.getBoundingClientRect().right > document.documentElement.clientWidth + 1;
    }).map(svg => svg.getAttribute('aria-labelledby'))""")
    assert not outside, f"figures wider than the page: {outside}"
    wide = page.evaluate("""() => [...document.querySelectorAll('figure.tv-figure *')].filter(e =>
        e.getBoundingClientRect().right > document.documentElement.clientWidth + 1 && !e.closest('.tv-scroll'))
        .map(e => e.tagName + '.' + (e.getAttribute('class') || ''))""")
    assert not wide, f"parts of figures that widen the page: {wide[:5]}"  # tables at a sweep's points too
    hashes = page.locator(".tv-downloads .tv-sha")
    assert hashes.count() >= 1 and not any(hashes.nth(i).is_visible() for i in range(hashes.count()))
    first = page.locator(".tv-downloads > summary").first
    first.scroll_into_view_if_needed()
    first.click()
    assert page.locator(".tv-downloads").first.locator(".tv-sha").first.is_visible()


# ------------------------------------------------------------------------ expand and collapse modules


def test_collapsed_module_expands_and_collapses_in_place(open_page: Any, site: Path) -> None:
    module = "block.attention.query_rope"
    html = _html(site, GRAPH_PAGE)
    assert "<template" not in html and 'class="tv-graph-data"' in html  # data, not pre-drawn views
    page = open_page(GRAPH_PAGE)
    _open_reveal(page)
    graph = "figure.tv-graph svg.tv-graph"
    inside = f'{graph} g.tv-node[data-node^="{module}.mul_"]'
    assert page.locator(inside).count() == 0
    toggle = page.locator(f'{graph} [data-tv-toggle="{module}"]')
    assert toggle.get_attribute("aria-expanded") == "false"
    assert toggle.get_attribute("role") == "button"
    toggle.click()
    # the module's layout loads (once, from its own small file), then its ops are drawn, and the
    # same control says it can collapse again
    page.wait_for_selector(f'{graph} [data-tv-toggle="{module}"][aria-expanded="true"]', state="attached", timeout=5000)
    assert page.locator(inside).count() >= 3
    reopened = page.locator(f'{graph} [data-tv-toggle="{module}"]')
    assert reopened.get_attribute("aria-expanded") == "true"
    assert page.evaluate("document.activeElement.getAttribute('data-tv-toggle')") == module
    # hovering a node of the new view still highlights it (the graph controller was rebuilt)
    page.locator(inside).first.hover()
    assert "tv-hl" in (page.locator(inside).first.get_attribute("class") or "")
    # keyboard: Space on the focused control collapses it
    page.keyboard.press(" ")
    page.wait_for_selector(f'{graph} [data-tv-toggle="{module}"][aria-expanded="false"]', state="attached", timeout=5000)
    assert page.locator(inside).count() == 0
    assert page.locator(f'{graph} [data-tv-toggle="{module}"]').get_attribute("aria-expanded") == "false"
    assert page.locator("figure.tv-graph .tv-zoom").count() == 1


# ---------------------------------------------- a real transformers model: many modules open at once

HF_PAGE = "index.html"
#: two modules in different layers, and one inside the second (LlamaMLP's act_fn)
HF_OPEN = ("llama.model.layers.0.self_attn", "llama.model.layers.1.mlp", "llama.model.layers.1.mlp.act_fn")
GRAPH = "figure.tv-graph svg.tv-graph"

_GEOMETRY = """() => {
  const svg = document.querySelector('figure.tv-graph svg.tv-graph');
  const box = e => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
  const leaves = [...svg.querySelectorAll('g.tv-node')].map(g => [g.dataset.node, box(g.querySelector('rect.tv-shape'))]);
  const clusters = [...svg.querySelectorAll('g.tv-cluster')].map(g => [g.dataset.node, box(g.querySelector('rect'))]);
  const overlaps = [];
  for (let i = 0; i < leaves.length; i++) for (let j = i + 1; j < leaves.length; j++) {
    const a = leaves[i][1], b = leaves[j][1];
    if (a[0] < b[2] - 0.5 && b[0] < a[2] - 0.5 && a[1] < b[3] - 0.5 && b[1] < a[3] - 0.5) overlaps.push([leaves[i][0], leaves[j][0]]);
  }
  const inModule = (id, m) => id.startsWith(m + '.') || id.includes('@' + m + '#');
  const outside = [];
  for (const [m, c] of clusters) for (const [id, a] of leaves)
    if (inModule(id, m) && !(a[0] >= c[0] - 0.5 && a[1] >= c[1] - 0.5 && a[2] <= c[2] + 0.5 && a[3] <= c[3] + 0.5)) outside.push([id, m]);
  const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
  const px = [...svg.querySelectorAll('text')].map(t => parseFloat(getComputedStyle(t).fontSize) * scale);
  return {leaves: leaves.length, overlaps, outside, minText: Math.min(...px),
          scripts: [...document.querySelectorAll('script[src*="_tensorviz/graphs/"]')].length};
}"""


@pytest.fixture(scope="module")
def hf_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The transformers Llama root, executed for real (tiny config, random weights)."""
    pytest.importorskip("transformers")
    tmp = tmp_path_factory.mktemp("tv-hf")
    return build_lessons(copy_root("graph-hf-llama", tmp / "src"), tmp / "html", tensorviz_execution_mode="auto")


def _drawn_boxes(hf_site: Path, expand: tuple[str, ...]) -> int:
    """How many boxes (not open-module frames) the stored graph has at depth 3 with ``expand`` open."""
    from sphinx_tensorviz.features.graph.view import build_view

    store = hf_site.parent / "src" / "tensorviz_artifacts"
    graph = json.loads(next(store.glob("*.json")).read_text("utf-8"))["data"]
    view = build_view(graph, depth=3, expand=expand)
    return sum(1 for node_id in view.visible if not view.is_cluster(node_id))


def _press_on(page: Page, module: str, key: str) -> None:
    """Focus a module's control and press ``key``, then wait for the picture to follow."""
    control = page.locator(f'{GRAPH} [data-tv-toggle="{module}"]')
    was = control.get_attribute("aria-expanded")
    control.focus()
    page.keyboard.press(key)
    want = "false" if was == "true" else "true"
    page.wait_for_selector(f'{GRAPH} [data-tv-toggle="{module}"][aria-expanded="{want}"]', state="attached", timeout=5000)


def test_real_model_opens_three_modules_at_once_readable_by_keyboard_and_axe_clean(
        browser: Any, hf_site: Path) -> None:
    assert "<template" not in (hf_site / HF_PAGE).read_text("utf-8")
    context = offline_context(browser)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto((hf_site / HF_PAGE).as_uri())
    page.wait_for_load_state("load")
    before = page.evaluate(_GEOMETRY)
    assert before["scripts"] == 0  # nothing loads until a module opens
    assert before["minText"] >= 11  # drawn at natural size, not squeezed into the column
    # Tab reaches a module control from the page start
    for _ in range(60):
        page.keyboard.press("Tab")
        if page.evaluate("!!(document.activeElement && document.activeElement.dataset.tvToggle)"):
            break
    assert page.evaluate("document.activeElement.dataset.tvToggle"), "Tab never reached a module control"
    _press_on(page, HF_OPEN[0], "Enter")
    page.locator(f'{GRAPH} [data-tv-toggle="{HF_OPEN[1]}"]').click()
    page.wait_for_selector(f'{GRAPH} [data-tv-toggle="{HF_OPEN[1]}"][aria-expanded="true"]', state="attached")
    _press_on(page, HF_OPEN[2], " ")
    assert page.evaluate("document.activeElement.dataset.tvToggle") == HF_OPEN[2]  # focus stays on the control
    for module in HF_OPEN:
        assert page.locator(f'{GRAPH} g.tv-cluster[data-node="{module}"]').count() == 1
    assert page.locator(f'{GRAPH} g.tv-node[data-node="{HF_OPEN[0]}.q_proj"]').count() == 1
    after = page.evaluate(_GEOMETRY)
    # exactly the boxes the build's own view says (helper functions inside are drawn as collapsed groups)
    assert (before["leaves"], after["leaves"]) == (_drawn_boxes(hf_site, ()), _drawn_boxes(hf_site, HF_OPEN))
    assert after["leaves"] > before["leaves"] + 10
    assert after["overlaps"] == [] and after["outside"] == []
    assert after["minText"] >= 11
    assert after["scripts"] == 1 + len(HF_OPEN)  # the index and one small file per opened module
    # the graph scrolls inside its region; the page itself does not get wider
    widths = page.evaluate("""() => { const r = document.querySelector('figure.tv-graph .tv-scroll');
        return [r.scrollWidth, r.clientWidth, document.documentElement.scrollWidth, document.documentElement.clientWidth]; }""")
    assert widths[2] <= widths[3]
    page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
    assert axe_serious(page) == []
    # close one, then a module the build drew open: the others stay open
    _press_on(page, HF_OPEN[0], "Enter")
    assert page.locator(f'{GRAPH} g.tv-node[data-node="{HF_OPEN[0]}.q_proj"]').count() == 0
    _press_on(page, "llama.model.layers.0", "Enter")
    assert page.locator(f'{GRAPH} g.tv-cluster[data-node="{HF_OPEN[2]}"]').count() == 1
    closed = page.evaluate(_GEOMETRY)
    assert closed["overlaps"] == [] and closed["outside"] == []
    assert page.locator(f'{GRAPH} g.tv-node[data-node="llama.model.layers.0"]').count() == 1
    context.close()
    assert not errors, f"JavaScript errors: {errors}"


def test_big_graph_scrolls_fits_goes_full_width_and_has_a_minimap(browser: Any, hf_site: Path) -> None:
    context = offline_context(browser, viewport={"width": 1024, "height": 700})
    page = context.new_page()
    page.goto((hf_site / HF_PAGE).as_uri())
    page.wait_for_load_state("load")
    sizes = """() => { const s = document.querySelector('figure.tv-graph svg.tv-graph');
        const r = document.querySelector('figure.tv-graph .tv-scroll');
        return {svg: s.getBoundingClientRect().width, natural: +s.getAttribute('width'), region: r.clientWidth,
                scroll: r.scrollWidth, page: document.documentElement.scrollWidth,
                viewport: document.documentElement.clientWidth}; }"""
    start = page.evaluate(sizes)
    assert start["svg"] == pytest.approx(start["natural"], abs=1)  # natural size: text stays readable
    assert start["scroll"] > start["region"] and start["page"] <= start["viewport"]  # it scrolls in its region
    # a graph taller than the window has a minimap; a click on it scrolls the page there
    minimap = page.locator("figure.tv-graph .tv-minimap")
    assert minimap.is_visible() and minimap.get_attribute("aria-hidden") == "true"
    assert page.locator("figure.tv-graph .tv-minimap rect.tv-mini-node").count() >= 20
    box = minimap.bounding_box()
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] * 0.9)
    assert page.evaluate("window.scrollY") > 500
    page.evaluate("window.scrollTo(0, 0)")
    fit = page.locator("figure.tv-graph .tv-zoom-fit")
    fit.click()
    assert fit.get_attribute("aria-pressed") == "true"
    fitted = page.evaluate(sizes)
    assert fitted["svg"] <= fitted["region"] + 1 and fitted["scroll"] <= fitted["region"] + 1
    fit.click()
    full = page.locator("figure.tv-graph .tv-zoom-full")
    full.click()
    assert full.get_attribute("aria-pressed") == "true"
    wide = page.evaluate(sizes)
    assert wide["region"] > start["region"] and wide["page"] <= wide["viewport"]
    context.close()


def test_tour_targets_take_an_id_or_the_label_as_drawn(hf_site: Path) -> None:
    html = (hf_site / HF_PAGE).read_text("utf-8")
    steps = dict(re.findall(r'data-step="([^"]+)" data-target="([^"]+)"', html))
    assert steps == {"by-id": "llama.model.layers.0.self_attn", "by-label": "llama.model.embed_tokens",
                     "by-op-label": "llama.model.arange_0"}
    ids = set(re.findall(r' id="([^"]+)"', html))
    targets = re.findall(r'<a class="tv-step-link[^"]*" href="#([^"]+)"', html)
    assert len(targets) == 3 and all(t in ids for t in targets)  # each step links to a drawn element


def test_without_javascript_a_big_graph_keeps_its_size_and_scrolls(browser: Any, hf_site: Path) -> None:
    context = offline_context(browser, java_script_enabled=False, viewport={"width": 1024, "height": 700})
    page = context.new_page()
    page.goto((hf_site / HF_PAGE).as_uri())
    page.wait_for_load_state("load")
    found = page.evaluate("""() => { const s = document.querySelector('figure.tv-graph svg.tv-graph');
        const r = s.closest('.tv-scroll');
        const scale = s.getBoundingClientRect().width / s.viewBox.baseVal.width;
        const px = [...s.querySelectorAll('text')].map(t => parseFloat(getComputedStyle(t).fontSize) * scale);
        return {minText: Math.min(...px), scrolls: r.scrollWidth > r.clientWidth, focusable: r.tabIndex === 0,
                page: document.documentElement.scrollWidth <= document.documentElement.clientWidth}; }""")
    context.close()
    assert found["scrolls"] and found["focusable"] and found["page"]  # scrolls in its own region
    assert found["minText"] >= 11


def test_hovering_a_library_node_highlights_its_line_in_the_library_panel(browser: Any, hf_site: Path) -> None:
    """Panels of several files number their lines alike: the highlight follows the node's file."""
    context = offline_context(browser)
    page = context.new_page()
    page.goto((hf_site / HF_PAGE).as_uri())
    page.wait_for_load_state("load")
    node = page.locator(f'{GRAPH} g.tv-node[data-source-file="transformers/models/llama/modeling_llama.py"]').first
    line = node.get_attribute("data-source-lines").split("-")[0]
    node.hover()
    lit = page.evaluate("""() => [...document.querySelectorAll('.tv-line.tv-hl-line')].map(
        s => [s.closest('[data-file]').getAttribute('data-file'), s.dataset.line])""")
    assert ["transformers/models/llama/modeling_llama.py", line] in lit
    assert all(file == "transformers/models/llama/modeling_llama.py" for file, _ in lit)
    context.close()
