"""Verdicts a submission cannot forge: values come from its kernel, verdicts from the grader.

Before, the instructor's check cells ran in the student's kernel after the student's cells, so
a submission could replace ``seqlab.course.checks`` functions (or ``print("passed")`` in a way the
grader believed) and give itself full marks. Now a check runs twice, with the same code:

1. **In the submission's kernel** (inside the sandbox), one epilogue cell per exercise calls
   :func:`record_values`. It runs the *visible* part of the instructor's check cell (the part
   every student copy shows) with each student name it uses wrapped in a recorder, under a
   :class:`seqlab.course.checks.transcript.Transcript` in record mode: every result of student code
   (arrays, numbers, lists, dicts; plain facts about objects such as models, via
   ``checks.observe``) is stored by key, e.g. ``call general_score <hash of the arguments>``.
   The hidden tests never enter the kernel: the grader first runs them in *plan* mode
   (:func:`plan_calls`), where the student's functions are stand-ins that only note their
   arguments, and sends the kernel just those calls (the arguments, as data). The kernel writes
   the transcript to a JSON file in its working folder. Everything in that file is the
   student's; nothing in it is a verdict.
2. **In the grader's process** (which holds the instructor's notebooks), :func:`judge` runs the
   *whole* instructor check cell, hidden tests included, with the real :mod:`seqlab.course.checks`
   and each student name bound to a replayer that answers from the transcript. The reference
   values, the comparisons and the points are computed here, from the grader's own inputs; a
   call whose arguments differ from any recorded call has no answer and fails.

So monkeypatching ``seqlab.course.checks`` in the kernel, editing or deleting check cells, or printing
"passed" changes only which values the kernel records; a value that matches the reference on
the check's inputs is a right answer however it was produced. No student code runs in the
grader's process: it decodes JSON into numbers, strings and NumPy arrays only.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import io
import json
import re
from pathlib import Path

from seqlab.course.checks.transcript import Transcript, Unavailable, call_key, decode, encode, using

HIDDEN_TESTS = re.compile(r"^[ \t]*### BEGIN HIDDEN TESTS[^\n]*\n(.*?)^[ \t]*### END HIDDEN TESTS[^\n]*\n?",
                          re.S | re.M)
#: Names the grader binds itself in a check; never taken from the submission.
GRADER_NAMES = frozenset({"checks", "seqlab", "np", "numpy", "math"})
#: Largest values file the grader reads (bytes): the checks' inputs are small.
MAX_VALUES_BYTES = 64 * 1024**2
FAILED = "\u2717 {} not passed yet: {}"


def visible_part(source: str) -> str:
    """The check cell as a student copy shows it (hidden-test regions removed)."""
    return HIDDEN_TESTS.sub("", source)


def hidden_part(source: str) -> str:
    """The code between ``### BEGIN HIDDEN TESTS`` and ``### END HIDDEN TESTS`` markers."""
    return "".join(match.group(1) for match in HIDDEN_TESTS.finditer(source))


def student_names(source: str) -> list[str]:
    """Names a check cell reads that the student's notebook defines (not builtins, not ours)."""
    tree = ast.parse(source)
    loaded, stored = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (loaded if isinstance(node.ctx, ast.Load) else stored).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)):
            stored.add(node.name)
        elif isinstance(node, ast.alias):
            stored.add((node.asname or node.name).split(".")[0])
    return sorted(loaded - stored - GRADER_NAMES - set(dir(builtins)))


def _grader_namespace() -> dict:
    import math

    import numpy

    import seqlab
    import seqlab.course.checks

    return {"__builtins__": builtins, "checks": seqlab.course.checks, "seqlab": seqlab, "np": numpy,
            "numpy": numpy, "math": math}


# ---------------------------------------------------------------------------- in the kernel


