"""Facts about a student's answer, recorded in the student's kernel and replayed as JSON in the
grader's process, which computes the verdict itself."""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import json
from collections import Counter
from collections.abc import Callable
from typing import Any

import numpy as np

from seqlab.course.checks.core import CheckFailed

_ACTIVE: contextvars.ContextVar[Transcript | None] = contextvars.ContextVar(
    "seqlab_check_transcript", default=None)
#: Exceptions a replayed student call may raise as themselves (others keep their name only).
_BUILTIN_ERRORS = {error.__name__: error for error in (
    ArithmeticError, AssertionError, AttributeError, IndexError, KeyError, LookupError,
    MemoryError, NameError, NotImplementedError, OverflowError, RecursionError, RuntimeError,
    TimeoutError, TypeError, ValueError, ZeroDivisionError)}
_ARRAY_KINDS = "biufU"
_MAX_DEPTH = 32
#: Bytes per array element at most: an untrusted dtype "<U100000000" would take gigabytes.
_MAX_ITEMSIZE = 1024


class Unavailable:
    """What replay gives for an object that could not be recorded (e.g. a Keras model)."""

    def __init__(self, type_name: str):
        self.type_name = type_name

    def __repr__(self) -> str:
        return f"<{self.type_name} (not recorded)>"


def encode(value: Any, depth: int = 0) -> Any:
    """``value`` as JSON-able data; objects become ``{"__object__": type name}``."""
    if depth > _MAX_DEPTH:
        return {"__object__": "too deeply nested"}
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, (int, float)):  # subclasses too (IntEnum, np.float64): as plain numbers
        return int(value) if isinstance(value, int) else float(value)
    if isinstance(value, list):
        return [encode(item, depth + 1) for item in value]
    if isinstance(value, tuple):
        return {"__tuple__": [encode(item, depth + 1) for item in value]}
    if isinstance(value, dict):
        return {"__dict__": [[encode(k, depth + 1), encode(v, depth + 1)]
                             for k, v in value.items()]}
    if isinstance(value, (np.ndarray, np.generic)) or hasattr(value, "__array__"):
        try:
            array = np.asarray(value)
        except Exception:  # noqa: BLE001 - not an array after all
            return {"__object__": type(value).__name__}
        if array.dtype.kind in _ARRAY_KINDS:
            return {"__ndarray__": array.tolist(), "dtype": array.dtype.str,
                    "shape": list(array.shape)}
    return {"__object__": type(value).__name__}


def decode(data: Any, depth: int = 0) -> Any:
    """The inverse of :func:`encode` for untrusted data; ValueError for what it never writes."""
    if depth > _MAX_DEPTH + 1:
        raise ValueError("nested too deeply")
    if data is None or isinstance(data, (bool, str, int, float)):
        return data
    if isinstance(data, list):
        return [decode(item, depth + 1) for item in data]
    if isinstance(data, dict):
        if set(data) == {"__tuple__"} and isinstance(data["__tuple__"], list):
            return tuple(decode(item, depth + 1) for item in data["__tuple__"])
        if set(data) == {"__dict__"} and isinstance(data["__dict__"], list):
            pairs = [decode(pair, depth + 1) for pair in data["__dict__"]]
            if not all(isinstance(p, list) and len(p) == 2 for p in pairs):
                raise ValueError("a dict entry is not a pair")
            return {_hashable(k): v for k, v in pairs}
        if set(data) == {"__ndarray__", "dtype", "shape"}:
            dtype = np.dtype(str(data["dtype"]))
            if dtype.kind not in _ARRAY_KINDS or dtype.itemsize > _MAX_ITEMSIZE:
                raise ValueError(f"array dtype {dtype} is not allowed")
            shape = tuple(int(n) for n in data["shape"])
            return np.array(data["__ndarray__"], dtype=dtype).reshape(shape)
        if set(data) == {"__object__"}:
            return Unavailable(str(data["__object__"]))
    raise ValueError(f"unexpected value {str(data)[:80]!r}")


def _hashable(key):
    return tuple(_hashable(k) for k in key) if isinstance(key, list) else key


def call_key(name: str, args: tuple, kwargs: dict) -> str:
    """The transcript key of calling the student's ``name`` with these arguments."""
    text = json.dumps(encode([list(args), dict(sorted(kwargs.items()))]), sort_keys=True)
    return f"call {name} {hashlib.sha256(text.encode()).hexdigest()[:20]}"


def _raise_recorded(exercise: str, entry: dict):
    name, message = str(entry.get("__raised__")), str(entry.get("message", ""))
    if name == "CheckFailed":
        raise CheckFailed(exercise, message)
    if name == "KeyboardInterrupt":
        raise KeyboardInterrupt
    if name in _BUILTIN_ERRORS:
        raise _BUILTIN_ERRORS[name](message)
    safe = "".join(c for c in name if c.isalnum() or c == "_") or "Error"
    raise type(safe, (Exception,), {})(message)


class Transcript:
    """The values a check obtained from student code, by key; ``mode`` "record" or "replay"."""

    def __init__(self, mode: str, entries: dict | None = None):
        if mode not in ("record", "replay"):
            raise ValueError(f"mode must be 'record' or 'replay', not {mode!r}")
        self.mode = mode
        self.entries: dict[str, Any] = dict(entries or {})
        self.observed: Counter = Counter()  # calls of observe, by exercise and describe

    def record(self, key: str, compute: Callable[[], Any]) -> Any:
        """Run ``compute`` (student code), store its value or error under ``key``, pass it on."""
        try:
            value = compute()
        except BaseException as error:
            message = error.message if isinstance(error, CheckFailed) else str(error)
            self.entries[key] = {"__raised__": type(error).__name__, "message": message}
            raise
        self.entries[key] = {"value": encode(value)}
        return value

    def replay(self, exercise: str, key: str) -> Any:
        """The recorded value of ``key`` (raising what was raised); CheckFailed if none."""
        entry = self.entries.get(key)
        if not isinstance(entry, dict):
            raise CheckFailed(exercise, "the grader has no result of your code for this step "
                                        "(the notebook stopped before it, or it was never run).")
        if "__raised__" in entry:
            _raise_recorded(exercise, entry)
        try:
            return decode(entry.get("value"))
        except (ValueError, TypeError, RecursionError) as error:
            raise CheckFailed(exercise, "the recorded result could not be read "
                                        f"({error}).") from None


@contextlib.contextmanager
def using(transcript: Transcript):
    """Run checks recording to, or replaying from, ``transcript``."""
    token = _ACTIVE.set(transcript)
    try:
        yield transcript
    finally:
        _ACTIVE.reset(token)


def observe(exercise: str, describe: Callable[..., Any], *args) -> Any:
    """``describe(*args)``: plain facts (numbers, arrays, strings) about a student's answer, which
    :func:`encode` keeps; while grading, the facts recorded next to the student's code."""
    transcript = _ACTIVE.get()
    if transcript is None:
        return describe(*args)
    name = describe.__name__
    transcript.observed[exercise, name] += 1
    key = f"observe {exercise} {name} {transcript.observed[exercise, name]}"
    if transcript.mode == "replay":
        return transcript.replay(exercise, key)
    return transcript.record(key, lambda: describe(*args))
