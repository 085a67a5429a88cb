"""Bodies of ``POST /jobs/:jobid/coordinators/:operatorid`` (Flink's ClientCoordinationRequestBody and
ClientCoordinationResponseBody): the serialized request and result, base64 in JSON, as Flink writes a
SerializedValue. The REST endpoint and the JobManager pass them on undecoded."""

from __future__ import annotations

import msgspec

from flott.rest.messages.base import RequestBody, ResponseBody


class ClientCoordinationRequestBody(RequestBody, frozen=True, kw_only=True):
    serialized_coordination_request: bytes = msgspec.field(name="serializedCoordinationRequest")


class ClientCoordinationResponseBody(ResponseBody, frozen=True, kw_only=True):
    serialized_coordination_result: bytes = msgspec.field(name="serializedCoordinationResult")
