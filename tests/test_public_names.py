"""Every public name of ``seqlab`` (each module's ``__all__``) is reached from where a student or
an instructor meets the package: a notebook, a lesson module, the instructor's tools or the docs
(issue 50). A name only the package itself and its tests use is not public: it leaves
``__all__`` (or the package)."""

from __future__ import annotations

import importlib
import pkgutil
import re

import pytest

import seqlab
from seqlab import config

ROOT = config.REPO_ROOT


def public_names() -> dict[str, list[str]]:
    """``{name: [modules whose __all__ holds it]}`` over the package, the generated lesson
    modules left out (the notebooks are their source)."""
    names: dict[str, list[str]] = {}
    for module in pkgutil.walk_packages(seqlab.__path__, "seqlab."):
        if module.name.startswith("seqlab.lessons.nb"):
            continue
        for name in getattr(importlib.import_module(module.name), "__all__", ()):
            names.setdefault(name, []).append(module.name)
    return names


def reader_facing_text() -> str:
    paths = [*ROOT.glob("notebooks/*.ipynb"), *ROOT.glob("src/seqlab/lessons/nb*.py"),
             *ROOT.glob("src/seqlab_instructor/**/*.py"), *ROOT.glob("docs/**/*.md"),
             ROOT / "README.md"]
    return "\n".join(path.read_text(encoding="utf-8") for path in paths)


def unreached(names: dict[str, list[str]], text: str) -> list[str]:
    words = set(re.findall(r"\w+", text))
    return sorted(f"{name} ({', '.join(modules)})" for name, modules in names.items()
                  if name not in words)


def test_every_public_name_is_reached_from_a_notebook_a_lesson_the_tools_or_the_docs():
    names = public_names()
    assert len(names) > 50, "no __all__ read: wrong package?"
    assert unreached(names, reader_facing_text()) == []


def test_an_unreached_name_is_reported_with_its_module():
    assert unreached({"load_imdb": ["seqlab.data"], "helper": ["seqlab.x"]},
                     "from seqlab.data import load_imdb") == ["helper (seqlab.x)"]


@pytest.mark.parametrize("name", ["greedy_decode_in_graph", "read_sample_split"])
def test_internal_helpers_are_not_public(name):
    assert name not in public_names()
