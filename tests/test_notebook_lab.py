"""Every course lesson's notebook opens in JupyterLab, as a reader who downloaded it would see it.

One real JupyterLab server (a subprocess, on a free port, with a token, its settings, data and
runtime folders in a temporary directory) serves the notebooks of the course built from its committed
artifacts (``test_notebook``'s ``course``), and one headless Chromium opens each lesson's notebook
from Lab's file browser. The server offers no kernel at all, so opening a notebook cannot run
anything: Lab asks which kernel to use and the test answers "No Kernel"; every other dialog is an
error. A downloaded notebook is not trusted (its signature lives in the reader's own database), so
this is also the check that the recorded figures show in an untrusted notebook.
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
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest

from browser_util import browser_missing
from test_notebook import LESSON_PAGES, NOTEBOOKS, course  # noqa: F401  (the course, built once, cache-only)

pytestmark = [pytest.mark.browser, pytest.mark.sphinx]

pytest.importorskip("jupyterlab")
if browser_missing():
    pytest.skip(browser_missing(), allow_module_level=True)

#: every cell rendered, not only those scrolled into view (Lab's default windowing defers some)
LAB_SETTINGS = {"@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"}}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_until_up(server: subprocess.Popen[bytes], url: str, log: Path, limit: float = 120) -> None:
    """Poll the server's status API until it answers; fail at once if the server exits."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        assert server.poll() is None, f"JupyterLab exited ({server.returncode}):\n{log.read_text()[-3000:]}"
        try:
            with urllib.request.urlopen(url, timeout=5):
                return
        except OSError:
            time.sleep(0.5)
    raise AssertionError(f"JupyterLab did not answer within {limit} s:\n{log.read_text()[-3000:]}")


def stop(server: subprocess.Popen[bytes]) -> None:
    """End the server and anything it started (its own process group), politely first; fail if
    anything of it outlives the server."""
    if server.poll() is None:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait(timeout=30)
    try:  # nothing of the server's is left running
        os.killpg(server.pid, 0)
    except ProcessLookupError:
        return
    os.killpg(server.pid, signal.SIGKILL)
    raise AssertionError("JupyterLab left processes running after it stopped (killed now)")


class Lab:
    """A running JupyterLab server: where it is, its token, and what it logged."""

    def __init__(self, port: int, token: str, log: Path) -> None:
        self.base, self.token, self.log = f"http://127.0.0.1:{port}", token, log

    def api(self, path: str) -> Any:
        with urllib.request.urlopen(f"{self.base}/api/{path}?token={self.token}", timeout=10) as answer:
            return json.loads(answer.read())


@pytest.fixture(scope="module")
def lab(course: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:  # noqa: F811
    """JupyterLab on the built notebooks, offering no kernel; stopped whatever happens."""
    home = tmp_path_factory.mktemp("jupyterlab")
    settings = home / "settings"
    for name, values in LAB_SETTINGS.items():
        (settings / name).parent.mkdir(parents=True, exist_ok=True)
        (settings / name).write_text(json.dumps(values))
    port, token, log = free_port(), secrets.token_hex(16), home / "server.log"
    command = [sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root", "--ip=127.0.0.1",
               f"--port={port}", "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}",
               f"--ServerApp.root_dir={course / NOTEBOOKS}", f"--LabApp.user_settings_dir={settings}",
               f"--LabApp.workspaces_dir={home / 'workspaces'}",
               "--KernelSpecManager.allowed_kernelspecs=['tensorviz-no-kernel']"]  # a name no kernel has
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(home / "config"), "JUPYTER_DATA_DIR": str(home / "data"),
           "JUPYTER_RUNTIME_DIR": str(home / "runtime"), "JUPYTER_PATH": "", "JUPYTER_CONFIG_PATH": ""}
    with log.open("wb") as written:
        server = subprocess.Popen(command, stdout=written, stderr=subprocess.STDOUT, env=env, cwd=home,
                                  start_new_session=True)
    try:
        running = Lab(port, token, log)
        wait_until_up(server, f"{running.base}/api/status?token={token}", log)
        assert running.api("kernelspecs")["kernelspecs"] == {}, "the server must offer no kernel"
        yield running
    finally:
        stop(server)


