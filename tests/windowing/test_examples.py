"""The window and timer examples print exactly what was worked out by hand (from their data, below).

Each example runs as a user would run it (``python examples/<name>.py``) on an
embedded cluster. The expected lines were derived from the examples' inputs on
paper, not from flott; with ``FLOTT_PYFLINK_CROSSCHECK=1`` and the peers'
virtualenv (``bench/setup``) the same examples also run on real PyFlink with
the import prefix swapped, and must print the same lines.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PEERS_PY = REPO / "bench" / ".venv-peers" / "bin" / "python"

EXPECTED: dict[str, list[str]] = {
    # 5 s tumbling windows. s1: 1000/20.0, 4000/22.5, 3000/19.0 -> [0,5000) max 22.5; 7000 -> 21.0;
    # 12500 -> 25.0. s2: 2000/15.0, 3500/17.0 -> 17.0; 9000 -> 16.0; 11000 -> 18.5. All sensors together
    # (window_all): 22.5, 21.0, 25.0. Every record precedes the first watermark: nothing is late.
    "tumbling_windows": [
        "(s1,0,5000,22.5)",
        "(s1,5000,10000,21.0)",
        "(s1,10000,15000,25.0)",
        "(s2,0,5000,17.0)",
        "(s2,5000,10000,16.0)",
        "(s2,10000,15000,18.5)",
        "hottest> (0,5000,22.5)",
        "hottest> (5000,10000,21.0)",
        "hottest> (10000,15000,25.0)",
    ],
    # Windows [s, s+10000) with s a multiple of 5000. home at 1000, 6000, 8000, 14000, 3000:
    # -5000: {1000, 3000}; 0: {1000, 3000, 6000, 8000}; 5000: {6000, 8000, 14000}; 10000: {14000}.
    # cart at 2000 and 12000: one view in each of -5000, 0, 5000 and 10000.
    "sliding_windows": [
        "(home,-5000,5000,2)",
        "(home,0,10000,4)",
        "(home,5000,15000,3)",
        "(home,10000,20000,1)",
        "(cart,-5000,5000,1)",
        "(cart,0,10000,1)",
        "(cart,5000,15000,1)",
        "(cart,10000,20000,1)",
    ],
    # Gap 3000. alice: [1000,4000) [2500,5500) [4000,7000) merge into [1000,7000) (3 clicks);
    # [9500,12500) [10500,13500) -> [9500,13500) (2). bob: [1500,4500) (1); [9000,12000) [10000,13000)
    # -> [9000,13000) (2). carol (mobile, gap 1000): [1000,2000); [2500,3500) [2800,3800) -> [2500,3800).
    "session_windows": [
        "(alice,1000,7000,3)",
        "(alice,9500,13500,2)",
        "(bob,1500,4500,1)",
        "(bob,9000,13000,2)",
        "mobile> (carol,1000,2000,1)",
        "mobile> (carol,2500,3800,2)",
    ],
    # a: 1..6, b: 10, 20, 30, 40. Tumbling 3: a 1+2+3, 4+5+6; b 10+20+30 (40 waits). Sliding (3, 2):
    # window i holds readings 2i..2i+2: a 1+2+3, 3+4+5 (5, 6 wait); b 10+20+30. Pairs: max of each 2.
    "count_windows": [
        "tumbling> (a,6)",
        "tumbling> (a,15)",
        "tumbling> (b,60)",
        "sliding> (a,6)",
        "sliding> (a,12)",
        "sliding> (b,60)",
        "pairs> (a,2)",
        "pairs> (a,4)",
        "pairs> (a,6)",
        "pairs> (b,20)",
        "pairs> (b,40)",
    ],
    # The timeout timer moves to last event + 5000; each user's last timer fires at the end of input.
    "event_time_timers": ["(alice,12000,17000)", "(bob,9000,14000)", "(carol,13000,18000)"],
    # Orders joined with their customer's name; 250 and 120 are above 100.
    "connected_streams": [
        "(o1,Ada,30)",
        "(o2,Grace,250)",
        "(o3,Ada,70)",
        "(o4,Linus,120)",
        "big> (o2,250)",
        "big> (o4,120)",
    ],
}

_RESULT_LINE = re.compile(r"^(\w+> )?\(")


def printed_records(stdout: str) -> list[str]:
    return sorted(line for line in stdout.splitlines() if _RESULT_LINE.match(line))


@pytest.mark.parametrize("example", sorted(EXPECTED))
def test_example_prints_the_expected_records(example: str, tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, str(REPO / "examples" / f"{example}.py")],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=tmp_path,
        env=dict(os.environ, PYTHONPATH=str(REPO)),
    )
    assert proc.returncode == 0, proc.stderr
    assert printed_records(proc.stdout) == sorted(EXPECTED[example])


@pytest.mark.skipif(
    os.environ.get("FLOTT_PYFLINK_CROSSCHECK") != "1" or not PEERS_PY.exists(),
    reason="set FLOTT_PYFLINK_CROSSCHECK=1 (and run bench/setup) to compare with real PyFlink",
)
@pytest.mark.parametrize("example", sorted(EXPECTED))
def test_pyflink_prints_the_same_for_the_example(example: str, tmp_path: Path) -> None:
    source = (REPO / "examples" / f"{example}.py").read_text()
    source = re.sub(r"\bflott\b", "pyflink", source)
    source = source.replace(
        "    env.set_parallelism(1)\n",
        "    env.set_parallelism(1)\n    import sys\n    env.set_python_executable(sys.executable)\n",
    )
    script = tmp_path / f"pyflink_{example}.py"
    script.write_text(source)
    proc = subprocess.run(
        [str(PEERS_PY), str(script)], capture_output=True, text=True, timeout=600, cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert printed_records(proc.stdout) == sorted(EXPECTED[example])
