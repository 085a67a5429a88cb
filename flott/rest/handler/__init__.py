"""REST handlers, grouped as Flink groups them: cluster, job (incl. vertices, metrics, savepoints),
taskmanager. Each module exports ``ROUTES``; :func:`flott.rest.webmonitor.routes.all_routes` joins them."""
