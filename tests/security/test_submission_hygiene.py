"""Smaller holes: artifact names a TaskExecutor cannot store, uploads left behind by finished jobs,
and errors forwarded over RPC losing their HTTP status."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.rest.jobs import bounded_job
from tests.security.conftest import SessionCluster, submit


def _files_under(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file()]


def test_artifact_entry_names_a_task_executor_cannot_store_are_refused(
    session_cluster: SessionCluster, tmp_path: Path
) -> None:
    for entry in ("é" * 198 + ".py", "a" * 250 + ".zip"):  # 399 bytes; 254 bytes but archive_<n>_ prefix
        status, body = submit(
            session_cluster,
            bounded_job("long-name"),
            artifacts={"f.bin": b"x = 1\n"},
            entry_names={"f.bin": entry},
        )
        assert status == 400, (len(entry.encode()), body)
        assert "at most 200 bytes" in " ".join(body["errors"]), body
    assert session_cluster.get("/jobs/overview")["jobs"] == []
    assert _files_under(tmp_path / "upload") == []


def test_uploads_do_not_outlive_the_submission(session_cluster: SessionCluster, tmp_path: Path) -> None:
    status, body = submit(session_cluster, bounded_job("shipped"), artifacts={"helper.py": b"FACTOR = 3\n"})
    assert status == 202, body
    job_id = body["jobUrl"].rsplit("/", 1)[1]
    session_cluster.wait_job_state(job_id, "FINISHED")
    assert _files_under(tmp_path / "upload") == []  # the BlobServer had the file; the upload is gone


def test_a_forwarded_error_keeps_its_status() -> None:
    """A checkpoint conflict crossing RPC (a standby JobManager forwarding to the leader) is still a
    409 on the receiving side, in a process that has not imported the module defining it."""
    probe = (
        "from flott.runtime.rpc.service import WireError, error_from_wire\n"
        "import json, sys\n"
        "err = error_from_wire(WireError(type='CheckpointTriggerError', message='already running'))\n"
        "nf = error_from_wire(WireError(type='RestNotFoundError', message='Not found: /x'))\n"
        "print(json.dumps([type(err).__name__, err.http_status, type(nf).__name__, nf.http_status]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    assert json.loads(out.stdout) == ["CheckpointTriggerError", 409, "RestNotFoundError", 404], out.stderr
