"""The documentation site builds (``make docs``'s command, warnings as errors)
and shows, in Chromium, a function's API page and a tour notebook with a
matplotlib figure."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ..ui.lab import CHROMIUM, CHROMIUM_ARGS

ROOT = Path(__file__).resolve().parents[2]
HTML = ROOT / "docs" / "_build" / "html"

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.xdist_group("docs")]


@pytest.fixture(scope="module")
def site():
    pytest.importorskip("sphinx", reason="the docs extra is not installed (make test installs it)")
    pytest.importorskip("myst_nb", reason="the docs extra is not installed (make test installs it)")
    if not (HTML / "index.html").exists():
        env = {key: value for key, value in os.environ.items() if key != "MPLBACKEND"}
        run = subprocess.run(
            [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html", "docs", str(HTML)],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
        )
        assert run.returncode == 0, f"the docs build failed:\n{run.stdout[-4000:]}\n{run.stderr[-4000:]}"
    return HTML


@pytest.fixture(scope="module")
def page(site):
    if not CHROMIUM.exists():
        pytest.skip(f"browser tests need Debian's Chromium at {CHROMIUM} (apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield browser.new_page(viewport={"width": 1300, "height": 900})
        finally:
            browser.close()


def test_the_api_page_of_prune_documents_it(page, site):
    page.goto((site / "api.html").as_uri())
    page.locator("a", has_text="prune").first.wait_for()
    link = page.locator('a[href="api/generated/bandit_tree_tools.prune.html"]')
    assert link.count() >= 1, "api.html does not link btt.prune's page"
    link.first.click()
    page.wait_for_load_state()
    assert page.url.endswith("api/generated/bandit_tree_tools.prune.html")
    signature = page.locator("dt.sig").first
    assert "prune" in signature.inner_text() and "tolerance" in signature.inner_text()
    # numpydoc rendered the Parameters section as a field list
    assert page.locator("dl.field-list").count() >= 1
    assert "tolerance" in page.locator("dl.field-list").first.inner_text()


def test_a_tour_notebook_shows_its_matplotlib_figure(page, site):
    page.goto((site / "tour" / "01_prune_a_sklearn_tree.html").as_uri())
    assert "Prune a scikit-learn decision tree" in page.locator("h1").first.inner_text()
    figures = page.locator("div.cell_output img")
    assert figures.count() >= 1, "no rendered image output on the page"
    figure = figures.first
    figure.scroll_into_view_if_needed()
    # the PNG loaded and has a size (a broken image has naturalWidth 0)
    width, height = figure.evaluate("img => [img.naturalWidth, img.naturalHeight]")
    assert width > 100 and height > 100
    assert figure.get_attribute("src").endswith(".png")
    # the panels' script-free pictures are there, no widget JavaScript from outside
    assert page.locator(".btt-static-twin").count() >= 1
    external = page.evaluate("[...document.scripts].map(s => s.src).filter(s => s.startsWith('http'))")
    assert external == []