@pytest.fixture(scope="module")
def lab_page(lab: Lab, browser: Any) -> Iterator[tuple[Any, list[str]]]:
    """Lab loaded once in one page, and the script errors it reports."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(f"script: {exc}"))
    page.on("console", lambda m: errors.append(f"console: {m.text}") if m.type == "error" else None)
    page.goto(f"{lab.base}/lab?reset&token={lab.token}")
    page.locator(".jp-DirListing-content").wait_for()
    yield page, errors
    context.close()


def expected(path: Path) -> dict[str, Any]:
    """What the notebook file says Lab must show: its title, each recorded figure's alt text, and the
    number of data tables and Markdown pictures."""
    document = nbformat.read(path, as_version=4)
    outputs = [o for c in document.cells if c.cell_type == "code" for o in c.outputs]
    title = next(c.source for c in document.cells if c.cell_type == "markdown").splitlines()[0]
    return {"title": title.lstrip("# ").strip(),
            "figures": [" ".join(o.data["text/plain"].split()) for o in outputs if "image/svg+xml" in o.data],
            "tables": sum("<table" in o.data.get("text/html", "") for o in outputs),
            "pictures": sum("contentHash" in c.metadata.get("tensorviz", {}) for c in document.cells
                            if c.cell_type == "markdown"),  # a figure with nothing to run, shown as recorded
            "outputs": len(outputs), "code": sum(c.cell_type == "code" for c in document.cells)}


def open_without_kernel(page: Any, name: str) -> Any:
    """Open ``name`` from the file browser, answer Lab's kernel question with "No Kernel", and return
    the notebook's panel. Any other dialog (a load error, an invalid notebook) fails the test."""
    page.locator(".jp-DirListing-item", has=page.get_by_text(name, exact=True)).dblclick()
    dialog = page.locator(".jp-Dialog")
    dialog.wait_for()
    header = dialog.locator(".jp-Dialog-header").inner_text().strip()
    assert header == "Select Kernel", f"{name}: {header}: {dialog.inner_text()}"
    dialog.locator("select").select_option(label="No Kernel")
    dialog.locator(".jp-mod-accept").click()
    dialog.wait_for(state="detached")
    panel = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden)")
    panel.locator(".jp-MarkdownOutput h1").first.wait_for()
    return panel


@pytest.mark.parametrize("lesson", LESSON_PAGES)
def test_a_lesson_notebook_opens_in_jupyterlab_with_its_recorded_figures(lab: Lab, lab_page: tuple[Any, list[str]],
                                                                        course: Path, lesson: str) -> None:  # noqa: F811
    page, errors = lab_page
    want = expected(course / NOTEBOOKS / f"{lesson}.ipynb")
    assert want["figures"] or want["pictures"], lesson
    panel = open_without_kernel(page, f"{lesson}.ipynb")
    try:
        outputs = panel.locator(".jp-OutputArea-output")
        page.wait_for_function("([panel, n]) => panel.querySelectorAll('.jp-OutputArea-output').length >= n",
                               arg=[panel.element_handle(), want["outputs"]])
        assert outputs.count() == want["outputs"]
        assert panel.locator(".jp-MarkdownOutput h1").first.inner_text().strip() == want["title"]
        # the recorded figures are pictures (loaded, with their alt text), not their alt text in a <pre>
        shown = panel.locator(".jp-OutputArea-output img[src^='data:image/svg+xml']")
        assert [shown.nth(i).get_attribute("alt") for i in range(shown.count())] == want["figures"]
        assert panel.locator(".jp-OutputArea-output table caption").count() == want["tables"]
        pictures = panel.locator(".jp-MarkdownOutput img[src^='data:image/svg+xml']")
        assert pictures.count() == want["pictures"]
        loaded = panel.locator(".jp-OutputArea-output img, .jp-MarkdownOutput img")
        page.wait_for_function("els => els.every(e => e.complete)", arg=loaded.element_handles())
        widths = loaded.evaluate_all("els => els.map(e => e.naturalWidth)")
        assert widths and all(widths), f"{lesson}: a picture did not load ({widths})"
        assert panel.locator("[data-mime-type='application/vnd.jupyter.stderr']").count() == 0
        # nothing ran: no kernel, every prompt empty, the server started none
        assert panel.locator(".jp-CodeCell .jp-InputPrompt").count() == want["code"]
        assert set(panel.locator(".jp-CodeCell .jp-InputPrompt").all_inner_texts()) <= {"[ ]:"}
        assert lab.api("kernels") == []
        assert page.locator(".jp-Dialog").count() == 0
        assert not errors, errors
    finally:
        page.locator(".lm-TabBar-tab.lm-mod-current .lm-TabBar-tabCloseIcon").last.click()


def test_the_server_found_every_notebook_valid(lab: Lab, lab_page: tuple[Any, list[str]]) -> None:
    """After the lessons were opened (this runs last in the module): nothing the server logged as an error
    or an invalid notebook."""
    log = lab.log.read_text()
    assert "[E " not in log and "invalid" not in log.lower(), log[-3000:]
