"""Data exchange between TaskExecutors over internal TLS: records arrive complete between trusted
environments; a plaintext consumer or one with another CA's certificate gets an error from its
gate (never a record), and the producer goes on serving trusted consumers."""

from __future__ import annotations

from pathlib import Path

import pytest

from flott.configuration import Configuration
from flott.errors import DataExchangeError
from flott.ssl_context import InternalSsl, internal_ssl
from tests.security.tls.certificates import Pki, internal_tls_config
from tests.security.tls.exchange import environment, transfer


def _tls(pki: Pki, cert: Path | None = None, key: Path | None = None) -> InternalSsl:
    values = internal_tls_config(pki)
    if cert is not None and key is not None:
        values |= {"security.ssl.internal.cert": str(cert), "security.ssl.internal.key": str(key)}
    tls = internal_ssl(Configuration(values))
    assert tls is not None
    return tls


def test_records_cross_tls_and_intruders_get_none(pki: Pki) -> None:
    trusted = _tls(pki)
    stranger = _tls(pki, pki.stranger.cert, pki.stranger.key)
    with environment(trusted) as producer, environment(trusted) as consumer:
        assert transfer(producer, consumer, batches=300)[0] == 300 * 200
        for intruder_tls in (None, stranger):
            with environment(intruder_tls, connect_timeout_s=5.0) as intruder:
                with pytest.raises(DataExchangeError):
                    transfer(producer, intruder, batches=5)
        assert transfer(producer, consumer, batches=50)[0] == 50 * 200
        assert producer.metrics.buffers_sent >= 350
