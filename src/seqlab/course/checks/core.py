"""The shared machinery of exercise checks: a friendly failure type and comparisons."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np


class CheckFailed(AssertionError):
    """An exercise answer is missing or differs from the reference; IPython shows its
    ``_render_traceback_``, one short line, instead of a traceback."""

    def __init__(self, exercise: str, message: str):
        self.exercise = exercise
        self.message = message
        super().__init__(f"{exercise}: {message}")

    def _render_traceback_(self) -> list[str]:
        return [f"\u2717 {self.exercise} not passed yet: {self.message}"]


def require(exercise: str, condition, message: str) -> None:
    """Raise :class:`CheckFailed` with ``message`` unless ``condition`` holds."""
    if not condition:
        raise CheckFailed(exercise, message)


def passed(exercise: str, detail: str = "") -> None:
    """Print the success line of a check; return nothing, which a cell would show under it."""
    print(f"\u2713 {exercise} passed." + (f" {detail}" if detail else ""))


def run_student_code(exercise: str, function: Callable[..., Any], *args, **kwargs) -> Any:
    """Call a student's function; turn 'not done yet' and crashes into :class:`CheckFailed`."""
    try:
        return function(*args, **kwargs)
    except NotImplementedError:
        raise CheckFailed(
            exercise,
            "the solution is still the placeholder. Replace `raise NotImplementedError(...)` "
            "with your code, run that cell, then run this check again.",
        ) from None
    except CheckFailed:
        raise
    except Exception as error:  # noqa: BLE001 - any crash becomes feedback, not a traceback
        raise CheckFailed(exercise, f"your code raised {type(error).__name__}: {error}") from None


def value_of(exercise: str, answer) -> Any:
    """``answer``, or what it returns if it is the student's function (called without arguments)."""
    return run_student_code(exercise, answer) if callable(answer) else answer


def check_entries(exercise: str, value, entries: Sequence[str], fields: Sequence[str], *,
                  what: str) -> None:
    """Raise :class:`CheckFailed` unless ``value`` maps exactly ``entries`` to ``fields``."""
    if not isinstance(value, Mapping) or set(value) != set(entries):
        found = sorted(value) if isinstance(value, Mapping) else type(value).__name__
        raise CheckFailed(exercise, f"{what} must have the entries {list(entries)} "
                                    f"({len(entries)} entries); found {found}.")
    for name, entry in value.items():
        missing = set(fields) - set(entry) if isinstance(entry, Mapping) else set(fields)
        require(exercise, not missing, f"{what}[{name!r}] lacks {sorted(missing)}.")


def as_array(exercise: str, value, what: str) -> np.ndarray:
    """``value`` as a float64 array, or :class:`CheckFailed` saying it is not array-like."""
    try:
        return np.asarray(value, dtype="float64")
    except Exception as error:  # noqa: BLE001 - a friendly message instead of a traceback
        raise CheckFailed(exercise, f"{what} is not an array of numbers ({error}).") from None


def one_number(exercise: str, value, what: str) -> float:
    """``value`` as a float, or :class:`CheckFailed` unless it is one number (a list is not)."""
    array = None if isinstance(value, (list, tuple)) else np.asarray(value)
    if array is None or array.size != 1 or array.dtype.kind not in "biuf":
        shape = f" of shape {array.shape}" if array is not None and array.ndim else ""
        raise CheckFailed(exercise, f"{what} returned {type(value).__name__}{shape}; expected "
                                    "one number.")
    return float(array.reshape(()))


def assert_close(exercise: str, got, expected, *, what: str = "output", atol: float = 1e-5,
                 rtol: float = 1e-5, mistakes: Sequence[tuple[Any, str]] = ()) -> None:
    """Compare arrays; on mismatch say whether the shape or which value differs, or give the
    message of the first ``(value, message)`` of ``mistakes`` that ``got`` is close to."""
    got = np.asarray(got)
    expected = np.asarray(expected)
    require(exercise, got.shape == expected.shape,
            f"{what} has shape {got.shape}, expected {expected.shape}.")
    if not np.all(np.isfinite(got)) and np.all(np.isfinite(expected)):
        index = tuple(int(i) for i in np.argwhere(~np.isfinite(got))[0])
        raise CheckFailed(exercise, f"{what} is {got[index]} at position {index}; expected a "
                                    "finite number.")
    close = np.isclose(got, expected, atol=atol, rtol=rtol)
    if close.all():
        return
    for value, message in mistakes:
        if np.shape(value) == got.shape and np.allclose(got, value, atol=atol, rtol=rtol):
            raise CheckFailed(exercise, message)
    index = tuple(int(i) for i in np.argwhere(~close)[0])
    where = f" at position {index} ({int((~close).sum())} of {close.size} differ)" if index else ""
    raise CheckFailed(exercise, f"{what} differs{where}: got {got[index]:.6g}, expected "
                                f"{expected[index]:.6g}.")


def softmax(x, axis=-1):
    """The softmax along ``axis``, with the maximum subtracted first."""
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def log_softmax(logits, axis=-1):
    """The log-softmax along ``axis``, in float64."""
    logits = np.asarray(logits, "float64")
    shifted = logits - logits.max(axis=axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))


def _global_names(code) -> set[str]:
    """Every name a code object looks up as a global or an attribute, nested code included."""
    names = set(code.co_names)
    for constant in code.co_consts:
        if hasattr(constant, "co_names"):
            names |= _global_names(constant)
    return names


def refuse_package_calls(exercise: str, function: Callable[..., Any],
                         forbidden: Sequence[str]) -> None:
    """Raise :class:`CheckFailed` if ``function``, its nested code or the helpers it calls from
    its namespace use a ``seqlab`` object or an attribute named in ``forbidden``."""
    forbidden = set(forbidden)

    def refuse_package_object(value) -> None:
        name = getattr(value, "__name__", None)
        if name in forbidden and str(getattr(value, "__module__", "")).split(".")[0] == "seqlab":
            refuse(name)

    def refuse(name: str) -> None:
        raise CheckFailed(exercise, f"your code calls seqlab's {name}: that is the answer, not "
                                    "yours. Write it with keras.ops / numpy.")

    refuse_package_object(function)
    namespace = getattr(function, "__globals__", None)
    seen: set[int] = set()
    pending = [function]
    while pending:
        current = pending.pop()
        if id(current) in seen or not hasattr(current, "__code__"):
            continue
        seen.add(id(current))
        values = {}
        for cell_name, cell in zip(current.__code__.co_freevars, current.__closure__ or (),
                                   strict=False):
            try:
                values[cell_name] = cell.cell_contents
            except ValueError:  # an empty cell
                continue
        for name in sorted(_global_names(current.__code__) | set(values)):
            if name in values:
                value = values[name]
            elif name in current.__globals__:
                value = current.__globals__[name]
            else:  # an attribute, or a builtin
                if name in forbidden:
                    refuse(name)
                continue
            refuse_package_object(value)
            if getattr(value, "__globals__", None) is namespace:
                pending.append(value)  # the student's own helper: read its code too
