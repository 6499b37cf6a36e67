"""The models the notebooks teach, generated from their ``#@save`` cells (``nb04``: notebook 04).

Each ``nbNN`` module is written by ``python -m seqlab_instructor.lessons`` from the notebook's
cells and never edited by hand (a test fails when one differs from its notebook).
"""

__all__ = ["add_to_class"]


def add_to_class(cls):
    """Decorator: add the function to ``cls`` as a method, so that a lesson can write a long
    class across several short cells (d2l's ``add_to_class``). In the generated module the
    method sits inside the class itself (``python -m seqlab_instructor.lessons`` folds it in).

    Example:
        >>> class Model:
        ...     pass
        >>> @add_to_class(Model)
        ... def greet(self):
        ...     return "hello"
        >>> Model().greet()
        'hello'
    """
    def add(function):
        setattr(cls, function.__name__, function)
        return function

    return add
