"""Handlers of ``/jobs/...``: submission, overviews, details, vertices, metrics, savepoint family."""
