from __future__ import annotations

from pathlib import Path

import pytest

from tests.security.tls.certificates import Pki, make_pki


@pytest.fixture(scope="session")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    """One CA, its certificates and a stranger's, made once per test session in a tmp dir."""
    return make_pki(Path(tmp_path_factory.mktemp("pki")))
