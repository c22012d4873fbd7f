"""Every example in ``docs/`` builds as it is written: a reader pastes it, so a test does too.

The MyST examples (the ````` ````md ````` fences around a ``{tv-...}`` directive, nested tours
included) of each manual page become one page of a project whose ``conf.py`` is the tutorial's,
as written; the model files they name are the ones the manual shows (``docs/examples/``, or a
code block that names its file), the course's, or small ones written here. The project also holds
a virtual environment (``.venv``) with Markdown files, as an author's course folder may: the
tutorial's ``exclude_patterns`` must keep the build from reading it. The build executes every
figure for real and must be free of warnings. The ``conf.py`` snippets of the how-to guides load
as written, each after the tutorial's.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from sphinx.application import Sphinx
from sphinx.util.console import strip_escape_sequences
from sphinx.util.docutils import docutils_namespace, patch_docutils

from conftest import SUMMARY

HERE = Path(__file__).resolve().parent
DOCS = HERE.parent / "docs"
LESSONS = HERE.parent / "lessons"
ROOTS = HERE / "roots"
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})(.*)$")
#: a ``python`` block that is (part of) a conf.py: it sets one of these names
CONF_NAMES = re.compile(r"^\s*(extensions|exclude_patterns|tensorviz_\w+)\s*=", re.M)


@dataclass(frozen=True)
class Block:
    page: Path
    line: int
    info: str
    body: str

    def __str__(self) -> str:
        return f"{self.page.relative_to(DOCS)}:{self.line}"


def fenced_blocks(page: Path) -> list[Block]:
    """The top-level fenced blocks of a MyST page (indented ones in lists too), bodies dedented."""
    lines = page.read_text("utf-8").splitlines()
    found, number = [], 0
    while number < len(lines):
        match = FENCE.match(lines[number])
        if match is None:
            number += 1
            continue
        indent, mark, info = match.groups()
        end = number + 1
        while end < len(lines) and lines[end].strip() != mark:
            end += 1
        body = "\n".join(line[len(indent):] for line in lines[number + 1:end])
        found.append(Block(page, number + 1, info.strip(), body))
        number = end + 1
    return found


def doc_pages() -> list[Path]:
    return sorted(p for p in DOCS.rglob("*.md") if "_build" not in p.parts)


def md_examples() -> dict[Path, list[Block]]:
    """Per manual page, its ``md`` examples that hold a tensorviz directive."""
    found: dict[Path, list[Block]] = {}
    for page in doc_pages():
        blocks = [b for b in fenced_blocks(page) if b.info == "md" and "{tv-" in b.body]
        if blocks:
            found[page] = blocks
    return found


def code_block(named: str) -> str:
    """The manual's python block for ``named``: the one whose first line is ``# named``, or the one
    defining the class or function an example's ``:model:`` names (``models/block.py:Block``)."""
    path, _, symbol = named.partition(":")
    blocks = [b for page in doc_pages() for b in fenced_blocks(page) if b.info == "python"]
    for block in blocks:
        if block.body.splitlines()[0].strip() == f"# {path}":
            return block.body + "\n"
    for block in blocks:
        if symbol and re.search(rf"^(class|def) {symbol}\b", block.body, re.M):
            return block.body + "\n"
    raise AssertionError(f"the manual shows no code for {named}")


def conf_snippets() -> list[Block]:
    return [b for page in doc_pages() for b in fenced_blocks(page)
            if b.info == "python" and CONF_NAMES.search(b.body)]


def tutorial_conf() -> str:
    (conf,) = [b for b in conf_snippets() if b.page.name == "tutorial.md"]
    return conf.body + "\n"


# -- the files the examples name ------------------------------------------------------------------

SCORES = '''import numpy as np


def scores(scale: float = 1.0) -> np.ndarray:
    """Softmax of three tokens' scaled dot products."""
    x = np.array([[1.0, 0.0], [0.5, 0.5], [0.0, 1.0]])
    logits = scale * x @ x.T
    weights = np.exp(logits - logits.max(axis=1, keepdims=True))
    return weights / weights.sum(axis=1, keepdims=True)


def rows_sum_to_one(values):
    return bool(np.allclose(values.sum(axis=1), 1.0))
'''

SOFTMAX = '''import numpy as np


def weights(temperature: float = 1.0) -> np.ndarray:
    """Softmax rows of fixed scores at a temperature."""
    scores = np.array([[2.0, 0.5, -1.0], [0.0, 1.5, 0.3], [1.0, 1.0, -0.5]])
    z = np.exp((scores - scores.max(axis=1, keepdims=True)) / temperature)
    return z / z.sum(axis=1, keepdims=True)


def rows_sum_to_one(values):
    return bool(np.allclose(values.sum(axis=1), 1.0))

'''

