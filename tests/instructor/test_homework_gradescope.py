"""The Gradescope autograder: the zip unpacked as Gradescope does, ``run_autograder`` run offline.

The instructor notebook is notebook 01 with 2 points on Exercise 1 and a hidden test on
Exercise 2 (as in tests/instructor/test_homework_grade.py). Each submission gets a fresh
``/autograder``-shaped folder (``source/`` from the zip, ``submission/``, ``results/``) and
``run_autograder`` runs there as Gradescope would, without ``setup.sh``'s installs: this
environment has everything, so ``SEQLAB_AUTOGRADER_PYTHON`` points it at this Python. Every
``results.json`` is validated against a JSON schema written from Gradescope's specification
(https://gradescope-autograders.readthedocs.io/en/latest/specs/, "Output format").
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from concurrent.futures import ThreadPoolExecutor

import jsonschema
import nbformat
import pytest
from grading_course import (
    EXERCISE_1,
    EXERCISE_2,
    NOTEBOOK,
    exercise_cells,
    hidden_test,
    write_course,
)

from seqlab_instructor.homework import gradescope, sandbox

MARKER = "hidden-test-marker-5be1"
HIDDEN_TEST = hidden_test(MARKER)
SANDBOX = "none" if sandbox.bwrap_problem() else "bwrap"

VISIBILITY = {"enum": list(gradescope.VISIBILITIES)}
SCHEMA = {  # Gradescope's documented results.json fields and their types
    "type": "object",
    "properties": {
        "score": {"type": "number"}, "execution_time": {"type": "number"},
        "output": {"type": "string"}, "visibility": VISIBILITY, "stdout_visibility": VISIBILITY,
        "extra_data": {"type": "object"},
        "tests": {"type": "array", "items": {
            "type": "object",
            "properties": {"score": {"type": "number"}, "max_score": {"type": "number"},
                           "name": {"type": "string"}, "number": {"type": "string"},
                           "output": {"type": "string"},
                           "tags": {"type": "array", "items": {"type": "string"}},
                           "visibility": VISIBILITY, "extra_data": {"type": "object"}},
            "additionalProperties": False}},
        "leaderboard": {"type": "array"},
    },
    "additionalProperties": False,
    # "score: optional, but required if not on each test case"
    "anyOf": [{"required": ["score"]},
              {"required": ["tests"],
               "properties": {"tests": {"items": {"required": ["score"]}}}}],
}


def _hostile(root) -> str:
    """Exercise 2's cell of a submission that attacks the autograder from inside."""
    return f'''import json, pathlib
root = pathlib.Path({str(root)!r})
try:
    leak = (root / "source" / "notebooks" / "{NOTEBOOK}.ipynb").read_text()
except OSError as error:
    leak = repr(error)
for name, text in (("results.json", json.dumps({{"score": 999, "tests": []}})),
                   ("leak.txt", leak)):
    try:
        (root / "results" / name).write_text(text)
    except OSError:
        pass
print(json.dumps({{"score": 999}}))
print("\\u2713 {EXERCISE_2} passed.")

def accuracy_from_probabilities(probabilities, labels):
    return 1.0
'''


@pytest.fixture(scope="module")
def autograder(tmp_path_factory):
    """The zip built from the instructor notebook, and the student copy."""
    root = tmp_path_factory.mktemp("course")
    instructor, _, text = write_course(root, HIDDEN_TEST)
    cells = exercise_cells(instructor)
    archive = gradescope.build("01", root / "out", notebooks_dir=root / "notebooks",
                               sandbox=SANDBOX, time_limit=120, check_timeout=60)
    solution = {label: "\n".join(line for line in instructor.cells[index].source.splitlines()
                                 if "### BEGIN SOLUTION" not in line
                                 and "### END SOLUTION" not in line)
                for label, (index, _) in cells.items()}
    return archive, nbformat.reads(text, as_version=4), solution


def _run_autograder(root):
    environment = {**os.environ, "SEQLAB_AUTOGRADER_ROOT": str(root),
                   "SEQLAB_AUTOGRADER_PYTHON": sys.executable}
    done = subprocess.run(["bash", str(root / "run_autograder")], cwd=root, env=environment,
                          capture_output=True, text=True, timeout=600)
    results = json.loads((root / "results" / "results.json").read_text(encoding="utf-8"))
    jsonschema.validate(results, SCHEMA)
    return results, done.stdout + done.stderr


@pytest.fixture(scope="module")
def graded(autograder, tmp_path_factory):
    """``{kind: (results, log, root)}``: one run of ``run_autograder`` per submission kind."""
    archive, copy, solution = autograder
    both = {EXERCISE_1: solution[EXERCISE_1], EXERCISE_2: solution[EXERCISE_2]}
    roots = {}
    for kind in ("solved", "unsolved", "raises", "invalid", "hostile", "nothing"):
        root = gradescope.unpack(archive, tmp_path_factory.mktemp(f"autograder-{kind}"))
        roots[kind] = root
        if kind == "nothing":
            continue
        if kind == "invalid":
            (root / "submission" / f"{NOTEBOOK}.ipynb").write_text('{"cells": [', "utf-8")
            continue
        notebook = nbformat.from_dict(json.loads(json.dumps(copy)))
        cells = exercise_cells(notebook)
        sources = {"solved": both, "unsolved": {},
                   "raises": {EXERCISE_2: solution[EXERCISE_2]},
                   "hostile": {EXERCISE_2: _hostile(root)}}[kind]
        for label, source in sources.items():
            notebook.cells[cells[label][0]].source = source
        if kind == "raises":  # a cell of the student's own (not an exercise's) that raises
            notebook.cells.insert(cells[EXERCISE_1][0],
                                  nbformat.v4.new_code_cell("raise RuntimeError('boom')"))
        nbformat.write(notebook, root / "submission" / f"{NOTEBOOK}.ipynb")
    with ThreadPoolExecutor(2) as pool:  # two kernels at once on CI's two cores
        runs = dict(zip(roots, pool.map(_run_autograder, roots.values()), strict=True))
    return {kind: (*runs[kind], roots[kind]) for kind in roots}


