"""The search index holds a figure's words (its title, description, outline and tables) but not its
markup: the inline SVG repeats them per cell and per box, and the source panels hold whole files.
A real HTML build of the snapshot root, whose committed artifacts mean nothing executes."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import copy_root, run_sphinx

pytestmark = pytest.mark.sphinx


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    src = copy_root("snapshot", tmp_path_factory.mktemp("search") / "src", with_store=True)
    build = run_sphinx(src)
    assert build.statuscode == 0 and build.summary == (0, 2, 0)
    return build.outdir


def terms(outdir: Path) -> set[str]:
    text = (outdir / "searchindex.js").read_text("utf-8")
    index = json.loads(re.fullmatch(r"Search\.setIndex\((.*)\)\s*", text, re.S).group(1))
    return set(index["terms"])


def test_the_model_source_and_the_pictures_are_not_indexed(built: Path) -> None:
    page = (built / "lesson.html").read_text("utf-8")
    assert "super().__init__()" in page and 'class="tv-source' in page  # the model file's panel is on the page
    tooltips = re.findall(r"<title>([^<]*)</title>", page)
    assert any("dtype=float32" in title for title in tooltips)  # the boxes' tooltips name their dtype
    words = terms(built)
    assert "super" not in words  # the panel's code is not in the index
    assert "dtype" not in words  # nor the words that only the picture's tooltips carry


def test_the_data_tables_and_download_lists_are_not_indexed(built: Path) -> None:
    page = (built / "index.html").read_text("utf-8")
    assert ">c0<" in page and ">c1<" in page  # the heatmap's column labels, in its data table
    sha = re.search(r'<span class="pre">([0-9a-f]{64})</span>', page).group(1)  # a download's sha256
    words = terms(built)
    assert "c0" not in words and "c1" not in words  # (c2 is named in the long description)
    assert sha not in words


def test_the_figures_words_are_indexed(built: Path) -> None:
    words = terms(built)  # stemmed, as Sphinx indexes them
    assert {"darker", "brighter", "magnitud"} <= words  # the heatmap's long description
    assert {"outer", "product"} <= words  # its title
    assert {"forward", "branch"} <= words  # the graph's note on the recorded branch
    assert {"relu", "linear"} <= words  # the graph's outline


def test_the_provenance_footer_is_shown_but_not_indexed(built: Path) -> None:
    """The same device, versions and hash prefix under every figure would make every page match
    "cpu" or "numpy"; the footer stays on the page."""
    page = (built / "index.html").read_text("utf-8")
    footer = re.search(r'<p class="tv-provenance[^"]*">([^<]*)</p>', page).group(1)
    assert "Recorded computation on CPU" in footer
    short_hash = re.search(r"content hash ([0-9a-f]{12})", footer).group(1)
    words = terms(built)
    assert short_hash not in words and "recorded" not in words and "cpu" not in words


def test_words_are_stemmed_by_the_c_stemmer_with_the_same_stems() -> None:
    """PyStemmer (a dependency) makes Sphinx's stemming fast; its stems are the pure-Python ones."""
    import snowballstemmer
    from snowballstemmer.english_stemmer import EnglishStemmer

    fast = snowballstemmer.stemmer("english")
    assert type(fast).__module__.startswith("Stemmer")  # the C extension, not the pure-Python fallback
    words = ["attention", "normalised", "running", "heads", "layers", "activations", "generously", "keys"]
    assert [fast.stemWord(w) for w in words] == [EnglishStemmer().stemWord(w) for w in words]
