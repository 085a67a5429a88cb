"""The top of the REST floor (Flink's ``webmonitor`` package): the server and what joins the handlers.

:mod:`~flott.rest.webmonitor.routes` is the route table, the one module that imports every handler
package; :mod:`~flott.rest.webmonitor.rest_server_endpoint` serves it on aiohttp (Flink's
WebMonitorEndpoint on a RestServerEndpoint) and :mod:`~flott.rest.webmonitor.openapi` describes it.
They sit above :mod:`flott.rest.handler` so that handlers import only downwards: the handler
contract (``flott.rest.handler.handler``), the error mapping, wire types and versions in
:mod:`flott.rest`.
"""
