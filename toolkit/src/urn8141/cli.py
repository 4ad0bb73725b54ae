"""The command line: ``urn8141`` (or ``python -m urn8141``).

    urn8141 check URN...          RFC 8141 syntax, then the namespace's profile
    urn8141 normalize URN...      the namespace normal form (3.1, then the profile's 3.2)
    urn8141 equivalent A B        equivalent by RFC 8141 and by the namespace's rules?
    urn8141 resolve URN...        the resolver URLs the namespace declares
    urn8141 nid NID...            a NID against RFC 8141 sections 2.1, 5.1 and 5.2
    urn8141 profiles [NID...]     which profiles are in use, or one profile
    urn8141 refresh [--from URL]  fetch a registry's /profiles.json (the only network use)

``-`` in place of the URNs reads them from standard input, one a line. ``--json``
prints JSON. Exit status: 0 when every answer is yes (valid, equivalent, resolved,
refreshed), 1 when one is no (not a URN, refused by its profile, not equivalent, no
resolver, a refresh that failed), 2 for a usage error (unknown option, a missing
argument, a profiles file that cannot be read).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, NoReturn, TextIO

from urn8141.nid import check_formal_nid, check_informal_nid, is_informal
from urn8141.profiles import STEPS, ProfileError
from urn8141.store import Profiles, RefreshError, data_dir, load_profiles, refresh
from urn8141.syntax import URN, URNSyntaxError, parse

OK, NO, USAGE = 0, 1, 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(USAGE, f"{self.prog}: error: {message}\n")


def _arguments() -> argparse.ArgumentParser:
    parser = _Parser(prog="urn8141", description=__doc__.splitlines()[0].rstrip(":."),
                     epilog="Exit status: 0 yes, 1 no, 2 usage error.")
    json_only = _Parser(add_help=False)
    json_only.add_argument("--json", action="store_true", help="print JSON")
    common = _Parser(add_help=False, parents=[json_only])
    source = common.add_mutually_exclusive_group()
    source.add_argument("--profiles", type=Path, metavar="FILE",
                        help="read the profiles from FILE (the layout of /profiles.json)")
    source.add_argument("--shipped", action="store_true",
                        help="use the profiles shipped with the package, not a fetched copy")
    source.add_argument("--no-profiles", action="store_true",
                        help="RFC 8141 alone: no namespace's own rules")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for name, what in (("check", "check URNs: RFC 8141, then the namespace's profile"),
                       ("normalize", "print each URN's namespace normal form"),
                       ("resolve", "print the resolver URLs of each URN")):
        command = sub.add_parser(name, parents=[common], help=what, description=what)
        command.add_argument("urns", nargs="+", metavar="URN", help="URNs, or - for stdin")
    equivalent = sub.add_parser("equivalent", parents=[common],
                                help="are two URNs equivalent (RFC 8141 and the namespace)?")
    equivalent.add_argument("a", metavar="URN")
    equivalent.add_argument("b", metavar="URN")
    nid = sub.add_parser("nid", parents=[json_only],
                         help="check NIDs against RFC 8141 sections 2.1, 5.1 and 5.2")
    nid.add_argument("nids", nargs="+", metavar="NID")
    profiles = sub.add_parser("profiles", parents=[common],
                              help="say which profiles are in use, or print some")
    profiles.add_argument("nids", nargs="*", metavar="NID")
    fetch = sub.add_parser("refresh", parents=[json_only],
                           help="fetch a registry's /profiles.json into the data directory")
    fetch.add_argument("--from", dest="url", metavar="URL",
                       help="the registry's address (default: where the last refresh fetched)")
    fetch.add_argument("--data-dir", type=Path, metavar="DIR",
                       help=f"where to keep it (default: {data_dir()})")
    return parser


def _inputs(values: Iterable[str], stdin: TextIO) -> list[str]:
    out: list[str] = []
    for value in values:
        if value == "-":
            out += [line.strip() for line in stdin if line.strip()]
        else:
            out.append(value)
    return out


def _syntax_error(exc: URNSyntaxError) -> dict[str, Any]:
    return {"message": exc.reason, "offset": exc.offset}


def _caret(text: str, offset: int, out: TextIO) -> None:
    print(f"  {text}", file=out)
    print("  " + " " * offset + "^", file=out)


def _check(text: str, profiles: Profiles, out: TextIO, as_json: bool) -> tuple[bool, Any]:
    try:
        checked = profiles.check(text)
    except URNSyntaxError as exc:
        if not as_json:
            print(f"{text}\n  not a URN: {exc.reason}", file=out)
            _caret(text, exc.offset, out)
        return False, {"urn": text, "valid": False, "error": _syntax_error(exc)}
    urn = checked.urn
    profile = profiles.get(urn.nid)
    errors = profiles.nss_errors(urn) if checked.nss_valid is False else []
    base = len("urn:") + len(urn.nid) + 1
    resolves = profiles.resolve(text) if profile is not None else []
    result = {
        "urn": text, "valid": checked.nss_valid is not False,
        "rfc8141_valid": True, "nid": urn.nid, "nss": urn.nss,
        "r_component": urn.r_component, "q_component": urn.q_component,
        "f_component": urn.f_component, "normalized": urn.normal_form(),
        "has_profile": profile is not None, "nss_valid": checked.nss_valid,
        "nss_errors": [e.as_dict(base=base) for e in errors],
        "namespace_normal_form": checked.normal_form,
        "resolves_to": [{"name": name, "url": url} for name, url in resolves],
    }
    if not as_json:
        _print_check(text, urn, result, errors, base, out)
    return checked.nss_valid is not False, result


def _print_check(text: str, urn: URN, result: dict[str, Any], errors: list[Any], base: int,
                 out: TextIO) -> None:
    verdict = {True: "valid by its namespace's profile", False: "refused by its namespace's "
               "profile", None: "valid by RFC 8141 (the namespace has no profile that judges "
               "its NSS)" if result["has_profile"] else "valid by RFC 8141 (no profile for "
               "this namespace)"}[result["nss_valid"]]
    print(f"{text}\n  {verdict}", file=out)
    print(f"  NID:          {urn.nid}", file=out)
    print(f"  NSS:          {urn.nss}", file=out)
    for label in ("r_component", "q_component", "f_component"):
        if result[label] is not None:
            print(f"  {label.replace('_', '-') + ':':13} {result[label]}", file=out)
    print(f"  normal form:  {result['normalized']}", file=out)
    if result["namespace_normal_form"] != result["normalized"]:
        print(f"  namespace normal form: {result['namespace_normal_form']}", file=out)
    for error in errors:
        print(f"  {error.rule}: {error.message}" + (f" ({error.cite})" if error.cite else ""),
              file=out)
        _caret(text, base + error.offset, out)
    for entry in result["resolves_to"]:
        print(f"  resolves to:  {entry['url']} ({entry['name']})", file=out)


def _normalize(text: str, profiles: Profiles, out: TextIO, as_json: bool) -> tuple[bool, Any]:
    try:
        checked = profiles.check(text)
    except URNSyntaxError as exc:
        if not as_json:
            print(f"{text}: not a URN: {exc}", file=sys.stderr)
        return False, {"urn": text, "valid": False, "error": _syntax_error(exc)}
    if not as_json:
        print(checked.normal_form, file=out)
    return True, {"urn": text, "valid": True, "normal_form": checked.normal_form,
                  "rfc8141_normal_form": checked.urn.normal_form()}


def _resolve(text: str, profiles: Profiles, out: TextIO, as_json: bool) -> tuple[bool, Any]:
    try:
        found = profiles.resolve(text)
    except URNSyntaxError as exc:
        if not as_json:
            print(f"{text}: not a URN: {exc}", file=sys.stderr)
        return False, {"urn": text, "valid": False, "error": _syntax_error(exc)}
    if not as_json:
        if not found:
            print(f"{text}: its namespace declares no resolver for it", file=sys.stderr)
        for _, url in found:
            print(url, file=out)
    return bool(found), {"urn": text, "valid": True,
                         "resolves_to": [{"name": name, "url": url} for name, url in found]}


def _each(fn: Callable[[str, Profiles, TextIO, bool], tuple[bool, Any]], texts: list[str],
          profiles: Profiles, out: TextIO, as_json: bool) -> int:
    results = [fn(text, profiles, out, as_json) for text in texts]
    if as_json:
        json.dump([result for _, result in results], out, indent=1)
        print(file=out)
    return OK if all(ok for ok, _ in results) else NO


def _equivalent(a: str, b: str, profiles: Profiles, out: TextIO, as_json: bool) -> int:
    parsed = []
    for which, text in (("a", a), ("b", b)):
        try:
            parsed.append(parse(text))
        except URNSyntaxError as exc:
            if as_json:
                json.dump({"a": a, "b": b, "equivalent": False, "which": which,
                           "error": _syntax_error(exc)}, out, indent=1)
                print(file=out)
            else:
                print(f"not equivalent: {text} is not a URN: {exc}", file=out)
            return NO
    ua, ub = parsed
    profile = profiles.get(ua.nid) if ua.nid.lower() == ub.nid.lower() else None
    answer = profiles.equivalent(a, b)
    forms = [profile.normal_form(u) if profile else u.normal_form() for u in (ua, ub)]
    steps = [{"step": name, "description": STEPS[name][0], "cite": cite}
             for name, cite in (profile.steps if profile else ())]
    if as_json:
        json.dump({"a": a, "b": b, "equivalent": answer,
                   "rfc8141_equivalent": ua.normal_form() == ub.normal_form(),
                   "namespace_normal_forms": forms,
                   "rfc8141_normal_forms": [ua.normal_form(), ub.normal_form()],
                   "has_profile": profile is not None, "steps": steps}, out, indent=1)
        print(file=out)
    else:
        print("equivalent" if answer else "not equivalent", file=out)
        print(f"  {forms[0]}\n  {forms[1]}", file=out)
        for step in steps:
            print(f"  step {step['step']}: {step['description']} ({step['cite']})", file=out)
    return OK if answer else NO


def _nid(nids: list[str], out: TextIO, as_json: bool) -> int:
    results = []
    for nid in nids:
        kind = "informal" if is_informal(nid) else "formal"
        problems = check_informal_nid(nid) if kind == "informal" else check_formal_nid(nid)
        results.append({"nid": nid, "kind": kind, "acceptable": not problems,
                        "problems": [{"code": p.code, "message": str(p)} for p in problems]})
        if not as_json:
            print(f"{nid}\n  kind: {kind}", file=out)
            if kind == "informal":
                print("  note: informal NIDs are assigned by the registry, not requested",
                      file=out)
            for problem in problems:
                print(f"  {problem.code}: {problem}", file=out)
            if not problems:
                print("  acceptable", file=out)
    if as_json:
        json.dump(results, out, indent=1)
        print(file=out)
    return OK if all(r["acceptable"] for r in results) else NO


def _profiles(nids: list[str], profiles: Profiles, out: TextIO, as_json: bool) -> int:
    if nids:
        missing = [nid for nid in nids if nid.lower() not in profiles.data]
        shown = {nid.lower(): profiles.data[nid.lower()] for nid in nids
                 if nid.lower() in profiles.data}
        if as_json or shown:
            json.dump(shown if len(nids) > 1 or as_json else next(iter(shown.values())), out,
                      indent=1, ensure_ascii=False)
            print(file=out)
        for nid in missing:
            print(f"{nid}: no profile", file=sys.stderr)
        return NO if missing else OK
    usable = sorted(profiles)
    left_out = dict(sorted(profiles.problems.items()))
    summary = {"source": profiles.source, "file": str(profiles.path),
               "fetched_at": profiles.fetched_at or None, "count": len(usable),
               "nids": usable, "left_out": left_out}
    if as_json:
        json.dump(summary, out, indent=1)
        print(file=out)
    else:
        print(f"{len(usable)} profiles, {profiles.source}"
              + (f", fetched {profiles.fetched_at}" if profiles.fetched_at else ""), file=out)
        print(f"  file: {profiles.path}", file=out)
        print("  " + " ".join(usable), file=out)
        for nid, why in left_out.items():
            print(f"  left out {nid}: {why}", file=out)
    return OK


def _refresh(url: str | None, directory: Path | None, out: TextIO, as_json: bool) -> int:
    try:
        done = refresh(url, directory=directory)
    except (RefreshError, ProfileError) as exc:
        if as_json:
            json.dump({"refreshed": False, "error": str(exc)}, out, indent=1)
            print(file=out)
        else:
            print(f"urn8141 refresh: {exc}\n  (the profiles in use are unchanged)",
                  file=sys.stderr)
        return NO
    if as_json:
        json.dump({"refreshed": True, "file": str(done.path), "source": done.source,
                   "count": len(done.kept), "left_out": done.left_out}, out, indent=1)
        print(file=out)
    else:
        print(f"{len(done.kept)} profiles from {done.source}\n  saved in {done.path}", file=out)
        for nid, why in sorted(done.left_out.items()):
            print(f"  left out {nid}: {why}", file=out)
    return OK


def _load(args: argparse.Namespace) -> Profiles:
    if args.no_profiles:
        return Profiles({}, source="none (RFC 8141 alone)")
    if args.profiles is not None:
        return load_profiles(args.profiles)
    if args.shipped:
        from urn8141.store import SHIPPED_PROFILES

        return load_profiles(SHIPPED_PROFILES)
    return load_profiles()


def main(argv: list[str] | None = None, out: TextIO | None = None,
         stdin: TextIO | None = None) -> int:
    out = out or sys.stdout
    args = _arguments().parse_args(argv)
    as_json: bool = args.json
    if args.command == "nid":
        return _nid(args.nids, out, as_json)
    if args.command == "refresh":
        return _refresh(args.url, args.data_dir, out, as_json)
    try:
        profiles = _load(args)
    except ProfileError as exc:
        print(f"urn8141: {exc}", file=sys.stderr)
        return USAGE
    if args.command == "profiles":
        return _profiles(args.nids, profiles, out, as_json)
    if args.command == "equivalent":
        return _equivalent(args.a, args.b, profiles, out, as_json)
    texts = _inputs(args.urns, stdin or sys.stdin)
    handler = {"check": _check, "normalize": _normalize, "resolve": _resolve}[args.command]
    return _each(handler, texts, profiles, out, as_json)
