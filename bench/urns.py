"""Throughput of urn8141 parse+normalize against the PyPI library urnparse.

    .venv/bin/python bench/urns.py [--count 20000] [--repeat 7]

Also times the check with namespace profiles (those shipped with urn8141) on the same
set, ``urn8141.check.check``: parse, the NSS against its namespace's syntax
and check digits, and the namespace's normal form, in C where installing the
toolkit built it; the same on the Python path (``check_python``; ``URN_SPEEDUPS=0``
runs everything on it, as where no C compiler is);
and with the errors of each NSS its profile refuses (``check_nss``, what
/api/check answers); and on ever longer NSSs, to show they are linear.

Builds a deterministic mixed set of URNs (plain, percent-encoded, with r/q/f
components, upper-case scheme and NID, and ~5% invalid), then times
parse()+normalize() over the whole set, best and median of --repeat runs,
in one process and on one core. urnparse is timed on the same set in the same
run, in turn with the others (one round: each function once), and each ratio is
the median of the rounds' ratios, so it is meaningful even on a noisy machine.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from urn8141 import URNSyntaxError, normalize, parse  # noqa: E402
from urn8141.check import ACCELERATED, check, check_python  # noqa: E402

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

    from urn8141.profiles import compile_profile
    from urn8141.store import SHIPPED_PROFILES

    shipped = json.loads(SHIPPED_PROFILES.read_text())["profiles"]
    return {nid: compile_profile(data, nid) for nid, data in shipped.items()}


PROFILES = _profiles()


def with_profiles(urns: list[str]) -> int:
    """``check``: the URN, its profile's verdict on the NSS (its syntax and check
    digits) and the namespace normal form, in C where it is built (what deciding
    ``nss_valid`` and ``namespace_normal_form`` costs /api/check)."""
    return _count(urns, check)


def with_profiles_python(urns: list[str]) -> int:
    """The same on the Python path (``check_python``: the reference, and what runs
    where no C compiler built the C path)."""
    return _count(urns, check_python)


def _count(urns: list[str], checker) -> int:
    ok = 0
    for text in urns:
        try:  # noqa: SIM105 - a context manager per URN would cost more than the check
            ok += checker(text, PROFILES).nss_valid is True
        except URNSyntaxError:
            pass
    return ok


def with_diagnosis(urns: list[str]) -> int:
    """As ``with_profiles``, and for an NSS its profile refuses, the errors too
    (``check_nss``: the rule, the character, what was expected), as /api/check
    answers."""
    ok = 0
    for text in urns:
        try:
            checked = check(text, PROFILES)
        except URNSyntaxError:
            continue
        if checked.nss_valid is False:
            PROFILES[checked.nid.lower()].check_nss(checked.nss)
        else:
            ok += checked.nss_valid is True
    return ok


def linearity() -> list[tuple[int, float, float, float]]:
    """Microseconds per check of one MACE URN whose NSS is n characters long, valid and
    refused at its last character ("~", which RFC 8141 allows and RFC 3613's syntax
    does not): ``check`` (C where built), the Python path's verdict (``nss_ok``), and
    with the errors (``check_nss``, which walks a refused NSS to its first bad
    character)."""
    profile = PROFILES["mace"]
    rows = []
    for n in (100, 1_000, 10_000, 100_000):
        nss = "a" * n
        times = []
        for one in (lambda text: check("urn:mace:" + text, PROFILES), profile.nss_ok,
                    profile.check_nss):
            start = time.perf_counter()
            for _ in range(5):
                one(nss)
                one(nss + "~")
            times.append((time.perf_counter() - start) / 10 * 1e6)
        rows.append((n, *times))
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


RUNS = (
    ("urn8141        parse+normalize", ours),
    ("urnparse       from_string+str", theirs),
    (f"check          parse+nss verdict+namespace normal form "
     f"({'C path' if ACCELERATED else 'the C path is not built: Python path'})", with_profiles),
    ("check, Python  the same on the Python path (check_python)", with_profiles_python),
    ("with diagnosis check, and the errors of a refused NSS", with_diagnosis),
)


def rounds(urns: list[str], repeat: int) -> dict[str, tuple[list[float], int]]:
    """Each function once per round, ``repeat`` rounds: on a shared machine whose load
    moves, the functions of one round see the same load, so a round's ratios hold
    even when its rates do not."""
    results: dict[str, tuple[list[float], int]] = {label: ([], 0) for label, _ in RUNS}
    for _ in range(repeat):
        for label, fn in RUNS:
            start = time.perf_counter()
            ok = fn(urns)
            results[label][0].append(len(urns) / (time.perf_counter() - start))
            results[label] = (results[label][0], ok)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    urns = make_urns(args.count)
    try:
        import urnparse  # noqa: F401
    except ImportError:
        print("urnparse is not installed (python3 dev.py test --version installs it)")
        return
    # As in a running server: each profile compiled and its tables built once, before.
    for profile in PROFILES.values():
        for text in profile.data.get("examples", [])[:1]:
            check(text, PROFILES)
    results = rounds(urns, args.repeat)
    theirs_rates = results[RUNS[1][0]][0]
    for label, _ in RUNS:
        rates, ok = results[label]
        what = "accepted" if label.startswith("urnparse") else (
            "valid" if label.startswith("urn8141") else "valid by their profile")
        print(f"{label}: median {statistics.median(rates):>10,.0f} URNs/s  "
              f"best {max(rates):>10,.0f}  ({ok} of {len(urns)} {what})")
        if not label.startswith("urnparse"):
            ratios = [mine / other for mine, other in zip(rates, theirs_rates, strict=True)]
            print(f"    {statistics.median(ratios):.1f}x urnparse (median of the {args.repeat} "
                  f"rounds' ratios; {min(ratios):.1f}x to {max(ratios):.1f}x)")
    print("linearity (one MACE URN, valid and refused at its last character):")
    for n, whole, verdict, diagnosis in linearity():
        print(f"  NSS of {n:>7,} characters: check {whole:>8,.0f} us "
              f"({whole / n * 1000:,.0f} ns a character), Python verdict {verdict:>8,.0f} us "
              f"({verdict / n * 1000:,.0f} ns), with errors {diagnosis:>8,.0f} us "
              f"({diagnosis / n * 1000:,.0f} ns)")


if __name__ == "__main__":
    main()
