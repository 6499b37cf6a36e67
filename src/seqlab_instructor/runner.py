"""Execute the notebooks headless (papermill) and keep the executed copies with their plots.

    python -m seqlab_instructor.runner                 # every notebook in FAST mode -> runs/
    python -m seqlab_instructor.runner 03 04           # only notebooks whose names start with these
    python -m seqlab_instructor.runner --full          # real data and the real TF-Hub module (needs internet)
    python -m seqlab_instructor.runner 04 --full -p EPOCHS 2 -p NUM_EXAMPLES 30000   # size a full run

``-p NAME VALUE`` overrides a variable of the notebook's ``parameters`` cell, as papermill's own
``-p`` does: ``True``/``False``/``None`` and numbers are read as such, anything else is a string.

The tests and the homework grader (:mod:`seqlab_instructor.homework`) call :func:`run_notebook` too, so
"it runs in CI", "it runs for you" and "it was graded" are the same code path.
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from seqlab import config
from seqlab_instructor.cells import EPILOGUE_TAG

# Runs in the kernel's process before ipykernel starts: sets the address-space limit, then
# replaces itself with the real kernel command (same process id, so interrupts still reach it).
_LIMIT_MEMORY = (
    "import os, resource, sys; limit = int(sys.argv[1]); "
    "hard = resource.getrlimit(resource.RLIMIT_AS)[1]; "
    "limit = limit if hard == resource.RLIM_INFINITY else min(limit, hard); "
    "resource.setrlimit(resource.RLIMIT_AS, (limit, hard)); "
    "os.execvp(sys.argv[2], sys.argv[2:])"
)


@dataclass
class NotebookRun:
    """What :func:`run_notebook` did.

    ``stopped`` says why execution ended before the last cell (time limit, dead kernel), or is
    ``None`` when every cell was executed; ``errors`` lists ``(cell index, "Name: message")``
    for every cell that raised (only possible with ``allow_errors=True`` or cells tagged
    ``raises-exception``).
    """

    notebook: Path
    output: Path
    seconds: float
    stopped: str | None = None
    errors: list[tuple[int, str]] | None = None


def parse_parameter_value(text: str):
    """A ``-p NAME VALUE`` value as papermill's command line reads it.

    ``"True"``/``"False"`` -> bool, ``"None"`` -> None, an int, then a float, else the string.

    Example:
        >>> [parse_parameter_value(v) for v in ["2", "3e-4", "True", "None", "dates"]]
        [2, 0.0003, True, None, 'dates']
    """
    if text in ("True", "False"):
        return text == "True"
    if text == "None":
        return None
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def parse_parameters(pairs: Sequence[Sequence[str]] | None) -> dict:
    """``[["EPOCHS", "2"], ...]`` (argparse's ``-p`` pairs) -> ``{"EPOCHS": 2, ...}``.

    Raises:
        ValueError: if a name is not a Python identifier (papermill would write a cell that
            does not run).
    """
    parameters = {}
    for name, value in pairs or []:
        if not name.isidentifier():
            raise ValueError(f"-p expects NAME VALUE with NAME a Python variable name of the "
                             f"parameters cell (e.g. -p EPOCHS 2); got NAME {name!r}.")
        parameters[name] = parse_parameter_value(value)
    return parameters


def _kernel_manager(memory_limit: int | None, socket_dir: str | None = None):
    """A kernel manager whose kernel process runs under ``RLIMIT_AS = memory_limit`` bytes.

    With ``socket_dir`` (POSIX), the kernel talks over Unix sockets in that folder (ZeroMQ's
    IPC transport) instead of TCP ports on localhost: no other user of the machine can connect,
    and ipykernel has no reason to warn that it runs "over TCP without encryption". The folder
    must be the kernel's own (jupyter_client's default IPC path is relative to the working
    directory, shared by kernels run side by side).
    """
    from jupyter_client.manager import AsyncKernelManager

    class LimitedKernelManager(AsyncKernelManager):
        def format_kernel_cmd(self, extra_arguments=None):
            command = super().format_kernel_cmd(extra_arguments)
            if not memory_limit:
                return command
            return [sys.executable, "-c", _LIMIT_MEMORY, str(int(memory_limit)), *command]

    if socket_dir is None:
        return LimitedKernelManager(kernel_name="python3")
    return LimitedKernelManager(kernel_name="python3", transport="ipc",
                                ip=os.path.join(socket_dir, "kernel"))


def memory_limit_supported() -> bool:
    """True where the kernel's memory can be limited (POSIX ``resource.RLIMIT_AS``)."""
    try:
        import resource
    except ImportError:  # Windows
        return False
    return hasattr(resource, "RLIMIT_AS")


