"""A course's own configuration value, declared as a figure kind declares one."""

from typing import Any

from sphinx.application import Sphinx

from sphinx_tensorviz.config import add_config_values
from sphinx_tensorviz.core.config_values import ConfigValue, at_least

LEVEL = ConfigValue("tensorviz_course_level", 3, (int,), "How deep the course goes (at least 1).",
                    check=at_least(1, integer=True), rebuild="html", topic="limits")


def setup(app: Sphinx) -> dict[str, Any]:
    add_config_values(app, (LEVEL,))
    return {"parallel_read_safe": True, "parallel_write_safe": True}
