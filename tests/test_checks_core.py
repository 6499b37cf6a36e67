import numpy as np
import pytest

from seqlab.checks import CheckFailed, assert_close, passed, run_student_code


def test_placeholder_becomes_a_friendly_failure():
    def unsolved():
        raise NotImplementedError("Exercise 1: …")

    with pytest.raises(CheckFailed, match="still the placeholder") as info:
        run_student_code("Exercise 1", unsolved)
    assert info.value._render_traceback_() == [
        "\u2717 Exercise 1 not passed yet: " + info.value.message
    ]


def test_crashes_in_student_code_are_reported_by_type():
    with pytest.raises(CheckFailed, match="ZeroDivisionError"):
        run_student_code("Exercise 1", lambda: 1 / 0)


def test_assert_close_names_shape_then_first_differing_position():
    with pytest.raises(CheckFailed, match=r"shape \(2,\), expected \(3,\)"):
        assert_close("E", np.zeros(2), np.zeros(3))
    with pytest.raises(CheckFailed, match=r"position \(1, 0\)"):
        assert_close("E", [[0.0, 0.0], [1.0, 0.0]], np.zeros((2, 2)))
    with pytest.raises(CheckFailed, match="finite"):
        assert_close("E", [np.nan], [0.0])
    assert_close("E", [1.0, 2.0], [1.0, 2.0 + 1e-7])


def test_passed_prints_a_tick_and_returns_nothing_to_display(capsys):
    # A check is the last line of its cell: anything but None would show under the tick.
    assert passed("Exercise 3", "well done") is None
    assert "\u2713 Exercise 3 passed. well done" in capsys.readouterr().out


def test_a_passing_check_returns_none(capsys):
    from seqlab import checks
    from seqlab.checks.language_models import sample_perplexity_reference

    assert checks.check_perplexity(sample_perplexity_reference) is None
    assert capsys.readouterr().out.startswith("\u2713")
