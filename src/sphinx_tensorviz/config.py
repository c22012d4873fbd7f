"""The ``tensorviz_*`` configuration values: each declared once, in :data:`CONFIG_VALUES`.

A declaration (:class:`~.core.config_values.ConfigValue`) carries the name, types, default,
validator and help of a value. Everything else is derived from it: the registration with Sphinx,
the check that replaces an unusable value by its default (:func:`add_config_values`), the
:class:`Settings` the rest of the package reads, and the manual's reference page (the
``tensorviz-config-values`` directive in ``docs/_ext``). A figure kind declares its own values
with :func:`add_config_values`; :func:`config_values` lists every declaration of an application.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from dataclasses import make_dataclass
from functools import partial
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx
from sphinx.config import Config

from .core.config_values import ConfigValue, assignment_line, at_least, boolean, choice, path, positive, text
from .core.kinds import declared as declared_kinds
from .core.locations import default_cache_dir, is_url
from .core.per_app import PerApp
from .warnings_ import Subtype, warn


def _interpreter(value: str) -> str:
    return value or sys.executable


CONFIG_VALUES: tuple[ConfigValue, ...] = (
    ConfigValue("tensorviz_execution_mode", "auto", (str,), """
        What the build may execute.

        - `"auto"`: execute every directive without a stored artifact (a *cache miss*). A recorded
          failure is not retried until its code changes, except a timeout, which is retried when
          `tensorviz_timeout` has been raised since.
        - `"cache-only"`: execute nothing; a miss becomes a placeholder on the page and a
          `tensorviz.cache_miss` warning. Use it where the committed cache must be complete (Read the
          Docs, CI), together with `-W`.
        - `"force"`: execute every directive again, cached or not.
        - `"off"`: execute nothing and do not warn about misses.
        """, check=choice("auto", "cache-only", "force", "off"), setting="mode"),
    ConfigValue("tensorviz_artifact_dir", "tensorviz_artifacts", (str, os.PathLike), """
        The artifact store, relative to the folder of `conf.py`. (A remote store is set with
        `tensorviz_artifact_store`, below, which overrides this when set.) Add it to `exclude_patterns`
        if your `source_suffix` could match JSON files.
        """, check=path),
    ConfigValue("tensorviz_artifact_store", "", (str, os.PathLike), """
        Where the artifacts are: a folder (relative to `conf.py`, as `tensorviz_artifact_dir`, which
        stays as an alias and is used while this is empty, the default), or an
        [fsspec](https://filesystem-spec.readthedocs.io/) URL:

        - `"s3://bucket/course"` (extra `[s3]`), `"gs://bucket/course"` (`[gcs]`),
          `"az://container/course"` (`[azure]`): read and written;
        - `"https://example.org/course/artifacts/"` (extra `[http]`): read only, for hosts that only
          draw (Read the Docs in `cache-only` mode). Executing against it warns that results cannot be
          stored (`tensorviz.store`) and shows them from memory.

        The remote store has the layout of the local folder (`<hash>.json`, `failures/<hash>.json`),
        and every object is checked like a local file before use (schema, name = `contentHash` = hash of
        its request). Credentials and endpoints come from the file system's usual configuration
        (`AWS_PROFILE`, `AWS_ENDPOINT_URL`, `~/.aws/config`, `GOOGLE_APPLICATION_CREDENTIALS`,
        `AZURE_STORAGE_CONNECTION_STRING`, ...), never from `conf.py`; lesson code does not inherit
        them. A URL whose extra is not installed is a `tensorviz.config` warning and the build falls
        back to `tensorviz_artifact_dir`.
        """, check=path, topic="shared"),
    ConfigValue("tensorviz_cache_dir", "", (str, os.PathLike), """
        The machine-local read-through cache of a remote store, relative to `conf.py`. Empty (the
        default): `$XDG_CACHE_HOME/sphinx-tensorviz/stores/<16 digits of the URL's hash>`
        (`~/.cache/...`). An artifact's name is the hash of its request, so a cached copy never goes
        stale; only missing ones are fetched. Delete the folder at any time. Failure records are always
        read from the store.
        """, check=path, rebuild="", topic="shared"),
    ConfigValue("tensorviz_require_signature", False, (bool,), """
        `True` refuses every artifact of a remote store that is not signed with the key in the
        environment variable `TENSORVIZ_SIGNING_KEY` (a `tensorviz.store` warning; the figure is then
        executed again, or in `cache-only` mode left out). Writers sign when the variable is set in
        their environment: each artifact written to a remote store (by a build or `tensorviz push`)
        gets `signatures/<hash>.sig`, the HMAC-SHA256 of its bytes. Remote stores only (with a local
        folder it is a `tensorviz.config` warning); without the key set it is a `tensorviz.config`
        warning too. See the trust model in {doc}`../howto/shared-store`.
        """, setting="require_signature", convert=bool, topic="shared"),
    ConfigValue("tensorviz_executor", "local", (str,), """
        Where lesson code runs. `"local"`: worker processes on this machine.

        - `"dask-local"`: a Dask `LocalCluster` of `tensorviz_workers` process workers, started and
          stopped by the build (mostly to try the cluster path on one machine);
        - `"tcp://host:8786"` (or `tls://...`): the Dask scheduler at that address.

        Each job is one Dask task that runs the same worker process as a local build (own process,
        `tensorviz_timeout`, limits and `tensorviz_sandbox` unchanged; bubblewrap must then be
        installed on the Dask workers), on a Dask worker that has
        `sphinx-tensorviz` and the frameworks installed but needs no copy of the course: the job carries
        its lesson files. Jobs of `tensorviz_device = "gpu"` ask for a `GPU` resource (start GPU workers
        with `dask worker ADDRESS --resources GPU=1`); without such a worker they are not executed (one
        `tensorviz.config` warning says so, nothing is recorded) and run once a GPU worker has joined.
        Results come back to the build, which alone writes the store. A Dask worker lost
        mid-job is retried once; lost again, the figure fails as a `tensorviz.crash` saying so. A
        scheduler that cannot be reached, or is lost mid-build, is one `tensorviz.config` warning; the
        figures still open are not recorded as failures, so the next build runs them. Run one thread per
        Dask worker process (`--nthreads 1`, scale with `--nworkers`), and on your own scheduler set
        `distributed.scheduler.allowed-failures: 0` and `worker-saturation: 1.0` to get exactly one retry
        (`dask-local` does). `tensorviz_python` still names the workers' interpreter if set; empty, each
        Dask worker uses its own. Failure records carry the environment fingerprint of the *building*
        interpreter, so run the Dask workers from the same image (or environment) as the build.

        Another value, or a Dask executor without Dask's `distributed` package installed, is a
        `tensorviz.config` warning and the build uses `"local"`.
        """, rebuild="", setting="executor", topic="shared"),
    ConfigValue("tensorviz_workers", 2, (int,), """
        How many worker processes execute at the same time. Independent of `sphinx-build -j`, which
        only parallelises reading and writing.
        """, check=at_least(1, integer=True), rebuild="", setting="workers"),
    ConfigValue("tensorviz_timeout", 120, (int, float), """
        Seconds one execution may run before its worker (and every process it started) is killed and a
        `tensorviz.timeout` failure is recorded.
        """, check=positive("seconds"), rebuild="", setting="timeout", convert=float),
    ConfigValue("tensorviz_memory_limit_mb", 0, (int,), """
        A limit on each worker's data segment in MiB (`RLIMIT_DATA`; `0`, the default, means none). Code
        that exceeds it fails with a `MemoryError` or is killed (a `tensorviz.crash`) instead of taking
        the machine, or the build, down with it. In the sandbox it also bounds the sandbox's private
        `/tmp`, which lives in memory (its `/` is read-only).
        """, check=at_least(0, integer=True), rebuild="", setting="memory_limit_mb"),
    ConfigValue("tensorviz_device", "cpu", (str,), """
        `"cpu"` hides GPUs from the workers (`CUDA_VISIBLE_DEVICES=""`, `JAX_PLATFORMS=cpu`);
        `"gpu"` lets the frameworks use them. The device is part of the content hash, so CPU and GPU
        results are stored side by side.
        """, check=choice("cpu", "gpu"), setting="device"),
    ConfigValue("tensorviz_hash_versions", False, (bool,), """
        Also hash the installed versions of NumPy and the directive's framework, so upgrading PyTorch
        or JAX executes every figure again. `False`: versions are recorded in each artifact but do not
        invalidate it.
        """, setting="hash_versions"),
    ConfigValue("tensorviz_python", "", (str,), """
        The Python interpreter that runs the workers, e.g. a virtual environment with the heavy
        frameworks while Sphinx runs elsewhere. It must have `sphinx_tensorviz` installed. Empty: the
        interpreter running Sphinx.
        """, check=text, rebuild="", setting="python", convert=_interpreter),
    ConfigValue("tensorviz_max_result_mb", 8, (int, float), """
        The largest result one execution may store, in MB of artifact JSON (a 200 x 200 heatmap is
        about 1 MB, a traced 24-layer Llama about 1.5 MB). A larger result is refused; a stored artifact
        file above the limit is not even read (a `tensorviz.store` warning).
        """, check=at_least(0.01), rebuild="", setting="max_result_mb", topic="limits"),
    ConfigValue("tensorviz_max_stdout_kb", 64, (int,), """
        How much printed output (`print`, `sys.stdout`) is kept per execution, in KB.
        Output beyond it is dropped from the start: the artifact, the page and the downloadable
        `artifact.json` keep the last part, after a line saying how much was truncated, and the build
        emits a `tensorviz.limit` warning. The note is kept in the artifact (`notes`), and every build
        that draws the figure from the store repeats the warning (in every mode but `off`), so a cached
        `-W` build fails too.
        """, check=at_least(1), rebuild="", setting="max_stdout_kb", topic="limits"),
    ConfigValue("tensorviz_sandbox", "", (str,), """
        Where lesson code runs. `""`: workers are ordinary processes of your user, in a private
        temp folder with a minimal environment. `"bwrap"`: each worker runs inside
        [bubblewrap](https://github.com/containers/bubblewrap) with a read-only view of `/usr`, a short
        list of `/etc` files, the worker's Python prefix and `sys.path` folders and the source folder
        (without its `.git`, where a CI checkout keeps its token),
        its own temp folder as the only writable place, a private `/tmp`, no home folder, no network and
        no other processes. A folder on the workers' `sys.path` that is `/`, holds a home folder, lies in
        or holds a system folder of secrets (`/etc`, `/run`, `/boot`, `/proc`, `/sys`, `/dev`,
        `/var/backups`, `/var/log`, ...), or holds the source folder (e.g. the home folder or `/etc` on
        `PYTHONPATH`) is not mounted, with a located `tensorviz.config` warning. If bubblewrap is missing
        or cannot create its namespaces, the build executes nothing and says why (a `tensorviz.config`
        warning); it never falls back to running the code unsandboxed. The sandbox sees no GPU
        devices, so use it with `tensorviz_device = "cpu"`. See {doc}`../explanation/what-runs-where`
        for what each mode protects.
        """, check=choice("", "bwrap"), rebuild="", setting="sandbox", topic="isolation"),
    ConfigValue("tensorviz_worker_pool", True, (bool,), """
        `True`: a warm parent process per framework (PyTorch, JAX, NumPy) imports the framework
        once per build and forks a clean child for every job, so 20 small PyTorch figures pay for
        `import torch` once instead of 20 times. Where the jobs' code imports `transformers` or
        `torchvision` (PyTorch) or `flax`, `equinox` or `optax` (JAX), the parent imports those too.
        Each child runs exactly what a fresh worker runs, under the same limits, timeout, temp folder and
        clean-up; a job never sees what another job changed. The pool is used only on Linux and never
        with `tensorviz_sandbox = "bwrap"` (bubblewrap wraps a new process, not a forked child): there,
        and with `False`, each job starts a fresh worker process. A framework whose parent cannot start
        (not installed in `tensorviz_python`) falls back the same way. See
        {doc}`../explanation/what-runs-where`.
        """, check=boolean, rebuild="", setting="worker_pool", topic="speed"),
    ConfigValue("tensorviz_compilation_cache", True, (bool,), """
        `True`: JAX keeps the executables XLA compiles, every eager operation included, in
        `$XDG_CACHE_HOME/sphinx-tensorviz/jax` (`~/.cache/sphinx-tensorviz/jax`), so executing an
        edited figure again recompiles only what changed. The cache is machine-local: never in the
        artifact store, never committed; it holds compiled code, not results, and deleting it only costs
        time. Code that uses `torch.compile` gets its Inductor cache beside it
        (`~/.cache/sphinx-tensorviz/torchinductor`); PyTorch's eager CPU code compiles nothing. In the
        sandbox the JAX cache is read-only and nothing is written to it. `False` turns both off.
        """, check=boolean, rebuild="", setting="compilation_cache", topic="speed"),
    ConfigValue("tensorviz_drawing_cache", True, (bool,), """
        Drawn figures (the SVG of each figure, a graph's outline and its per-module
        layout data) are kept in `$XDG_CACHE_HOME/sphinx-tensorviz/drawings`
        (`~/.cache/sphinx-tensorviz/drawings`), named by the recording and the renderer hash (the
        drawing code and the render options), so a fresh output folder, a clean build or another
        checkout of the course draws nothing this machine drew before. An entry is only a copy of what
        the drawing code would make again; entries unused for 30 days are removed (the cache is looked over at most once a day, by the first
        build of the day). `False` keeps them in
        the doctree folder instead, cleared with it.

        The same folder also keeps the parts of HTML figures (`tensorviz_part_cache`). Whatever this
        says, the artifacts this machine has
        checked against the schema are remembered by the sha256 of their bytes
        (`~/.cache/sphinx-tensorviz/validated`), so an unchanged file is not checked again; a changed file
        always is.
        """, check=boolean, rebuild="", setting="drawing_cache", topic="speed"),
    ConfigValue("tensorviz_part_cache", True, (bool,), """
        For the `html`, `dirhtml` and `singlehtml` builders, the heavy parts a figure kind
        draws from its artifact (the long description, data tables, a graph's outline, check lists, source
        panels; with the figure's title, alt text, SVG, the problems its kind found, its printed output
        and its downloads) are kept, next to the drawings (see `tensorviz_drawing_cache`), as the HTML the
        builder's translator writes for them and the words the search index reads in them, with the files
        they put beside the page (a big graph's module files, the downloads); a sweep's parts by all its
        points; and a graph's checkpoints and tours (`tv-activations`, `tv-steps`) whole, unless drawing
        them gave a warning. A fresh output folder then neither builds nor translates them again: on the
        course, a fresh-output build with every artifact cached took 1.45 to 1.6 times plain Sphinx with
        the cache and 1.7 to 1.8 times without it (`bench/bench_build.py` on a shared two-core machine,
        where single builds of one run spread by about 0.3 of that ratio). An entry's name covers the
        artifact's content hash, the renderer hash (the drawing code and the render options), the figure's
        id, the page, the builder and its translator, the whole configuration (`conf.py` itself and any
        `docutils.conf` included), and the versions of Sphinx, docutils, Pygments and this package; it is
        used only while the artifact file and the project files it shows are byte for byte as they were,
        so a page built from it is byte-for-byte the page drawn anew. The rest of a figure (its prompt,
        provenance, and the warnings of failed claims and of the kind, which are given again on every
        build) is made on every build; a figure whose drawing warned otherwise (refused downloads) is not
        kept. Parts whose HTML depends on the rest of the page (displayed math, math drawn as images,
        images, cross-references) are not kept; inline math is, when MathJax renders it, and its page
        still loads MathJax. Nothing of Sphinx's builder or loggers is changed to do this. `False`: every
        part is built and translated on every build.
        """, check=boolean, rebuild="", topic="speed"),
    ConfigValue("tensorviz_quick_exit", False, (bool,), """
        Opt-in. When `True` and `sphinx-build` (or `python -m sphinx`) has finished a
        build without crashing, the process exits without the interpreter's final garbage-collection
        passes over every object still alive: an `atexit` handler freezes everything there is
        (`gc.freeze`), without a collection first (that alone took 0.08 s on the course). On the course
        that saves about 0.3 s of CPU time a build, with or without cached figures. Every `atexit`
        handler and `weakref.finalize` callback still runs, and whatever reference counting frees (open
        files included) is freed as before; what is no longer run, for every extension in the process,
        is the `__del__` of an object in a reference cycle that is garbage when the build ends or
        becomes garbage while Python tears its modules down (Python does not promise that at exit
        either). That is why it is off unless you ask for it. Processes that go on after a build (tests,
        `tensorviz` commands, a server that builds) are never affected. See
        {doc}`../explanation/what-runs-where`.
        """, check=boolean, rebuild="", topic="speed"),
    ConfigValue("tensorviz_notebooks", False, (bool,), """
        Write a Jupyter notebook for each lesson of an HTML build (a MyST Markdown page with a `tv-lesson`
        header or an executed figure), and link it from the top of the page ("Download notebook"): the
        page's prose as Markdown cells, each figure's code as a code cell that recomputes it and compares
        it with the record, with the recorded figure and data table as the cell's output, so it shows before
        anything runs. Next to it, a zip holds the notebook with the lesson's code files. Built from the
        stored artifacts; nothing is executed. See {doc}`../howto/notebooks`.
        """, check=boolean, rebuild="html", setting="notebooks", topic="notebooks"),
)

#: The checked configuration, as the rest of the package uses it: one attribute per declaration
#: with a ``setting``, and the store's location, which three values decide together.
Settings = make_dataclass(
    "Settings",
    [(v.setting, Any) for v in CONFIG_VALUES if v.setting]
    + [("store_dir", Path), ("store_url", str), ("figure_limits", dict)],
    frozen=True,
    namespace={"__module__": __name__,
               "__doc__": "The checked configuration: an attribute per declared setting, the store's place, "
                                          "and the figure kinds' size limits."},
)
#: the declarations made on each application (the package's, then its features' and other extensions')
_DECLARED: PerApp[list[ConfigValue]] = PerApp(list)


def app_of(env: Any) -> Sphinx:
    """The application behind ``env`` without the accessors Sphinx 9 deprecates.

    Sphinx 8.1 keeps it in ``env.app``; 8.2 and later in ``env._app``.
    """
    state = vars(env)
    return state.get("_app") or state["app"]


def settings(app: Sphinx) -> Settings:
    """Read the (already validated) configuration of ``app``."""
    cfg = app.config
    declared = {v.setting: v.as_setting(cfg[v.name]) for v in CONFIG_VALUES if v.setting}
    # the figure kinds' own limits (:class:`~.core.kinds.SizeLimit`), by the field a job carries them in
    limits = {limit.field: cfg[limit.value.name] for kind in declared_kinds() for limit in kind.limits
              if limit.value.name in cfg}
    return Settings(**declared, store_dir=store_folder(app.confdir, cfg), store_url=store_url(cfg),
                    figure_limits=limits)


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


def check_values(values: tuple[ConfigValue, ...], app: Sphinx, config: Config) -> None:
    """``config-inited``: warn about and replace unusable values, so a typo cannot silently execute in a
    wrong mode. The warning points at the value's line in ``conf.py``; it is unlocated for ``-D``, which
    has no file, and where no plain assignment sets the value (Sphinx reads a location without a
    line as a document name)."""
    conf_py = Path(app.confdir, "conf.py")
    for value in values:
        why = value.problem(config[value.name])
        if why is None:
            continue
        location = None
        if value.name not in config.overrides:
            line = assignment_line(conf_py, value.name)
            location = f"{conf_py}:{line}" if line else None
        reset(config, value.name, why, location)


def reset(config: Config, name: str, why: str, location: str | None = None) -> None:
    """Warn that ``name`` is unusable (``why``) and use its registered default instead."""
    default = config.values[name].default
    warn(f"{name} = {config[name]!r} {why}; using {default!r}", Subtype.config, location)
    config[name] = default


def add_config_values(app: Sphinx, values: Iterable[ConfigValue]) -> None:
    """Register ``values`` with Sphinx and check them when the configuration is read, as the package's
    own are; a figure kind calls this from its ``setup_<kind>``."""
    values = tuple(values)
    for value in values:
        app.add_config_value(value.name, value.default, value.rebuild, value.types, description=value.summary)
    _DECLARED.of(app).extend(values)
    app.connect("config-inited", partial(check_values, values))


def config_values(app: Sphinx) -> tuple[ConfigValue, ...]:
    """Every declaration made on ``app``: the package's table first, then those its features and other
    extensions added, in the order they were added."""
    return tuple(_DECLARED.get(app) or ())


def setup_config(app: Sphinx) -> None:
    add_config_values(app, CONFIG_VALUES)
