"""A real JupyterLab server for the browser tests, isolated from the user's own.

It runs from the project's ``.venv`` (so the kernel is the course's Python) on
127.0.0.1 with a random token and a free port. Config, runtime, settings and
workspace folders are temporary, so nothing a learner has set changes what the
test sees, and the settings turn off what would make a run differ from a fresh
JupyterLab in ways that matter to a test: autosave (the test must never write
the notebooks it runs), windowed rendering (cells outside the viewport would
not be in the page), and the news/update pop-ups.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

SETTINGS = {
    "@jupyterlab/docmanager-extension/plugin": {"autosave": False},
    "@jupyterlab/notebook-extension/tracker": {"windowingMode": "none"},
    "@jupyterlab/apputils-extension/notification": {"fetchNews": "false",
                                                    "checkForUpdates": False},
}


@dataclass
class LabServer:
    base_url: str
    token: str
    log_path: Path

    def url(self, path: str) -> str:
        """The address of ``path`` (relative to the server's root) in JupyterLab,
        with a fresh workspace and the login token."""
        return f"{self.base_url}/lab/tree/{path}?reset&token={self.token}"

    def _api(self, method: str, path: str):
        request = urllib.request.Request(f"{self.base_url}/api/{path}", method=method,
                                         headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(request, timeout=30) as response:
            body = response.read()
        return json.loads(body) if body else None

    def shutdown_kernels(self) -> None:
        """End every session (and its kernel), so notebooks do not pile up kernels."""
        for session in self._api("GET", "sessions"):
            self._api("DELETE", f"sessions/{session['id']}")

    def log_tail(self, n: int = 40) -> str:
        lines = self.log_path.read_text(errors="replace").splitlines()
        return "\n".join(lines[-n:])


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def project_python(root: Path) -> str:
    """The course environment's interpreter: ``.venv/bin/python`` when there is one."""
    venv = root / ".venv" / "bin" / "python"
    return str(venv) if venv.exists() else sys.executable


def _write_settings(folder: Path) -> None:
    for plugin, values in SETTINGS.items():
        path = folder / f"{plugin}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))


def _wait_until_up(url: str, process: subprocess.Popen, log: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"JupyterLab exited with code {process.returncode}:\n"
                               + log.read_text(errors="replace")[-3000:])
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.3)
    raise RuntimeError(f"JupyterLab did not answer {url} within {timeout:.0f} s:\n"
                       + log.read_text(errors="replace")[-3000:])


@contextmanager
def running_jupyterlab(root: Path, scratch: Path, startup_timeout: float = 90):
    """Start JupyterLab serving ``root``; yield a :class:`LabServer`; stop it."""
    token = secrets.token_hex(16)
    port = free_port()
    dirs = {name: scratch / name for name in ("config", "runtime", "settings", "workspaces")}
    for d in dirs.values():
        d.mkdir(parents=True, exist_ok=True)
    _write_settings(dirs["settings"])
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(dirs["config"]),
               JUPYTER_RUNTIME_DIR=str(dirs["runtime"]),
               JUPYTERLAB_SETTINGS_DIR=str(dirs["settings"]),
               JUPYTERLAB_WORKSPACES_DIR=str(dirs["workspaces"]),
               PYTHONUNBUFFERED="1")
    command = [project_python(root), "-m", "jupyterlab", "--no-browser",
               "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}",
               "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}",
               f"--ServerApp.root_dir={root}", "--LabApp.expose_app_in_browser=True",
               "--ServerApp.open_browser=False"]
    if os.geteuid() == 0:          # containers and CI often run as root
        command.append("--allow-root")
    log = scratch / "jupyterlab.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(command, cwd=root, env=env, stdout=sink,
                                   stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_until_up(f"{base}/api/status?token={token}", process, log, startup_timeout)
        yield LabServer(base, token, log)
    finally:
        stop(process)


def stop(process: subprocess.Popen) -> None:
    """Terminate a server process, and kill it if it has not exited within 15 s."""
    process.terminate()
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=15)
