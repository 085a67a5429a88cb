"""The version strings the REST API reports (``/config``, ``/overview``) and clients check."""

from __future__ import annotations

from importlib import metadata

try:
    FLOTT_VERSION = metadata.version("flott")
except metadata.PackageNotFoundError:  # pragma: no cover - running from a source tree without install
    FLOTT_VERSION = "0.0.0"

REST_API_VERSION = "v1"
"""The REST API version served (Flink's RestAPIVersion.V1; paths under ``/v1`` and unversioned)."""

FLINK_REVISION = f"flott-{FLOTT_VERSION}"
"""Reported where Flink reports its commit: a client recognises a flott cluster by the ``flott-`` prefix."""