class _Recorder:
    """Calls the student's object and records what it returned (or raised)."""

    def __init__(self, name: str, target, transcript: Transcript):
        self.function_name, self.target, self.transcript = name, target, transcript

    def __call__(self, *args, **kwargs):
        key = call_key(self.function_name, args, kwargs)
        return self.transcript.record(key, lambda: self.target(*args, **kwargs))


def record_values(exercise: str, visible_source: str, names: list[str], planned_calls: list,
                  path: str, namespace: dict | None = None) -> None:
    """Kernel side: record the student's values for one exercise's check into ``path``.

    Runs ``visible_source`` (the check cell without hidden tests) and then ``planned_calls``
    (``[name, encoded args, encoded kwargs]`` from :func:`plan_calls`) against the student's
    ``namespace`` (default: the kernel's), and writes ``{"names": …, "entries": …}`` as JSON.
    Whatever fails here is recorded or ignored: the verdict is :func:`judge`'s.
    """
    if namespace is None:
        import IPython

        shell = IPython.get_ipython()
        namespace = shell.user_ns if shell is not None else {}
    import seqlab
    import seqlab.course.checks

    transcript = Transcript("record")
    kinds: dict[str, dict] = {}
    scope = dict(namespace)
    for name in names:
        if name not in namespace:
            kinds[name] = {"kind": "missing"}
        elif callable(namespace[name]):
            kinds[name] = {"kind": "callable"}
            scope[name] = _Recorder(name, namespace[name], transcript)
        else:
            kinds[name] = {"kind": "value", "value": encode(namespace[name])}
    scope.update(checks=seqlab.course.checks, seqlab=seqlab)
    interrupted = False
    try:
        with using(transcript), contextlib.redirect_stdout(io.StringIO()):
            exec(compile(visible_source, f"<check: {exercise}>", "exec"), scope)  # noqa: S102
    except KeyboardInterrupt:
        interrupted = True
    except BaseException:  # noqa: BLE001, S110 - a failing check still recorded what it got
        pass
    for name, args, kwargs in planned_calls if not interrupted else []:
        if kinds.get(name, {}).get("kind") != "callable":
            continue
        try:
            with using(transcript), contextlib.redirect_stdout(io.StringIO()):
                scope[name](*decode(args), **decode(kwargs))
        except KeyboardInterrupt:
            break
        except BaseException:  # noqa: BLE001, S112 - recorded by the transcript
            continue
    text = json.dumps({"exercise": exercise, "names": kinds, "entries": transcript.entries})
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(text, encoding="utf-8")


def record_cell(exercise: str, check_source: str, path: str) -> str:
    """The epilogue cell that records one exercise's values (no hidden test in it)."""
    names = student_names(check_source)
    calls = plan_calls(hidden_part(check_source), names)
    return ("from seqlab_instructor.homework.verdicts import record_values as _seqlab_record_values\n"
            f"_seqlab_record_values({exercise!r}, {visible_part(check_source)!r}, {names!r},\n"
            f"    {calls!r}, {path!r});")


# ----------------------------------------------------------------------- in the grader


class _Anything:
    """What a planned call returns: lets the rest of a hidden test run to find more calls."""

    def __getattr__(self, name):
        return _Anything()

    def __call__(self, *args, **kwargs):
        return _Anything()

    def __getitem__(self, key):
        return _Anything()

    def __iter__(self):
        return iter(())

    def __len__(self):
        return 0

    def __eq__(self, other):
        return True

    def __bool__(self):
        return True

    __hash__ = object.__hash__
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __call__
    __lt__ = __le__ = __gt__ = __ge__ = __ne__ = __eq__
    __float__ = lambda self: 0.0  # noqa: E731
    __int__ = lambda self: 0  # noqa: E731


