import numpy as np
import pytest

from seqlab.course.checks import CheckFailed, assert_close, passed, run_student_code
from seqlab.course.checks.core import refuse_package_calls


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
    from student_answers import as_student_answer

    from seqlab.course import checks
    from seqlab.course.checks.language_models import sample_perplexity_reference

    assert checks.check_perplexity(as_student_answer(sample_perplexity_reference)) is None
    assert capsys.readouterr().out.startswith("\u2713")


# A notebook's namespace: what a student's cell defines, with the package imported as a notebook
# would (seqlab.course.checks.language_models.sample_perplexity_reference stands for a package
# function; importing the checks loads no Keras).
NOTEBOOK_PRELUDE = """
import numpy as np
from seqlab.course import checks
from seqlab.course.checks.language_models import sample_perplexity_reference
from seqlab.course.checks.language_models import sample_perplexity_reference as reference
"""
FORBIDDEN = ["sample_perplexity_reference"]


def student_function(source, name="answer"):
    namespace = {}
    exec(NOTEBOOK_PRELUDE + source, namespace)  # noqa: S102 - a stand-in for a notebook cell
    return namespace[name]


@pytest.mark.parametrize("source", [
    "answer = sample_perplexity_reference",                                # the function itself
    "def answer(x, ids, s):\n    return sample_perplexity_reference(x, ids, s)",  # a call
    "def answer(x, ids, s):\n    return reference(x, ids, s)",          # under another name
    "def answer(x, ids, s):\n"
    "    return checks.language_models.sample_perplexity_reference(x, ids, s)",
    "def answer(x, ids, s):\n    inner = lambda: reference(x, ids, s)\n    return inner()",
    "def answer(x, ids, s):\n    return [reference(a, ids, s) for a in x]",  # a comprehension
    "def helper(x, ids, s):\n    return reference(x, ids, s)\n"
    "def answer(x, ids, s):\n    return helper(x, ids, s)",                # a helper of theirs
    "def make():\n    f = reference\n    def answer(x, ids, s):\n        return f(x, ids, s)\n"
    "    return answer\nanswer = make()",                                  # a closure
])
def test_refuse_package_calls_finds_the_package_function(source):
    with pytest.raises(CheckFailed, match="calls seqlab's sample_perplexity_reference") as info:
        refuse_package_calls("Exercise 1", student_function(source), FORBIDDEN)
    assert "not yours" in info.value.message


@pytest.mark.parametrize("source", [
    "def answer(x, ids, s):\n    return np.exp(-np.mean(x))",
    # a function of their own that happens to share the name
    "def sample_perplexity_reference(x, ids, s):\n    return x\n"
    "def answer(x, ids, s):\n    return sample_perplexity_reference(x, ids, s)",
    # mutual recursion ends
    "def odd(n):\n    return n > 0 and even(n - 1)\ndef even(n):\n    return n == 0 or odd(n - 1)\n"
    "def answer(x, ids, s):\n    return even(2)",
    "answer = np.exp",                                                     # no Python code
])
def test_refuse_package_calls_accepts_the_students_own_code(source):
    assert refuse_package_calls("Exercise 1", student_function(source), FORBIDDEN) is None


def test_refuse_package_calls_reads_only_the_forbidden_names():
    uses_reference = student_function("def answer(x, ids, s):\n    return reference(x, ids, s)")
    refuse_package_calls("Exercise 1", uses_reference, ["loss_by_position_reference"])


#: Every check of an exercise that asks for a function, with the package function (or the
#: check's reference) that computes the answer: handing the exercise to it must be refused.
DELEGATIONS = [
    ("check_loss_mask_experiment", "seqlab.course.checks.attention", "unmasked_loss_reference", 2),
    ("check_subsampling_share", "seqlab.course.checks.embeddings", "dropped_share_reference", 2),
    ("check_cbow_probabilities", "seqlab.course.checks.embeddings", "cbow_probabilities_reference", 1),
    ("check_perplexity", "seqlab.course.checks.language_models", "sample_perplexity_reference", 1),
    ("check_loss_by_position", "seqlab.course.checks.language_models", "loss_by_position_reference", 1),
    ("check_masking_rule", "seqlab.course.checks.bert", "apply_masking_reference", 2),
    ("check_masking_rule", "seqlab.course.checks.bert", "predict_shares_reference", 2),
    ("check_masked_lm_loss", "seqlab.course.checks.bert", "masked_lm_loss_reference", 1),
]


@pytest.mark.parametrize("check, module, reference, arguments", DELEGATIONS,
                         ids=[row[0] for row in DELEGATIONS])
def test_each_check_refuses_an_answer_that_calls_the_package(check, module, reference,
                                                             arguments):
    import importlib

    from seqlab.course import checks

    namespace = {"reference": getattr(importlib.import_module(module), reference)}
    exec("def answer(*args, **kwargs):\n    return reference(*args, **kwargs)",  # noqa: S102
         namespace)
    with pytest.raises(CheckFailed, match=f"calls seqlab's {reference}"):
        getattr(checks, check)(*[namespace["answer"]] * arguments)
