"""Who is asking: the client's address, read through the reverse proxies the operator
trusts (settings.TRUSTED_PROXIES), and nobody else.

A proxy appends the address it received the request from to ``X-Forwarded-For``; a
client can write anything to the left of that. So the client is found by walking the
header from the right while the hop is a trusted proxy: the first address that is not
one is the client (if every hop is trusted, the leftmost). From a peer that is not a
trusted proxy, ``X-Forwarded-For`` and ``X-Forwarded-Proto`` are ignored and dropped,
so neither the rate limits nor the HTTPS check can be fooled by a forged header.

``TrustedProxyMiddleware`` runs first and puts that address in ``REMOTE_ADDR``, which
the rate limits (django-ratelimit), allauth's log-in throttle and the logs read. The
proxy's own address is kept in ``request.META["PROXY_PEER_ADDR"]``.
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


def parse_networks(entries: Iterable[str], *, name: str = "TRUSTED_PROXIES") -> tuple[Network, ...]:
    """Addresses or networks (``10.0.0.0/8``, ``::1``) as networks; a bad entry stops
    the start-up with a message naming it."""
    networks = []
    for entry in entries:
        try:
            networks.append(ipaddress.ip_network(entry.strip(), strict=False))
        except ValueError:
            raise ImproperlyConfigured(
                f"{name}: {entry!r} is not an IP address or network (e.g. 10.0.0.0/8)."
            ) from None
    return tuple(networks)


def _address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(text.strip())
    except ValueError:
        return None


def is_trusted(address: str, networks: Iterable[Network]) -> bool:
    parsed = _address(address)
    return parsed is not None and any(parsed in network for network in networks)


def client_address(peer: str, forwarded_for: str, networks: tuple[Network, ...]) -> str:
    """The client's address, given the peer that connected and its X-Forwarded-For."""
    if not is_trusted(peer, networks):
        return peer
    client = peer
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
        meta = request.META
        peer = meta.get("REMOTE_ADDR", "")
        meta["PROXY_PEER_ADDR"] = peer
        if is_trusted(peer, networks):
            meta["REMOTE_ADDR"] = client_address(peer, meta.get("HTTP_X_FORWARDED_FOR", ""),
                                                 networks)
        else:
            for header in FORWARDED_HEADERS:
                meta.pop(header, None)
        return self.get_response(request)