def plan_calls(hidden_source: str, names: list[str]) -> list:
    """The calls of student functions a hidden test makes, with their arguments as data.

    Each statement runs on its own with the student's names replaced by stand-ins that note
    their arguments; a call whose arguments come from an earlier result of student code
    cannot be planned (and then fails when judged).
    """
    if not hidden_source.strip():
        return []
    calls: list = []

    class Planner:
        def __init__(self, name):
            self.name = name

        def __call__(self, *args, **kwargs):
            encoded = [encode(list(args)), encode(dict(kwargs))]
            if [self.name, *encoded] not in calls:
                calls.append([self.name, *encoded])
            return _Anything()

    scope = {**_grader_namespace(), **{name: Planner(name) for name in names}}
    for statement in ast.parse(hidden_source).body:
        module = ast.Module(body=[statement], type_ignores=[])
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                exec(compile(module, "<hidden tests (planning)>", "exec"), scope)  # noqa: S102
        except Exception:  # noqa: BLE001, S112 - planning only collects calls
            continue
    return calls


class _Replayer:
    """Answers a call of the student's function from the recorded transcript."""

    def __init__(self, name: str, transcript: Transcript, exercise: str):
        self.function_name, self.transcript, self.exercise = name, transcript, exercise

    def __call__(self, *args, **kwargs):
        return self.transcript.replay(self.exercise, call_key(self.function_name, args, kwargs))

    def __repr__(self):
        return f"<{self.function_name} (the submission's)>"


def parse_values(text: str) -> dict:
    """The kernel's values file (its text, read with :func:`seqlab_instructor.homework.run.read_untrusted`).

    Raises:
        ValueError: if it is not the JSON :func:`record_values` writes.
    """
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as error:
        raise ValueError(f"the values file is not JSON ({type(error).__name__})") from None
    if not (isinstance(data, dict) and isinstance(data.get("names"), dict)
            and isinstance(data.get("entries"), dict)):
        raise ValueError("the values file does not hold names and entries")
    return data


def judge(exercise: str, check_source: str, values: dict | None,
          problem: str = "no values were recorded") -> dict:
    """Grader side: run the instructor's whole check on the recorded values.

    Returns ``{"passed": bool, "message": str}``; the message is what the check would have
    shown the student (its ``✓`` line, or the ``✗`` reason).
    """
    if values is None:
        return {"passed": False, "message": FAILED.format(
            exercise, f"the check could not run ({problem}).")}
    transcript = Transcript("replay", values["entries"])
    scope = _grader_namespace()
    for name in student_names(check_source):
        entry = values["names"].get(name)
        if not isinstance(entry, dict) or entry.get("kind") == "missing":
            continue
        if entry.get("kind") == "callable":
            scope[name] = _Replayer(name, transcript, exercise)
        else:
            try:
                scope[name] = decode(entry.get("value"))
            except (ValueError, TypeError, RecursionError):
                scope[name] = Unavailable("unreadable value")
    from seqlab.course.checks import CheckFailed

    captured = io.StringIO()
    try:
        with using(transcript), contextlib.redirect_stdout(captured):
            exec(compile(check_source, f"<instructor check: {exercise}>", "exec"), scope)  # noqa: S102
    except CheckFailed as failure:
        return {"passed": False, "message": FAILED.format(failure.exercise, failure.message)}
    except NameError as error:
        return {"passed": False, "message": FAILED.format(
            exercise, f"{error}: the grader could not find your solution (was its cell "
                      "deleted, renamed, or never reached?).")}
    except AssertionError as error:
        detail = f": {error}" if str(error) else "."
        return {"passed": False, "message": FAILED.format(exercise, f"a hidden test failed{detail}")}
    except KeyboardInterrupt:
        return {"passed": False, "message": FAILED.format(
            exercise, "the check did not finish in time (does your code loop forever?).")}
    except Exception as error:  # noqa: BLE001 - every failure is a verdict, not a crash
        return {"passed": False, "message": FAILED.format(
            exercise, f"the check raised {type(error).__name__}: {error}")}
    lines = [line for line in captured.getvalue().splitlines() if line.startswith("\u2713")]
    return {"passed": True, "message": lines[-1] if lines else f"\u2713 {exercise} passed."}
