from __future__ import annotations

import json
import ssl
import subprocess
import sys
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.security.conftest import SessionCluster, _env, free_port, stop_session_cluster
from tests.security.tls.certificates import Identity, Pki, make_pki, rest_tls_config


@pytest.fixture(scope="session")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    """One CA, its certificates and a stranger's, made once per test session in a tmp dir."""
    return make_pki(Path(tmp_path_factory.mktemp("pki")))


@dataclass
class HttpsSessionCluster(SessionCluster):
    """A session cluster whose REST endpoint serves HTTPS; the test talks to it trusting ``ca``
    (and presenting ``client_cert`` when the endpoint wants one)."""

    context: ssl.SSLContext | None = None

    @property
    def base_url(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    def get(self, path: str, timeout: float = 10) -> Any:
        with urllib.request.urlopen(self.base_url + path, timeout=timeout, context=self.context) as r:
            return json.loads(r.read())


def https_context(ca: Path, client: Identity | None = None) -> ssl.SSLContext:
    ctx = ssl.create_default_context(cafile=str(ca))
    if client is not None:
        ctx.load_cert_chain(client.cert, client.key)
    return ctx


def start_https_session_cluster(
    tmp_path: Path,
    pki: Pki,
    mutual: bool = False,
    task_managers: int = 1,
    overrides: dict[str, str] | None = None,
) -> HttpsSessionCluster:
    """Like :func:`tests.security.conftest.start_session_cluster`, with ``security.ssl.rest.*``."""
    port, rpc_port = free_port(), free_port()
    config = {
        "rest.port": str(port),
        "rest.address": "127.0.0.1",
        "rest.bind-address": "127.0.0.1",
        "jobmanager.rpc.port": str(rpc_port),
        "blob.server.port": "0",
        "heartbeat.interval": "300",
        "heartbeat.timeout": "3000",
        "taskmanager.numberOfTaskSlots": "1",
        "web.upload.dir": str(tmp_path / "upload"),
        **rest_tls_config(pki, mutual),
        **(overrides or {}),
    }
    args = [sys.executable, "-m", "flott.cli.main", "jobmanager", "start"]
    args += ["--taskmanagers", str(task_managers)]
    for k, v in config.items():
        args += ["-D", f"{k}={v}"]
    log_path = tmp_path / "jobmanager.log"
    with log_path.open("ab") as log:
        proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=_env())
    context = https_context(pki.ca, pki.client if mutual else None)
    cluster = HttpsSessionCluster(port, rpc_port, proc, log_path, config, context=context)
    try:
        cluster.wait_task_managers(task_managers)
    except BaseException:
        stop_session_cluster(cluster)
        raise
    return cluster


def flott(*args: str, cwd: Path, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    """The ``flott`` command a user types, with this checkout's code."""
    return subprocess.run(
        [sys.executable, "-m", "flott.cli.main", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=_env(),
        cwd=cwd,
        stdin=subprocess.DEVNULL,
    )
