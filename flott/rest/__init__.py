"""flott's REST endpoint: Flink's REST API v1 (same paths, JSON field names, status codes, error body).

Three floors, each importing only the ones below it: this package's modules (the error mapping
:mod:`flott.rest.errors`, wire types in :mod:`flott.rest.messages`, versions, authentication,
body reading; light enough for the REST client and the CLI), the handlers in :mod:`flott.rest.handler`,
and on top :mod:`flott.rest.webmonitor`: the route table that joins them and
:class:`~flott.rest.webmonitor.rest_server_endpoint.RestServerEndpoint` (Flink: WebMonitorEndpoint on a
RestServerEndpoint), which serves them on aiohttp. Handlers reach the cluster only through the
Dispatcher's gateway.
"""
