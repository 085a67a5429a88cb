"""Property test of ``POST /jobs``' multipart parser, over a real socket to flott's real endpoint.

Generated submissions (well-formed, then bent: odd dispositions and names, path-like and overlong
file names, request JSON of any shape, graph parts that are real, mutated or random, cut or
corrupted framing, wrong content types and boundaries, bodies over the size limit) each get a 400,
a 413, or, when every part was right, the leader-election 503 (the endpoint has no cluster behind
it: see :mod:`tests.security.leaderless_endpoint`); always Flink's error body, never a 500; and
nothing stays in the upload directory. Sizes are bounded (the limit is 64 KB), so
``deadline=None`` hides no slow case.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from flott.runtime.jobgraph import encode_job_graph
from tests.rest.jobs import bounded_job
from tests.security.leaderless_endpoint import LeaderlessEndpoint, leaderless_endpoint

LIMIT = 64 * 1024
GRAPH = encode_job_graph(bounded_job("multipart", n=3))
BOUNDARY = "flottboundary7d1f"


@pytest.fixture(scope="module")
def endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LeaderlessEndpoint]:
    upload = tmp_path_factory.mktemp("upload")
    with leaderless_endpoint(upload, **{"rest.server.max-content-length": str(LIMIT)}) as ep:
        yield ep


def _multipart(parts: list[tuple[list[str], bytes]], boundary: str = BOUNDARY) -> bytes:
    out = b""
    for headers, content in parts:
        out += f"--{boundary}\r\n".encode() + "".join(h + "\r\n" for h in headers).encode("utf-8", "replace")
        out += b"\r\n" + content + b"\r\n"
    return out + f"--{boundary}--\r\n".encode()


def _request_part(body: Any) -> tuple[list[str], bytes]:
    headers = ['Content-Disposition: form-data; name="request"', "Content-Type: application/json"]
    return headers, body if isinstance(body, bytes) else json.dumps(body).encode()


def _file_part(field: str, filename: str, content: bytes) -> tuple[list[str], bytes]:
    disposition = f'Content-Disposition: form-data; name="{field}"; filename="{filename}"'
    return [disposition, "Content-Type: application/octet-stream"], content


def _answer_is_flinks(endpoint: LeaderlessEndpoint, status: int, headers: dict[str, str], body: Any) -> None:
    assert status in (400, 413, 503), (status, body)
    assert headers["content-type"].startswith("application/json"), headers
    assert isinstance(body, dict) and set(body) == {"errors"}, body
    assert body["errors"] and all(isinstance(e, str) and e for e in body["errors"]), body
    assert not any("Traceback" in e for e in body["errors"]), body
    assert not endpoint.leftover_uploads(), endpoint.leftover_uploads()


_NAMES = st.sampled_from(
    ["graph.bin", "a.py", "../escape", "a/b", "a\\b", ".", "..", "", "x" * 300, "nul\x00", "é.py", "\r\n"]
) | st.text(max_size=12)
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)
_REQUEST = st.fixed_dictionaries(
    {},
    optional={
        "jobGraphFileName": _NAMES | _JSON,
        "executionPlanFileName": _NAMES,
        "jobJarFileNames": st.lists(_NAMES, max_size=2) | _JSON,
        "jobArtifactFileNames": st.lists(
            st.fixed_dictionaries({"entryName": _NAMES, "fileName": _NAMES}) | _JSON, max_size=2
        ),
        "unknown": _JSON,
    },
)


def _mutated(data: bytes) -> st.SearchStrategy[bytes]:
    def apply(cut: tuple[int, int, bytes]) -> bytes:
        i, j, junk = cut
        i, j = i % (len(data) + 1), j % (len(data) + 1)
        return data[: min(i, j)] + junk + data[max(i, j) :]

    return st.tuples(st.integers(0, len(data)), st.integers(0, len(data)), st.binary(max_size=8)).map(apply)


_CONTENT = (
    st.just(GRAPH)
    | _mutated(GRAPH)
    | st.binary(max_size=512)
    | st.just(b"\xac\xed\x00\x05")
    | st.just(b"x" * (LIMIT + 1))
)


@st.composite
def _coherent(draw: st.DrawFn) -> list[tuple[list[str], bytes]]:
    """A request and the files it names (the content and the names still generated)."""
    artifacts = draw(st.lists(st.tuples(_NAMES, _NAMES), max_size=2, unique_by=lambda a: a[1]))
    request = {
        "jobGraphFileName": "graph.bin",
        "jobArtifactFileNames": [{"entryName": e, "fileName": f} for e, f in artifacts],
    }
    parts = [_request_part(request), _file_part("file_0", "graph.bin", draw(_CONTENT))]
    for i, (_, f) in enumerate(artifacts, 1):
        parts.append(_file_part(f"file_{i}", f, draw(st.binary(max_size=64))))
    return parts


@st.composite
def _bent(draw: st.DrawFn) -> list[tuple[list[str], bytes]]:
    """Parts in any combination: requests of any shape, files under any field and name."""
    graph_name = draw(_NAMES)
    request: Any = draw(_REQUEST | st.just({"jobGraphFileName": graph_name}))
    parts = [_request_part(draw(st.just(request) | _JSON | st.binary(max_size=64)))]
    for i in range(draw(st.integers(0, 3))):
        field = draw(st.sampled_from([f"file_{i}", "request", "x", ""]))
        parts.append(_file_part(field, draw(_NAMES | st.just(graph_name)), draw(_CONTENT)))
    return parts


@st.composite
def _submissions(draw: st.DrawFn) -> tuple[bytes, str]:
    parts = draw(_coherent() | _bent())
    if draw(st.integers(0, 3)) == 0:
        odd_headers = st.lists(
            st.sampled_from(
                [
                    "Content-Disposition: attachment",
                    "Content-Disposition: form-data",
                    "Content-Disposition: form-data; name=\"file_9\"; filename*=utf-8''%2e%2e%2fx",
                    "Content-Type: multipart/mixed; boundary=inner",
                    "Content-Transfer-Encoding: base64",
                    "Content-Length: 99999999999",
                    "X: " + "y" * 9000,
                ]
            )
            | st.text(max_size=20),
            max_size=3,
        )
        parts.insert(draw(st.integers(0, len(parts))), (draw(odd_headers), draw(st.binary(max_size=64))))
    if draw(st.integers(0, 3)) == 0:
        parts = list(draw(st.permutations(parts)))
    body = _multipart(parts)
    if draw(st.integers(0, 4)) == 0:
        body = draw(_mutated(body))
    right = f"multipart/form-data; boundary={BOUNDARY}"
    wrong = st.sampled_from(
        [
            "multipart/form-data",
            "multipart/form-data; boundary=other",
            'multipart/form-data; boundary=""',
            "multipart/mixed; boundary=" + BOUNDARY,
            "application/json",
            "text/plain",
            "",
        ]
    )
    content_type = right if draw(st.integers(0, 4)) else draw(wrong)
    return body, content_type


@settings(
    max_examples=150,
    deadline=None,  # bodies are bounded by LIMIT (plus one oversized part)
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.function_scoped_fixture,
    ],
    derandomize=True,
    database=None,
)
@given(submission=_submissions())
def test_multipart_submissions_are_parsed_or_refused(
    endpoint: LeaderlessEndpoint, submission: tuple[bytes, str]
) -> None:
    body, content_type = submission
    headers = {"Content-Type": content_type} if content_type else {}
    status, answer_headers, answer = endpoint.request("POST", "/v1/jobs", body, headers)
    event(f"{status}: {answer['errors'][0][:60]}")
    _answer_is_flinks(endpoint, status, answer_headers, answer)


def test_a_well_formed_submission_gets_past_the_parser(endpoint: LeaderlessEndpoint) -> None:
    """The property above is not only refusals: a correct form reaches the cluster call (503 here)."""
    body = _multipart(
        [_request_part({"jobGraphFileName": "graph.bin"}), _file_part("file_0", "graph.bin", GRAPH)]
    )
    status, headers, answer = endpoint.request(
        "POST", "/v1/jobs", body, {"Content-Type": f"multipart/form-data; boundary={BOUNDARY}"}
    )
    assert status == 503 and "leader election" in answer["errors"][0], answer
    _answer_is_flinks(endpoint, status, headers, answer)
