"""The client's address through the trusted proxies only (registry/proxies.py): rate
limits count per visitor behind the proxy, and nobody forges an address or HTTPS."""

import ipaddress

import pytest
from django.core.cache import cache
from django.test import Client, RequestFactory, override_settings

from registry.proxies import (
    TrustedProxyMiddleware,
    canonical_address,
    client_address,
    client_bucket,
    parse_networks,
)
from tests.factories import PASSWORD

PROXIES = parse_networks(["10.0.0.0/8", "::1"])


@pytest.mark.parametrize(("peer", "forwarded", "client"), [
    # Not from a proxy: the peer is the client, whatever the header says.
    ("198.51.100.7", "203.0.113.9", "198.51.100.7"),
    # From the proxy: the address it appended.
    ("10.0.0.2", "203.0.113.9", "203.0.113.9"),
    # A client's own forged entries lie to the left of what the proxy appended.
    ("10.0.0.2", "1.2.3.4, 203.0.113.9", "203.0.113.9"),
    # Two proxies of ours: skip both.
    ("10.0.0.2", "1.2.3.4, 203.0.113.9, 10.0.0.3", "203.0.113.9"),
    ("::1", "2001:db8::5", "2001:db8::5"),
    # Every hop trusted: the leftmost.
    ("10.0.0.2", "10.1.1.1", "10.1.1.1"),
    # No header from the proxy: the proxy is the client.
    ("10.0.0.2", "", "10.0.0.2"),
    # Garbage the proxy would never write: stop at the last address we trust.
    ("10.0.0.2", "203.0.113.9, not-an-address", "10.0.0.2"),
])
def test_the_client_is_the_first_hop_not_ours_from_the_right(peer, forwarded, client):
    assert client_address(peer, forwarded, PROXIES) == client


def test_a_long_header_is_read_in_bounded_hops():
    forwarded = ", ".join(["10.0.0.9"] * 100_000) + ", 203.0.113.9"
    assert client_address("10.0.0.2", forwarded, PROXIES) == "203.0.113.9"


def _through_middleware(**meta):
    seen = {}

    def view(request):
        seen.update(request.META)
        return None

    TrustedProxyMiddleware(view)(RequestFactory().get("/", **meta))
    return seen


@override_settings(TRUSTED_PROXY_NETWORKS=PROXIES)
def test_the_middleware_believes_only_a_trusted_proxy():
    behind = _through_middleware(REMOTE_ADDR="10.0.0.2", HTTP_X_FORWARDED_FOR="203.0.113.9",
                                 HTTP_X_FORWARDED_PROTO="https")
    assert behind["REMOTE_ADDR"] == "203.0.113.9" and behind["PROXY_PEER_ADDR"] == "10.0.0.2"
    assert behind["HTTP_X_FORWARDED_PROTO"] == "https"
    direct = _through_middleware(REMOTE_ADDR="198.51.100.7", HTTP_X_FORWARDED_FOR="1.2.3.4",
                                 HTTP_X_FORWARDED_PROTO="https")
    assert direct["REMOTE_ADDR"] == "198.51.100.7"
    assert "HTTP_X_FORWARDED_FOR" not in direct and "HTTP_X_FORWARDED_PROTO" not in direct


@pytest.mark.rate_limits
def test_visitors_behind_the_proxy_have_a_bucket_each(client, db, settings):
    """Rate limits count the client's address: two visitors behind the proxy do not
    share a bucket, and one visitor cannot escape theirs by forging X-Forwarded-For."""
    cache.clear()
    settings.TRUSTED_PROXY_NETWORKS = parse_networks(["127.0.0.1"])
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "nid_check": "2/m"}
    asked = iter(range(100))

    def ask(forwarded):  # each a different question: none is answered from the cache
        return client.get("/api/nid-check", {"nid": f"example{next(asked)}"},
                          REMOTE_ADDR="127.0.0.1", HTTP_X_FORWARDED_FOR=forwarded).status_code

    assert [ask("203.0.113.1") for _ in range(3)] == [200, 200, 429]
    assert ask("203.0.113.2") == 200
    assert ask("9.9.9.9, 203.0.113.1") == 429  # a forged entry on the left changes nothing
    cache.clear()


def test_networks_are_parsed_once_and_strictly():
    assert parse_networks(["192.0.2.1"]) == (ipaddress.ip_network("192.0.2.1/32"),)


