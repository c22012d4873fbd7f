"""Which executor runs the jobs (``tensorviz_executor``), checked when the configuration is read.

Kept apart from the Dask executor itself, so checking the setting imports neither Dask nor the
job runner.
"""

from __future__ import annotations

import importlib.util
import re
from typing import Any

from ..config import reset

LOCAL_CLUSTER = "dask-local"
_ADDRESS = re.compile(r"^(tcp|tls|ws|wss|ucx|inproc)://\S+$")


def executor_problem(value: Any) -> str | None:
    """Why ``tensorviz_executor = value`` cannot be used here (``None`` when it can)."""
    if value == "local":
        return None
    if value != LOCAL_CLUSTER and not (isinstance(value, str) and _ADDRESS.match(value)):
        return "must be 'local', 'dask-local' or a Dask scheduler address such as 'tcp://host:8786'"
    try:
        found = importlib.util.find_spec("distributed") is not None
    except ImportError:
        found = False
    return None if found else "needs Dask's distributed package: pip install 'sphinx-tensorviz[dask]'"


def check_executor_config(app: Any, config: Any) -> None:
    """``config-inited``: a Dask executor that cannot be used here falls back to local workers, loudly."""
    problem = executor_problem(config.tensorviz_executor)
    if problem:
        reset(config, "tensorviz_executor", problem)
