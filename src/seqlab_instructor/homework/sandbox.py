"""The sandbox each submission runs in: bubblewrap (``bwrap``) on Linux, a container
(``docker``: Docker or Podman, :mod:`seqlab_instructor.homework.docker_sandbox`) anywhere, or none.

``--sandbox bwrap`` wraps the process that executes a submission (papermill/nbclient and the
Jupyter kernel it starts) in ``bwrap`` with

- ``--unshare-all``: new user, PID, network, IPC, UTS and cgroup namespaces, so no network
  (only a loopback of its own, on which the kernel talks to nbclient) and no view of other
  processes; ``--die-with-parent`` and the PID namespace end every process the submission
  started when the run ends (or when the grader kills it at the time limit);
- ``--ro-bind / /``: the whole file system read-only, then ``--tmpfs`` over ``/tmp``, the
  home folder, the instructor notebooks, the submissions and the output folder (empty, and
  gone after the run), the Python installation and the two packages bound back
  read-only where a tmpfs hid them, and ``--bind`` of the submission's own working folder, the
  only place a write lasts;
- ``--clearenv``: an environment of ``PATH``, ``HOME`` (inside the working folder), the locale,
  ``PYTHONPATH`` (the grader's ``seqlab``) and the variables the runner sets, nothing of the
  grader's own (tokens, keys).

The time limit (the grader kills the sandbox) and memory limit (``RLIMIT_AS`` on the kernel)
apply as without a sandbox. It does not limit CPU shares, disk usage in the working folder, or
what the kernel reads from the parts of the file system left visible (system files, the Python
installation, ``seqlab``'s sources); see docs/instructors.md.

``auto`` uses bwrap when a trial run works, else a container when an engine answers, its
image is there or can be built and a trial container gets its memory, process and CPU limits,
and otherwise REFUSES to grade (a ``ValueError`` naming what is
missing and ``--sandbox none``): it never grades without a sandbox. ``none`` grades without
one, only when asked for by name. See docs/instructors.md.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path

CHOICES = ("auto", "bwrap", "docker", "none")
HOW_TO_GET_ONE = ("install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf "
                  "install bubblewrap) on a Linux kernel that allows unprivileged user "
                  "namespaces, or pass --sandbox none to grade without one knowingly")


@functools.cache
def bwrap_problem() -> str | None:
    """Why bwrap cannot sandbox here (None when a trial run works)."""
    executable = shutil.which("bwrap")
    if executable is None:
        return "bwrap (bubblewrap) is not installed"
    try:
        trial = subprocess.run([executable, "--unshare-all", "--die-with-parent", "--ro-bind",
                                "/", "/", "--proc", "/proc", "--dev", "/dev", "true"],
                               capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"bwrap could not be run ({error})"
    if trial.returncode != 0:
        return f"bwrap cannot create namespaces here ({trial.stderr.strip() or trial.returncode})"
    return None


def resolve(choice: str, log=print) -> str:
    """The sandbox to use for ``choice``: "bwrap", "docker" or "none" (only when asked for).

    ``auto``: bwrap, else a container (saying so once), else a refusal.

    Raises:
        ValueError: for an unknown choice; ``bwrap`` or ``docker`` where it cannot run;
            ``auto`` where neither can (naming what is missing and ``--sandbox none``).
    """
    from seqlab_instructor.homework import docker_sandbox

    if choice not in CHOICES:
        raise ValueError(f"--sandbox must be one of {', '.join(CHOICES)}; got {choice!r}.")
    if choice == "none":
        return "none"
    if choice == "docker":
        problem = docker_sandbox.docker_problem()
        if problem is not None:
            raise ValueError(f"--sandbox docker: {problem}; {docker_sandbox.HOW_TO_GET_ONE}.")
        return "docker"
    problem = bwrap_problem()
    if problem is None:
        return "bwrap"
    if choice == "bwrap":
        raise ValueError(f"--sandbox bwrap: {problem}; {HOW_TO_GET_ONE}.")
    engine_problem = docker_sandbox.docker_problem()
    if engine_problem is None:
        log(f"sandbox: {problem}; each submission runs in a {docker_sandbox.engine()} "
            f"container instead (--sandbox docker).")
        return "docker"
    raise ValueError(
        f"refusing to grade without a sandbox: {problem}, and {engine_problem}. To sandbox each "
        f"submission, {HOW_TO_GET_ONE.split(', or pass')[0]}; or {docker_sandbox.HOW_TO_GET_ONE}. "
        f"To grade WITHOUT a sandbox, knowingly (submitted code then runs as you, with your "
        f"files, network and environment), pass --sandbox none.")


def _covers(path: Path, hidden: Iterable[Path]) -> bool:
    return any(path == h or path.is_relative_to(h) for h in hidden)


def bwrap_command(command: Sequence[str], work: Path, *, hide: Iterable[Path] = (),
                  env: dict[str, str] | None = None) -> list[str]:
    """``bwrap … command``: ``command`` sandboxed, writing only to ``work``.

    Args:
        command: what to run inside (a Python process; the kernel is its child).
        work: the submission's working folder, writable inside, at the same path.
        hide: folders to cover with an empty tmpfs (instructor notebooks, submissions,
            output folder), besides ``/tmp``, the temporary folder Python uses (``$TMPDIR``,
            wherever it is) and the home folder.
        env: the whole environment inside (``PATH`` is added).
    """
    work = Path(work).resolve()
    hidden = [Path("/tmp"), Path("/var/tmp"), Path(tempfile.gettempdir()).resolve(),
              Path.home().resolve(), Path("/root"), *(Path(p).resolve() for p in hide)]
    hidden = [h for h in dict.fromkeys(hidden) if h.is_dir() and h != Path("/")]
    # What the process needs from hidden places: Python, seqlab and the grader's recording
    # module in seqlab_instructor (read-only).
    import seqlab
    import seqlab_instructor

    needed = [Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve(),
              Path(sys.executable).resolve().parent, Path(seqlab.__file__).resolve().parent,
              Path(seqlab_instructor.__file__).resolve().parent,
              *(Path(p).resolve() for p in sys.path if p and Path(p).is_dir()
                and "-packages" in Path(p).name)]  # user site-packages under a hidden home
    args = ["bwrap", "--unshare-all", "--die-with-parent", "--new-session",
            "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev"]
    for folder in hidden:
        args += ["--tmpfs", str(folder)]
    needed = list(dict.fromkeys(needed))
    needed = [f for f in needed if not any(f != g and f.is_relative_to(g) for g in needed)]
    for folder in needed:
        if _covers(folder, hidden):
            args += ["--ro-bind", str(folder), str(folder)]
    args += ["--bind", str(work), str(work), "--chdir", str(work), "--clearenv"]
    environment = {"PATH": os.defpath if not env or "PATH" not in env else env["PATH"],
                   **(env or {})}
    for name, value in environment.items():
        args += ["--setenv", name, value]
    return [*args, "--", *command]
