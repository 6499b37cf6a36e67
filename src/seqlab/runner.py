"""Execute the notebooks headless (papermill) and keep the executed copies with their plots.

    python -m seqlab.runner                 # every notebook in FAST mode -> runs/
    python -m seqlab.runner 03 04           # only notebooks whose names start with these
    python -m seqlab.runner --full          # real data and the real TF-Hub module (needs internet)

The tests call :func:`run_notebook` too, so "it runs in CI" and "it runs for you" are the same
code path.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from seqlab import config


@dataclass
class NotebookRun:
    notebook: Path
    output: Path
    seconds: float


def run_notebook(notebook: Path, output_dir: Path | None = None, *, fast: bool = True,
                 parameters: dict | None = None, timeout: int = 900,
                 cwd: Path | None = None) -> NotebookRun:
    """Execute one notebook with a real Jupyter kernel and save the executed copy.

    papermill injects the parameters (``FAST`` and any others, after the cell tagged
    ``parameters``); nbclient then runs the cells, honouring the ``raises-exception`` tag that
    student copies put on exercise and check cells. FAST mode is also set in the kernel's
    environment (``SEQLAB_FAST``), so code that reads the flag directly agrees with the
    parameter. The executed copy is written even when a cell fails, to show where.

    Raises:
        FileNotFoundError: if the notebook does not exist.
        nbclient.exceptions.CellExecutionError: if a cell not tagged ``raises-exception``
            fails; its message names the cell and the error.
    """
    import logging

    import nbformat
    import papermill
    from nbclient import NotebookClient

    notebook = Path(notebook)
    if not notebook.is_file():
        raise FileNotFoundError(f"No notebook at {notebook}")
    output_dir = Path(output_dir or config.RUNS_DIR)
    output_dir.mkdir(parents=True, exist_ok=True)
    output = output_dir / notebook.name
    params = {"FAST": fast, **(parameters or {})}
    # papermill warns that it cannot infer types from expressions such as
    # `FAST = seqlab.config.is_fast()`; it only needs them for `--help-notebook`.
    logging.getLogger("papermill").setLevel(logging.ERROR)
    papermill.execute_notebook(str(notebook), str(output), parameters=params,
                               prepare_only=True, progress_bar=False, kernel_name="python3")
    prepared = nbformat.read(output, as_version=4)
    client = NotebookClient(prepared, timeout=timeout, kernel_name="python3",
                            resources={"metadata": {"path": str(cwd or notebook.parent)}})
    previous = os.environ.get("SEQLAB_FAST")
    os.environ["SEQLAB_FAST"] = "1" if fast else "0"
    start = time.perf_counter()
    try:
        client.execute()
    finally:
        seconds = time.perf_counter() - start
        nbformat.write(prepared, output)
        if previous is None:
            os.environ.pop("SEQLAB_FAST", None)
        else:
            os.environ["SEQLAB_FAST"] = previous
    return NotebookRun(notebook, output, seconds)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m seqlab.runner", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("names", nargs="*", help="notebook name prefixes, e.g. 01 04")
    parser.add_argument("--full", action="store_true", help="full mode (needs internet)")
    parser.add_argument("--notebooks", type=Path, default=config.REPO_ROOT / "notebooks")
    parser.add_argument("--output", type=Path, default=config.RUNS_DIR)
    args = parser.parse_args(argv)
    paths = sorted(args.notebooks.glob("*.ipynb"))
    if args.names:
        paths = [p for p in paths if any(p.name.startswith(n) for n in args.names)]
    if not paths:
        print(f"No notebooks matched {args.names} in {args.notebooks}", file=sys.stderr)
        return 2
    failures = 0
    print(f"{'notebook':<45} {'mode':<5} {'seconds':>8}  result")
    for path in paths:
        try:
            run = run_notebook(path, args.output, fast=not args.full)
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
