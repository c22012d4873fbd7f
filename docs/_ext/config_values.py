"""``tensorviz-config-values``: the reference entries of one topic's ``tensorviz_*`` values.

Generated when the manual is built, from the declarations the build's own sphinx-tensorviz made
(``sphinx_tensorviz.config.config_values``: the package's table, then what its features added), so
the reference cannot drift from the names, types, defaults and checks the extension uses. Each value
becomes a ``confval`` entry (linkable as ``{confval}`tensorviz_workers```) with its type, default,
what its check accepts, and its help, which is MyST like the page.

Usage, one per section of the page (the topic is each declaration's ``topic``)::

    ```{tensorviz-config-values} limits
    ```
"""

from __future__ import annotations

import json
import os
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from sphinx_tensorviz import config as declarations
from sphinx_tensorviz.core.config_values import ConfigValue

logger = logging.getLogger(__name__)


def type_text(types: tuple[type, ...]) -> str:
    return " or ".join("path" if t is os.PathLike else t.__name__ for t in types)


def default_text(default: Any) -> str:
    """The default as it is written in ``conf.py`` (strings in double quotes, as the manual writes them)."""
    return json.dumps(default) if isinstance(default, str) else repr(default)


def entry(value: ConfigValue) -> str:
    """The MyST source of ``value``'s reference entry."""
    accepted = f"Accepted: {value.accepted}.\n\n" if value.accepted else ""
    return (f":::{{confval}} {value.name}\n:type: `{type_text(value.types)}`\n"
            f":default: `{default_text(value.default)}`\n\n{accepted}{value.help}\n:::\n")


class ConfigValues(SphinxDirective):
    required_arguments = 1
    has_content = False

    def run(self) -> list[nodes.Node]:
        topic = self.arguments[0]
        self.env.note_dependency(declarations.__file__)
        chosen = [v for v in declarations.config_values(declarations.app_of(self.env)) if v.topic == topic]
        if not chosen:
            logger.warning("tensorviz-config-values: no configuration value has the topic %r", topic,
                           location=self.get_location())
            return []
        return self.parse_text_to_nodes("\n".join(entry(v) for v in chosen))


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_directive("tensorviz-config-values", ConfigValues)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
