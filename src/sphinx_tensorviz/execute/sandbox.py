"""The opt-in sandbox: run each worker inside bubblewrap (``tensorviz_sandbox = "bwrap"``).

Inside, the worker sees the system folders, the Python installation and the course
source read-only, its own job folder writable, a private ``/tmp``, no home folder,
no network and no other processes (new user, pid, network, IPC and UTS
namespaces). What that does and does not protect is written down in
``docs/explanation/what-runs-where.md``.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from functools import cache
from pathlib import Path

#: read-only system folders a Python process needs (those that exist are mounted)
_SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/etc", "/opt")


def sandbox_problem(kind: str) -> str | None:
    """Why the sandbox ``kind`` cannot run here (``None``: it can, or none is asked for)."""
    if not kind:
        return None
    binary = shutil.which("bwrap")
    if binary is None:
        return "bubblewrap (bwrap) is not installed; install it (Debian/Ubuntu: apt-get install bubblewrap)"
    return _probe(binary)


@cache
def _probe(binary: str) -> str | None:
    """Start an empty sandbox once per process: bwrap may be installed but unable to create namespaces."""
    try:
        probe = subprocess.run([binary, "--unshare-all", "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev",
                                "true"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bwrap cannot be started ({exc})"
    if probe.returncode != 0:
        reason = probe.stderr.strip().splitlines()[-1] if probe.stderr.strip() else f"exit status {probe.returncode}"
        return (f"bwrap cannot create its namespaces here ({reason}); unprivileged user namespaces may be "
                "disabled (sysctl kernel.unprivileged_userns_clone or a container's seccomp profile)")
    return None


def sandbox_command(command: list[str], job_dir: Path, srcdir: Path | None, python: str,
                    extra_read: list[str]) -> list[str]:
    """``command`` wrapped in bwrap; ``job_dir`` is the only writable folder."""
    binary = shutil.which("bwrap") or "bwrap"
    args = [binary, "--unshare-all", "--new-session", "--die-with-parent",
            "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
    readable = [p for p in _SYSTEM if Path(p).exists()]
    readable += _python_folders(python) + extra_read
    if srcdir is not None:
        readable.append(str(srcdir))
    for folder in _outermost(readable):
        args += ["--ro-bind", folder, folder]
    args += ["--bind", str(job_dir), str(job_dir), "--chdir", str(job_dir / "work")]
    return [*args, "--", *command]


def _python_folders(python: str) -> list[str]:
    """Where the worker's interpreter and its packages live (this process's path, as a best guess)."""
    folders = {sys.prefix, sys.base_prefix, sys.exec_prefix, str(Path(python).resolve().parent.parent)}
    folders.update(p for p in sys.path if p and Path(p).is_dir())
    return [str(Path(f).resolve()) for f in folders if f and Path(f).exists()]


def _outermost(paths: list[str]) -> list[str]:
    """Each folder once, without those already inside another (a bind covers its subfolders)."""
    chosen: list[Path] = []
    for path in sorted({Path(p) for p in paths}, key=lambda p: len(p.parts)):
        if not any(path.is_relative_to(c) for c in chosen) and str(path) != "/":
            chosen.append(path)
    return [str(p) for p in chosen]
