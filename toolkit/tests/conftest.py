"""The toolkit's tests run on their own (``pytest`` in toolkit/, after installing the
package with its ``test`` extra) and within the registry's suite: nothing here needs
Django, the registry or the network."""

import pytest


@pytest.fixture(autouse=True)
def _no_fetched_profiles(tmp_path_factory, monkeypatch):
    """Profiles come from the package, never from a copy a refresh left on this machine."""
    monkeypatch.setenv("URN8141_DATA_DIR", str(tmp_path_factory.mktemp("urn8141-data")))
