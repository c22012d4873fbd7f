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

from .core.locations import default_cache_dir, is_url
from .warnings_ import Subtype, warn

MODES = ("auto", "cache-only", "force", "off")
SANDBOXES = ("", "bwrap")
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
    ConfigValue("tensorviz_artifact_store", "", (str, os.PathLike),
                "The artifact store: a folder (relative to conf.py) or an fsspec URL (s3://bucket/course, gs://, "
                "az://, read-only https://). Empty: tensorviz_artifact_dir."),
    ConfigValue("tensorviz_cache_dir", "", (str, os.PathLike),
                "Local cache of a remote store (empty: a folder per store under ~/.cache/sphinx-tensorviz).", ""),
    ConfigValue("tensorviz_require_signature", False, (bool,),
                "Refuse remote artifacts not signed with the key in TENSORVIZ_SIGNING_KEY."),
    ConfigValue("tensorviz_executor", "local", (str,),
                "local: worker processes on this machine; dask-local: a Dask LocalCluster; "
                "tcp://host:8786: the Dask scheduler at that address.", ""),
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
    ConfigValue("tensorviz_max_result_mb", 8, (int, float),
                "Largest result one execution may store, in MB of artifact JSON.", ""),
    ConfigValue("tensorviz_max_stdout_kb", 64, (int,),
                "How much printed output is kept per execution, in KB (the end is kept).", ""),
    ConfigValue("tensorviz_max_heatmap_cells", 16_384, (int,),
                "Largest heatmap (rows times columns) a tv-heatmap draws.", ""),
    ConfigValue("tensorviz_max_graph_nodes", 20_000, (int,),
                "Largest traced graph (nodes) a tv-graph draws.", ""),
    ConfigValue("tensorviz_sandbox", "", (str,),
                "Empty: workers run as your user; bwrap: each worker runs inside bubblewrap.", ""),
    ConfigValue("tensorviz_worker_pool", True, (bool,),
                "Fork each job from a warm parent that imported its framework once (where safe).", ""),
    ConfigValue("tensorviz_compilation_cache", True, (bool,),
                "Keep JAX's compiled operations in a machine-local cache between builds.", ""),
    ConfigValue("tensorviz_drawing_cache", True, (bool,),
                "Keep drawn figures (SVG, outlines, graph layouts) in a machine-local cache shared by every build "
                "and output folder; False: in the doctree folder, cleared with it.", ""),
    ConfigValue("tensorviz_part_cache", True, (bool,),
                "Keep the heavy parts of each HTML figure (tables, outlines, source panels) as HTML with their "
                "search words, next to the drawings; False: translate them on every build.", ""),
    ConfigValue("tensorviz_quick_exit", False, (bool,),
                "Opt-in: after a command-line build, skip the interpreter's final garbage scans (gc.freeze at "
                "exit); False: exit as Python does.", ""),
)

#: (name, smallest allowed value) of the size limits
LIMITS = (("tensorviz_max_result_mb", 0.01), ("tensorviz_max_stdout_kb", 1),
          ("tensorviz_max_heatmap_cells", 1), ("tensorviz_max_graph_nodes", 1))


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
    max_result_mb: float = 8
    max_stdout_kb: int = 64
    max_heatmap_cells: int = 16_384
    max_graph_nodes: int = 20_000
    sandbox: str = ""
    store_url: str = ""  #: a remote store's URL ("" for a local folder, then ``store_dir``; else its cache)
    executor: str = "local"
    require_signature: bool = False
    worker_pool: bool = True
    compilation_cache: bool = True
    drawing_cache: bool = True


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
        store_dir=store_folder(app.confdir, cfg),
        workers=cfg.tensorviz_workers,
        timeout=float(cfg.tensorviz_timeout),
        memory_limit_mb=cfg.tensorviz_memory_limit_mb,
        device=cfg.tensorviz_device,
        hash_versions=cfg.tensorviz_hash_versions,
        python=cfg.tensorviz_python or sys.executable,
        max_result_mb=cfg.tensorviz_max_result_mb,
        max_stdout_kb=cfg.tensorviz_max_stdout_kb,
        max_heatmap_cells=cfg.tensorviz_max_heatmap_cells,
        max_graph_nodes=cfg.tensorviz_max_graph_nodes,
        sandbox=cfg.tensorviz_sandbox,
        store_url=store_url(cfg),
        executor=cfg.tensorviz_executor,
        require_signature=bool(cfg.tensorviz_require_signature),
        worker_pool=cfg.tensorviz_worker_pool,
        compilation_cache=cfg.tensorviz_compilation_cache,
        drawing_cache=cfg.tensorviz_drawing_cache,
    )


def store_url(cfg: Config) -> str:
    """The remote store's URL, or "" when the store is a local folder."""
    location = str(cfg.tensorviz_artifact_store or "")
    return location.rstrip("/") if is_url(location) else ""


def store_folder(confdir: str | os.PathLike[str], cfg: Config) -> Path:
    """The local store folder, or for a remote store its machine-local cache."""
    location = str(cfg.tensorviz_artifact_store or cfg.tensorviz_artifact_dir).removeprefix("file://")
    url = store_url(cfg)
    if not url:
        return (Path(confdir) / location).resolve()
    if cfg.tensorviz_cache_dir:
        return (Path(confdir) / cfg.tensorviz_cache_dir).resolve()
    return default_cache_dir(url)


def check_config(app: Sphinx, config: Config) -> None:
    """Warn about and replace invalid values, so a typo cannot silently execute in a wrong mode."""
    _choice(config, "tensorviz_execution_mode", MODES)
    _choice(config, "tensorviz_device", DEVICES)
    if not isinstance(config.tensorviz_workers, int) or config.tensorviz_workers < 1:
        reset(config, "tensorviz_workers", "must be an integer of at least 1")
    if not isinstance(config.tensorviz_timeout, (int, float)) or config.tensorviz_timeout <= 0:
        reset(config, "tensorviz_timeout", "must be a positive number of seconds")
    if not isinstance(config.tensorviz_memory_limit_mb, int) or config.tensorviz_memory_limit_mb < 0:
        reset(config, "tensorviz_memory_limit_mb", "must be a non-negative integer")
    for name, smallest in LIMITS:
        value = config[name]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < smallest:
            reset(config, name, f"must be a number of at least {smallest:g}")
    _choice(config, "tensorviz_sandbox", SANDBOXES)
    for name in ("tensorviz_worker_pool", "tensorviz_compilation_cache", "tensorviz_drawing_cache",
                 "tensorviz_part_cache", "tensorviz_quick_exit"):
        if not isinstance(config[name], bool):
            reset(config, name, "must be True or False")


def _choice(config: Config, name: str, choices: tuple[str, ...]) -> None:
    if config[name] not in choices:
        reset(config, name, "must be one of " + ", ".join(repr(c) for c in choices))


def reset(config: Config, name: str, why: str) -> None:
    """Warn that ``name`` is unusable (``why``) and use its default instead."""
    default = next(v.default for v in CONFIG_VALUES if v.name == name)
    warn(f"{name} = {config[name]!r} {why}; using {default!r}", Subtype.config)
    config[name] = default


def setup_config(app: Sphinx) -> None:
    for value in CONFIG_VALUES:
        app.add_config_value(value.name, value.default, value.rebuild, value.types, description=value.description)
    app.connect("config-inited", check_config)