async def async_run_notebook(notebook: Path, output_dir: Path | None = None, *,
                             fast: bool = True, parameters: dict | None = None,
                             timeout: int | None = 900, cwd: Path | None = None,
                             allow_errors: bool = False, time_limit: float | None = None,
                             memory_limit: int | None = None, epilogue: Sequence[str] = (),
                             epilogue_timeout: int = 120,
                             env: Mapping[str, str] | None = None) -> NotebookRun:
    """:func:`run_notebook` as a coroutine, so several notebooks can run at once."""
    import logging

    import nbformat
    import papermill
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError, DeadKernelError

    notebook = Path(notebook)
    if not notebook.is_file():
        raise FileNotFoundError(f"No notebook at {notebook}")
    if memory_limit and not memory_limit_supported():
        raise ValueError("memory_limit needs resource.RLIMIT_AS (Linux, macOS); pass None here.")
    output_dir = Path(output_dir or config.RUNS_DIR)
    output_dir.mkdir(parents=True, exist_ok=True)
    output = output_dir / notebook.name
    params = {"FAST": fast, **(parameters or {})}
    # papermill's own chatter (its parameter-type inference for `--help-notebook`) stays out of
    # a run's output.
    logging.getLogger("papermill").setLevel(logging.ERROR)
    papermill.execute_notebook(str(notebook), str(output), parameters=params,
                               prepare_only=True, progress_bar=False, kernel_name="python3")
    prepared = nbformat.read(output, as_version=4)
    own_cells = len(prepared.cells)
    for source in epilogue:
        prepared.cells.append(nbformat.v4.new_code_cell(source, metadata={"tags": [EPILOGUE_TAG]}))

    errors: list[tuple[int, str]] = []

    def record_error(cell, cell_index, execute_reply):
        content = execute_reply["content"]
        errors.append((cell_index, f"{content.get('ename')}: {content.get('evalue')}"))

    # Unix sockets where there are some (not on Windows), in a folder of this kernel's own.
    socket_dir = tempfile.mkdtemp(prefix="seqlab-kernel-") if os.name == "posix" else None
    client = NotebookClient(
        prepared, km=_kernel_manager(memory_limit, socket_dir), kernel_name="python3",
        allow_errors=allow_errors, interrupt_on_timeout=True,
        # What a timed-out cell reports once the kernel has been interrupted.
        error_on_timeout={"ename": "TimeoutError", "evalue": "time limit reached",
                          "traceback": ["TimeoutError: time limit reached"]},
        on_cell_error=record_error,
        resources={"metadata": {"path": str(cwd or notebook.parent)}})
    # FAST (and SIZE, ...) reach the kernel once, as papermill parameters: the setup
    # cell, right after the parameters cell, resolves them (setup() writes SEQLAB_FAST into the
    # kernel's environment for package code that reads it). The kernel inherits the caller's
    # environment, so SEQLAB_SIZE or SEQLAB_STRATEGY set there still apply to what the
    # parameters leave None.
    environment = {**os.environ, **(env or {})}
    # A kernel draws with its inline backend, so plots land in the executed copy; a caller's
    # MPLBACKEND (tests/conftest.py sets Agg) would leave every run without its plots.
    if "MPLBACKEND" not in (env or {}):
        environment.pop("MPLBACKEND", None)
    start = time.monotonic()
    deadline = start + time_limit if time_limit else math.inf
    stopped = None
    try:
        async with client.async_setup_kernel(env=environment, cleanup_kc=True):
            for index, cell in enumerate(prepared.cells):
                epilogue_cell = index >= own_cells
                remaining = deadline - time.monotonic()
                if not epilogue_cell and stopped:
                    continue
                if epilogue_cell:
                    client.timeout = epilogue_timeout
                elif remaining <= 0:
                    stopped = f"time limit of {time_limit:g} s reached before cell {index}"
                    continue
                else:  # None: no limit (a full-mode training cell may run for hours)
                    limit = min(timeout or math.inf, remaining)
                    client.timeout = None if limit == math.inf else max(1, math.ceil(limit))
                cell_start = time.monotonic()
                try:
                    await client.async_execute_cell(cell, index,
                                                    execution_count=client.code_cells_executed + 1)
                except DeadKernelError:
                    stopped = f"the kernel died in cell {index} (out of memory, or it exited)"
                    break
                finally:
                    cell_seconds = time.monotonic() - cell_start
                if (client.timeout is not None and cell_seconds >= client.timeout
                        and not epilogue_cell and not stopped):
                    stopped = (f"time limit of {time_limit:g} s reached in cell {index}"
                               if time.monotonic() >= deadline
                               else f"cell {index} ran longer than its {timeout} s timeout")
                    if not allow_errors:
                        raise CellExecutionError(stopped, "TimeoutError", stopped)
    finally:
        seconds = time.monotonic() - start
        nbformat.write(prepared, output)
        if socket_dir is not None:
            shutil.rmtree(socket_dir, ignore_errors=True)
    return NotebookRun(notebook, output, seconds, stopped, errors)


