from tests.e2e.conftest import embedded  # noqa: F401  (the embedded-cluster fixture)
