"""What a web page in an operator's browser may do with the REST endpoint: by default, nothing.

A REST endpoint on loopback is reachable from every page the operator's browser opens: a page
can POST a multipart form to ``http://127.0.0.1:8081/jobs`` (a "simple" request, sent without a
CORS preflight) and so run code on the cluster, or rebind its own DNS name to 127.0.0.1 and read
the answers. Three checks close that, at the cost of a few header lookups per request:

* **CORS off by default.** ``Access-Control-Allow-Origin`` is only sent when
  ``web.access-control-allow-origin`` (Flink's key) is set; flott's default is none, where
  Flink's is ``*``.
* **Origin.** A state-changing request (POST, PUT, PATCH, DELETE) carrying an ``Origin`` header
  (browsers add it) is refused with 403 unless the origin is the endpoint's own (same host and
  port as the ``Host`` header) or one ``web.access-control-allow-origin`` lists. Clients that are
  not browsers (flott's and Flink's CLI, curl) send no Origin and are not affected.
* **Host (DNS rebinding).** A request that comes from a browser (it has ``Origin``,
  ``Referer`` or a ``Sec-Fetch-*`` header) must name a known host: an IP address,
  ``localhost``, this machine's host name, ``rest.address``, or one listed in
  ``flott.rest.allowed-hosts`` (flott's key; ``*`` turns the check off).
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Mapping

from flott.configuration import Configuration
from flott.errors import RestForbiddenError

CORS_KEY = "web.access-control-allow-origin"
ALLOWED_HOSTS_KEY = "flott.rest.allowed-hosts"
_STATE_CHANGING = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def _split(raw: str) -> list[str]:
    return [v.strip() for v in raw.replace(";", ",").split(",") if v.strip()]


def _host_name(host_header: str) -> str:
    """``[::1]:8081`` → ``::1``, ``example.org:8081`` → ``example.org``."""
    h = host_header.strip().lower()
    if h.startswith("["):
        return h[1 : h.find("]")] if "]" in h else h
    return h.rsplit(":", 1)[0] if h.count(":") == 1 else h


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


class BrowserGuard:
    """The per-request checks of the module docstring, configured once per endpoint."""

    def __init__(self, config: Configuration) -> None:
        origins = _split(config.get(CORS_KEY, ""))
        self.cors_origin: str | None = ", ".join(origins) if origins else None
        """The ``Access-Control-Allow-Origin`` value to send, or None (no CORS)."""
        self._any_origin = "*" in origins
        self._origins = frozenset(o.rstrip("/").lower() for o in origins if o != "*")
        hosts = _split(config.get(ALLOWED_HOSTS_KEY, ""))
        self._any_host = "*" in hosts
        known = {"localhost", config.get("rest.address").lower(), socket.gethostname().lower()}
        try:
            known.add(socket.getfqdn().lower())
        except OSError:
            pass
        self._hosts = frozenset(known | {h.lower() for h in hosts})

    def check(self, method: str, headers: Mapping[str, str]) -> None:
        """Raise :class:`RestForbiddenError` for a browser request this endpoint must not serve."""
        origin = headers.get("Origin")
        if origin is None and "Referer" not in headers and "Sec-Fetch-Site" not in headers:
            return  # not a browser: CLI, RestClusterClient, curl
        host = headers.get("Host", "")
        name = _host_name(host)
        if not self._any_host and name not in self._hosts and not _is_ip(name):
            raise RestForbiddenError(
                f"Forbidden: requests from a browser to host {name!r} are refused (DNS rebinding "
                f"protection); list the name in {ALLOWED_HOSTS_KEY}"
            )
        if origin is None or method not in _STATE_CHANGING or self._any_origin:
            return
        o = origin.rstrip("/").lower()
        if o in self._origins or o.partition("://")[2] == host.lower():
            return
        raise RestForbiddenError(
            f"Forbidden: a {method} request from the web page at {origin} is refused; allow its origin "
            f"with {CORS_KEY}"
        )
