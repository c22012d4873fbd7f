"""The ``tensorviz_*`` configuration values: one table, typed, described and checked once.

The reference page of the manual is compared with :data:`CONFIG_VALUES` by a test,
so a value cannot be added without documenting it.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx
from sphinx.config import Config

from .warnings_ import Subtype, warn

MODES = ("auto", "cache-only", "force", "off")
DEVICES = ("cpu", "gpu")


@dataclass(frozen=True)
class ConfigValue:
    name: str
    default: Any
    types: tuple[type, ...]
    description: str
    rebuild: str = "env"


CONFIG_VALUES: tuple[ConfigValue, ...] = (
    ConfigValue("tensorviz_execution_mode", "auto", (str,),
                "auto: execute cache misses; cache-only: execute nothing and warn on a miss; "
                "force: re-execute every directive; off: execute nothing, silently."),
    ConfigValue("tensorviz_artifact_dir", "tensorviz_artifacts", (str, os.PathLike),
                "Folder of the artifact store, relative to the folder of conf.py."),
    ConfigValue("tensorviz_workers", 2, (int,),
                "How many worker processes execute in parallel (at least 1).", ""),
    ConfigValue("tensorviz_timeout", 120, (int, float),
                "Seconds one execution may run before its worker is stopped.", ""),
    ConfigValue("tensorviz_memory_limit_mb", 0, (int,),
                "Data-segment limit of a worker in MiB (0: no limit).", ""),
    ConfigValue("tensorviz_device", "cpu", (str,),
                "cpu: hide GPUs from workers (JAX on CPU); gpu: let frameworks use them."),
    ConfigValue("tensorviz_hash_versions", False, (bool,),
                "Also hash the framework versions, so upgrading PyTorch or JAX re-executes."),
    ConfigValue("tensorviz_python", "", (str,),
                "Python interpreter for the workers (empty: the one running Sphinx).", ""),
)


@dataclass(frozen=True)
class Settings:
    """The checked configuration, as the rest of the package uses it."""

    mode: str
    store_dir: Path
    workers: int
    timeout: float
    memory_limit_mb: int
    device: str
    hash_versions: bool
    python: str


def app_of(env: Any) -> Sphinx:
    """The application behind ``env`` without the accessors Sphinx 9 deprecates.

    Sphinx 8.1 keeps it in ``env.app``; 8.2 and later in ``env._app``.
    """
    state = vars(env)
    return state.get("_app") or state["app"]


def settings(app: Sphinx) -> Settings:
    """Read the (already validated) configuration of ``app``."""
    cfg = app.config
    return Settings(
        mode=cfg.tensorviz_execution_mode,
        store_dir=(Path(app.confdir) / cfg.tensorviz_artifact_dir).resolve(),
        workers=cfg.tensorviz_workers,
        timeout=float(cfg.tensorviz_timeout),
        memory_limit_mb=cfg.tensorviz_memory_limit_mb,
        device=cfg.tensorviz_device,
        hash_versions=cfg.tensorviz_hash_versions,
        python=cfg.tensorviz_python or sys.executable,
    )


def check_config(app: Sphinx, config: Config) -> None:
    """Warn about and replace invalid values, so a typo cannot silently execute in a wrong mode."""
    _choice(config, "tensorviz_execution_mode", MODES)
    _choice(config, "tensorviz_device", DEVICES)
    if not isinstance(config.tensorviz_workers, int) or config.tensorviz_workers < 1:
        _reset(config, "tensorviz_workers", "must be an integer of at least 1")
    if not isinstance(config.tensorviz_timeout, (int, float)) or config.tensorviz_timeout <= 0:
        _reset(config, "tensorviz_timeout", "must be a positive number of seconds")
    if not isinstance(config.tensorviz_memory_limit_mb, int) or config.tensorviz_memory_limit_mb < 0:
        _reset(config, "tensorviz_memory_limit_mb", "must be a non-negative integer")


def _choice(config: Config, name: str, choices: tuple[str, ...]) -> None:
    if config[name] not in choices:
        _reset(config, name, "must be one of " + ", ".join(repr(c) for c in choices))


def _reset(config: Config, name: str, why: str) -> None:
    default = next(v.default for v in CONFIG_VALUES if v.name == name)
    warn(f"{name} = {config[name]!r} {why}; using {default!r}", Subtype.config)
    config[name] = default


def setup_config(app: Sphinx) -> None:
    for value in CONFIG_VALUES:
        app.add_config_value(value.name, value.default, value.rebuild, value.types, description=value.description)
    app.connect("config-inited", check_config)
