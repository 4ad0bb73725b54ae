"""Who is asking: the client's address, read through the reverse proxies the operator
trusts (settings.TRUSTED_PROXIES), and nobody else.

A proxy appends the address it received the request from to ``X-Forwarded-For``; a
client can write anything to the left of that. So the client is found by walking the
header from the right while the hop is a trusted proxy: the first address that is not
one is the client (if every hop is trusted, the leftmost). From a peer that is not a
trusted proxy, ``X-Forwarded-For`` and ``X-Forwarded-Proto`` are ignored and dropped,
so neither the rate limits nor the HTTPS check can be fooled by a forged header.

``TrustedProxyMiddleware`` runs first and puts that address in ``REMOTE_ADDR``, written
one way (``canonical_address``: an IPv4-mapped IPv6 address ``::ffff:a.b.c.d`` as
``a.b.c.d``, IPv6 compressed in lower case), which the logs read. The proxy's own
address is kept in ``request.META["PROXY_PEER_ADDR"]``. A peer on a Unix socket has no
address; it is the proxy when TRUSTED_PROXIES names ``unix`` (only who may write the
socket file can connect: docs/operations.md).

Everything that counts per visitor keys on ``client_key(request)``, never on the
address itself: the address for IPv4, its /64 network for IPv6 (one subscriber's
whole prefix, which they can walk through at will). django-ratelimit reads it
(settings.RATELIMIT_IP_META_KEY), allauth's rate limits through the account adapter's
``get_client_ip``, and the registry's own log-in throttle (registry/accounts/throttle.py).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Iterable

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.http import HttpRequest, HttpResponse

Network = ipaddress.IPv4Network | ipaddress.IPv6Network

# At most this many hops of X-Forwarded-For are read (a header is outside text).
MAX_HOPS = 20
FORWARDED_HEADERS = ("HTTP_X_FORWARDED_FOR", "HTTP_X_FORWARDED_PROTO")
IPV6_BUCKET_PREFIX = 64  # one subscriber's network (RFC 6177): rate limits count per /64
UNIX_SOCKET = "unix"  # in TRUSTED_PROXIES: a peer on gunicorn's Unix socket is the proxy


def parse_networks(entries: Iterable[str], *, name: str = "TRUSTED_PROXIES") -> tuple[Network, ...]:
    """Addresses or networks (``10.0.0.0/8``, ``::1``) as networks; a bad entry stops
    the start-up with a message naming it."""
    networks = []
    for entry in entries:
        if entry.strip().lower() == UNIX_SOCKET:
            continue  # not a network: settings.TRUSTED_PROXY_UNIX_SOCKET
        try:
            networks.append(ipaddress.ip_network(entry.strip(), strict=False))
        except ValueError:
            raise ImproperlyConfigured(
                f"{name}: {entry!r} is not an IP address or network (e.g. 10.0.0.0/8)."
            ) from None
    return tuple(networks)


def _address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """An address as written by a proxy or the socket, IPv4-mapped IPv6 as the IPv4
    address it is, without an IPv6 zone (``%eth0``); None for anything else."""
    try:
        address = ipaddress.ip_address(text.strip())
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return address.ipv4_mapped
        if address.scope_id is not None:
            return ipaddress.IPv6Address(str(address).split("%", 1)[0])
    return address


def canonical_address(text: str) -> str:
    """``text`` as the registry writes an address: ``::ffff:192.0.2.1`` is 192.0.2.1,
    ``2001:DB8:0::1`` is 2001:db8::1; text that is no address is returned as it is."""
    address = _address(text)
    return text if address is None else str(address)


def client_bucket(text: str) -> str:
    """What a visitor is counted as: the address for IPv4, the network address of its
    /64 for IPv6 (``2001:db8:1:2::``); text that is no address as it is."""
    address = _address(text)
    if address is None:
        return text
    if isinstance(address, ipaddress.IPv6Address):
        network = ipaddress.IPv6Network(f"{address}/{IPV6_BUCKET_PREFIX}", strict=False)
        return str(network.network_address)
    return str(address)


def client_key(request: HttpRequest) -> str:
    """The key every per-visitor count uses (RATELIMIT_IP_META_KEY, allauth's adapter,
    the log-in throttle): ``client_bucket`` of the client's address."""
    return client_bucket(request.META.get("REMOTE_ADDR", ""))


def is_trusted(address: str, networks: Iterable[Network]) -> bool:
    parsed = _address(address)
    return parsed is not None and any(parsed in network for network in networks)


def client_address(peer: str, forwarded_for: str, networks: tuple[Network, ...], *,
                   unix_socket: bool = False) -> str:
    """The client's address (canonical_address), given the peer that connected and its
    X-Forwarded-For; ``unix_socket``: a peer with no address (gunicorn's Unix socket)
    is a trusted proxy."""
    if not (is_trusted(peer, networks) or (unix_socket and not peer)):
        return canonical_address(peer)
    client = canonical_address(peer)
    hops = forwarded_for.split(",")[-MAX_HOPS:] if forwarded_for else []
    for hop in reversed(hops):
        address = _address(hop)
        if address is None:  # not written by a proxy of ours: stop at the last trusted hop
            return client
        client = str(address)
        if not any(address in network for network in networks):
            return client
    return client


class TrustedProxyMiddleware:
    """First of the middleware: ``REMOTE_ADDR`` becomes the client's address."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        networks: tuple[Network, ...] = settings.TRUSTED_PROXY_NETWORKS
        unix_socket: bool = settings.TRUSTED_PROXY_UNIX_SOCKET
        meta = request.META
        peer = meta.get("REMOTE_ADDR", "")
        meta["PROXY_PEER_ADDR"] = peer
        if is_trusted(peer, networks) or (unix_socket and not peer):
            meta["REMOTE_ADDR"] = client_address(peer, meta.get("HTTP_X_FORWARDED_FOR", ""),
                                                 networks, unix_socket=unix_socket)
        else:
            meta["REMOTE_ADDR"] = canonical_address(peer)
            for header in FORWARDED_HEADERS:
                meta.pop(header, None)
        return self.get_response(request)
