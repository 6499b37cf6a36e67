"""Running one submission: its own working folder, process, kernel and (where it works) sandbox.

The grader writes the submission and a run spec into a fresh temporary folder and starts
``python -m seqlab_instructor.homework.run SPEC`` there, wrapped in ``bwrap`` or ``docker run`` when sandboxed
(:mod:`seqlab_instructor.homework.sandbox`). That process executes the notebook with
:func:`seqlab_instructor.runner.run_notebook` (the tests' runner: papermill parameters, nbclient, a fresh
kernel, the time and memory limits) followed by the epilogue cells that record the values the
checks need (:mod:`seqlab_instructor.homework.verdicts`), and writes the executed notebook and a small
result file into the folder. The grader reads those back as untrusted data (no links followed,
sizes limited) and kills the whole process tree if the run exceeds its limit.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import sys
from dataclasses import dataclass, field
from pathlib import Path

from seqlab import config

#: The stand-in embedding module's folder under models/ (``seqlab.data.standin.STANDIN_DIRNAME``,
#: not imported: that module loads TensorFlow, which the grader's process never needs).
STANDIN_DIRNAME = "standin-text-embedding"
#: Seconds on top of the notebook's and the checks' limits for starting Python and the kernel.
STARTUP_SECONDS = 120
MAX_NOTEBOOK_BYTES = 64 * 1024**2
SPEC_NAME = "seqlab-run-spec.json"
RESULT_NAME = "seqlab-run-result.json"


@dataclass
class SubmissionRun:
    """What came back from a submission's run (all of it written by the submission's side)."""

    executed: object | None = None  # the executed notebook (nbformat node), if readable
    seconds: float = 0.0
    stopped: str | None = None
    errors: list[tuple[int, str]] = field(default_factory=list)
    problem: str | None = None  # why nothing (or not everything) came back


def private_home(home: Path) -> Path:
    """A ``SEQLAB_HOME`` of the submission's own: a copy of ``data/``, an empty ``models/``.

    Checkpoints and results a notebook writes then land in the temporary folder, so parallel
    submissions never share a file and none overwrites the instructor's ``models/``. The
    stand-in module is copied when built already, so each kernel need not rebuild it.
    """
    shutil.copytree(config.DATA_DIR, home / "data")
    (home / "models").mkdir(parents=True)
    standin = config.MODELS_DIR / STANDIN_DIRNAME
    if standin.is_dir():
        shutil.copytree(standin, home / "models" / STANDIN_DIRNAME)
    return home


def read_untrusted(path: Path, limit: int = MAX_NOTEBOOK_BYTES, root: Path | None = None) -> str:
    """Text of a file the submission's side wrote; refuses links and files over ``limit``.

    With ``root`` (the submission's working folder) the file must lie inside it with no link
    anywhere on the way, so a submission cannot point the grader at a file of the host.

    Raises:
        ValueError: if the file is missing, reached through a link, not a regular file, or
            too large.
    """
    path = Path(path)
    if root is not None:
        real_root = Path(os.path.realpath(root))
        if Path(os.path.realpath(path)) != real_root / path.relative_to(root):
            raise ValueError(f"{path.name} is reached through a link")
    if path.is_symlink() or not path.is_file():
        raise ValueError(f"{path.name} was not written")
    if path.stat().st_size > limit:
        raise ValueError(f"{path.name} is larger than {limit // 1024**2} MB")
    return path.read_text(encoding="utf-8", errors="replace")


def _package_root() -> str:
    import seqlab

    return str(Path(seqlab.__file__).resolve().parent.parent)


async def run_submission(notebook, work: Path, *, sandbox: str, hide=(),
                         parameters: dict | None = None, time_limit: float,
                         check_timeout: int, memory_limit: int | None,
                         epilogue: list[str]) -> SubmissionRun:
    """Execute ``notebook`` (an nbformat node) in ``work`` as one sandboxed process tree."""
    import nbformat

    from seqlab_instructor.homework.sandbox import bwrap_command

    work = Path(work)
    notebook_path = work / "submission.ipynb"
    nbformat.write(notebook, notebook_path)
    home = private_home(work / "seqlab-home")
    (work / "home").mkdir()
    spec = {"notebook": str(notebook_path), "output_dir": str(work / "executed"),
            "parameters": parameters or {}, "time_limit": time_limit,
            "epilogue": epilogue, "epilogue_timeout": check_timeout,
            "memory_limit": memory_limit, "result": str(work / RESULT_NAME)}
    (work / SPEC_NAME).write_text(json.dumps(spec), encoding="utf-8")
    env = {"SEQLAB_HOME": str(home), "PYTHONPATH": _package_root(),
           # No GPU: FAST runs are sized for a CPU, TensorFlow would give each parallel kernel
           # the whole GPU memory, and CUDA maps more address space than RLIMIT_AS allows.
           "CUDA_VISIBLE_DEVICES": ""}
    command = [sys.executable, "-m", "seqlab_instructor.homework.run", str(work / SPEC_NAME)]
    if sandbox == "bwrap":
        inside = {"PATH": f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin",
                  "HOME": str(work / "home"), "LANG": "C.UTF-8", "TMPDIR": "/tmp", **env}
        command, environment = bwrap_command(command, work, hide=hide, env=inside), None
    elif sandbox == "docker":
        from seqlab_instructor.homework import docker_sandbox

        docker_sandbox.give_work_folder(work, docker_sandbox.container_user())
        command = docker_sandbox.docker_command(command, work, env={"LANG": "C.UTF-8", **env})
        environment = None  # the engine's client: the grader's; the container gets only env
    else:
        path = os.pathsep.join(p for p in (env["PYTHONPATH"], os.environ.get("PYTHONPATH")) if p)
        # Not the grader's SEQLAB_BACKUP_DIR: every submission's training runs are its own
        # (in its SEQLAB_HOME's models/backups), or one student's finished run would be loaded
        # into the next student's model instead of training it.
        inherited = {k: v for k, v in os.environ.items() if k != "SEQLAB_BACKUP_DIR"}
        environment = {**inherited, **env, "PYTHONPATH": path}
    limit = time_limit + check_timeout * len(epilogue) + STARTUP_SECONDS
    result = SubmissionRun()
    starting = asyncio.ensure_future(asyncio.create_subprocess_exec(
        *command, cwd=work, env=environment, stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
        start_new_session=True))
    process = None
    try:
        process = await asyncio.shield(starting)  # a stopped grading run still gets its handle
        _, stderr = await asyncio.wait_for(process.communicate(), limit)
    except asyncio.TimeoutError:  # TimeoutError from Python 3.11 on
        stderr = b""
        result.problem = f"the run was stopped after {limit:g} s"
    finally:
        process = process or await starting  # stopped while it started: end it here too
        # Whatever the submission left behind in its process group (sandboxed: bwrap's PID
        # namespace ends with it anyway).
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        # read the pipe to its end too, so the process's transport closes before the event
        # loop does (a grading run stopped by Ctrl-C); a kernel holding it open ends within
        # a second of its parent
        with contextlib.suppress(ProcessLookupError, asyncio.TimeoutError):
            await asyncio.wait_for(process.communicate(), 30)
    try:
        outcome = json.loads(read_untrusted(work / RESULT_NAME, 1024**2, work))
        result.seconds = float(outcome["seconds"])
        result.stopped = None if outcome["stopped"] is None else str(outcome["stopped"])[:500]
        result.errors = [(int(index), str(error)[:500]) for index, error in outcome["errors"]]
    except (ValueError, KeyError, TypeError) as error:
        tail = stderr.decode(errors="replace").strip().splitlines()[-1:] if stderr else []
        result.problem = result.problem or f"the run did not finish ({error}" + (
            f"; {tail[0][:300]}" if tail else "") + ")"
    try:
        result.executed = nbformat.reads(
            read_untrusted(work / "executed" / notebook_path.name, root=work), as_version=4)
    except Exception as error:  # noqa: BLE001 - the submission's side may write anything
        result.problem = result.problem or f"no executed notebook came back ({error})"
    return result


def _execute(spec_path: str) -> int:
    """Inside the sandbox: run the notebook as the spec says, write the result file."""
    from seqlab_instructor.runner import run_notebook

    spec = json.loads(Path(spec_path).read_text(encoding="utf-8"))
    run = run_notebook(Path(spec["notebook"]), Path(spec["output_dir"]), fast=True,
                       parameters=spec["parameters"], cwd=Path(spec["notebook"]).parent,
                       allow_errors=True, time_limit=spec["time_limit"],
                       memory_limit=spec["memory_limit"], epilogue=spec["epilogue"],
                       epilogue_timeout=spec["epilogue_timeout"])
    Path(spec["result"]).write_text(json.dumps(
        {"seconds": run.seconds, "stopped": run.stopped, "errors": run.errors}), encoding="utf-8")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(_execute(sys.argv[1]))