def run_notebook(notebook: Path, output_dir: Path | None = None, *, fast: bool = True,
                 parameters: dict | None = None, timeout: int | None = 900,
                 cwd: Path | None = None, allow_errors: bool = False,
                 time_limit: float | None = None, memory_limit: int | None = None,
                 epilogue: Sequence[str] = (), epilogue_timeout: int = 120,
                 env: Mapping[str, str] | None = None) -> NotebookRun:
    """Execute one notebook with a real Jupyter kernel and save the executed copy.

    papermill injects the parameters (``FAST`` and any others, after the cell tagged
    ``parameters``, the first code cell); nbclient then runs the cells in a fresh kernel,
    honouring the ``raises-exception`` tag that student copies put on exercise and check cells.
    Each value is sent once, as a parameter: the notebook's setup cell resolves ``FAST``
    and ``SIZE`` (:func:`seqlab.course.notebook.setup`). The executed copy is
    written even when a cell fails, to show where.

    Args:
        notebook: the ``.ipynb`` to execute.
        output_dir: where the executed copy goes (same file name); default ``runs/``.
        fast: FAST mode (offline sample data, stand-in module).
        parameters: overrides for the ``parameters`` cell, e.g. ``{"EPOCHS": 2}``.
        timeout: seconds one cell may run; None: no limit (the command line's full mode: a
            full-size training cell runs for an hour or more on a CPU).
        cwd: the kernel's working directory (default: the notebook's folder).
        allow_errors: keep executing after a cell raises (each error is listed in
            ``NotebookRun.errors``) instead of raising ``CellExecutionError``.
        time_limit: seconds the whole notebook may run; the running cell is interrupted and
            the remaining cells are skipped (``NotebookRun.stopped`` says so).
        memory_limit: bytes of address space for the kernel process (``RLIMIT_AS``; POSIX).
        epilogue: code run after the notebook's own cells, in the same kernel, even when the
            notebook stopped early (not when the kernel died); appended to the executed copy
            as cells tagged ``epilogue``.
        epilogue_timeout: seconds each epilogue cell may run.
        env: extra environment variables for the kernel (e.g. ``SEQLAB_HOME``).

    Raises:
        FileNotFoundError: if the notebook does not exist.
        nbclient.exceptions.CellExecutionError: if a cell not tagged ``raises-exception``
            fails (or the time limit is hit) while ``allow_errors`` is False; its message
            names the cell and the error.
    """
    from nbclient.util import run_sync

    return run_sync(async_run_notebook)(
        notebook, output_dir, fast=fast, parameters=parameters, timeout=timeout, cwd=cwd,
        allow_errors=allow_errors, time_limit=time_limit, memory_limit=memory_limit,
        epilogue=epilogue, epilogue_timeout=epilogue_timeout, env=env)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m seqlab_instructor.runner", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("names", nargs="*", help="notebook name prefixes, e.g. 01 04")
    parser.add_argument("--full", action="store_true", help="full mode (needs internet)")
    parser.add_argument("-p", "--parameter", nargs=2, action="append", metavar=("NAME", "VALUE"),
                        help="override a variable of the parameters cell (repeatable), "
                             "e.g. -p EPOCHS 2")
    parser.add_argument("--notebooks", type=Path, default=config.REPO_ROOT / "notebooks")
    parser.add_argument("--output", type=Path, default=config.RUNS_DIR)
    parser.add_argument("--cell-timeout", type=int, default=None, metavar="SECONDS",
                        help="seconds one cell may run (default: 900 in FAST mode; no limit "
                             "with --full, whose training cells run for an hour or more)")
    args = parser.parse_args(argv)
    if args.cell_timeout is None and not args.full:
        args.cell_timeout = 900
    try:
        parameters = parse_parameters(args.parameter)
    except ValueError as error:
        parser.error(str(error))
    paths = sorted(args.notebooks.glob("*.ipynb"))
    if args.names:
        paths = [p for p in paths if any(p.name.startswith(n) for n in args.names)]
    if not paths:
        print(f"No notebooks matched {args.names} in {args.notebooks}", file=sys.stderr)
        return 2
    if parameters:
        print("parameters: " + ", ".join(f"{k} = {v!r}" for k, v in parameters.items()))
    failures = 0
    print(f"{'notebook':<45} {'mode':<5} {'seconds':>8}  result")
    for path in paths:
        try:
            run = run_notebook(path, args.output, fast=not args.full, parameters=parameters,
                               timeout=args.cell_timeout)
            print(f"{path.name:<45} {'full' if args.full else 'FAST':<5} {run.seconds:8.1f}  "
                  f"ok -> {run.output}")
        except Exception as error:  # noqa: BLE001 - report every notebook, then fail
            failures += 1
            lines = [line for line in str(error).strip().splitlines() if line.strip()]
            first_line = lines[-1] if lines else ""
            print(f"{path.name:<45} {'full' if args.full else 'FAST':<5} {'-':>8}  "
                  f"FAILED: {type(error).__name__}: {first_line}")
    return 1 if failures else 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
