"""What each figure kind tells the renderer: registered by the features, looked up by the page.

The common renderer (:mod:`.transform`) knows how to lay any figure out for any builder, show a
missing or failed one, and wrap a sweep; what a kind's picture and words are comes from the
feature that owns the kind, which registers it here in its ``setup_*`` (so ``render/`` never
imports a feature):

* an *executed* kind (``tv-heatmap``, ``tv-graph``): its :class:`~..core.kinds.FigureKind`, which
  draws one artifact, and maybe a whole sweep on one scale (otherwise each point of a sweep is drawn
  as its own figure), added with its directive by :func:`add_figure_kind`;
* an *authored* kind (``tv-diagram``): draws what the page itself gives, nothing executed;
* a *page pass*: work on the page's other nodes before figures are drawn (tours, activations,
  lesson headers), in order;
* a *figure detail*: something added under every executed HTML figure (downloads).

There is one registry per Sphinx application (a :class:`~..core.per_app.PerApp` slot, not an
attribute of the application), so two applications in one process (tests, the CLI) never share it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from docutils import nodes

from ..config import add_config_values
from ..core.kinds import FigureKind, declare
from ..core.per_app import PerApp

if TYPE_CHECKING:  # the page imports this module; the parts are drawn only when pages are written
    from .page import Page, RenderContext
    from .parts import FigureParts

#: (artifact, render options, renderer hash, context) -> the figure's parts
PartsMaker = Callable[[dict[str, Any], dict[str, Any], str, "RenderContext"], "FigureParts"]
#: (sweep, the points' artifacts, the cross-sweep check's artifact or None, why it is missing, context)
SweepMaker = Callable[..., "SweepRendering"]
#: (the figure node, context) -> the figure of an authored kind
AuthoredMaker = Callable[[nodes.Element, "RenderContext"], "Authored"]
#: (page) -> None; may replace nodes of the page and leave notes on it for the figures
PagePass = Callable[["Page"], None]
#: (page, figure node, artifact, parts) -> a node to add to the figure's details, or None
DetailMaker = Callable[["Page", nodes.Element, dict[str, Any], "FigureParts"], "nodes.Node | None"]


@dataclass
class SweepRendering:
    """A sweep drawn whole: its parts, and the warnings to give at the figure."""

    parts: FigureParts
    warnings: list[tuple[str, Any]] = field(default_factory=list)  #: (message, Subtype)


@dataclass(frozen=True)
class Authored:
    """What an authored figure shows: its parts, the prompt's options (prediction, choices), its
    footer line and its CSS class."""

    parts: FigureParts
    prompt: dict[str, Any]
    footer: str
    kind: str


@dataclass
class Registry:
    executed: dict[str, FigureKind] = field(default_factory=dict)  #: by directive name
    authored: dict[str, AuthoredMaker] = field(default_factory=dict)  #: by the figure node's ``authored``
    passes: list[tuple[int, PagePass]] = field(default_factory=list)  #: (order, pass)
    details: list[DetailMaker] = field(default_factory=list)


_REGISTRIES: PerApp[Registry] = PerApp(Registry)


def registry(app: Any) -> Registry:
    """The application's registry (made on first use)."""
    return _REGISTRIES.of(app)


def lazy(target: str) -> Callable[..., Any]:
    """The function ``module:function``, imported when first called.

    Features register their drawing this way, so setting the extension up imports no drawing code:
    a build with nothing to write (a no-op rebuild) never loads it.
    """
    module, _, name = target.partition(":")

    def call(*args: Any, **kwargs: Any) -> Any:
        return getattr(importlib.import_module(module), name)(*args, **kwargs)

    call.__qualname__ = call.__name__ = target
    return call


def add_figure_kind(app: Any, kind: FigureKind, directive: type) -> None:
    """Give ``app`` the kind's directive and make the kind known to every stage (the store checks its
    data, the page draws it, the CLI compares and summarises it), all through ``kind``."""
    declare(kind)
    add_config_values(app, [limit.value for limit in kind.limits])
    app.add_directive(kind.directive, directive)
    registry(app).executed[kind.directive] = kind


def add_authored_kind(app: Any, kind: str, maker: AuthoredMaker) -> None:
    registry(app).authored[kind] = maker


def add_page_pass(app: Any, order: int, page_pass: PagePass) -> None:
    """Run ``page_pass`` on every page before its figures are drawn; lower ``order`` first."""
    passes = registry(app).passes
    passes.append((order, page_pass))
    passes.sort(key=lambda item: item[0])


def add_figure_detail(app: Any, maker: DetailMaker) -> None:
    registry(app).details.append(maker)
