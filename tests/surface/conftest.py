"""The embedded-cluster fixture of the end-to-end tests, for the window-function job here."""

from tests.e2e.conftest import embedded

__all__ = ["embedded"]
