"""The architecture picture (docs/images/architecture.py draws docs/images/architecture.png) is
held to the package it draws, as the generated lesson modules are held to their notebooks:
every name it draws is a module that exists, and every subpackage of ``seqlab`` is drawn. A
renamed or moved package fails here until the picture is redrawn (``python
docs/images/architecture.py``)."""

from __future__ import annotations

import importlib.util
import re

import pytest

from seqlab import config

ROOT = config.REPO_ROOT
SCRIPT = ROOT / "docs" / "images" / "architecture.py"


@pytest.fixture(scope="module")
def picture():
    spec = importlib.util.spec_from_file_location("architecture_picture", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def drawn_modules(picture) -> set[str]:
    """The modules the picture names: its boxes' titles and the course and tools rows."""
    names = {name for title, _ in picture.FLOW for name in title.split(" · ")}
    names |= set(re.findall(r'"(seqlab\.\w+)"', SCRIPT.read_text(encoding="utf-8")))
    names |= {f"seqlab.course.{name}" for name, _ in picture.COURSE}
    names |= {f"seqlab_instructor.{name}" for name, _ in picture.INSTRUCTOR}
    return names


def test_every_module_the_picture_draws_exists(picture):
    missing = sorted(name for name in drawn_modules(picture)
                     if importlib.util.find_spec(name) is None)
    assert missing == []


def test_every_subpackage_of_seqlab_is_drawn(picture):
    subpackages = {f"seqlab.{path.parent.name}" for path in (ROOT / "src" / "seqlab").glob(
        "*/__init__.py")}
    assert len(subpackages) >= 6
    assert sorted(subpackages - drawn_modules(picture) - {"seqlab.course"}) == []


def test_the_picture_is_drawn_by_its_script(picture, tmp_path):
    pytest.importorskip("matplotlib")
    picture.main(tmp_path / "architecture.png")
    assert (tmp_path / "architecture.png").stat().st_size > 10_000
    assert (ROOT / "docs" / "images" / "architecture.png").is_file()
