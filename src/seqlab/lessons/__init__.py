"""The models the notebooks teach, generated from their ``#@save`` cells (``nb04``: notebook 04).

Each ``nbNN`` module is written by ``python -m seqlab_instructor.lessons`` from the notebook's
cells and never edited by hand (a test fails when one differs from its notebook).
"""

import functools
import inspect

__all__ = ["ConfigFromArguments", "add_to_class"]


class ConfigFromArguments:
    """Mixin for a lesson's Keras layer or model: ``get_config()`` returns the arguments its
    ``__init__`` was called with (defaults filled in), so the class a lesson shows holds its
    ``__init__`` and ``call`` and no serialization code. ``name``, ``dtype`` and ``trainable``
    come from Keras's own ``get_config``. Put it first among the bases.

    Example:
        >>> import keras
        >>> class Scale(ConfigFromArguments, keras.layers.Layer):
        ...     def __init__(self, factor, bias=0.0, **kwargs):
        ...         super().__init__(**kwargs)
        ...         self.factor, self.bias = factor, bias
        >>> config = Scale(2.0, name="scale").get_config()
        >>> config["factor"], config["bias"], config["name"]
        (2.0, 0.0, 'scale')
    """

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        init = cls.__dict__.get("__init__")
        if init is None:
            return
        signature = inspect.signature(init)
        keyword = [name for name, parameter in signature.parameters.items()
                   if parameter.kind is inspect.Parameter.VAR_KEYWORD]

        @functools.wraps(init)
        def recording_init(self, *args, **kwargs):
            bound = signature.bind(self, *args, **kwargs)
            bound.apply_defaults()
            init(self, *args, **kwargs)
            # set after Keras's __init__ ran; a subclass's wrapper runs last, so its arguments win
            self.constructor_arguments = {name: value for name, value in
                                          list(bound.arguments.items())[1:]
                                          if name not in keyword}

        recording_init.__signature__ = signature  # what Keras's __new__ reads of __init__
        cls.__init__ = recording_init

    def get_config(self):
        return {**super().get_config(), **self.constructor_arguments}


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
