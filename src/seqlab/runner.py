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

    FAST mode is passed both ways the notebooks read it: the ``FAST`` papermill parameter and
    the ``SEQLAB_FAST`` environment variable of the kernel.

    Raises:
        FileNotFoundError: if the notebook does not exist.
        papermill.PapermillExecutionError: if a cell fails; its message names the cell.
    """
    import papermill

    notebook = Path(notebook)
    if not notebook.is_file():
        raise FileNotFoundError(f"No notebook at {notebook}")
    output_dir = Path(output_dir or config.RUNS_DIR)
    output_dir.mkdir(parents=True, exist_ok=True)
    output = output_dir / notebook.name
    params = {"FAST": fast, **(parameters or {})}
    previous = os.environ.get("SEQLAB_FAST")
    os.environ["SEQLAB_FAST"] = "1" if fast else "0"
    start = time.perf_counter()
    try:
        papermill.execute_notebook(
            str(notebook), str(output), parameters=params, kernel_name="python3",
            cwd=str(cwd or notebook.parent), progress_bar=False, execution_timeout=timeout,
        )
    finally:
        if previous is None:
            os.environ.pop("SEQLAB_FAST", None)
        else:
            os.environ["SEQLAB_FAST"] = previous
    return NotebookRun(notebook, output, time.perf_counter() - start)


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
            first_line = str(error).strip().splitlines()[-1] if str(error).strip() else error
            print(f"{path.name:<45} {'full' if args.full else 'FAST':<5} {'-':>8}  "
                  f"FAILED: {type(error).__name__}: {first_line}")
    return 1 if failures else 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
