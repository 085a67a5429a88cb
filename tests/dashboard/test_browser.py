"""The dashboard in a real browser: Debian's chromium, headless, driven by Playwright, against a
real session cluster running a job. What a user sees: the cluster, the job's name and state, its
graph with record counts that grow between two looks, its checkpoints; the TaskExecutor running it
is killed and the page shows the restart and the failure in the exception history; the restart
strategy, the task manager's and job manager's logs; then a cancel click and CANCELED.

Screenshots of every page go to ``tmp/artifacts/dashboard/`` (or ``$FLOTT_TEST_ARTIFACTS``).
The browser and the cluster are stopped by PID, whatever happens.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from tests.rest.session_cluster import SessionCluster, session_cluster

CHROMIUM = Path("/usr/bin/chromium")
REPO = Path(__file__).resolve().parents[2]
JOB = Path(__file__).parent / "jobs" / "steady_counts.py"
JOB_NAME = "dashboard demo: <b>steady</b> & counts"
"""Markup in a job's name shows as text (the page escapes what the cluster sends)."""
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright for Python is not installed")
if not CHROMIUM.exists():
    pytest.skip("Debian's chromium is not installed (scripts/test installs it)", allow_module_level=True)


def artifacts_dir() -> Path:
    path = Path(os.environ.get("FLOTT_TEST_ARTIFACTS", REPO / "tmp" / "artifacts")) / "dashboard"
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[SessionCluster, str]]:
    # TaskExecutors report IO counters with their heartbeat (10 s by default): every second here,
    # so that two looks 4.5 s apart see different counts.
    run_dir = tmp_path_factory.mktemp("dashboard") / "run"
    savepoints = run_dir.parent / "savepoints"
    flame = ["-D", "rest.flamegraph.enabled=true", "-D", "rest.flamegraph.num-samples=20",
             "-D", "rest.flamegraph.delay-between-samples=10ms"]
    with session_cluster(
        run_dir, 2, "-D", "heartbeat.interval=1000", "-D", f"state.savepoints.dir={savepoints}", *flame
    ) as c:
        job_id = c.submit(JOB)
        c.wait_state(job_id, "RUNNING")
        yield c, job_id


@contextlib.contextmanager
def browser_page() -> Iterator[Any]:
    """A headless chromium page; every chromium process it started is gone afterwards (by PID)."""
    before = {p.pid for p in psutil.Process().children(recursive=True)}
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, timeout=30_000)
        try:
            page = browser.new_page(viewport={"width": 1360, "height": 860})
            page.set_default_timeout(15_000)
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            yield page
            assert not errors, f"JavaScript errors on the page: {errors}"
        finally:
            browser.close()
    leftover = [p for p in psutil.Process().children(recursive=True) if p.pid not in before]
    _, alive = psutil.wait_procs(leftover, timeout=5)
    for p in alive:
        with contextlib.suppress(psutil.NoSuchProcess):
            p.kill()


def kill_task_executor(c: SessionCluster, resource_id: str) -> None:
    """SIGKILL the cluster's TaskExecutor process with this resource id (found by PID, not name)."""
    [proc] = [
        p
        for p in psutil.Process(c.pid).children(recursive=True)
        if "flott.runtime.taskexecutor" in p.cmdline() and resource_id in p.cmdline()
    ]
    proc.kill()
    proc.wait(10)


def records_out(page: Any, vertex_id: str) -> int:
    """The "records out" a user reads in the graph's box of a vertex (a dash before any report)."""
    text = page.locator(f'svg .node[data-vertex="{vertex_id}"] .records-out').text_content().strip()
    return int(text.replace(",", "")) if text.replace(",", "").isdigit() else 0


