"""Time of the NID conflict warnings (urn8141.confusion) for one NID.

    .venv/bin/python bench/confusion.py [--registered 10000] [--open 1000] [--repeat 5]

Builds a ConfusionIndex from IANA's real registry plus a deterministic set of
synthetic registered NIDs (to --registered in all) and --open NIDs proposed in
open requests, every one with an organisation, the URI scheme names and the ISO
3166-1 codes and names. Then times ``warnings()`` for a mix of proposals (near
duplicates, look-alikes, plurals, prefixes, country names, identifier systems,
clean names), each timed --repeat times, and prints the build time and the
median, 95th percentile and worst time per NID. The issue's budget is 20 ms
per NID.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import pycountry  # noqa: E402

from urn8141.confusion import ConfusionIndex, Holder  # noqa: E402

SYLLABLES = ["ar", "bo", "cy", "da", "el", "fi", "go", "ha", "in", "jo", "ka", "lu", "me", "no",
             "pa", "qu", "ro", "sa", "te", "ul", "ve", "wa", "xe", "yo", "ze", "net", "doc", "id"]
PROPOSALS = ["isbn-x", "ISBNS", "i5bn", "1sbn", "xrnpp", "3gpp-3", "iso-urn", "example",
             "france", "deu", "doi-archive", "uuid", "my-orcid-ids", "harbour", "exarchive",
             "totally-new-name", "ab", "a" * 32, "urn-1", "sa-te-me-no-ro"]


def synthetic_nids(count: int, rng: random.Random) -> list[str]:
    seen: set[str] = set()
    out = []
    while len(out) < count:
        nid = "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 5)))
        if rng.random() < 0.3:
            cut = rng.randint(2, len(nid) - 2)
            nid = nid[:cut] + "-" + nid[cut:]
        if nid not in seen and nid[2:3] != "-":
            seen.add(nid)
            out.append(nid)
    return out


def build(registered: int, open_count: int) -> ConfusionIndex:
    rng = random.Random(8141)
    real = json.loads((ROOT / "fixtures" / "iana-urn-namespaces.json").read_text())
    holders = [Holder(row["name"], f"/namespaces/{row['name']}/", row.get("registrant") or "")
               for row in real["formal"] + real["informal"]]
    names = synthetic_nids(registered - len(holders) + open_count, rng)
    holders += [Holder(nid, f"/namespaces/{nid}/", f"Organisation {i % 3000} Inc.")
                for i, nid in enumerate(names[:registered - len(holders)])]
    requested = [Holder(nid, f"/requests/{i}/", f"Body {i} Ltd", True, f"request:{i}")
                 for i, nid in enumerate(names[-open_count:])]
    schemes = [line.strip() for line in (ROOT / "fixtures" / "uri-schemes.txt").read_text()
               .splitlines() if line.strip() and not line.startswith("#")]
    countries = list(pycountry.countries)
    return ConfusionIndex(
        registered=holders, requested=requested, uri_schemes=schemes,
        country_codes=[c.alpha_2 for c in countries] + [c.alpha_3 for c in countries],
        country_names=[n for c in countries for n in (c.name, getattr(c, "common_name", ""))
                       if n],
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--registered", type=int, default=10_000)
    parser.add_argument("--open", type=int, default=1_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    started = time.perf_counter()
    index = build(args.registered, args.open)
    built = time.perf_counter() - started
    print(f"index of {args.registered} registered and {args.open} open NIDs built in "
          f"{built * 1000:.0f} ms")
    times, medians = [], []
    for nid in PROPOSALS:
        mine = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            warnings = index.warnings(nid, organisation="Organisation 12 Inc")
            mine.append(time.perf_counter() - t0)
        times += mine
        medians.append(statistics.median(mine))
        codes = sorted({w.code for w in warnings})
        print(f"  {nid:34} {statistics.median(mine) * 1000:6.2f} ms {len(warnings):3} warnings  "
              f"{', '.join(codes)}")
    times.sort()
    p95 = times[int(len(times) * 0.95) - 1]
    print(f"per NID: median {statistics.median(times) * 1000:.2f} ms, "
          f"slowest NID's median {max(medians) * 1000:.2f} ms, "
          f"95th percentile {p95 * 1000:.2f} ms, worst single call {times[-1] * 1000:.2f} ms "
          f"({len(times)} timings; budget 20 ms)")


if __name__ == "__main__":
    main()
