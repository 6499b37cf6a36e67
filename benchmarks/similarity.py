"""Precision and recall of the similarity report on generated submissions.

    python -m benchmarks.similarity            # the table for docs/similarity.md
    python -m benchmarks.similarity --threshold 0.6

For four exercises of four notebooks (03 Exercise 1, 06 Exercise 1, 07 Exercise 2, 08
Exercise 1), ``benchmarks/similarity_solutions/<key>/`` holds four correct solutions written
independently by hand, each with a different approach (vectorised, loops, a helper function,
another library's functions). From each, two copies are derived as a copier would:

- ``renamed``: every name the solution binds itself (variables, arguments, helper functions;
  not the names the exercise asks for) renamed, comments rewritten, spacing changed;
- ``reordered``: the same with other names, and the cell's top-level functions in reverse order
  (a helper moved below the function that uses it), and blank lines added;
- ``edited``: renamed as above, and every one-line ``return EXPR`` split into
  ``answer_ = EXPR`` and ``return answer_`` (a small change of the code itself).

Each of the 16 solutions per exercise goes into the student copy's exercise cell of a
submission, and :func:`seqlab_instructor.homework.similarity.assignment_pairs` scores all 120 pairs
(the starter code discounted). A pair is a copy when both come from the same hand-written
solution (24 per exercise) and independent otherwise (96). Printed: per threshold, the copy
pairs flagged (recall) and the share of flagged pairs that are copies (precision), for the
report's mode (cleaned cells, copydetect's filter) and, for comparison, the other two modes of
:func:`seqlab_instructor.homework.similarity.compare`.
"""

from __future__ import annotations

import argparse
import ast
import io
import random
import tokenize
from pathlib import Path

import nbformat

from seqlab import config
from seqlab_instructor.homework import similarity
from seqlab_instructor.homework.collect import Submission, load_assignment
from seqlab_instructor.homework.student_copies import make_student_copy

SOLUTIONS = Path(__file__).parent / "similarity_solutions"
#: key: (instructor notebook, exercise label prefix)
EXERCISES = {"03_ex1": ("03_recurrent_cells", "Exercise 1"),
             "06_ex1": ("06_word_embeddings", "Exercise 1"),
             "07_ex2": ("07_language_models", "Exercise 2"),
             "08_ex1": ("08_pretrained_transformers", "Exercise 1")}
THRESHOLDS = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
NEW_NAMES = ["value", "tmp", "arr", "res", "acc", "item", "data", "part", "vec", "mat", "buf",
             "score", "thing", "out2", "temp", "result_", "w2", "z", "q", "stuff"]
COMMENTS = ["# compute it", "# see the lecture", "# this part was tricky", "# TODO tidy up",
            "# works now", "# vectorised"]


def _required(starter: str) -> set[str]:
    """Names a copier must keep: what the starter defines (functions, classes, methods)."""
    tree = ast.parse(starter)
    return {node.name for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.ClassDef))} | {"self"}


def _reorder(source: str) -> str:
    """The cell's top-level statements in reverse order (their text, comments included)."""
    tree = ast.parse(source)
    lines = source.splitlines()
    chunks = ["\n".join(lines[node.lineno - 1 - len(node.decorator_list)
                              if hasattr(node, "decorator_list") else node.lineno - 1:
                              node.end_lineno]) for node in tree.body]
    return "\n\n\n".join(reversed(chunks)) + "\n"


def _returns_through_a_variable(source: str) -> str:
    """Each one-line ``return EXPR`` becomes ``answer_ = EXPR`` then ``return answer_``."""
    lines = []
    for line in source.splitlines():
        body = line.lstrip()
        indent = line[:len(line) - len(body)]
        if body.startswith("return ") and not body.rstrip().endswith(("(", ",", "\\")):
            lines += [f"{indent}answer_ = {body[len('return '):]}", f"{indent}return answer_"]
        else:
            lines.append(line)
    return "\n".join(lines) + "\n"


