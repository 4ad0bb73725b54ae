"""Command line: ``python -m registry.urns check URN...`` and ``... nid NID...``.

Prints the parts, the normal form and every problem; exits 1 when anything is wrong.
"""

from __future__ import annotations

import argparse
import sys
from typing import TextIO

from registry.urns import check_formal_nid, check_informal_nid, is_informal, parse
from registry.urns.syntax import URNSyntaxError


def _check_urn(text: str, out: TextIO) -> bool:
    try:
        urn = parse(text)
    except URNSyntaxError as exc:
        print(f"{text}\n  not a URN: {exc.reason}", file=out)
        print(f"  {text[: exc.offset + 1]}".rstrip("\n"), file=out)
        print("  " + " " * exc.offset + "^", file=out)
        return False
    print(text, file=out)
    print(f"  NID:          {urn.nid}", file=out)
    print(f"  NSS:          {urn.nss}", file=out)
    for label, value in (
        ("r-component", urn.r_component),
        ("q-component", urn.q_component),
        ("f-component", urn.f_component),
    ):
        if value is not None:
            print(f"  {label + ':':13} {value}", file=out)
    print(f"  normal form:  {urn.normal_form()}", file=out)
    return True


def _check_nid(nid: str, out: TextIO) -> bool:
    kind = "informal" if is_informal(nid) else "formal"
    problems = check_informal_nid(nid) if kind == "informal" else check_formal_nid(nid)
    print(f"{nid}\n  kind: {kind}", file=out)
    if kind == "informal":
        print("  note: informal NIDs are assigned by the registry, not requested", file=out)
    for problem in problems:
        print(f"  {problem.code}: {problem}", file=out)
    if not problems:
        print("  acceptable", file=out)
    return not problems


def main(argv: list[str] | None = None, out: TextIO = sys.stdout) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m registry.urns", description="Check URNs and NIDs against RFC 8141."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    check = sub.add_parser("check", help="parse and normalize URNs")
    check.add_argument("urns", nargs="+", metavar="URN")
    nid = sub.add_parser("nid", help="check NIDs against sections 2.1, 5.1 and 5.2")
    nid.add_argument("nids", nargs="+", metavar="NID")
    args = parser.parse_args(argv)
    if args.command == "check":
        results = [_check_urn(u, out) for u in args.urns]
    else:
        results = [_check_nid(n, out) for n in args.nids]
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