LLAMA_CLAIMS = '''import torch


@torch.no_grad()
def check_causal(model):
    """Changing the last token leaves the logits of the earlier positions unchanged."""
    ids = torch.arange(6).unsqueeze(0)
    changed = ids.clone()
    changed[0, -1] = (ids[0, -1] + 1) % model.config.vocab_size
    diff = (model(ids).logits[:, :-1] - model(changed).logits[:, :-1]).abs().max().item()
    return {"passed": diff < 1e-5, "value": diff, "tolerance": 1e-5}
'''


def model_files() -> dict[str, str]:
    """Relative path -> text of every file the examples name."""
    sweep_check = next(b.body for b in fenced_blocks(DOCS / "howto" / "sweeps-and-choices.md")
                       if b.info == "python" and "def entropy_rises" in b.body)
    return {
        "examples/attention.py": (DOCS / "examples" / "attention.py").read_text("utf-8"),
        "models/scores.py": SCORES,
        "models/softmax.py": SOFTMAX + sweep_check + "\n",  # the manual's cross-sweep check, as written
        "models/tiny_llama.py": (LESSONS / "models" / "tiny_llama.py").read_text("utf-8"),
        "models/hf_factories.py": code_block("models/hf_factories.py"),
        "models/block.py": code_block("models/block.py:Block"),
        "models/heads.py": code_block("models/heads.py"),  # the attention how-to's model and vocabulary
        "models/vocab.py": code_block("models/vocab.py"),
        "claims/llama_claims.py": LLAMA_CLAIMS,
        "models/regression.py": code_block("models/regression.py"),
        "models/eqx_regression.py": code_block("models/eqx_regression.py"),
        "models/regression_checks.py": code_block("models/regression_checks.py"),
        "models/nnx_lm.py": code_block("models/nnx_lm.py"),  # the lens and patching how-tos' NNX model
        "models/mlp_torch.py": code_block("models/mlp_torch.py"),  # the frameworks how-to's pair
        "models/mlp_nnx.py": code_block("models/mlp_nnx.py"),
        # the course's induction-heads model (trained by COURSE_TRAININGS) and its patching claims
        "models/induction.py": (LESSONS / "models" / "induction.py").read_text("utf-8"),
        "models/induction_patching.py": (LESSONS / "models" / "induction_patching.py").read_text("utf-8"),
        # a model that names its pieces (blocks in a plain list, a tied unembedding), and the frameworks
        # how-to's language model in PyTorch and Flax NNX with the same attribute names: the test roots'
        "models/named.py": (ROOTS / "test-lens" / "models" / "named.py").read_text("utf-8"),
        "models/lm_torch.py": (ROOTS / "test-frameworks-lm" / "models" / "lm_torch.py").read_text("utf-8"),
        "models/lm_nnx.py": (ROOTS / "test-frameworks-lm" / "models" / "lm_nnx.py").read_text("utf-8"),
    }


def course_trainings() -> str:
    """A page of the course's ``tv-train`` runs that the examples name (``:model: @induction``), as the
    course writes them: the run is trained for real, so the examples' checks read trained weights."""
    blocks = [b.body for b in fenced_blocks(LESSONS / "induction-heads.md") if b.info == "{tv-train}"]
    assert blocks, "the course has no induction training"
    return "# The course's trainings\n\n" + "\n\n".join(f"```{{tv-train}}\n{body}\n```" for body in blocks) + "\n"


def examples_project(srcdir: Path, examples: dict[Path, list[Block]]) -> Path:
    """A course of the tutorial's conf.py, the files the examples name, and one page per manual page
    holding that page's examples as written."""
    srcdir.mkdir()
    (srcdir / "conf.py").write_text(tutorial_conf() + "tensorviz_timeout = 300\n", "utf-8")
    for name, text in model_files().items():
        (srcdir / name).parent.mkdir(parents=True, exist_ok=True)
        (srcdir / name).write_text(text, "utf-8")
    pages = []
    for page, blocks in examples.items():
        name = page.relative_to(DOCS).with_suffix("").as_posix().replace("/", "-")
        text = f"# Examples of {page.relative_to(DOCS)}\n\n" + "\n\n".join(
            f"<!-- {block} -->\n\n{block.body}" for block in blocks)
        (srcdir / f"{name}.md").write_text(text + "\n", "utf-8")
        pages.append(name)
    if any(":model: @induction" in block.body for blocks in examples.values() for block in blocks):
        (srcdir / "course-trainings.md").write_text(course_trainings(), "utf-8")
        pages.append("course-trainings")
    (srcdir / "index.md").write_text("# Every example\n\n```{toctree}\n" + "\n".join(pages) + "\n```\n", "utf-8")
    return srcdir


def build(srcdir: Path, out: Path, **kwargs: Any) -> dict[str, Any]:
    status, warnings = io.StringIO(), io.StringIO()
    with patch_docutils(srcdir), docutils_namespace():
        app = Sphinx(srcdir, srcdir, out / "html", out / "doctrees", kwargs.pop("builder", "html"),
                     status=status, warning=warnings, freshenv=True, **kwargs)
        app.build()
    return {"app": app, "status": strip_escape_sequences(status.getvalue()),
            "warnings": strip_escape_sequences(warnings.getvalue())}