def derive_copy(source: str, required: set[str], seed: int, reorder: bool = False,
                edit: bool = False) -> str:
    """A disguised copy of ``source``: renamed names, other comments and spacing; with
    ``reorder`` its top-level functions reversed, with ``edit`` its returns through a variable."""
    rng = random.Random(seed)
    if reorder:
        source = _reorder(source)
    if edit:
        source = _returns_through_a_variable(source)
        ast.parse(source)
    bound = similarity._bound_names(ast.parse(source)) - required
    names = rng.sample(NEW_NAMES, len(NEW_NAMES))
    mapping = {name: f"{names[i % len(names)]}{i // len(names) or ''}"
               for i, name in enumerate(sorted(bound))}
    tokens, previous = [], None
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        kind, text = token.type, token.string
        if kind == tokenize.NAME and text in mapping and previous != ".":
            text = mapping[text]
        elif kind == tokenize.COMMENT:
            text = rng.choice(COMMENTS)
        tokens.append((kind, text))
        if kind not in (tokenize.NL, tokenize.COMMENT):
            previous = token.string
    # untokenize without positions respaces every line (its own spacing rules).
    copied = tokenize.untokenize(tokens)
    if reorder:
        copied = copied.replace(":\n", ":\n\n")
    copied = f"{rng.choice(COMMENTS)}\n{copied}"
    ast.parse(copied)  # still Python
    return copied


def _submission(copy, label: str, name: str, source: str) -> Submission:
    notebook = nbformat.reads(nbformat.writes(copy), as_version=4)
    cell = next(c for c in notebook.cells if similarity.exercise_name(c) == label)
    cell.source = source
    return Submission(Path(f"{name}.ipynb"), name, notebook=notebook)


def scored_pairs(key: str, mode: str | None = None):
    """``[(pair, is_copy)]`` for one exercise: 4 solutions x (original + 3 copies)."""
    notebook, prefix = EXERCISES[key]
    assignment = load_assignment(config.REPO_ROOT / "notebooks" / f"{notebook}.ipynb")
    exercise = next(e for e in assignment.exercises if e.name.startswith(prefix + ":"))
    copy = make_student_copy(nbformat.read(assignment.path, as_version=4),
                             f"notebooks/{assignment.path.name}",
                             f"assignments/{assignment.path.name}")
    starter = similarity.exercise_sources(copy)[exercise.name]
    required = _required(starter)
    sources = {}
    for seed, path in enumerate(sorted((SOLUTIONS / key).glob("*.txt"))):
        original = path.read_text(encoding="utf-8")
        sources[f"{path.stem}"] = original
        sources[f"{path.stem}~renamed"] = derive_copy(original, required, 3 * seed)
        sources[f"{path.stem}~reordered"] = derive_copy(original, required, 3 * seed + 1, True)
        sources[f"{path.stem}~edited"] = derive_copy(original, required, 3 * seed + 2, edit=True)
    if mode is None:  # the report's own path: submissions, exercise cells, starter code
        assignment.exercises = [exercise]
        submissions = [_submission(copy, exercise.name, name, source)
                       for name, source in sources.items()]
        pairs = similarity.assignment_pairs(assignment, submissions)
    else:
        pairs = similarity.compare(sources, starter, mode=mode, exercise=exercise.name)
    return [(p, p.student_a.split("~")[0] == p.student_b.split("~")[0]) for p in pairs]


def precision_recall(scored, threshold: float) -> tuple[int, int, int, float, float]:
    """``(copies flagged, independent flagged, copies missed, precision, recall)``."""
    flagged = [is_copy for pair, is_copy in scored if pair.similarity >= threshold]
    hits = sum(flagged)
    copies = sum(is_copy for _, is_copy in scored)
    precision = hits / len(flagged) if flagged else 1.0
    return hits, len(flagged) - hits, copies - hits, precision, hits / copies if copies else 1.0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threshold", type=float, default=similarity.THRESHOLD)
    args = parser.parse_args(argv)
    results = {}
    for mode in (None, *(m for m in similarity.MODES if m != similarity.MODE)):
        title = f"{similarity.MODE} (the report)" if mode is None else mode
        results[title] = {key: scored_pairs(key, mode) for key in EXERCISES}
    for mode, by_key in results.items():
        print(f"\n## {mode} (noise k = {similarity.NOISE})\n")
        print("| exercise | copy pairs | independent pairs | lowest copy | highest independent |")
        print("|---|---|---|---|---|")
        for key, scored in by_key.items():
            copies = [p.similarity for p, c in scored if c]
            others = [p.similarity for p, c in scored if not c]
            print(f"| {key} | {len(copies)} | {len(others)} | {min(copies):.2f} | "
                  f"{max(others):.2f} |")
        print("\n| threshold | copies flagged | independent flagged | copies missed | "
              "precision | recall |")
        print("|---|---|---|---|---|---|")
        everything = [item for scored in by_key.values() for item in scored]
        for threshold in sorted({*THRESHOLDS, args.threshold}):
            hits, false, missed, precision, recall = precision_recall(everything, threshold)
            mark = " (chosen)" if threshold == args.threshold else ""
            print(f"| {threshold:.2f}{mark} | {hits} | {false} | {missed} | {precision:.3f} | "
                  f"{recall:.3f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
