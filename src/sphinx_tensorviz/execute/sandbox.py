"""The opt-in sandbox: run each worker inside bubblewrap (``tensorviz_sandbox = "bwrap"``).

Inside, the worker sees only what a job needs, read-only: the system's programs and libraries
(``/usr`` and its links), a short list of ``/etc`` files (no ``/etc/shadow``, no keys), its
interpreter's prefix and the folders on its ``sys.path`` (site-packages, an editable install's
source), and the course's source folder (without its ``.git``, where a CI checkout keeps its token).
Its job folder is the one writable place but for a
private ``/tmp`` and ``/dev/shm``, in memory and bounded by ``tensorviz_memory_limit_mb``; ``/``
and ``/dev`` are read-only. New user, pid, network, IPC and UTS namespaces: no network and no
other processes, and when the worker ends the kernel ends every process of its PID namespace.

Nothing that holds a home folder is mounted (``/``, ``/home``, a home folder itself), nothing in a
system folder of secrets or of the host's processes (``/etc``, ``/var/backups``, ``/run``, ``/proc``), and
nothing that holds the course's folder (its siblings, such as a ``.env`` beside the course): a
``sys.path`` entry of that kind (the home folder on ``PYTHONPATH``) is left out, and the build
says so (:func:`refused_folders`). What that does and does not protect is written down in
``docs/explanation/what-runs-where.md``.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import sys
from functools import cache
from pathlib import Path

#: read-only system folders a Python process needs (those that exist are mounted)
_SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64")
#: the ``/etc`` files a Python process and its libraries read: the loader, time zone, locale,
#: names and certificates. Not ``/etc`` itself: a root build would expose ``/etc/shadow``, host keys,
#: ``/etc/ssl/private``.
_ETC = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "timezone", "locale.alias",
        "passwd", "group", "nsswitch.conf", "hosts", "host.conf", "resolv.conf", "gai.conf", "protocols",
        "services", "mime.types", "os-release", "alternatives", "fonts", "ssl/certs", "ssl/openssl.cnf",
        "ca-certificates", "ca-certificates.conf", "pki/tls/certs", "pki/ca-trust")
#: system folders no ``sys.path`` entry may bring in, whole, in part, or with the folder that holds
#: them: secrets (``/etc/shadow``, ``/etc/ssl/private``, ``/var/backups``, ``/run/secrets``), and the
#: host's ``/proc`` and ``/sys``, which would replace the sandbox's own (``/proc/<build pid>/environ``).
#: Not all of ``/var``: a CI's workspace (Jenkins: ``/var/lib/jenkins``) may hold the course.
_PRIVATE_SYSTEM = ("/etc", "/proc", "/sys", "/dev", "/run", "/boot", "/var/run", "/var/backups", "/var/log",
                   "/var/mail", "/var/spool", "/var/lib/private")
#: folders of the course folder that the sandbox hides (see :func:`_hidden_in_course`)
_COURSE_HIDDEN = (".git",)
#: what the worker's interpreter reports: where it lives and what it imports from
_PROBE = ("import json, sys; "
          "print(json.dumps([sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix, *sys.path]))")


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


#: the environment a worker inherits from the build, as sorted (name, value) pairs
Inherited = tuple[tuple[str, str], ...]


def sandbox_command(command: list[str], job_dir: Path, srcdir: Path | None, python: str, inherited: Inherited,
                    extra_read: list[str], memory_limit_mb: int = 0) -> list[str]:
    """``command`` wrapped in bwrap; ``job_dir`` is the only writable folder besides two private tmpfs
    mounts (``/tmp`` and ``/dev/shm``, host memory), each bounded by ``memory_limit_mb`` (0: the
    kernel's default); ``/`` and ``/dev``, tmpfs mounts of bwrap's own, are made read-only."""
    binary = shutil.which("bwrap") or "bwrap"
    size = ["--size", str(memory_limit_mb * 1024 * 1024)] if memory_limit_mb > 0 else []
    args = [binary, "--unshare-all", "--new-session", "--die-with-parent",
            "--proc", "/proc", "--dev", "/dev", *size, "--tmpfs", "/tmp", *size, "--tmpfs", "/dev/shm"]
    for system in _SYSTEM:
        path = Path(system)
        if path.is_symlink():  # merged /usr: /bin -> usr/bin
            args += ["--symlink", os.readlink(path), system]
        elif path.exists():
            args += ["--ro-bind", system, system]
    for name in _ETC:
        if Path("/etc", name).exists():
            args += ["--ro-bind", f"/etc/{name}", f"/etc/{name}"]
    readable, _ = mounted_folders(python, inherited, srcdir, tuple(extra_read))
    for folder in readable:
        args += ["--ro-bind", folder, folder]
    for hidden in _hidden_in_course(srcdir):  # an empty, read-only folder in its place
        args += ["--tmpfs", hidden, "--remount-ro", hidden]
    args += ["--bind", str(job_dir), str(job_dir), "--remount-ro", "/dev", "--remount-ro", "/",
             "--chdir", str(job_dir / "work")]
    return [*args, "--", *command]


def _hidden_in_course(srcdir: Path | None) -> list[str]:
    """The course's folders that lesson code never needs and that hold a CI token: a CI checkout
    (GitHub's ``actions/checkout``) leaves it in ``.git/config``, and a course is often the root of
    its repository. Only real folders: a link's target is mounted only if it is in the course."""
    if srcdir is None:
        return []
    return [str(path) for path in (srcdir.resolve() / name for name in _COURSE_HIDDEN)
            if path.is_dir() and not path.is_symlink()]


def refused_folders(python: str, inherited: Inherited, srcdir: Path | None, extra_read: tuple[str, ...]) -> list[str]:
    """What the sandbox leaves out that the worker would have on its ``sys.path``, each with why."""
    return mounted_folders(python, inherited, srcdir, extra_read)[1]


@cache
def mounted_folders(python: str, inherited: Inherited, srcdir: Path | None,
                    extra_read: tuple[str, ...]) -> tuple[list[str], list[str]]:
    """(folders mounted read-only, folders left out with the reason): the interpreter's prefix and
    ``sys.path``, ``extra_read`` and the course's ``srcdir``, without any that would expose more."""
    wanted = [*_python_folders(python, inherited), *extra_read]
    if srcdir is not None:
        wanted.append(str(srcdir))
    homes = _homes()
    course = srcdir.resolve() if srcdir is not None else None
    readable, refused = [], []
    for folder in dict.fromkeys(str(Path(p).resolve()) for p in wanted if Path(p).exists()):
        why = _exposes(Path(folder), homes, course)
        (refused.append(f"{folder} ({why})") if why else readable.append(folder))
    return _outermost(readable), refused


def _exposes(folder: Path, homes: set[Path], course: Path | None) -> str | None:
    """Why mounting ``folder`` would show lesson code more than it needs (``None``: it would not)."""
    if folder == Path("/"):
        return "it is the root folder"
    system = next((Path(p) for p in _PRIVATE_SYSTEM if folder.is_relative_to(p) or Path(p).is_relative_to(folder)),
                  None)
    if system is not None:
        return "it is a system folder that holds secrets" if folder == system else \
            f"it is in {system}, a system folder that holds secrets" if folder.is_relative_to(system) else \
            f"it holds {system}, a system folder that holds secrets"
    home = next((h for h in sorted(homes) if h.is_relative_to(folder)), None)
    if home is not None:
        return "it is the home folder" if home == folder else f"it holds the home folder {home}"
    if course is not None and course != folder and course.is_relative_to(folder):
        return f"it holds the course's folder {course} and what is beside it"
    return None


def _homes() -> set[Path]:
    """The home folders: the build user's (``$HOME`` and the password database's: they may differ), and
    those of the people with an account here (``/root``, ``/home/...``): a root build that mounted
    ``/home`` would show every user's files."""
    found = {os.environ.get("HOME", "")}
    try:
        found.add(pwd.getpwuid(os.getuid()).pw_dir)
        found.update(u.pw_dir for u in pwd.getpwall() if u.pw_dir == "/root" or u.pw_dir.startswith("/home/"))
    except KeyError:
        pass
    return {Path(h).resolve() for h in found if h and h != "/"}


@cache
def _python_folders(python: str, inherited: Inherited) -> list[str]:
    """Where the worker's interpreter lives and what its ``sys.path`` holds, as it reports them when
    started with the environment a worker inherits (``PYTHONPATH``, ``LD_LIBRARY_PATH``); not this
    process's ``sys.path``: what ``conf.py`` or the working folder put there never reaches the
    worker. ``-s``: in the sandbox ``HOME`` is the job's empty folder, so there is no user site."""
    env = dict(inherited)
    try:
        found = subprocess.run([python, "-s", "-c", _PROBE], capture_output=True, text=True, env=env,
                               cwd="/", timeout=60)
        folders = json.loads(found.stdout)
    except (OSError, subprocess.TimeoutExpired, ValueError):
        folders = [sys.prefix, sys.base_prefix]  # the job will say what is missing
    folders.append(str(Path(python).resolve().parent.parent))
    return [f for f in folders if isinstance(f, str) and os.path.isabs(f)]


def _outermost(paths: list[str]) -> list[str]:
    """Each folder once, without those already inside another (a bind covers its subfolders)."""
    chosen: list[Path] = []
    for path in sorted({Path(p) for p in paths}, key=lambda p: len(p.parts)):
        if not any(path.is_relative_to(c) for c in chosen):
            chosen.append(path)
    return [str(p) for p in chosen]
