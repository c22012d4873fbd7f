"""Deterministic settings and environment facts, applied inside the worker process.

Kept apart from the worker so both the worker and the generated ``run.py``
reproduce the same settings.
"""

from __future__ import annotations

import os
import platform
import random
from importlib import metadata
from typing import Any


def worker_environment(device: str, threads: int = 1, inherited_xla_flags: str = "") -> dict[str, str]:
    """Environment variables for a fresh worker; set before any framework is imported.

    ``inherited_xla_flags`` (the build's own ``XLA_FLAGS``, e.g. ``--xla_cpu_max_isa=AVX`` to
    emulate an older CPU) are kept after ours, so the author's flags win where both set one.
    """
    env = {
        "PYTHONHASHSEED": "0",
        "CUBLAS_WORKSPACE_CONFIG": ":4096:8",
        "OMP_NUM_THREADS": str(threads),
        "MKL_NUM_THREADS": str(threads),
        "XLA_FLAGS": " ".join(filter(None, ("--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1",
                                            inherited_xla_flags.strip()))),
        "TF_CPP_MIN_LOG_LEVEL": "3",
        "TORCHINDUCTOR_DETERMINISTIC": "1",  # what torch.use_deterministic_algorithms sets (seed_everything)
    }
    env["JAX_PLATFORMS"] = "cpu" if device == "cpu" else ""
    if device == "cpu":
        env["CUDA_VISIBLE_DEVICES"] = ""
    return env


def seed_everything(backend: str, seed: int) -> None:
    """Seed every RNG the lesson may touch; JAX has no global RNG, so it gets a key instead."""
    random.seed(seed)
    try:
        import numpy

        numpy.random.seed(seed)
    except ImportError:  # pragma: no cover - numpy is a hard dependency
        pass
    if backend == "torch":
        import sys

        import torch

        torch.manual_seed(seed)
        # use_deterministic_algorithms(True) imports Inductor and Dynamo just to set Inductor's flag:
        # seconds in every process. TORCHINDUCTOR_DETERMINISTIC=1 (see worker_environment) sets that
        # flag whenever Inductor is imported, so until then the global switch is all that is needed.
        if "torch._inductor.config" in sys.modules or not hasattr(torch._C, "_set_deterministic_algorithms"):
            torch.use_deterministic_algorithms(True)
        else:
            torch._C._set_deterministic_algorithms(True, warn_only=False)
        torch.set_num_threads(1)


def describe_environment(backend: str) -> dict[str, Any]:
    """Devices and versions for the artifact's ``environment`` field (seed field order)."""
    kind, count, name = _devices(backend)
    env: dict[str, Any] = {
        "backend": kind,
        "deviceCount": count,
        "device": name,
        "python": platform.python_version(),
        "framework": backend,
    }
    for package in dict.fromkeys((backend, "numpy", "matplotlib")):
        try:
            env[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            pass
    return env


def _devices(backend: str) -> tuple[str, int, str]:
    if backend == "jax":
        import jax

        devices = jax.devices()
        kind = "gpu" if devices and devices[0].platform == "gpu" else "cpu"
        return kind, len(devices), str(devices[0].device_kind) if devices else "cpu"
    if backend == "torch":
        import torch

        if torch.cuda.is_available() and os.environ.get("CUDA_VISIBLE_DEVICES", None) != "":
            return "gpu", torch.cuda.device_count(), torch.cuda.get_device_name(0)
    return "cpu", 1, platform.processor() or platform.machine()
