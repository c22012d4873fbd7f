"""Machine-local compilation caches of the workers, so a re-execution does not compile again.

JAX compiles every operation it runs, eager ones included, with XLA; a lesson's figure can
spend most of its time there. JAX's persistent compilation cache keeps the compiled
executables on disk, keyed by the computation, the compiler options and the JAX/XLA
versions, so an edited figure recompiles only the operations that changed. Its default
thresholds skip fast compilations, which is every eager op: both are set to zero here.

The cache lives in ``$XDG_CACHE_HOME/sphinx-tensorviz`` (``~/.cache/sphinx-tensorviz``):
machine-local, never in the artifact store and never committed. Only compiled code is
kept there, never a result, so a cached entry cannot change what a figure shows.

In the bubblewrap sandbox (``tensorviz_sandbox``) the folder is mounted read-only and
JAX is told to write nothing (its write threshold is set beyond any compilation), so
lesson code in the sandbox cannot plant what another job would load; it still reads
what unsandboxed builds compiled.

PyTorch's eager CPU code compiles nothing. Code that calls ``torch.compile`` gets its
Inductor cache in the same folder (``TORCHINDUCTOR_CACHE_DIR``) outside the sandbox; inside
it the cache stays in the job's private temp folder, removed with the job.
"""

from __future__ import annotations

from pathlib import Path

from ..core.locations import cache_home

_NEVER = "1e9"  #: seconds: a write threshold no compilation reaches


def jax_cache_dir() -> Path:
    return cache_home() / "jax"


def cache_environment(enabled: bool, sandbox: str) -> dict[str, str]:
    """Variables that point the worker's frameworks at the caches (empty: caches off or unusable)."""
    if not enabled:
        return {}
    folder = jax_cache_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return {}
    env = {
        "JAX_COMPILATION_CACHE_DIR": str(folder),
        "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES": "0",
        "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": _NEVER if sandbox else "0",
    }
    if not sandbox:
        env["TORCHINDUCTOR_CACHE_DIR"] = str(cache_home() / "torchinductor")
    return env


def cache_mounts(enabled: bool) -> list[str]:
    """Folders the sandbox mounts read-only so its workers can read the caches."""
    folder = jax_cache_dir()
    return [str(folder)] if enabled and folder.is_dir() else []