@pytest.mark.parametrize(("written", "canonical", "bucket"), [
    ("198.51.100.7", "198.51.100.7", "198.51.100.7"),
    # IPv4-mapped IPv6 (a dual-stack socket, or a proxy that writes them so) is IPv4.
    ("::ffff:198.51.100.7", "198.51.100.7", "198.51.100.7"),
    ("::FFFF:c633:6407", "198.51.100.7", "198.51.100.7"),
    # IPv6: one way of writing it; counted per /64, which one subscriber holds whole.
    ("2001:DB8:0:1:0:0:0:5", "2001:db8:0:1::5", "2001:db8:0:1::"),
    ("2001:db8:0:1:ffff:ffff:ffff:ffff", "2001:db8:0:1:ffff:ffff:ffff:ffff", "2001:db8:0:1::"),
    ("fe80::1%eth0", "fe80::1", "fe80::"),
    # Not an address (a Unix socket's empty peer): as it is.
    ("", "", ""),
])
def test_one_address_one_spelling_and_ipv6_by_its_64(written, canonical, bucket):
    assert canonical_address(written) == canonical
    assert client_bucket(written) == bucket


@override_settings(TRUSTED_PROXY_NETWORKS=PROXIES)
def test_the_middleware_writes_the_client_one_way():
    assert _through_middleware(REMOTE_ADDR="::ffff:198.51.100.7")["REMOTE_ADDR"] == "198.51.100.7"
    behind = _through_middleware(REMOTE_ADDR="::ffff:10.0.0.2",
                                 HTTP_X_FORWARDED_FOR="::ffff:203.0.113.9")
    assert behind["REMOTE_ADDR"] == "203.0.113.9"


@override_settings(TRUSTED_PROXY_NETWORKS=(), TRUSTED_PROXY_UNIX_SOCKET=True)
def test_a_peer_on_the_unix_socket_is_the_proxy_when_trusted():
    behind = _through_middleware(REMOTE_ADDR="", HTTP_X_FORWARDED_FOR="203.0.113.9",
                                 HTTP_X_FORWARDED_PROTO="https")
    assert behind["REMOTE_ADDR"] == "203.0.113.9" and behind["HTTP_X_FORWARDED_PROTO"] == "https"
    with override_settings(TRUSTED_PROXY_UNIX_SOCKET=False):
        direct = _through_middleware(REMOTE_ADDR="", HTTP_X_FORWARDED_FOR="203.0.113.9")
    assert direct["REMOTE_ADDR"] == "" and "HTTP_X_FORWARDED_FOR" not in direct


def test_unix_is_a_word_of_trusted_proxies_not_a_network():
    assert parse_networks(["unix", "127.0.0.1"]) == (ipaddress.ip_network("127.0.0.1/32"),)


@pytest.mark.rate_limits
@pytest.mark.parametrize(("first", "second", "shared"), [
    ("::ffff:203.0.113.1", "::ffff:203.0.113.2", False),
    ("2001:db8:0:1::1", "2001:db8:0:2::1", False),
    ("2001:db8:0:1::1", "2001:db8:0:1::2", True),  # one /64, one subscriber
])
def test_ipv4_mapped_clients_do_not_share_a_rate_limit_bucket(client, db, settings,
                                                              first, second, shared):
    cache.clear()
    settings.TRUSTED_PROXY_NETWORKS = parse_networks(["127.0.0.1"])
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "nid_check": "2/m"}
    asked = iter(range(100))

    def ask(forwarded):
        return client.get("/api/nid-check", {"nid": f"example{next(asked)}"},
                          REMOTE_ADDR="127.0.0.1", HTTP_X_FORWARDED_FOR=forwarded).status_code

    assert [ask(first) for _ in range(3)] == [200, 200, 429]
    assert ask(second) == (429 if shared else 200)
    cache.clear()


def test_ipv4_mapped_clients_do_not_share_a_log_in_bucket(client, registrant, settings):
    """The issue's finding: 10 failed log-ins by one client behind a proxy that writes
    ::ffff: addresses locked everyone else out, right password included."""
    cache.clear()
    settings.TRUSTED_PROXY_NETWORKS = parse_networks(["127.0.0.1"])
    for n in range(11):
        client.post("/accounts/login/", {"login": f"nobody{n}@example.org", "password": "x"},
                    REMOTE_ADDR="127.0.0.1", HTTP_X_FORWARDED_FOR="::ffff:198.51.100.1")
    other = Client(REMOTE_ADDR="127.0.0.1", HTTP_X_FORWARDED_FOR="::ffff:198.51.100.2")
    other.post("/accounts/login/", {"login": registrant.email, "password": PASSWORD})
    assert "_auth_user_id" in other.session
    cache.clear()
