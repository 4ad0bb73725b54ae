"""Throughput of registry.urns parse+normalize against the PyPI library urnparse.

    .venv/bin/python bench/urns.py [--count 20000] [--repeat 7]

Also times the check with namespace profiles (fixtures/profiles.json): parse, the
NSS against its namespace's syntax and check digits, and the namespace's normal
form, on the same set; and that check on ever longer NSSs, to show it is linear.

Builds a deterministic mixed set of URNs (plain, percent-encoded, with r/q/f
components, upper-case scheme and NID, and ~5% invalid), then times
parse()+normalize() over the whole set, best and median of --repeat runs,
in one process and on one core. urnparse is timed on the same set in the same
run, so the ratio is meaningful even on a noisy machine.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from registry.urns import URNSyntaxError, normalize, parse  # noqa: E402

NIDS = ["isbn", "ISSN", "example", "ietf", "uuid", "oid", "nbn", "xmpp", "urn-7", "epc", "3gpp"]


def make_urns(count: int, seed: int = 8141) -> list[str]:
    rng = random.Random(seed)
    alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~:@!$&'()*+,;="
    urns = []
    for i in range(count):
        nid = rng.choice(NIDS)
        nss = "".join(rng.choice(alphabet) for _ in range(rng.randint(4, 40)))
        kind = i % 20
        if kind == 1:
            nss += "/" + "".join(rng.choice(alphabet) for _ in range(8))
        elif kind == 2:
            nss += "%2c" + nss[:3] + "%C3%A9"
        elif kind == 3:
            nss += "?+res=1?=q=2#frag"
        elif kind == 4:
            nss += "?=lat=39.56&lon=-104.85"
        elif kind == 5:
            nss += "#section-2"
        scheme = "URN" if kind == 6 else "urn"
        text = f"{scheme}:{nid}:{nss}"
        if kind == 7:  # invalid: a bare "?", a space, a bad percent-encoding, a bad NID
            text = rng.choice([text + "?x", text + " y", text + "%g1", "urn:-bad:x"])
        urns.append(text)
    return urns


def ours(urns: list[str]) -> int:
    ok = 0
    for text in urns:
        try:
            parse(text)
            normalize(text)
            ok += 1
        except URNSyntaxError:
            pass
    return ok


def _profiles() -> dict:
    import json

    from registry.urns.profiles import compile_profile

    path = Path(__file__).resolve().parent.parent / "fixtures" / "profiles.json"
    shipped = json.loads(path.read_text())["profiles"]
    return {nid: compile_profile(data, nid) for nid, data in shipped.items()}


PROFILES = _profiles()


def with_profiles(urns: list[str]) -> int:
    """What /api/check adds per URN: nss_valid (and the errors) and the namespace's
    normal form, with the profile already compiled (it is, per process)."""
    ok = 0
    for text in urns:
        try:
            urn = parse(text)
        except URNSyntaxError:
            continue
        profile = PROFILES.get(urn.nid.lower())
        if profile is None:
            urn.normal_form()
            continue
        if not profile.check_nss(urn.nss):
            ok += 1
        profile.normal_form(urn)
    return ok


def linearity() -> list[tuple[int, float]]:
    """Microseconds per check of one NBN URN whose NSS is n characters long, valid and
    invalid at its last character (the slow, diagnosing path)."""
    profile = PROFILES["nbn"]
    rows = []
    for n in (100, 1_000, 10_000, 100_000):
        nss = "fi-" + "a" * n
        start = time.perf_counter()
        for _ in range(5):
            profile.check_nss(nss)
            profile.check_nss(nss + "[")
        rows.append((n, (time.perf_counter() - start) / 10 * 1e6))
    return rows


def theirs(urns: list[str]) -> int:
    from urnparse import URN8141, InvalidURNFormatError

    ok = 0
    for text in urns:
        try:
            urn = URN8141.from_string(text)
            str(urn)  # urnparse normalizes on the way out
            ok += 1
        except (InvalidURNFormatError, ValueError):
            pass
    return ok


def timed(fn, urns: list[str], repeat: int) -> tuple[float, float, int]:
    rates = []
    ok = 0
    for _ in range(repeat):
        start = time.perf_counter()
        ok = fn(urns)
        rates.append(len(urns) / (time.perf_counter() - start))
    return max(rates), statistics.median(rates), ok


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    urns = make_urns(args.count)
    best, median, ok = timed(ours, urns, args.repeat)
    print(f"registry.urns  parse+normalize: median {median:>10,.0f} URNs/s  "
          f"best {best:>10,.0f}  ({ok} of {len(urns)} valid)")
    try:
        tbest, tmedian, tok = timed(theirs, urns, args.repeat)
    except ImportError:
        print("urnparse is not installed (python3 dev.py test --version installs it)")
        return
    print(f"urnparse       from_string+str: median {tmedian:>10,.0f} URNs/s  "
          f"best {tbest:>10,.0f}  ({tok} of {len(urns)} accepted)")
    print(f"ratio (median): registry.urns is {median / tmedian:.1f}x urnparse")
    pbest, pmedian, pok = timed(with_profiles, urns, args.repeat)
    print(f"with profiles  parse+nss check+namespace normal form: median {pmedian:>10,.0f} "
          f"URNs/s  best {pbest:>10,.0f}  ({pok} valid by their profile)")
    print(f"ratio (median): the profile check is {pmedian / tmedian:.1f}x urnparse")
    for n, micros in linearity():
        print(f"  NSS of {n:>7,} characters: {micros:>10,.0f} us per check "
              f"({micros / n * 1000:,.0f} ns a character)")


if __name__ == "__main__":
    main()