def test_a_user_watches_and_cancels_a_job(cluster: tuple[SessionCluster, str]) -> None:
    c, job_id = cluster
    shots = artifacts_dir()
    vertices = c.get_json(f"/jobs/{job_id}")["vertices"]
    with browser_page() as page:
        page.goto(f"{c.base_url}/#/overview")
        sync_api.expect(page.locator("#tm-count")).to_have_text("2")
        sync_api.expect(page.locator("#jobs-running")).to_have_text("1")
        sync_api.expect(page.locator("a.job-link")).to_have_text(JOB_NAME)
        sync_api.expect(page.locator("main")).to_contain_text("RUNNING")
        page.screenshot(path=str(shots / "overview.png"), full_page=True)

        page.click("text=Running jobs")
        sync_api.expect(page.locator("a.job-link")).to_have_text(JOB_NAME)
        page.click("a.job-link")
        sync_api.expect(page.locator("#job-name")).to_have_text(JOB_NAME)
        sync_api.expect(page.locator("#job-state")).to_have_text("RUNNING")
        sync_api.expect(page.locator("svg .node")).to_have_count(len(vertices))
        for v in vertices:
            sync_api.expect(page.locator(f'svg .node[data-vertex="{v["id"]}"]')).to_contain_text(
                f"parallelism {v['parallelism']}"
            )
        # Records counts change between two looks (the page refreshes itself every 2 s).
        source = vertices[0]["id"]
        deadline = time.monotonic() + 20
        while (first := records_out(page, source)) == 0:
            assert time.monotonic() < deadline, "the graph never showed records"
            page.wait_for_timeout(250)
        page.wait_for_timeout(4500)
        second = records_out(page, source)
        assert second > first, (first, second)
        sync_api.expect(page.locator("main")).to_contain_text(re.compile(r"Records/s in / out"))
        page.screenshot(path=str(shots / "job.png"), full_page=True)

        page.click('[data-tab="exceptions"]')
        sync_api.expect(page.locator("#tab")).to_contain_text("No exceptions")
        sync_api.expect(page.locator("#job-restarts")).to_have_text("0")

        # The TaskExecutor running the job dies; the job restores on the other one.
        victim = c.get_json(f"/jobs/{job_id}/vertices/{source}/subtasks/0")["taskmanager-id"]
        kill_task_executor(c, victim)
        sync_api.expect(page.locator("#job-restarts")).to_have_text("1", timeout=30_000)
        sync_api.expect(page.locator("#tab details.exception")).to_have_count(1)
        sync_api.expect(page.locator("#tab")).to_contain_text("TaskExecutorLost")
        page.click("#tab details.exception summary")
        sync_api.expect(page.locator("#job-state")).to_have_text("RUNNING", timeout=30_000)
        page.screenshot(path=str(shots / "exceptions.png"), full_page=True)

        # The source's box in the graph opens its subtasks: the new attempt, running.
        page.click('[data-tab="overview"]')
        page.click(f'svg .node[data-vertex="{source}"]')
        sync_api.expect(page.locator("main tbody tr .attempt")).to_have_text(["1"])
        sync_api.expect(page.locator("main tbody tr").first).to_contain_text("RUNNING")
        # Busy / idle / back-pressured per subtask: the live shares of the last interval.
        # Before the first update (every 5 s) they read 0 %; then busy + idle is some of the second.
        page.wait_for_function(
            """() => {
              const pct = (c) => parseFloat(document.querySelector(`main tbody tr .share-${c}`)?.textContent);
              const sum = pct("busyTimeMsPerSecond") + pct("idleTimeMsPerSecond");
              return sum > 0 && sum <= 100;
            }""",
            timeout=30_000,
        )
        # The flame graph of the vertex's task threads: sampled on the first look, drawn at a later
        # one. The rate-limited source sleeps most of the time: its On-CPU graph may be empty.
        sync_api.expect(page.locator("main h2", has_text="Flame graph")).to_be_visible()
        page.click('[data-flame="FULL"]')
        sync_api.expect(page.locator('[data-flame="FULL"]')).to_have_class("active")
        sync_api.expect(page.locator("#flamegraph .fg-frame").first).to_be_visible(timeout=30_000)
        sync_api.expect(page.locator("#flamegraph .fg-frame").first).to_have_text("root")
        page.screenshot(path=str(shots / "vertex.png"), full_page=True)
        page.click('[data-tab="checkpoints"]')
        sync_api.expect(page.locator("#checkpoints-completed")).not_to_have_text("0")
        page.screenshot(path=str(shots / "checkpoints.png"), full_page=True)
        page.click('[data-tab="config"]')
        sync_api.expect(page.locator("#restart-strategy")).to_contain_text("Restart with")

        page.click("text=Task managers")
        survivor = c.get_json(f"/jobs/{job_id}/vertices/{source}/subtasks/0")["taskmanager-id"]
        assert survivor != victim
        page.click(f"a.tm-link:text-is('{survivor}')")
        page.click("#show-log")
        sync_api.expect(page.locator("#log-view")).to_contain_text(survivor)
        page.screenshot(path=str(shots / "taskmanager.png"), full_page=True)

        page.click("text=Job manager")
        page.click("#show-log")
        sync_api.expect(page.locator("#log-view")).to_contain_text("REST endpoint listening")
        page.screenshot(path=str(shots / "jobmanager.png"))

        # A savepoint from the job's page: the path it shows holds the savepoint.
        page.goto(f"{c.base_url}/#/job/{job_id}/overview")
        page.click("#savepoint-job")
        operation = page.locator("#job-operation")
        sync_api.expect(operation).to_contain_text("Savepoint completed: ", timeout=60_000)
        location = operation.text_content().split("Savepoint completed: ", 1)[1].strip()
        assert (Path(location.removeprefix("file:")) / "_metadata").is_file(), location
        # Rescale to 2 (two clicks): the job restarts from a savepoint with every vertex at 2.
        page.fill("#rescale-parallelism", "2")
        page.click("#rescale-job")
        sync_api.expect(page.locator("#rescale-job")).to_have_text("Confirm rescale")
        page.click("#rescale-job")
        sync_api.expect(operation).to_contain_text("Rescale to 2 completed", timeout=60_000)
        sync_api.expect(page.locator("#job-state")).to_have_text("RUNNING", timeout=30_000)
        assert {v["parallelism"] for v in c.get_json(f"/jobs/{job_id}")["vertices"]} == {2}
        for v in vertices:
            box = page.locator(f'svg .node[data-vertex="{v["id"]}"]')
            sync_api.expect(box).to_contain_text("parallelism 2")
        page.screenshot(path=str(shots / "rescaled.png"), full_page=True)

        page.click("#cancel-job")
        sync_api.expect(page.locator("#cancel-job")).to_have_text("Confirm cancel")
        page.click("#cancel-job")
        sync_api.expect(page.locator("#job-state")).to_have_text("CANCELED", timeout=30_000)
        sync_api.expect(page.locator("#cancel-job")).to_have_count(0)
        page.screenshot(path=str(shots / "canceled.png"), full_page=True)
        page.click("text=Completed jobs")
        # the page's heading first: under load the list's REST call may take seconds to answer
        sync_api.expect(page.locator("main h1")).to_have_text("Completed jobs", timeout=30_000)
        sync_api.expect(page.locator("main tbody tr")).to_contain_text("CANCELED")
        sync_api.expect(page.locator("main b")).to_have_count(0)

        page.goto(f"{c.base_url}/#/job/..%2F..%2Fcluster/overview")
        sync_api.expect(page.locator("#page-error")).to_contain_text("Not a job id")
    assert c.get_json(f"/jobs/{job_id}")["state"] == "CANCELED"


