"""Fixtures of the browser tests: one JupyterLab and one Chromium per module."""

import os
from pathlib import Path

import pytest

from .lab import CHROMIUM, CHROMIUM_ARGS, JupyterLab

# screenshots and console logs of each test; CI points this at its run's
# output folder
ARTIFACTS = Path(os.environ.get("BTT_UI_ARTIFACTS", Path(__file__).resolve().parents[2] / "test-artifacts"))


@pytest.fixture(scope="module")
def notebook_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("notebooks")


@pytest.fixture(scope="module")
def lab(notebook_dir, tmp_path_factory):
    if not CHROMIUM.exists():
        pytest.skip(f"browser tests need Debian's Chromium at {CHROMIUM} (apt-get install chromium)")
    pytest.importorskip("jupyterlab")
    with JupyterLab(notebook_dir, tmp_path_factory.mktemp("lab")) as server:
        yield server


@pytest.fixture(scope="module")
def browser(lab):
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def page(browser, lab, request):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    messages = []
    page.on("console", lambda message: messages.append(f"{message.type}: {message.text}"))
    page.on("pageerror", lambda error: messages.append(f"pageerror: {error}"))
    page.console_messages = messages
    yield page
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    name = request.node.name.replace("/", "_")
    try:
        page.screenshot(path=str(ARTIFACTS / f"{name}-final.png"), full_page=False)
    except Exception:
        pass
    (ARTIFACTS / f"{name}-console.log").write_text("\n".join(messages))
    context.close()
    lab.shutdown_kernels()


def screenshot(page, name: str, locator=None) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    (locator or page).screenshot(path=str(path))
    return path
