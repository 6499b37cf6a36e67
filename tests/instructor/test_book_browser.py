"""The course book in a real browser: headless Chromium (Debian's ``chromium`` package, listed in
``.ci/apt-packages.txt``) loads the index and a notebook page built from a notebook executed
here, runs their scripts (MathJax included, from the book itself: no network), and the test
reads the resulting DOM: navigation, a typeset equation, an embedded plot. It also leaves a
screenshot of the notebook page at an equation and at a plot (``runs/book/*.png``) for a
person to look at."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from seqlab import config
from seqlab_instructor.runner import run_notebook
from seqlab_instructor.site import build_site

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = [
    pytest.mark.notebook,
    pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (Debian: "
                       "apt-get install chromium; CI installs .ci/apt-packages.txt)"),
]
NOTEBOOK = "01_imdb_pretrained_embedding.ipynb"  # the quickest in FAST mode, with math and plots
NEIGHBOUR = "02_fine_tuning.ipynb"  # in the book unexecuted: the sidebar must still list it
SCREENSHOTS = {  # section of notebook 01 -> where its screenshot goes
    "transfer-learning": config.RUNS_DIR / "book" / "notebook-equation.png",
    "training": config.RUNS_DIR / "book" / "notebook-plot.png",
}


def chromium(url: str, *args: str, profile) -> str:
    """Run headless Chromium on ``url`` with ``args`` and a fresh profile; return stdout."""
    command = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
               "--disable-background-networking", "--disable-component-update", "--disable-sync",
               "--no-first-run", f"--user-data-dir={profile}", "--window-size=1400,1600",
               "--virtual-time-budget=15000", *args, url]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@pytest.fixture(scope="module")
def book(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("book")
    notebooks = tmp / "notebooks"
    notebooks.mkdir()
    for name in (NOTEBOOK, NEIGHBOUR):
        shutil.copy(config.REPO_ROOT / "notebooks" / name, notebooks / name)
    run = run_notebook(notebooks / NOTEBOOK, tmp / "runs", fast=True,
                       cwd=config.REPO_ROOT / "notebooks")
    assert run.stopped is None and not run.errors, run
    index = build_site(tmp / "runs", tmp / "site", notebooks=notebooks)
    return index.parent


def test_index_navigates_to_every_notebook_and_its_student_copy(book, tmp_path):
    dom = chromium((book / "index.html").as_uri(), "--dump-dom", profile=tmp_path / "profile")
    sidebar = dom[dom.index("bd-sidebar-primary"):]
    for name in (NOTEBOOK, NEIGHBOUR):
        stem = name.removesuffix(".ipynb")
        assert f'href="notebooks/{stem}.html"' in sidebar, stem
        assert f'href="assignments/{stem}.html"' in dom, stem
    assert "colab.research.google.com/github/" in dom


def test_notebook_page_has_navigation_a_typeset_equation_and_a_plot(book, tmp_path):
    page = book / "notebooks" / NOTEBOOK.replace(".ipynb", ".html")
    dom = chromium(page.as_uri(), "--dump-dom", profile=tmp_path / "profile")
    footer = dom[dom.index("prev-next-area"):][:4000]
    assert 'href="../index.html"' in footer  # previous
    assert 'href="../assignments/01_imdb_pretrained_embedding.html"' in footer  # next
    assert 'class="bd-toc' in dom or "bd-sidebar-secondary" in dom  # this page's contents
    # MathJax ran (offline, from _static/mathjax) and replaced the TeX with its output.
    assert "<mjx-container" in dom
    plots = re.findall(r'<img[^>]+src="\.\./(_images/[^"]+\.png)"', dom)
    assert plots and all((book / plot).stat().st_size > 1000 for plot in plots), plots
    assert "cuda_platform" not in dom and "absl::InitializeLog" not in dom  # stderr removed

    # Screenshots for a person to look at. Headless Chromium paints a blank image for a page
    # scrolled to an anchor, so the page is framed at that anchor inside a 1400 x 1600 frame.
    for anchor, screenshot in SCREENSHOTS.items():
        frame = book / f"screenshot-{anchor}.html"
        target = f"{page.relative_to(book).as_posix()}#{anchor}"
        frame.write_text('<!DOCTYPE html><body style="margin:0"><iframe src="' + target + '" '
                         'style="width:1400px;height:1600px;border:0"></iframe></body>',
                         encoding="utf-8")
        screenshot.parent.mkdir(parents=True, exist_ok=True)
        screenshot.unlink(missing_ok=True)
        chromium(frame.as_uri(), f"--screenshot={screenshot}", profile=tmp_path / anchor)
        assert screenshot.stat().st_size > 50_000, f"{screenshot} looks blank"
