"""The worker: a fresh Python process that runs one directive's lesson code.

Started by :mod:`.runner`, through the job guard (:mod:`.jobguard`), as ``python -m
sphinx_tensorviz.execute.worker JOB RESULT``, or forked by a warm pool's parent
(:mod:`.zygote`), which has imported the framework but never started a device. Never forked
from Sphinx (CUDA and JAX do not survive ``fork`` once started); it dies with its guard or
parent. It reads the
job JSON, seeds everything, runs the code with stdout captured, converts the
return value into artifact ``data`` and writes the result JSON. Anything the
code raises becomes an error result; if the process dies instead, the runner
notices the missing result file.
"""

from __future__ import annotations

import contextlib
import importlib.util
import inspect
import json
import os
import resource
import signal
import sys
import traceback
import types
from pathlib import Path
from typing import Any, Callable

import numpy as np

from ..core.limits import (
    LimitExceeded,
    Limits,
    check_graph_nodes,
    check_heatmap_cells,
    check_result_size,
)
from ..core.sweep import SWEEP_CHECK
from ..store.artifacts import dump_json
from .determinism import describe_environment, seed_everything
from .graph_run import run_checks, run_graph
from .processes import PR_SET_PDEATHSIG, prctl
from .results import BadResult, heatmap_data
from .sweep_check import run_sweep_check
from .tail_buffer import TailBuffer


def run_heatmap(module: types.ModuleType, job: dict[str, Any]) -> dict[str, Any]:
    """The 2-D result as heatmap data; checks receive the values as a NumPy array."""
    options = job.get("options", {})
    limits = Limits.from_job(job)
    data = heatmap_data(call_entry(module, job), options, lambda r, c: check_heatmap_cells(r, c, limits))
    produced: dict[str, Any] = {"data": data}
    if options.get("checks"):
        produced["checks"] = run_checks(module, options["checks"], np.asarray(data["values"]))
    return produced


#: What each directive does with the loaded lesson module; returns ``data`` (and maybe ``checks``).
RUNNERS: dict[str, Callable[[types.ModuleType, dict[str, Any]], dict[str, Any]]] = {
    "tv-heatmap": run_heatmap,
    "tv-graph": run_graph,
    SWEEP_CHECK: run_sweep_check,
}


