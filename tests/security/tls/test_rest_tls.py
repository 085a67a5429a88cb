"""``security.ssl.rest.*``: the REST endpoint serves HTTPS; RestClusterClient, the CLI and curl
reach it verifying its certificate; plain HTTP and a client trusting another CA get nowhere, with
an error that says why; with mutual authentication only clients with a trusted certificate are
served."""

from __future__ import annotations

import asyncio
import http.client
import json
import shutil
import subprocess
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from flott.client.rest_cluster_client import RestClusterClient
from flott.configuration import Configuration
from flott.errors import RpcConnectionError, TlsHandshakeError
from tests.rest.jobs import bounded_job
from tests.security.conftest import stop_session_cluster
from tests.security.tls.certificates import KEY_PASSWORD, Pki, internal_tls_config, rest_tls_config
from tests.security.tls.conftest import HttpsSessionCluster, flott, start_https_session_cluster
from tests.security.tls.jobs import read_counts, write_input, write_program

CURL = shutil.which("curl")


def _client_config(truststore: Path, **extra: str) -> dict[str, str]:
    return {
        "security.ssl.rest.enabled": "true",
        "security.ssl.rest.truststore": str(truststore),
        "rest.retry.max-attempts": "2",
        # a retried certificate error would make the test wait minutes, so none may be retried
        "rest.retry.delay": "120 s",
        **extra,
    }


def _cli_flags(config: dict[str, str]) -> list[str]:
    return [arg for k, v in config.items() for arg in ("-D", f"{k}={v}")]


@pytest.fixture(scope="module")
def https_cluster(pki: Pki, tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpsSessionCluster]:
    cluster = start_https_session_cluster(tmp_path_factory.mktemp("https-cluster"), pki, task_managers=2)
    yield cluster
    assert not stop_session_cluster(cluster)


async def test_rest_cluster_client_submits_and_lists_over_https(
    https_cluster: HttpsSessionCluster, pki: Pki
) -> None:
    address = f"127.0.0.1:{https_cluster.port}"  # no scheme: https because the configuration says so
    async with RestClusterClient(Configuration(_client_config(pki.ca)), address) as client:
        assert client.base_url.startswith("https://")
        job_id = await client.submit_job(bounded_job("over-https", n=20))
        result = await client.wait_for_job_result(job_id, timeout_s=120)
        assert result.status == "FINISHED"
        assert job_id in [j.job_id for j in await client.list_jobs()]


