"""A JupyterLab server and a Chromium page for browser tests.

The server runs on 127.0.0.1 with a random token, isolated config, runtime
and settings folders (pre-seeded so that kernels start without a dialog and
no news is fetched), and is stopped by PID. Readiness is asked of the app
(``window.jupyterapp``, exposed with ``--LabApp.expose_app_in_browser``):
the kernel connected and idle, every code cell executed.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-dev-shm-usage",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]
SETTINGS = {
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"autoStartDefaultKernel": True},
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false",
        "checkForUpdates": False,
    },
}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def write_notebook(path: Path, cells: list[str]) -> Path:
    """A notebook of code cells (nbformat 4, no outputs)."""
    notebook = {
        "cells": [
            {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": source}
            for source in cells
        ],
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path.write_text(json.dumps(notebook, indent=1))
    return path


REPOSITORY = Path(__file__).resolve().parents[2]


class JupyterLab:
    """``with JupyterLab(root) as lab: lab.url("name.ipynb")``."""

    def __init__(self, root: Path, workdir: Path):
        self.root = root
        self.workdir = workdir
        self.port = free_port()
        self.token = secrets.token_hex(16)
        self.process = None

    def __enter__(self) -> JupyterLab:
        settings = self.workdir / "settings"
        for name, value in SETTINGS.items():
            target = settings / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(json.dumps(value))
        env = dict(os.environ)
        env.update(
            JUPYTER_CONFIG_DIR=str(self.workdir / "config"),
            JUPYTER_RUNTIME_DIR=str(self.workdir / "runtime"),
            JUPYTERLAB_SETTINGS_DIR=str(settings),
            JUPYTERLAB_WORKSPACES_DIR=str(self.workdir / "workspaces"),
            PATH=str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", ""),
            PYTHONUNBUFFERED="1",
            # the kernels import the package of this checkout, not whichever one is installed
            PYTHONPATH=os.pathsep.join(filter(None, [str(REPOSITORY), env.get("PYTHONPATH", "")])),
        )
        self.log = open(self.workdir / "jupyterlab.log", "wb")
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "jupyterlab",
                "--no-browser",
                "--ip=127.0.0.1",
                f"--port={self.port}",
                f"--IdentityProvider.token={self.token}",
                "--allow-root",
                "--LabApp.expose_app_in_browser=True",
                f"--ServerApp.root_dir={self.root}",
                "--ServerApp.port_retries=0",
            ],
            env=env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            cwd=self.root,
            start_new_session=True,
        )
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"JupyterLab exited early; see {self.workdir / 'jupyterlab.log'}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/api/status?token={self.token}", timeout=2):
                    return self
            except OSError:
                time.sleep(0.5)
        self.__exit__(None, None, None)
        raise RuntimeError("JupyterLab did not answer within 90 s")

    def shutdown_kernels(self) -> None:
        """Stop every kernel the server started (each test's notebook keeps
        one running otherwise)."""
        base = f"http://127.0.0.1:{self.port}/api/kernels"
        with urllib.request.urlopen(f"{base}?token={self.token}", timeout=10) as response:
            kernels = json.load(response)
        for kernel in kernels:
            request = urllib.request.Request(f"{base}/{kernel['id']}?token={self.token}", method="DELETE")
            try:
                urllib.request.urlopen(request, timeout=30).close()
            except OSError:
                pass

    def url(self, notebook: str) -> str:
        return f"http://127.0.0.1:{self.port}/lab/tree/{notebook}?token={self.token}&reset"

    def __exit__(self, *exc) -> None:
        if self.process is not None and self.process.poll() is None:
            # the server was started in its own session: signal its group, so
            # kernels it started go too
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=10)
        self.log.close()


# JavaScript run in the page: the notebook panel, its kernel and cells.
_PANEL = "window.jupyterapp && window.jupyterapp.shell.currentWidget"
KERNEL_IDLE = f"""() => {{
  const panel = {_PANEL};
  const kernel = panel && panel.sessionContext && panel.sessionContext.session && panel.sessionContext.session.kernel;
  return !!kernel && kernel.connectionStatus === "connected" && kernel.status === "idle";
}}"""
ALL_EXECUTED = f"""() => {{
  const panel = {_PANEL};
  if (!panel || !panel.content) return false;
  const kernel = panel.sessionContext.session && panel.sessionContext.session.kernel;
  if (!kernel || kernel.status !== "idle") return false;
  return panel.content.widgets.every((cell) => cell.model.type !== "code" || cell.model.executionCount !== null);
}}"""
ERRORS = f"""() => {{
  const panel = {_PANEL};
  const found = [];
  for (const cell of panel.content.widgets) {{
    if (cell.model.type !== "code") continue;
    for (const output of cell.model.outputs.toJSON()) {{
      if (output.output_type === "error") found.push(output.ename + ": " + output.evalue);
    }}
  }}
  return found;
}}"""
EXECUTE = f"""async (code) => {{
  const kernel = {_PANEL}.sessionContext.session.kernel;
  const future = kernel.requestExecute({{ code, store_history: false }});
  const texts = [];
  future.onIOPub = (msg) => {{
    const content = msg.content;
    if (msg.header.msg_type === "stream") texts.push(content.text);
    if (msg.header.msg_type === "execute_result") texts.push(content.data["text/plain"]);
    if (msg.header.msg_type === "error") texts.push(content.ename + ": " + content.evalue);
  }};
  await future.done;
  return texts.join("");
}}"""


def open_and_run(page, lab: JupyterLab, notebook: str, timeout_ms: int = 240_000) -> None:
    """Open a notebook, wait for its kernel, run every cell, wait until done."""
    page.goto(lab.url(notebook))
    page.wait_for_function(KERNEL_IDLE, timeout=timeout_ms, polling=250)
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    page.wait_for_function(ALL_EXECUTED, timeout=timeout_ms, polling=250)
    errors = page.evaluate(ERRORS)
    assert not errors, f"cells of {notebook} raised: {errors}"


def kernel_eval(page, code: str) -> str:
    """Run code in the notebook's kernel (no cell), return what it printed."""
    return page.evaluate(EXECUTE, code)