PRINTING_JOB = REPO / "tests" / "rest" / "printing_job.py"


def test_a_user_reads_a_finished_jobs_logs_tab(tmp_path: Path) -> None:
    """The Logs tab: what the job's tasks printed, tagged, and its status changes, after it ended;
    markup the job printed shows as text."""
    with session_cluster(tmp_path / "run", 1) as c:
        job_id = c.submit(PRINTING_JOB, "20")
        c.wait_state(job_id, "FINISHED")
        with browser_page() as page:
            page.goto(f"{c.base_url}/#/job/{job_id}/overview")
            sync_api.expect(page.locator("#job-state")).to_have_text("FINISHED")
            page.click('[data-tab="logs"]')
            log = page.locator("#job-log")
            sync_api.expect(log).to_contain_text("Map -> Sink: Print to Std. Out (1/1) #0 | value 19")
            sync_api.expect(log).to_contain_text("#0 ! tenth 10")
            sync_api.expect(log).to_contain_text("#0 | <b>bold</b>&amp;")
            sync_api.expect(page.locator("#job-log b")).to_have_count(0)
            sync_api.expect(page.locator("#job-log .log-status").last).to_contain_text("Job FINISHED")
            sync_api.expect(page.locator("#job-log .log-stderr")).to_have_count(2)
            sync_api.expect(page.locator("#job-log-range")).to_contain_text("complete")
            page.screenshot(path=str(artifacts_dir() / "job-logs.png"), full_page=True)


def test_a_user_submits_a_python_program_from_the_dashboard(cluster: tuple[SessionCluster, str]) -> None:
    """Upload a .py through the submit page (Flink's /jars routes), run it with arguments, land
    on its job page and see it FINISHED; then delete the upload."""
    c, _ = cluster
    program = Path(__file__).parent / "jobs" / "greetings.py"
    with browser_page() as page:
        page.goto(f"{c.base_url}/#/submit")
        sync_api.expect(page.locator("main h1")).to_have_text("Submit a job")
        page.set_input_files("#program-file", str(program))
        page.click("#upload-program")
        sync_api.expect(page.locator("#submit-message")).to_have_text("Uploaded greetings.py.")
        sync_api.expect(page.locator("main tbody tr")).to_contain_text("greetings.py")
        page.fill("#program-args", "ada grace")
        page.fill("#run-parallelism", "1")
        page.screenshot(path=str(artifacts_dir() / "submit.png"), full_page=True)
        page.click("[data-jar-run]")
        name = page.locator("#job-name")
        sync_api.expect(name).to_have_text("greetings from the dashboard", timeout=60_000)
        sync_api.expect(page.locator("#job-state")).to_have_text("FINISHED", timeout=60_000)
        job_id = page.url.split("/job/")[1].split("/")[0]
        assert c.get_json(f"/jobs/{job_id}")["state"] == "FINISHED"
        # the arguments reached the program: its prints are in the job's log
        deadline = time.monotonic() + 30
        while not {"hello, ada", "hello, grace"} <= (printed := {
            line["text"].split("> ", 1)[-1] for line in c.get_json(f"/jobs/{job_id}/logs")["lines"]
        }):
            assert time.monotonic() < deadline, printed
            time.sleep(0.3)
        page.goto(f"{c.base_url}/#/submit")
        page.click("[data-jar-delete]")
        sync_api.expect(page.locator("#submit-message")).to_have_text("Deleted.")
        sync_api.expect(page.locator("main")).to_contain_text("No program uploaded yet.")
    assert c.get_json("/jars")["files"] == []