def test_cli_runs_and_lists_over_https(https_cluster: HttpsSessionCluster, pki: Pki, tmp_path: Path) -> None:
    flags = _cli_flags(_client_config(pki.ca))
    address = f"127.0.0.1:{https_cluster.port}"
    program, splitter = write_program(tmp_path / "job")
    expected = write_input(tmp_path / "words.txt", lines=200)
    out = tmp_path / "counts"
    run = flott(
        "run", "-m", address, *flags, "-pyfs", str(splitter), str(program), str(tmp_path / "words.txt"),
        str(out), cwd=tmp_path,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert read_counts(out) == expected
    listed = flott("list", "-a", "-m", address, *flags, cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert "tls_word_count" in listed.stdout and "FINISHED" in listed.stdout


@pytest.mark.skipif(CURL is None, reason="curl is not installed")
def test_curl_with_the_ca_certificate(https_cluster: HttpsSessionCluster, pki: Pki) -> None:
    assert CURL is not None
    url = f"https://127.0.0.1:{https_cluster.port}/v1/overview"
    ok = subprocess.run(
        [CURL, "-sS", "--cacert", str(pki.ca), url], capture_output=True, text=True, timeout=30
    )
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["taskmanagers"] == 2
    untrusted = subprocess.run([CURL, "-sS", url], capture_output=True, text=True, timeout=30)
    assert untrusted.returncode == 60, untrusted  # curl: peer certificate cannot be authenticated


def test_plain_http_gets_no_answer(https_cluster: HttpsSessionCluster) -> None:
    with pytest.raises((urllib.error.URLError, http.client.HTTPException, ConnectionError)):
        urllib.request.urlopen(f"http://127.0.0.1:{https_cluster.port}/v1/overview", timeout=10)
    assert https_cluster.get("/overview")["taskmanagers"] == 2  # still serving HTTPS


async def test_wrong_ca_is_a_clear_client_error(https_cluster: HttpsSessionCluster, pki: Pki) -> None:
    address = f"127.0.0.1:{https_cluster.port}"
    async with RestClusterClient(Configuration(_client_config(pki.other_ca)), address) as client:
        with pytest.raises(TlsHandshakeError, match=r"could not be verified .*ssl\.rest\.truststore"):
            await client.list_jobs()


def test_cli_with_wrong_ca_says_why(https_cluster: HttpsSessionCluster, pki: Pki, tmp_path: Path) -> None:
    flags = _cli_flags(_client_config(pki.other_ca))
    listed = flott("list", "-m", f"127.0.0.1:{https_cluster.port}", *flags, cwd=tmp_path, timeout=60)
    assert listed.returncode != 0
    assert "could not be verified" in listed.stderr and "security.ssl.rest.truststore" in listed.stderr
    assert "Traceback" not in listed.stderr


async def _list_and_close(client: RestClusterClient) -> None:
    async with client:
        await client.list_jobs()


def test_mutual_authentication(pki: Pki, tmp_path: Path) -> None:
    cluster = start_https_session_cluster(tmp_path, pki, mutual=True, task_managers=1)
    try:
        address = f"127.0.0.1:{cluster.port}"
        assert cluster.get("/overview")["taskmanagers"] == 1  # this test's client has a certificate
        with_cert = _client_config(
            pki.ca,
            **{
                "security.ssl.rest.authentication-enabled": "true",
                "security.ssl.rest.cert": str(pki.client.cert),
                "security.ssl.rest.key": str(pki.client.key),
            },
        )
        listed = flott("list", "-m", address, *_cli_flags(with_cert), cwd=tmp_path)
        assert listed.returncode == 0, listed.stderr

        # A TLS 1.3 server refuses a client certificate after the handshake, by closing: to the
        # client that looks like a server going away, so it is retried (none here) and explained.
        once = {"rest.retry.max-attempts": "0"}
        no_cert = _cli_flags(_client_config(pki.ca, **once))
        without = flott("list", "-m", address, *no_cert, cwd=tmp_path, timeout=60)
        assert without.returncode != 0 and "client certificate" in without.stderr, without.stderr

        stranger = _client_config(
            pki.ca,
            **{
                **once,
                "security.ssl.rest.authentication-enabled": "true",
                "security.ssl.rest.cert": str(pki.stranger.cert),
                "security.ssl.rest.key": str(pki.stranger.key),
            },
        )
        refused = flott("list", "-m", address, *_cli_flags(stranger), cwd=tmp_path, timeout=60)
        assert refused.returncode != 0 and "not signed by a CA it trusts" in refused.stderr, refused.stderr
        config = Configuration(_client_config(pki.ca, **once))
        async_client = RestClusterClient(config, address)
        with pytest.raises(RpcConnectionError, match="client certificate"):
            asyncio.run(_list_and_close(async_client))
        if CURL is not None:
            url = f"https://{address}/v1/overview"
            base = [CURL, "-sS", "--cacert", str(pki.ca), url]
            curl_no_cert = subprocess.run(base, capture_output=True, text=True, timeout=30)
            assert curl_no_cert.returncode != 0
            cert = ["--cert", str(pki.client.cert), "--key", str(pki.client.key)]
            ok = subprocess.run([*base, *cert], capture_output=True, text=True, timeout=30)
            assert ok.returncode == 0 and json.loads(ok.stdout)["taskmanagers"] == 1, ok.stderr
        assert cluster.get("/overview")["taskmanagers"] == 1
    finally:
        assert not stop_session_cluster(cluster)


def test_bad_certificate_file_stops_the_jobmanager_with_a_config_error(pki: Pki, tmp_path: Path) -> None:
    missing = tmp_path / "missing.crt"
    config = {**rest_tls_config(pki), "security.ssl.rest.cert": str(missing), "rest.port": "0"}
    started = flott("jobmanager", "start", *_cli_flags(config), cwd=tmp_path, timeout=90)
    assert started.returncode != 0
    assert f"security.ssl.rest.cert: {missing} does not exist" in started.stderr, started.stderr
    assert "Traceback" not in started.stderr


def test_application_mode_with_rest_and_internal_tls(pki: Pki, tmp_path: Path) -> None:
    """``flott run-application``: the JobManager it starts serves HTTPS with an encrypted key (its
    password handed over in the environment), the program and the command reach it over HTTPS,
    and the job runs over internal TLS."""
    config = {
        **rest_tls_config(pki),
        "security.ssl.rest.key": str(pki.encrypted_node_key),
        "security.ssl.rest.key-password": KEY_PASSWORD,
        **internal_tls_config(pki),
    }
    program, splitter = write_program(tmp_path / "job")
    expected = write_input(tmp_path / "words.txt", lines=100)
    out = tmp_path / "counts"
    run = flott(
        "run-application", *_cli_flags(config), "-D", f"python.files={splitter}",
        str(program), str(tmp_path / "words.txt"), str(out), cwd=tmp_path,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "FINISHED" in run.stdout + run.stderr
    assert read_counts(out) == expected