def add_virtual_environment(srcdir: Path) -> None:
    """What ``python -m venv .venv`` and an install leave in an author's course folder."""
    venv = srcdir / ".venv"
    (venv / "pyvenv.cfg").parent.mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n", "utf-8")
    package = venv / "lib" / "python3.11" / "site-packages" / "somepackage"
    package.mkdir(parents=True)
    (package / "README.md").write_text("# A package's readme\n\n[broken](nowhere.md)\n", "utf-8")
    (package / "LICENSE.md").write_text("# License\n", "utf-8")


def test_the_examples_are_found() -> None:
    """The extraction itself: each page with examples, and the nested tour."""
    found = md_examples()
    names = {page.relative_to(DOCS).as_posix() for page in found}
    assert {"tutorial.md", "reference/directives.md", "howto/sweeps-and-choices.md",
            "howto/library-models.md", "howto/jax-libraries.md"} <= names
    assert any("{tv-step}" in b.body for b in found[DOCS / "reference" / "directives.md"])
    assert len(conf_snippets()) >= 4


@pytest.mark.sphinx
def test_every_myst_example_builds_as_written(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    pytest.importorskip("flax")
    srcdir = examples_project(tmp_path / "course", md_examples())
    add_virtual_environment(srcdir)

    built = build(srcdir, tmp_path / "out")
    assert built["warnings"] == "", built["warnings"]
    assert not any(doc.startswith(".venv") for doc in built["app"].env.found_docs), "the .venv was read"
    executed, cached, failed = (int(n) for n in SUMMARY.findall(built["status"])[-1])
    assert failed == 0 and executed >= 8 and cached == 0, built["status"]


def conf_pages() -> dict[str, list[Block]]:
    """The conf.py snippets of each how-to page, in page order (the tutorial's is the base of all)."""
    pages: dict[str, list[Block]] = {}
    for block in conf_snippets():
        if block.page.name != "tutorial.md":
            pages.setdefault(block.page.relative_to(DOCS).as_posix(), []).append(block)
    return pages


@pytest.mark.sphinx
@pytest.mark.parametrize("page", sorted(conf_pages()))
def test_every_conf_snippet_loads_after_the_tutorials(page: str, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A page's snippets, in order after the tutorial's conf.py, set values the extension accepts (no
    ``tensorviz.config`` warning). The shared store they name comes from ``TENSORVIZ_STORE`` as
    they read it (an in-memory fsspec store here), with the signing key in the environment."""
    monkeypatch.delenv("READTHEDOCS", raising=False)
    monkeypatch.setenv("TENSORVIZ_STORE", "memory://course-artifacts/llm-course")
    monkeypatch.setenv("TENSORVIZ_SIGNING_KEY", "a shared secret")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    srcdir = tmp_path / "course"
    srcdir.mkdir()
    conf = tutorial_conf() + "".join(block.body + "\n" for block in conf_pages()[page])
    if "tensorviz_execution_mode" not in conf:
        conf += 'tensorviz_execution_mode = "off"\n'
    (srcdir / "conf.py").write_text(conf, "utf-8")
    (srcdir / "index.md").write_text("# A course\n", "utf-8")
    built = build(srcdir, tmp_path / "out", builder="dummy")
    assert built["warnings"] == "", built["warnings"]


@pytest.mark.sphinx
@pytest.mark.execution
def test_the_training_how_to_builds_as_written(tmp_path: Path) -> None:
    """``howto/train.md`` alone (the whole manual's examples take minutes): its two runs train, the graph
    of the trained regression (``:model: @regression``) checks the loaded weights, -W clean, and the
    reference's ``tv-train`` example is the how-to's first."""
    pytest.importorskip("torch")
    pytest.importorskip("equinox")
    page = DOCS / "howto" / "train.md"
    srcdir = examples_project(tmp_path / "course", {page: md_examples()[page]})
    built = build(srcdir, tmp_path / "out")
    assert built["warnings"] == "", built["warnings"]
    assert SUMMARY.findall(built["status"])[-1] == ("3", "0", "0"), built["status"]  # two runs, one graph of @regression
    html = (tmp_path / "out" / "html" / "howto-train.html").read_text("utf-8")
    assert html.count('class="tv-svg-train"') == 2 and "passed: </strong>The loss falls below 0.1" in html
    assert "passed: </strong>The traced model is the trained one" in html  # the weights were loaded
    said = re.search(r'\("(loss falls from [^"]*)"\)', " ".join(page.read_text("utf-8").split())).group(1)
    assert said in html  # the how-to quotes the alt text it gets
    reference = next(b.body for b in md_examples()[DOCS / "reference" / "directives.md"] if "{tv-train}" in b.body)
    assert set(reference.splitlines()) <= set(md_examples()[page][0].body.splitlines())
