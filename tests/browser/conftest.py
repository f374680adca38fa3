"""Fixtures for the browser tests: a JupyterLab server on a copy of the notebooks, and chromium.

The server runs from this Python environment on a free loopback port, with a random token, on a
temporary copy of notebooks/ (running cells never touches the committed notebooks), with its own
settings: every cell attached to the page (no windowing, so the checks and the screenshots see the
whole notebook), the preferred kernel started without asking, no autosave, no news or update
toasts. It is always stopped at the end of the session, kernels included.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import ROOT

SCREENSHOTS = ROOT / "screenshots"
# Debian's chromium; another one with CHROMIUM=/path/to/chrome
CHROMIUM_CANDIDATES = ["/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome"]
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update",
                 # nothing leaves the machine: other hosts do not resolve (the Colab badge image
                 # then shows as a broken image, which the tests allow)
                 "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"]
VIEWPORT = {"width": 1280, "height": 900}
SERVER_START_TIMEOUT_S = 90

LAB_SETTINGS = {
    "@jupyterlab/notebook-extension/tracker": {
        "windowingMode": "none",  # attach every cell; the default renders only what is on screen
        "autoStartDefaultKernel": True,  # the notebooks carry no kernelspec: no kernel dialog
        "scrollPastEnd": False,  # no blank screen's worth of space under the last cell
    },
    "@jupyterlab/apputils-extension/notification": {
        "fetchNews": "false",  # no "Would you like to get notified about official Jupyter news?"
        "checkForUpdates": False,
        "doNotDisturbMode": True,  # no toast over the notebook in a screenshot
    },
    "@jupyterlab/docmanager-extension/plugin": {"autosave": False},
}


@dataclass
class Lab:
    url: str  # http://127.0.0.1:PORT
    token: str
    root: Path  # the server's root: a copy of notebooks/ (and images/) lives here
    log: Path

    def notebook_url(self, name: str, workspace: str) -> str:
        # a workspace of its own per notebook, so no tab of an earlier test is restored
        return f"{self.url}/lab/workspaces/{workspace}/tree/notebooks/{name}?token={self.token}"

    def api(self, method: str, path: str, timeout: float = 10):
        request = urllib.request.Request(f"{self.url}{path}", method=method,
                                         headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(request, timeout=timeout) as response:
            body = response.read()
        return json.loads(body) if body else None

    def shutdown_kernels_of(self, name: str) -> None:
        """Shut down the sessions (and kernels) of notebooks/NAME, so they stop using memory."""
        for session in self.api("GET", "/api/sessions"):
            if session.get("path") == f"notebooks/{name}":
                self.api("DELETE", f"/api/sessions/{session['id']}", timeout=30)

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _write_settings(folder: Path) -> None:
    for plugin, values in LAB_SETTINGS.items():
        path = folder / f"{plugin}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values, indent=2))


def _descendants(pid: int) -> list:
    """The server's child processes, kernels included (they run in sessions of their own)."""
    try:
        import psutil
    except ImportError:
        return []
    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.Error:
        return []


def _stop(process: subprocess.Popen, children: list) -> None:
    """SIGTERM the server's process group (it shuts its kernels down), then SIGKILL what is left."""
    for sig, wait_s in ((signal.SIGTERM, 20), (signal.SIGKILL, 10)):
        if process.poll() is not None:
            break
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            break
        try:
            process.wait(timeout=wait_s)
        except subprocess.TimeoutExpired:
            continue
    if process.poll() is None:
        process.kill()
        process.wait(timeout=10)
    if children:
        import psutil

        alive = [c for c in children if c.is_running()]
        for child in alive:
            try:
                child.terminate()
            except psutil.Error:
                pass
        _, alive = psutil.wait_procs(alive, timeout=5)
        for child in alive:
            try:
                child.kill()
            except psutil.Error:
                pass
        psutil.wait_procs(alive, timeout=5)


