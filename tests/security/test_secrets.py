"""Secrets stay secret: Flink's sensitive-key rule (plus obvious names it misses) wherever a
configuration is shown, and no secret on a TaskExecutor's command line."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from pathlib import Path

import msgspec
import psutil
import pytest

from flott.configuration import HIDDEN_CONTENT, Configuration, is_sensitive
from flott.errors import ConfigurationError
from flott.runtime.resourcemanager.local_process_driver import SECRET_CONFIG_ENV
from tests.rest.jobs import unbounded_job
from tests.security.conftest import free_port, start_session_cluster, stop_session_cluster, submit

CLUSTER_SECRETS = {
    "s3.secret-key": "cluster-s3-secret-1",
    "my.db.passwd": "cluster-passwd-2",
    "fs.s3a.session.credential": "cluster-credential-3",
    "my.service.password": "cluster-password-4",
    "kafka.sasl.jaas.config": "cluster-jaas-5",
}
JOB_SECRETS = {"sink.jdbc.password": "job-password-6", "s3.secret-key": "job-s3-secret-7"}


def test_flinks_list_and_flotts_extensions() -> None:
    for key in (
        "s3.secret-key",
        "A.PASSWORD",
        "fs.azure.account.key.x",
        "x.apikey",
        "x.api-key",
        "pulsar.auth-params",
        "x.service-key",
        "x.token",
        "x.basic-auth",
        "x.jaas.config",
        "x.http-headers",
    ):
        assert is_sensitive(key), key  # Flink 2.3's GlobalConfiguration.SENSITIVE_KEYS
    for key in ("my.db.passwd", "fs.s3a.session.credential", "ssl.private-key", "x.passphrase"):
        assert is_sensitive(key), key  # flott's additions
    assert not is_sensitive("parallelism.default") and not is_sensitive("s3.access-key")


def test_error_messages_do_not_repeat_a_secret() -> None:
    config = Configuration({"db.password": "hunter2", "x.token.ttl": "abc"})
    with pytest.raises(ConfigurationError) as e:
        config.get_int("db.password")
    assert "hunter2" not in str(e.value) and HIDDEN_CONTENT in str(e.value)
    with pytest.raises(ConfigurationError) as e:
        config.get_seconds("x.token.ttl")
    assert "abc" not in str(e.value)


def test_no_secret_in_any_view_log_or_command_line(tmp_path: Path) -> None:
    cluster = start_session_cluster(tmp_path, **CLUSTER_SECRETS)
    try:
        graph = unbounded_job("with-secrets", parallelism=1)
        graph = msgspec.structs.replace(graph, config={**graph.config, **JOB_SECRETS})
        status, body = submit(cluster, graph)
        assert status == 202, body
        job_id = body["jobUrl"].rsplit("/", 1)[1]
        cluster.wait_job_state(job_id, "RUNNING")

        shown = {e["key"]: e["value"] for e in cluster.get("/jobmanager/config")}
        for key in CLUSTER_SECRETS:
            assert shown[key] == HIDDEN_CONTENT, key
        user_config = cluster.get(f"/jobs/{job_id}/config")["execution-config"]["user-config"]
        for key in JOB_SECRETS:
            assert user_config[key] == HIDDEN_CONTENT, (key, user_config)
        task_managers = cluster.get("/taskmanagers")["taskmanagers"]
        views = [
            cluster.get("/jobmanager/config"),
            cluster.get(f"/jobs/{job_id}/config"),
            cluster.get(f"/jobs/{job_id}/jobmanager/config"),
            cluster.get("/jobmanager/environment"),
            cluster.get(f"/jobs/{job_id}"),
            cluster.get(f"/jobs/{job_id}/exceptions"),
            task_managers,
            *[cluster.get(f"/taskmanagers/{tm['id']}") for tm in task_managers],
        ]
        text = json.dumps(views)
        secrets = [*CLUSTER_SECRETS.values(), *JOB_SECRETS.values()]
        for secret in secrets:
            assert secret not in text, secret

        workers = cluster.task_executor_processes()
        assert len(workers) == 2
        for proc in workers:
            cmdline = " ".join(proc.cmdline())  # what every user of the machine sees in `ps`
            assert "heartbeat.timeout=3000" in cmdline  # plain settings still go as -D
            for secret in CLUSTER_SECRETS.values():
                assert secret not in cmdline, secret
            passed = json.loads(proc.environ()[SECRET_CONFIG_ENV])  # readable by the owner only
            assert passed == CLUSTER_SECRETS
    finally:
        assert not stop_session_cluster(cluster)
    log = cluster.log()
    for secret in [*CLUSTER_SECRETS.values(), *JOB_SECRETS.values()]:
        assert secret not in log, secret


def test_cluster_start_keeps_secrets_off_the_jobmanagers_command_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``flott cluster start -D secret=...`` runs the JobManager in the background: the secret reaches
    it (its /jobmanager/config has the key) through its environment, not its command line."""
    monkeypatch.setenv("FLOTT_RUN_DIR", str(tmp_path / "run"))
    port = free_port()
    conf = ["-D", f"rest.port={port}", "-D", "jobmanager.rpc.port=0", "-D", "my.db.passwd=cli-passwd-8"]
    started = _flott("cluster", "start", "--taskmanagers", "1", *conf)
    assert started.returncode == 0, started.stderr
    pid = int((tmp_path / "run" / f"cluster-{port}.pid").read_text())
    try:
        family = [psutil.Process(pid), *psutil.Process(pid).children(recursive=True)]
        assert len(family) == 2
        for proc in family:
            assert "cli-passwd-8" not in " ".join(proc.cmdline()), proc.cmdline()
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/jobmanager/config", timeout=10) as r:
            shown = {e["key"]: e["value"] for e in json.loads(r.read())}
        assert shown["my.db.passwd"] == HIDDEN_CONTENT
    finally:
        stopped = _flott("cluster", "stop", *conf)
        _, alive = psutil.wait_procs(family, timeout=20)
        for p in alive:
            p.kill()
    assert stopped.returncode == 0 and not alive, stopped.stderr


def _flott(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "flott.cli.main", *args], capture_output=True, text=True, timeout=120
    )


async def test_application_program_gets_secrets_in_its_environment_only() -> None:
    from flott.cluster.application_cluster import (
        ApplicationProgram,
        ExecutionMode,
        _ApplicationEntrypoint,
    )

    config = Configuration({"rest.port": "0", **CLUSTER_SECRETS})
    entry = _ApplicationEntrypoint(config, ApplicationProgram("job.py"), ExecutionMode.DETACHED)
    cmdline = " ".join(entry.program_command())
    assert "rest.port=0" in cmdline
    for secret in CLUSTER_SECRETS.values():
        assert secret not in cmdline
