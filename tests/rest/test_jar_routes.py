"""Flink's ``/jars`` routes for Python programs, on a real cluster behind a real REST endpoint.

A script and a zip (entry module plus helper module) are uploaded as Flink's CLI uploads a jar,
listed, planned and run; their jobs finish and write what the program says. The program runs
in a child process: a failing one is a 400 with one line; hostile uploads are 400s.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import stat
import zipfile
from pathlib import Path
from typing import Any

import aiohttp
import psutil
import pytest

from tests.rest.conftest import RestCluster, make_config, start_rest_cluster

SCRIPT = '''
"""Doubles 1..3 and writes each result to the file named by the first argument."""
import sys

from flott.datastream import StreamExecutionEnvironment

OUT = sys.argv[1]


def record(x):
    with open(OUT, "a") as f:
        f.write(f"{x}\\n")
    return x


env = StreamExecutionEnvironment.get_execution_environment()
env.from_collection([1, 2, 3]).map(lambda x: x * 2).map(record).print()
env.execute("jar-script")
'''

HELPER = '''
def scale(x):
    return x * 100


def record(out, x):
    with open(out, "a") as f:
        f.write(f"{x}\\n")
    return x
'''

ZIP_MAIN = '''
import sys

from flott.datastream import StreamExecutionEnvironment

import helper

out = sys.argv[1]
env = StreamExecutionEnvironment.get_execution_environment()
env.from_collection([1, 2]).map(helper.scale).map(lambda x: helper.record(out, x)).print()
env.execute("jar-zip")
'''


def _form(name: str, data: bytes) -> aiohttp.FormData:
    form = aiohttp.FormData()
    form.add_field("jarfile", data, filename=name, content_type="application/x-java-archive")
    return form


async def _upload(rc: RestCluster, name: str, data: bytes) -> tuple[int, Any]:
    return await rc.call("POST", "/v1/jars/upload", data=_form(name, data))


def _zip(members: dict[str, str]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, text in members.items():
            zf.writestr(name, text)
    return buf.getvalue()


def _program_children() -> list[psutil.Process]:
    children = psutil.Process().children(recursive=True)
    return [p for p in children if "packaged_program" in " ".join(p.cmdline())]


async def _wait_finished(rc: RestCluster, job_id: str) -> None:
    async with rc.client() as client:
        for _ in range(600):
            status = await client.get_job_status(job_id)
            if status in ("FINISHED", "FAILED", "CANCELED"):
                assert status == "FINISHED"
                return
            await asyncio.sleep(0.1)
    pytest.fail(f"job {job_id} did not finish")


async def test_upload_list_plan_run_delete_a_script(rest_cluster: RestCluster, tmp_path: Path) -> None:
    rc = rest_cluster
    status, body = await _upload(rc, "doubler.py", SCRIPT.encode())
    assert status == 200, body
    assert body["status"] == "success"
    jar_id = Path(body["filename"]).name
    assert jar_id.endswith("_doubler.py")

    status, listing = await rc.call("GET", "/v1/jars")
    assert status == 200
    assert listing["address"] == f"http://127.0.0.1:{rc.endpoint.port}"
    [entry] = listing["files"]
    assert entry["id"] == jar_id and entry["name"] == "doubler.py" and entry["uploaded"] > 0
    assert entry["entry"] == [{"name": "doubler"}]

    out = tmp_path / "out.txt"
    status, plan = await rc.call(
        "POST", f"/v1/jars/{jar_id}/plan", json={"programArgsList": [str(out)], "parallelism": 1}
    )
    assert status == 200, plan
    assert plan["plan"]["name"] == "jar-script"
    assert plan["plan"]["type"] == "STREAMING"
    assert plan["plan"]["nodes"] and all(n["parallelism"] == 1 for n in plan["plan"]["nodes"])
    assert not out.exists(), "planning runs no job"

    job_id = "ab" * 16
    status, run = await rc.call(
        "POST", f"/v1/jars/{jar_id}/run", json={"programArgsList": [str(out)], "jobId": job_id}
    )
    assert status == 200, run
    assert run == {"jobid": job_id, "applicationId": job_id}
    await _wait_finished(rc, job_id)
    assert sorted(out.read_text().split()) == ["2", "4", "6"]
    _, details = await rc.call("GET", f"/v1/jobs/{job_id}")
    assert {v["parallelism"] for v in details["vertices"]} == {1}, "the cluster's parallelism.default"

    status, body = await rc.call("DELETE", f"/v1/jars/{jar_id}")
    assert (status, body) == (200, {})
    status, listing = await rc.call("GET", "/v1/jars")
    assert listing["files"] == []
    status, body = await rc.call("POST", f"/v1/jars/{jar_id}/run", json={})
    assert status == 400 and "does not exist" in body["errors"][0]
    status, body = await rc.call("DELETE", f"/v1/jars/{jar_id}")
    assert status == 400 and "does not exist" in body["errors"][0]


async def test_a_zip_with_an_entry_module_and_a_helper(rest_cluster: RestCluster, tmp_path: Path) -> None:
    rc = rest_cluster
    status, body = await _upload(rc, "app.zip", _zip({"main.py": ZIP_MAIN, "helper.py": HELPER}))
    assert status == 200, body
    jar_id = Path(body["filename"]).name
    _, listing = await rc.call("GET", "/v1/jars")
    assert listing["files"][0]["entry"] == [{"name": "helper"}, {"name": "main"}]

    out = tmp_path / "zip-out.txt"
    status, body = await rc.call("POST", f"/v1/jars/{jar_id}/run", json={"programArgsList": [str(out)]})
    assert status == 400 and "name the entry module with entryClass" in body["errors"][0], body

    # Flink's query parameters work too (programArg is comma-separated).
    status, run = await rc.call(
        "POST", f"/v1/jars/{jar_id}/run?entry-class=main&programArg={out}&parallelism=2", json={}
    )
    assert status == 200, run
    await _wait_finished(rc, run["jobid"])
    assert sorted(out.read_text().split()) == ["100", "200"]
    _, details = await rc.call("GET", f"/v1/jobs/{run['jobid']}")
    assert {v["parallelism"] for v in details["vertices"]} == {1, 2}, "the collection source is not parallel"


async def test_a_failing_program_is_a_400_with_one_line(rest_cluster: RestCluster) -> None:
    rc = rest_cluster
    bad = "import sys\nx = 1\nraise ValueError('the input topic is missing')\n"
    _, body = await _upload(rc, "bad.py", bad.encode())
    jar_id = Path(body["filename"]).name
    for route in ("plan", "run"):
        status, body = await rc.call("POST", f"/v1/jars/{jar_id}/{route}", json={})
        assert status == 400, body
        [message] = body["errors"]
        assert "\n" not in message and "Traceback" not in message
        assert "ValueError: the input topic is missing" in message
        assert f"{jar_id}, line 3" in message, "names the program's line"

    _, body = await _upload(rc, "nojob.py", b"print('hello')\n")
    status, body = await rc.call("POST", f"/v1/jars/{Path(body['filename']).name}/plan", json={})
    assert status == 400 and "didn't contain a job" in body["errors"][0]
    assert _program_children() == []


async def test_a_program_is_bounded_in_time_and_memory(rest_cluster: RestCluster, tmp_path: Path) -> None:
    rc = rest_cluster
    rc.endpoint.config.set("flott.rest.program.timeout", "2 s")
    _, body = await _upload(rc, "sleeper.py", b"import time\ntime.sleep(600)\n")
    status, body = await rc.call("POST", f"/v1/jars/{Path(body['filename']).name}/plan", json={})
    assert status == 400 and "within 2 s" in body["errors"][0], body

    rc.endpoint.config.set("flott.rest.program.timeout", "60 s")
    rc.endpoint.config.set("flott.rest.program.memory", "1 gb")
    _, body = await _upload(rc, "hog.py", b"hoard = bytearray(3 * 1024 ** 3)\n")
    status, body = await rc.call("POST", f"/v1/jars/{Path(body['filename']).name}/plan", json={})
    assert status == 400 and "MemoryError" in body["errors"][0], body
    assert _program_children() == []


def _symlink_zip() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("main.py", "print(1)\n")
        link = zipfile.ZipInfo("evil.py")
        link.external_attr = (stat.S_IFLNK | 0o777) << 16
        zf.writestr(link, "/etc/passwd")
    return buf.getvalue()


def _bomb() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("main.py", "print(1)\n")
        zf.writestr("zeros.bin", b"\0" * (8 * 1024 * 1024))
    return buf.getvalue()


HOSTILE = [
    ("job.jar", b"PK", "Only Python programs are allowed"),
    ("links.zip", _symlink_zip(), "is a symbolic link"),
    ("slip.zip", _zip({"../../evil.py": "x = 1\n", "main.py": "x = 1\n"}), "outside its directory"),
    ("abs.zip", _zip({"/tmp/evil.py": "x = 1\n"}), "outside its directory"),
    ("bomb.zip", _bomb(), "uncompressed"),
    ("nothing.zip", _zip({"data/readme.txt": "hi"}), "no module to run"),
    ("broken.zip", b"PK\x03\x04 not really", "not a readable zip archive"),
]


async def test_hostile_uploads_are_refused(no_leftover_processes: Any, tmp_path: Path) -> None:
    # a 1 MiB body limit: an archive may hold 4 MiB uncompressed, the bomb holds 8
    config = make_config(**{"rest.server.max-content-length": str(1 << 20), "web.upload.dir": str(tmp_path)})
    cluster, endpoint = await start_rest_cluster(config, num_task_managers=1)
    try:
        async with aiohttp.ClientSession() as http:
            rc = RestCluster(cluster, endpoint, config, http)
            for name, data, message in HOSTILE:
                status, body = await _upload(rc, name, data)
                assert status == 400, (name, body)
                assert message in body["errors"][0], (name, body)
            # a raw part: aiohttp's client would percent-encode the slash
            raw = (
                b'--b\r\nContent-Disposition: form-data; name="jarfile"; filename="../job.py"\r\n\r\n'
                b"x = 1\r\n--b--\r\n"
            )
            multipart = {"Content-Type": "multipart/form-data; boundary=b"}
            status, body = await rc.call("POST", "/v1/jars/upload", data=raw, headers=multipart)
            assert status == 400 and "Illegal file name" in body["errors"][0], body
            _, listing = await rc.call("GET", "/v1/jars")
            assert listing["files"] == []
            status, body = await _upload(rc, "big.py", b"#" * (2 << 20))
            assert status == 413, body
    finally:
        await endpoint.stop()
        await cluster.close()
    assert os.listdir(tmp_path) == [], "the endpoint's upload directory is gone with it"


async def test_bad_ids_and_bodies_are_400s(rest_cluster: RestCluster) -> None:
    rc = rest_cluster
    for jar_id in ("job.jar", "..%2F..%2Fetc%2Fpasswd", "00000000-0000-0000-0000-000000000000_x.py"):
        status, body = await rc.call("POST", f"/v1/jars/{jar_id}/plan", json={})
        assert status in (400, 404), (jar_id, body)
    _, body = await _upload(rc, "doubler.py", SCRIPT.encode())
    jar_id = Path(body["filename"]).name
    for bad in ({"jobId": "nothex"}, {"parallelism": 0}, {"claimMode": "CLAIM"}, {"unknown": 1}):
        status, body = await rc.call("POST", f"/v1/jars/{jar_id}/run", json=bad)
        assert status == 400, (bad, body)
    # savepointPath reaches the job: a savepoint that is not there refuses the submission
    missing = "file:///nonexistent/savepoint-1"
    status, body = await rc.call(
        "POST", f"/v1/jars/{jar_id}/run", json={"savepointPath": missing, "programArgsList": ["/dev/null"]}
    )
    assert 400 <= status < 500 and "nonexistent/savepoint-1" in body["errors"][0], body
    status, body = await rc.call("POST", f"/v1/jars/{jar_id}/run", data=json.dumps({"entryClass": "other"}))
    assert status == 400 and "not in doubler.py" in body["errors"][0]
    form = _form("a.py", b"x=1")
    form.add_field("jarfile2", b"x=2", filename="b.py")
    status, body = await rc.call("POST", "/v1/jars/upload", data=form)
    assert status == 400 and "Exactly 1 file" in body["errors"][0]
    assert os.listdir(rc.endpoint._context.upload_dir) == []  # type: ignore[union-attr]


async def test_web_submit_disabled_hides_the_routes(rest_cluster: RestCluster) -> None:
    rc = rest_cluster
    _, config = await rc.call("GET", "/v1/config")
    assert config["features"]["web-submit"] is True
    rc.endpoint.config.set("web.submit.enable", "false")
    _, config = await rc.call("GET", "/v1/config")
    assert config["features"]["web-submit"] is False
    for method, path in (("GET", "/v1/jars"), ("POST", "/v1/jars/upload"), ("POST", "/v1/jars/x.py/run")):
        status, body = await rc.call(method, path, json={})
        assert status == 404 and "web.submit.enable" in body["errors"][0], (path, body)
