"""Throughput of registry.urns parse+normalize against the PyPI library urnparse.

    .venv/bin/python bench/urns.py [--count 20000] [--repeat 7]

Also times the check with namespace profiles (fixtures/profiles.json) on the same
set: parse, the NSS against its namespace's syntax and check digits, and the
namespace's normal form; once with the verdict alone (``nss_ok``) and once with
the errors of each NSS its profile refuses (``check_nss``, what /api/check
answers); and both on ever longer NSSs, to show they are linear.

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


def _checked(urns: list[str], valid) -> int:
    """Parse, then with the NSS's profile (already compiled, as it is per process)
    ``valid(profile, nss)`` and the namespace's normal form."""
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
        if valid(profile, urn.nss):
            ok += 1
        profile.normal_form(urn)
    return ok


def with_profiles(urns: list[str]) -> int:
    """The verdict of the NSS's profile (``nss_ok``: its syntax and check digits) and the
    namespace's normal form: what deciding ``nss_valid`` and ``namespace_normal_form``
    costs."""
    return _checked(urns, lambda profile, nss: profile.nss_ok(nss))


def with_diagnosis(urns: list[str]) -> int:
    """As ``with_profiles``, with ``check_nss``: for an NSS its profile refuses, the
    errors too (the rule, the character, what was expected), as /api/check answers."""
    return _checked(urns, lambda profile, nss: not profile.check_nss(nss))


def linearity() -> list[tuple[int, float, float]]:
    """Microseconds per check of one NBN URN whose NSS is n characters long, valid and
    invalid at its last character: the verdict (``nss_ok``), and with the errors
    (``check_nss``, which walks an invalid NSS to its first bad character)."""
    profile = PROFILES["nbn"]
    rows = []
    for n in (100, 1_000, 10_000, 100_000):
        nss = "fi-" + "a" * n
        times = []
        for check in (profile.nss_ok, profile.check_nss):
            start = time.perf_counter()
            for _ in range(5):
                check(nss)
                check(nss + "[")
            times.append((time.perf_counter() - start) / 10 * 1e6)
        rows.append((n, times[0], times[1]))
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
    ("registry.urns  parse+normalize", ours),
    ("urnparse       from_string+str", theirs),
    ("with profiles  parse+nss verdict+namespace normal form", with_profiles),
    ("with diagnosis parse+nss errors+namespace normal form", with_diagnosis),
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
    results = rounds(urns, args.repeat)
    theirs_rates = results[RUNS[1][0]][0]
    for label, _ in RUNS:
        rates, ok = results[label]
        what = "accepted" if label.startswith("urnparse") else (
            "valid" if label.startswith("registry") else "valid by their profile")
        print(f"{label}: median {statistics.median(rates):>10,.0f} URNs/s  "
              f"best {max(rates):>10,.0f}  ({ok} of {len(urns)} {what})")
        if not label.startswith("urnparse"):
            ratios = [mine / other for mine, other in zip(rates, theirs_rates, strict=True)]
            print(f"    {statistics.median(ratios):.1f}x urnparse (median of the {args.repeat} "
                  f"rounds' ratios; {min(ratios):.1f}x to {max(ratios):.1f}x)")
    print("linearity (one NBN URN, valid and invalid at its last character):")
    for n, verdict, diagnosis in linearity():
        print(f"  NSS of {n:>7,} characters: verdict {verdict:>8,.0f} us "
              f"({verdict / n * 1000:,.0f} ns a character), with errors {diagnosis:>8,.0f} us "
              f"({diagnosis / n * 1000:,.0f} ns a character)")


if __name__ == "__main__":
    main()