def _start(base: Path, port: int, token: str, log) -> subprocess.Popen:
    env = dict(os.environ)
    env.update({
        "JUPYTERLAB_SETTINGS_DIR": str(base / "settings"),
        "JUPYTERLAB_WORKSPACES_DIR": str(base / "workspaces"),
        "JUPYTER_CONFIG_DIR": str(base / "config"),  # no personal ~/.jupyter config
        "JUPYTER_RUNTIME_DIR": str(base / "runtime"),
    })
    env.pop("MPLBACKEND", None)  # the kernels use the inline backend, as for a reader
    command = [
        sys.executable, "-m", "jupyterlab", "--no-browser",
        f"--ServerApp.port={port}", "--ServerApp.port_retries=0", "--ServerApp.ip=127.0.0.1",
        f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={base / 'root'}",
        "--ServerApp.open_browser=False",
        "--LabApp.news_url=None", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    ]
    if hasattr(os, "geteuid") and os.geteuid() == 0:  # e.g. in a CI container
        command.append("--ServerApp.allow_root=True")
    return subprocess.Popen(command, cwd=base, env=env, stdout=log, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, start_new_session=True)


def _wait_until_up(lab: Lab, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + SERVER_START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"JupyterLab exited with code {process.returncode}:\n{lab.log_tail()}")
        try:
            if "started" in lab.api("GET", "/api/status", timeout=2):
                return
        except (urllib.error.URLError, ConnectionError, TimeoutError, json.JSONDecodeError):
            pass
        time.sleep(0.25)
    raise RuntimeError(f"JupyterLab did not answer /api/status in {SERVER_START_TIMEOUT_S} s:\n{lab.log_tail()}")


@pytest.fixture(scope="session")
def lab(tmp_path_factory):
    base = tmp_path_factory.mktemp("jupyterlab")
    shutil.copytree(ROOT / "notebooks", base / "root" / "notebooks",
                    ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    if (ROOT / "images").is_dir():  # markdown may show ../images/...
        shutil.copytree(ROOT / "images", base / "root" / "images")
    _write_settings(base / "settings")
    token = secrets.token_hex(24)
    with open(base / "server.log", "w") as log:
        for attempt in range(3):  # the free port can be taken in between; try another
            port = _free_port()
            process = _start(base, port, token, log)
            lab = Lab(f"http://127.0.0.1:{port}", token, base / "root", base / "server.log")
            try:
                _wait_until_up(lab, process)
                break
            except RuntimeError:
                _stop(process, _descendants(process.pid))
                if attempt == 2:
                    raise
        try:
            yield lab
        finally:
            _stop(process, _descendants(process.pid))


def _chromium() -> str:
    wanted = os.environ.get("CHROMIUM")
    for candidate in ([wanted] if wanted else CHROMIUM_CANDIDATES):
        found = shutil.which(candidate)
        if found:
            return found
    pytest.fail("no chromium found: install Debian's (`apt-get install chromium`) "
                "or set CHROMIUM=/path/to/chromium", pytrace=False)


@pytest.fixture(scope="session")
def browser():
    sync_api = pytest.importorskip("playwright.sync_api", reason="pip install -e '.[browser]'")
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=_chromium(), args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture(scope="session")
def browser_context(browser):
    # one context for the session: later pages load JupyterLab from its cache
    context = browser.new_context(viewport=VIEWPORT)
    try:
        yield context
    finally:
        context.close()


@pytest.fixture
def page(browser_context):
    page = browser_context.new_page()
    page.set_viewport_size(VIEWPORT)
    page.problems = []  # uncaught page errors, for the failure messages
    page.on("pageerror", lambda err: page.problems.append(str(err)))
    try:
        yield page
    finally:
        page.close()


@pytest.fixture(scope="session")
def screenshots():
    SCREENSHOTS.mkdir(exist_ok=True)
    return SCREENSHOTS
