"""``--sandbox docker``: each submission in its own container (Docker or Podman).

For macOS and Windows (Docker Desktop, Podman Desktop) and Linux machines where bubblewrap
cannot create namespaces. The image (:data:`DOCKERFILE`, ``FROM python:3.13-slim``: Colab's
Python) holds Python and the pinned dependencies only, installed as CI installs them
(``pip install -r colab-runtime.txt -c colab-runtime.txt -r requirements.txt``); it is built
from this repository's own files on first use and tagged with a hash of them
(``seqlab-grader:<hash>``), so a change of pins builds a new one. The grader's own ``src``
folder (``seqlab`` and ``seqlab_instructor``) is mounted read-only into each container, so the
kernel runs exactly the grader's code.

Each submission runs as (:func:`docker_command`)::

    ENGINE run --rm --init --network none --read-only --cap-drop ALL
        --security-opt no-new-privileges --memory M --memory-swap M --cpus C --pids-limit P
        --user UID:GID --tmpfs /tmp --tmpfs /home/grader
        --mount type=bind,source=<its working folder>,target=<same>      (the only writable bind)
        --mount type=bind,source=<src: seqlab, seqlab_instructor>,target=/opt/seqlab-src,readonly
        --workdir <its working folder> -e NAME=VALUE … IMAGE timeout -s KILL LIMIT python -m …

- no network at all (``--network none``; the kernel talks to nbclient over the container's
  own loopback), no capabilities, no privilege gain;
- the image read-only; ``/tmp`` and the home folder are empty tmpfs gone with the container;
  nothing of the host is visible but the working folder (which holds a copy of ``data/``)
  and the two packages, read-only: not the instructor notebooks, other submissions, the
  output folder or any file of yours;
- an environment of exactly the variables given (``-e``), none of the grader's;
- memory (``--memory``, the ``--memory-limit``; without swap), CPUs (at most 2, or the
  machine's) and processes or threads (``--pids-limit``) limited by the engine; the time limit
  (the grader's, from the run spec) enforced inside by ``timeout -s KILL`` under ``--init``
  (the container ends with it, and ``--rm`` removes it), besides the grader killing the client;
- a non-root user: the grader's own uid:gid, or ``nobody`` (65534) when the grader runs as
  root (the working folder is then given to it).

Before the first submission, a trial container run with the same options must show those limits
in its cgroup (:func:`trial_problem`), or the sandbox is refused, naming what did not apply.

The engine is ``docker`` unless ``SEQLAB_CONTAINER_ENGINE`` names another (``podman``); the image
name can be forced with ``SEQLAB_CONTAINER_IMAGE``.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from seqlab import config

DOCKERFILE = Path(__file__).resolve().parent / "docker" / "Dockerfile"
ENGINES = ("docker", "podman")
IMAGE_NAME = "seqlab-grader"
HOME = "/home/grader"
PACKAGE_TARGET = "/opt/seqlab-src"
NOBODY = (65534, 65534)
PIDS_LIMIT = 1024  # TensorFlow starts a thread pool per core; threads count as pids
DEFAULT_MEMORY_BYTES = 8 * 1024**3
#: The grader's STARTUP_SECONDS (seqlab_instructor.homework.run), for the limit inside.
STARTUP_SECONDS = 120
TRIAL_MEMORY_BYTES = 512 * 1024**2
#: Run in the trial container: its memory, pids and CPU quota limits, "?" where none is shown.
LIMITS_PROBE = """\
def shown(*names):
    for name in names:
        try:
            return open("/sys/fs/cgroup/" + name).read().split()[0]
        except (OSError, IndexError):
            pass
    return "?"
print(shown("memory.max", "memory/memory.limit_in_bytes"), shown("pids.max", "pids/pids.max"),
      shown("cpu.max", "cpu/cpu.cfs_quota_us"))
"""
HOW_TO_GET_ONE = ("install Docker (Docker Desktop on macOS/Windows) or Podman and make sure "
                  "`docker info` (or SEQLAB_CONTAINER_ENGINE=podman and `podman info`) works; "
                  "the first run builds the image, which needs the network once")


def engine() -> str:
    """The container engine's command (``SEQLAB_CONTAINER_ENGINE``, default ``docker``)."""
    return os.environ.get("SEQLAB_CONTAINER_ENGINE", "docker")