def load_module(job: dict[str, Any]) -> types.ModuleType:
    """Import the lesson file, or compile the inline body, as a fresh module."""
    sys.path[:0] = job["searchPath"]
    if job.get("inlineCode") is not None:
        module = types.ModuleType("tensorviz_lesson")
        module.__file__ = job["inlineName"]
        code = compile(job["inlineCode"], job["inlineName"], "exec")
        exec(code, module.__dict__)  # noqa: S102 - lesson code runs here, isolated in this process
        return module
    entry = Path(job["entryPath"])
    spec = importlib.util.spec_from_file_location(entry.stem, entry)
    if spec is None or spec.loader is None:
        raise BadResult(f"cannot import {entry}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[entry.stem] = module
    spec.loader.exec_module(module)
    return module


def call_entry(module: types.ModuleType, job: dict[str, Any]) -> Any:
    """Call the named function with the author's inputs, plus ``seed``/``key`` if it asks for them."""
    name = job.get("function")
    if not name:
        if "result" not in module.__dict__:
            raise BadResult("the code defines no 'result' variable; name a function with :function:")
        return module.__dict__["result"]
    function = getattr(module, name, None)
    if not callable(function):
        raise BadResult(f"no function named {name!r} in {job.get('entry')}")
    inputs = job.get("inputs") or {}
    kwargs = dict(inputs) if isinstance(inputs, dict) else {}
    params = inspect.signature(function).parameters
    if "seed" in params and "seed" not in kwargs:
        kwargs["seed"] = job["seed"]
    if "key" in params and "key" not in kwargs and job["backend"] == "jax":
        import jax

        kwargs["key"] = jax.random.PRNGKey(job["seed"])
    return function(**kwargs)


def run_job(job: dict[str, Any]) -> dict[str, Any]:
    """Run a job and return the result document (never raises for lesson errors)."""
    limits = Limits.from_job(job)
    stdout = TailBuffer(limits.stdout_chars)  # printing 50 MB keeps only the tail
    notes = lambda: [n for n in [stdout.truncation_note()] if n]  # noqa: E731
    try:
        seed_everything(job["backend"], job["seed"])
        with contextlib.redirect_stdout(stdout):
            module = load_module(job)
            produced = RUNNERS[job["directive"]](module, job)
        if produced["data"].get("kind") == "graph":
            check_graph_nodes(len(produced["data"].get("layers", [])), limits)
        check_result_size(_stored_size(produced) + len(stdout.getvalue()), limits)
    except LimitExceeded as exc:
        return {"ok": False, "subtype": "limit", "message": str(exc), "limit": exc.name, "stdout": stdout.getvalue(),
                "notes": notes()}
    except BadResult as exc:
        return {"ok": False, "subtype": "bad_result", "message": str(exc), "stdout": stdout.getvalue(),
                "notes": notes()}
    except BaseException as exc:  # noqa: BLE001 - any lesson error is reported, not raised
        return {
            "ok": False,
            "subtype": "execution",
            "message": f"{type(exc).__name__}: {exc}",
            "traceback": _lesson_traceback(exc),
            "stdout": stdout.getvalue(),
            "notes": notes(),
        }
    return {
        "ok": True,
        **produced,
        "stdout": stdout.getvalue(),
        "notes": notes(),
        "environment": describe_environment(job["backend"]),
    }


def _stored_size(produced: dict[str, Any]) -> int:
    """Bytes ``produced`` takes in the pretty-printed artifact (0 if it cannot be stored: ``main`` says why)."""
    try:
        return len(dump_json(produced).encode("utf-8"))
    except (TypeError, ValueError):
        return 0


def _lesson_traceback(exc: BaseException) -> str:
    """The traceback without the worker's own frames, so authors see their code first."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if "sphinx_tensorviz" not in f.filename]
    lines = traceback.format_list(frames) + traceback.format_exception_only(type(exc), exc)
    return "".join(lines)


def _limit_memory(megabytes: int) -> None:
    if megabytes > 0:
        limit = megabytes * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))


def main(argv: list[str]) -> int:
    return serve(Path(argv[0]), Path(argv[1]))


def serve(job_path: Path, result_path: Path) -> int:
    """Run the job at ``job_path`` and write its result: the same code for a fresh worker (under its
    job guard) and for a child forked by a warm pool's parent (:mod:`.zygote`), which guards it."""
    job = json.loads(job_path.read_text("utf-8"))
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # the job guard (or the pool's parent) is gone: so is the job
    _prefer_as_oom_victim()
    _limit_memory(int(job.get("memoryLimitMb") or 0))
    result = run_job(job)
    result["execution"] = {"peakMemoryMb": peak_memory_mb()}
    try:
        text = json.dumps(result, allow_nan=False)
    except (TypeError, ValueError) as exc:  # e.g. a check's description that is not text
        text = json.dumps({"ok": False, "subtype": "bad_result", "message": f"the result cannot be stored: {exc}",
                           "stdout": str(result.get("stdout", ""))})
    result_path.write_text(text, "utf-8")
    return 0


def peak_memory_mb() -> float:
    """Peak resident memory of this process in MiB (``ru_maxrss``: KiB on Linux, bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return round(peak / (1024 * 1024 if sys.platform == "darwin" else 1024), 1)


def _prefer_as_oom_victim() -> None:
    """Out of memory, the kernel should kill this job, not the build, its guard or a pool's parent."""
    with contextlib.suppress(OSError):
        Path("/proc/self/oom_score_adj").write_text("500")


if __name__ == "__main__":
    code = main(sys.argv[1:])
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)  # the result is written: skip the interpreter's teardown (seconds with a framework loaded)
