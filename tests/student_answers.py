"""Reference solutions handed to the checks as a student's answer would be."""

from __future__ import annotations

import types


def as_student_answer(reference):
    """``reference``'s code as a function of its own named ``answer``.

    The checks refuse an answer that calls, or is, the package's reference
    (:func:`seqlab.course.checks.core.refuse_package_calls`); a student who typed the same code has a
    function of another name, which this builds.
    """
    return types.FunctionType(reference.__code__, reference.__globals__, "answer",
                              reference.__defaults__, reference.__closure__)