def context_files() -> dict[str, bytes]:
    """The build context: the Dockerfile and the requirements, ``-e .`` lines dropped."""
    root = config.REPO_ROOT
    requirements = "".join(
        line for line in (root / "requirements.txt").read_text(encoding="utf-8")
        .splitlines(keepends=True) if not line.strip().startswith(("-e", "--editable")))
    return {"Dockerfile": DOCKERFILE.read_bytes(), "requirements.txt": requirements.encode(),
            "colab-runtime.txt": (root / ".ci" / "colab-runtime.txt").read_bytes()}


def image() -> str:
    """``seqlab-grader:<12 hex of the context>`` (or ``SEQLAB_CONTAINER_IMAGE``)."""
    if os.environ.get("SEQLAB_CONTAINER_IMAGE"):
        return os.environ["SEQLAB_CONTAINER_IMAGE"]
    digest = hashlib.sha256()
    for name, content in sorted(context_files().items()):
        digest.update(name.encode() + b"\0" + content + b"\0")
    return f"{IMAGE_NAME}:{digest.hexdigest()[:12]}"


def _ask(args: list[str], timeout: float) -> subprocess.CompletedProcess | str:
    try:
        return subprocess.run(args, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"{args[0]} could not be run ({error})"


def build_image(log=print) -> str | None:
    """Build :func:`image` from :func:`context_files`; why it failed, or None."""
    with tempfile.TemporaryDirectory(prefix="seqlab-image-") as context:
        for name, content in context_files().items():
            (Path(context) / name).write_bytes(content)
        log(f"building the grading image {image()} with {engine()} (once; minutes) …")
        done = _ask([engine(), "build", "-t", image(), context], timeout=3600)
    if isinstance(done, str):
        return done
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        return f"`{engine()} build` failed: {' / '.join(tail) or done.returncode}"
    return None


@functools.cache
def docker_problem(build: bool = True) -> str | None:
    """Why containers cannot sandbox here (None when the engine answers, the image is there and
    a trial container gets every limit: :func:`trial_problem`).

    With ``build``, a missing image is built (minutes, network once).
    """
    name = engine()
    if shutil.which(name) is None:
        return f"{name} is not installed"
    answer = _ask([name, "info"], timeout=60)
    if isinstance(answer, str):
        return answer
    if answer.returncode != 0:
        lines = (answer.stderr or answer.stdout).strip().splitlines()
        return f"`{name} info` failed ({lines[-1] if lines else answer.returncode}): is its " \
               f"daemon or machine running?"
    found = _ask([name, "image", "inspect", image()], timeout=60)
    if isinstance(found, str) or found.returncode != 0:
        if not build:
            return f"the image {image()} is not built"
        problem = build_image(log=lambda *parts: print(*parts, file=sys.stderr))
        if problem is not None:
            return problem
    return trial_problem()


def trial_problem() -> str | None:
    """Why a trial container, run as a submission's, fails or lacks a limit (None when fine).

    Engines may start a container and drop a limit with a warning (Docker without the cgroup
    controller, rootless Podman on cgroup v1), or fail only at ``run`` (crun on hybrid cgroups:
    "cgroups in hybrid mode not supported"). The trial prints the memory, process and CPU
    limits of its own cgroup (v2 files, else v1's); each must be the one asked for.
    """
    with tempfile.TemporaryDirectory(prefix="seqlab-trial-") as work:
        (Path(work) / "spec.json").write_text(json.dumps(
            {"time_limit": 60, "epilogue_timeout": 0, "epilogue": [],
             "memory_limit": TRIAL_MEMORY_BYTES}), encoding="utf-8")
        give_work_folder(Path(work), container_user())
        done = _ask(docker_command(["python", "-c", LIMITS_PROBE], Path(work), env={},
                                   spec_name="spec.json"), timeout=300)
    if isinstance(done, str):
        return done
    if done.returncode != 0:
        lines = (done.stderr or done.stdout).strip().splitlines()
        return f"`{engine()} run` fails here ({lines[-1] if lines else done.returncode})"
    memory, pids, cpu = (done.stdout.split() + ["?"] * 3)[:3]
    missing = [option for option, held in (("--memory", memory == str(TRIAL_MEMORY_BYTES)),
                                           ("--pids-limit", pids == str(PIDS_LIMIT)),
                                           ("--cpus", cpu not in ("max", "-1", "?")))
               if not held]
    if missing:
        return (f"{engine()} runs containers here without the limits of {', '.join(missing)} "
                f"(their cgroup shows memory {memory}, pids {pids}, CPU quota {cpu})")
    return None


def container_user() -> tuple[int, int]:
    """uid:gid inside: the grader's own, or ``nobody`` when the grader is root."""
    if not hasattr(os, "getuid") or os.getuid() == 0:
        return NOBODY
    return os.getuid(), os.getgid()


def give_work_folder(work: Path, user: tuple[int, int]) -> None:
    """Let ``user`` write the working folder (only needed when it is not the grader's uid)."""
    if hasattr(os, "getuid") and user != (os.getuid(), os.getgid()):
        for folder, dirs, files in os.walk(work):
            for name in (folder, *(os.path.join(folder, n) for n in dirs + files)):
                os.chown(name, *user, follow_symlinks=False)


def _time_limit(work: Path, spec_name: str) -> tuple[int, int | None]:
    """``(seconds, memory bytes or None)`` from the run spec the grader wrote."""
    spec = json.loads((work / spec_name).read_text(encoding="utf-8"))
    seconds = spec["time_limit"] + spec["epilogue_timeout"] * len(spec["epilogue"])
    return int(seconds + STARTUP_SECONDS), spec.get("memory_limit")


def docker_command(command: list[str], work: Path, *, env: dict[str, str],
                   spec_name: str = "seqlab-run-spec.json", user: tuple[int, int] | None = None,
                   package_root: Path | None = None) -> list[str]:
    """``ENGINE run … IMAGE timeout … command``: ``command`` in a container, writing only ``work``.

    Args:
        command: the grader's ``[python, "-m", "seqlab_instructor.homework.run", SPEC]``; the
            first item becomes the image's ``python``.
        work: the submission's working folder (holds the spec), mounted at the same path.
        env: the whole environment inside (``PYTHONPATH`` becomes the mounted package,
            ``HOME`` the tmpfs home).
        user: uid:gid inside (default :func:`container_user`).
        package_root: the folder holding the grader's ``seqlab`` and ``seqlab_instructor``
            packages (default: this one's).
    """
    import seqlab

    work = Path(work).resolve()
    seconds, memory = _time_limit(work, spec_name)
    memory = memory or DEFAULT_MEMORY_BYTES
    uid, gid = user or container_user()
    package_root = Path(package_root or Path(seqlab.__file__).resolve().parent.parent)
    cpus = min(2, os.cpu_count() or 1)
    args = [engine(), "run", "--rm", "--init", "--network", "none",
            "--read-only", "--cap-drop", "ALL", "--security-opt", "no-new-privileges",
            "--memory", str(memory), "--memory-swap", str(memory), "--cpus", str(cpus),
            "--pids-limit", str(PIDS_LIMIT), "--user", f"{uid}:{gid}",
            "--tmpfs", "/tmp:rw,exec,mode=1777", "--tmpfs", f"{HOME}:rw,mode=1777",
            "--mount", f"type=bind,source={work},target={work}",
            "--mount", f"type=bind,source={package_root},target={PACKAGE_TARGET},readonly",
            "--workdir", str(work)]
    if engine() == "podman" and (uid, gid) != NOBODY:
        args += ["--userns", "keep-id"]  # rootless Podman: the grader's uid inside and out
    environment = {**env, "HOME": HOME, "TMPDIR": "/tmp", "PYTHONPATH": PACKAGE_TARGET}
    environment.pop("PATH", None)  # the image's own
    for name, value in environment.items():
        args += ["-e", f"{name}={value}"]
    return [*args, image(), "timeout", "-s", "KILL", str(seconds), "python", *command[1:]]
