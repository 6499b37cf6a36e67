"""Notebook 08's random-weights twin at other learning rates, on IMDB's real reviews.

    python -m benchmarks.end_to_end prepare DIR --imdb ../shared/data/imdb
    python -m benchmarks.bert_control DIR --size class --rates 0.0001 0.0003

Runs notebook 08 end to end at ``--size`` on the prepared folder (as ``benchmarks.end_to_end``
does, with the preset a stand-in: ``bert_tiny_en_uncased``'s architecture from random weights),
then, in the same kernel, fine-tunes ``untrained_copy(masked_lm.backbone)`` once per rate with
the notebook's own ``fine_tune`` and prints the test accuracy of each beside the notebook's rows.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from benchmarks.end_to_end import kernel_environment, make_home, real_reviews
from seqlab import config

EPILOGUE = """
import json
for rate in {rates}:
    keras.utils.set_random_seed(config.SEED)  # the twin's draw, as the notebook's
    rows[f"BERT architecture, random weights, rate {{rate:g}}"], _ = fine_tune(
        untrained_copy(masked_lm.backbone), f"random-bert-{{rate:g}}", rate)
print("ROWS " + json.dumps({{name: {{key: row[key] for key in ("test accuracy", "rate")
                                   if key in row}} for name, row in rows.items()}}))
"""


def main(argv: list[str] | None = None) -> int:
    from seqlab_instructor.runner import run_notebook

    parser = argparse.ArgumentParser(prog="python -m benchmarks.bert_control", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("stand_ins", type=Path, help="the folder benchmarks.end_to_end prepared")
    parser.add_argument("--size", choices=("class", "full"), default="class")
    parser.add_argument("--rates", type=float, nargs="+", required=True)
    args = parser.parse_args(argv)
    if not real_reviews(args.stand_ins):
        raise SystemExit("prepare the folder with --imdb ../shared/data/imdb")
    output = args.stand_ins / "runs-bert-control"
    output.mkdir(exist_ok=True)
    home = make_home(args.stand_ins)
    with tempfile.TemporaryDirectory(prefix="bert-control-") as backups:
        run = run_notebook(
            next((config.REPO_ROOT / "notebooks").glob("08_*.ipynb")), output, fast=False,
            parameters={"SIZE": args.size}, timeout=None, epilogue_timeout=3600,
            cwd=home / "notebooks", epilogue=[EPILOGUE.format(rates=args.rates)],
            env=kernel_environment(args.stand_ins, home, Path(backups),
                                   output / "keras_calls.jsonl"))
    import nbformat

    printed = "".join(o.get("text", "") for cell in nbformat.read(run.output, 4).cells
                      for o in cell.get("outputs", []))
    rows = json.loads(printed.split("ROWS ", 1)[1].splitlines()[0])
    print(f"notebook 08 at SIZE = '{args.size}', IMDB's real reviews, the preset a stand-in "
          "(random weights)")
    print(f"{'model':<58} {'rate':>8} {'test acc':>9}")
    for name, row in rows.items():
        print(f"{name:<58} {row.get('rate', float('nan')):>8g} {row['test accuracy']:>9.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