def _by_name(results):
    return {test["name"]: test for test in results["tests"]}


GRADED_2 = f"{EXERCISE_2} (graded, with hidden tests)"
SHOWN_2 = f"{EXERCISE_2} (checks in your notebook)"


def test_the_zip_has_gradescopes_layout_and_ships_seqlab(autograder):
    archive, _, _ = autograder
    with zipfile.ZipFile(archive) as zipped:
        names = set(zipped.namelist())
        modes = {info.filename: info.external_attr >> 16 for info in zipped.infolist()}
        setup = zipped.read("setup.sh").decode()
        settings = json.loads(zipped.read(gradescope.CONFIG_NAME))
    assert {"setup.sh", "run_autograder", f"notebooks/{NOTEBOOK}.ipynb",
            "seqlab/pyproject.toml", "seqlab/requirements.txt", "seqlab/.ci/colab-runtime.txt",
            "seqlab/src/seqlab/course/notebook.py",
            "seqlab/src/seqlab_instructor/homework/gradescope.py"} <= names
    assert modes["setup.sh"] & 0o111 and modes["run_autograder"] & 0o111
    assert not any("__pycache__" in name for name in names)
    assert "-c .ci/colab-runtime.txt" in setup and "github" not in setup.lower()
    assert settings == {"assignment": NOTEBOOK, "sandbox": SANDBOX, "time_limit": 120,
                        "check_timeout": 60, "memory_limit_gb": 8.0}
    with pytest.raises(ValueError, match="must be one of bwrap, none"):
        gradescope.build("01", archive.parent, sandbox="docker")


@pytest.mark.notebook
def test_a_solved_notebook_gets_every_point(graded):
    results, log, _ = graded["solved"]
    tests = _by_name(results)
    assert results["score"] == 3 and results["stdout_visibility"] == "hidden"
    assert tests[EXERCISE_1]["score"] == tests[EXERCISE_1]["max_score"] == 2
    assert tests[EXERCISE_1]["visibility"] == "visible"
    assert tests[GRADED_2]["score"] == tests[GRADED_2]["max_score"] == 1
    assert tests[GRADED_2]["visibility"] == "after_published"
    assert tests[SHOWN_2]["max_score"] == 0 and tests[SHOWN_2]["visibility"] == "visible"
    assert tests[SHOWN_2]["output"].startswith("\u2713")
    assert results["output"].startswith("Status: ok"), results["output"]
    assert f"sandbox: {SANDBOX}" in log


@pytest.mark.notebook
def test_an_unsolved_notebook_gets_zero_with_the_checks_messages(graded):
    results, _, _ = graded["unsolved"]
    tests = _by_name(results)
    assert results["score"] == 0 and [t["score"] for t in results["tests"]] == [0, 0, 0]
    assert "placeholder" in tests[EXERCISE_1]["output"]
    assert tests[SHOWN_2]["output"].startswith("\u2717")


@pytest.mark.notebook
def test_a_cell_that_raises_costs_only_what_depends_on_it(graded):
    results, _, _ = graded["raises"]
    tests = _by_name(results)
    assert results["output"].startswith("Status: error: cell") and "RuntimeError" in results["output"]
    assert tests[EXERCISE_1]["score"] == 0 and tests[GRADED_2]["score"] == 1


def test_an_invalid_file_or_no_file_still_gives_valid_results(graded):
    for kind, reason in (("invalid", "not valid JSON"), ("nothing", "no .ipynb file")):
        results, _, _ = graded[kind]
        assert results["score"] == 0 and len(results["tests"]) == 3, kind
        assert reason in results["output"] and all(t["score"] == 0 for t in results["tests"])
        assert all(reason in t["output"] for t in results["tests"]), kind


@pytest.mark.notebook
def test_a_hostile_notebook_forges_nothing_and_reads_no_hidden_test(graded):
    results, log, root = graded["hostile"]
    assert results["score"] == 0 and len(results["tests"]) == 3
    assert sorted(p.name for p in (root / "results").iterdir()) == ["results.json"]
    assert "999" not in json.dumps(results) and MARKER not in json.dumps(results)
    assert _by_name(results)[GRADED_2]["output"].startswith("\u2717")
    if SANDBOX == "bwrap":
        assert "sandbox: bwrap" in log


def test_the_cli_writes_the_zip(tmp_path, capsys):
    from seqlab_instructor.homework import __main__ as cli

    assert cli.main(["gradescope", "01", "--out", str(tmp_path), "--sandbox", "none"]) == 0
    archive, = tmp_path.glob("autograder_01_*.zip")
    with zipfile.ZipFile(archive) as zipped:
        assert json.loads(zipped.read(gradescope.CONFIG_NAME))["sandbox"] == "none"
    assert cli.main(["gradescope", "99", "--out", str(tmp_path)]) == 2
    assert "matches no notebook" in capsys.readouterr().err
