"""Client-to-operator coordination (Flink's ClientCoordinationHandler): how ``execute_and_collect``
fetches results from a session cluster. The bytes go to the job's JobMaster, which forwards them to the
operator's TaskExecutor; nothing here decodes them."""

from __future__ import annotations

from flott.rest.handler.handler import HandlerRequest, RestRoute
from flott.rest.messages.coordination import ClientCoordinationRequestBody, ClientCoordinationResponseBody


async def deliver_coordination_request(req: HandlerRequest) -> ClientCoordinationResponseBody:
    job_id = req.job_id()
    operator_id = req.path_param("operatorid")
    body = await req.body(ClientCoordinationRequestBody)
    gateway = await req.gateway()
    request = body.serialized_coordination_request
    result = await gateway.deliver_coordination_request(job_id, operator_id, request)
    return ClientCoordinationResponseBody(serialized_coordination_result=result)


ROUTES = [
    RestRoute(
        "POST",
        "/jobs/{jobid}/coordinators/{operatorid}",
        deliver_coordination_request,
        summary="Send a request to an operator of a running job and get its answer (collect sink).",
        request_type=ClientCoordinationRequestBody,
        response_type=ClientCoordinationResponseBody,
        operation_id="deliverCoordinationRequest",
    ),
]
