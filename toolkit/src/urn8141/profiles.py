"""Namespace profiles: what a namespace's registration says about its NSS, in a
form a program can act on (RFC 8141 sections 2, 3.2 and 6.4.2).

A profile is plain JSON, kept with the registration template::

    {
      "syntax": {"abnf": "nss = ...", "cite": "RFC 3187 section 2"},   # or "regex"
      "validators": [{"name": "isbn", "cite": "..."}],                  # VALIDATORS
      "equivalence": [{"step": "remove-hyphens", "cite": "..."}],      # STEPS
      "examples": ["urn:isbn:0-395-36341-1"],
      "counter_examples": ["urn:isbn:0-395-36341-2"],
      "resolvers": [{"url": "https://example.org/{nss}", "name": "...",
                     "nss_prefix": "", "cite": "..."}]
    }

``read_json()`` reads one from text (bounded in size and nesting before the JSON
parser, which recurses, sees it); ``profile_problems()`` says what is wrong with one
(each problem at its field);
``compile_profile()`` turns a sound one into a :class:`Profile` that checks an
NSS (``check_nss``), gives the namespace's normal form (``normal_form``) and the
resolver URLs (``resolve``). Every vocabulary is closed: a validator or a step
that is not in the tables below is refused, never guessed at.
"""

from __future__ import annotations

import json
import re
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from operator import methodcaller
from typing import Any, NamedTuple
from urllib.parse import quote, urlsplit

from urn8141.dfa import MAX_DFA_STATES, Mismatch
from urn8141.grammar import Grammar, GrammarError, compile_syntax, describe_chars
from urn8141.syntax import URN, URNSyntaxError, parse

MAX_EXAMPLES = 20
MAX_RESOLVERS = 10
MAX_STEPS = 10
MAX_VALIDATORS = 5
MAX_CITE = 300
MAX_URL = 500
MAX_PROFILE_CHARS = 200_000  # a profile's JSON text: its syntax is at most 10,000 of them
MAX_JSON_DEPTH = 16  # arrays and objects inside each other (a profile needs 3)
PROFILE_KEYS = ("syntax", "validators", "equivalence", "examples", "counter_examples",
                "resolvers")


class NSSError(NamedTuple):
    """Why an NSS does not fit its namespace's profile. ``offset`` indexes the NSS.
    (A named tuple: built in one C call, where a frozen dataclass sets each field
    through ``object.__setattr__``.)"""

    rule: str
    offset: int
    message: str
    cite: str = ""

    def as_dict(self, *, base: int = 0) -> dict[str, Any]:
        return {"rule": self.rule, "offset": base + self.offset, "message": self.message,
                "cite": self.cite}


_new = tuple.__new__  # a named tuple from its fields in one C call


# --- validators: check digits the registered namespaces use ------------------



def _digits(nss: str) -> str:
    """The last colon-separated part of the NSS without its hyphens."""
    return nss.rpartition(":")[2].replace("-", "")


def _modulus_11(code: str, *, name: str, length: int, digits: str) -> str | None:
    """The weighted modulus-11 check shared by ISBN-10 (ISO 2108) and ISSN (ISO 3297):
    weights length..2 on the digits, a check digit 0-9 or X (10)."""
    if len(code) != length or not code[:-1].isdigit() or code[-1] not in "0123456789Xx":
        return f"an {name} has {digits} digits and a check digit (0-9 or X)"
    total = sum((length - i) * int(c) for i, c in enumerate(code[:-1]))
    check = (11 - total % 11) % 11
    given = 10 if code[-1] in "Xx" else int(code[-1])
    if given != check:
        return (f"the {name} check digit is {code[-1]}, but the digits before it give "
                f"{'X' if check == 10 else check} (modulus 11)")
    return None


def _isbn10(code: str) -> str | None:
    return _modulus_11(code, name="ISBN-10", length=10, digits="nine")


def _isbn13(code: str) -> str | None:
    if len(code) != 13 or not code.isdigit():
        return "an ISBN-13 has thirteen digits"
    if code[:3] not in ("978", "979"):
        return "an ISBN-13 starts with 978 or 979"
    total = sum(int(c) * (3 if i % 2 else 1) for i, c in enumerate(code[:12]))
    check = (10 - total % 10) % 10
    if int(code[12]) != check:
        return (f"the ISBN-13 check digit is {code[12]}, but the digits before it give "
                f"{check} (modulus 10)")
    return None


def _isbn(nss: str) -> str | None:
    code = _digits(nss)
    # ISO 2108: an ISBN-10 has four elements, an ISBN-13 five (the 978/979 prefix
    # first), so a hyphenated one has at most three or four hyphens.
    parts = nss.rpartition(":")[2].count("-") + 1
    if len(code) == 13:
        return _isbn13(code) or (None if parts <= 5 else
                                 f"an ISBN-13 has five elements, not {parts}")
    if len(code) == 10:
        return _isbn10(code) or (None if parts <= 4 else
                                 f"an ISBN-10 has four elements, not {parts}")
    return f"an ISBN has 10 or 13 digits, not {len(code)}"


def _issn(nss: str) -> str | None:
    return _modulus_11(_digits(nss), name="ISSN", length=8, digits="seven")


def _luhn(nss: str) -> str | None:
    code = _digits(nss)
    if not code.isdigit() or len(code) < 2:
        return "the Luhn check needs digits"
    total = 0
    for i, c in enumerate(reversed(code)):
        d = int(c) * (2 if i % 2 else 1)
        total += d - 9 if d > 9 else d
    if total % 10:
        return f"the check digit {code[-1]} fails the Luhn check (ISO/IEC 7812-1)"
    return None


_ALNUM36 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _mod_37_36(code: str) -> str:
    """The ISO 7064 MOD 37,36 check character of ``code`` (digits and letters)."""
    product = 36
    for c in code.upper():
        total = (product + _ALNUM36.index(c)) % 36 or 36
        product = total * 2 % 37
    return _ALNUM36[(37 - product) % 36]


def _eidr(nss: str) -> str | None:
    # RFC 7972 section 2: only the prefix 10.5240 has a check character (SMPTE RP 2079);
    # a suffix under another prefix is opaque.
    prefix, _, suffix = nss.partition(":")
    if prefix != "10.5240":
        return None
    code = suffix.replace("-", "")
    if len(code) != 21 or any(c.upper() not in _ALNUM36[:16] for c in code[:20]) \
            or code[20].upper() not in _ALNUM36:
        return "an EIDR suffix has twenty hexadecimal digits and a check character"
    check = _mod_37_36(code[:20])
    if code[20].upper() != check:
        return (f"the EIDR check character is {code[20]}, but the twenty hexadecimal digits "
                f"before it give {check} (ISO 7064 MOD 37,36)")
    return None


# name -> (what it checks, the function). Each reads the NSS's last colon-separated part
# with hyphens removed, so that "urn:gsma:imei:35-209900-176148-1" checks the IMEI; "eidr"
# reads the suffix after the prefix 10.5240.
VALIDATORS: dict[str, tuple[str, Callable[[str], str | None]]] = {
    "isbn": ("ISBN-10 (modulus 11, X for 10) or ISBN-13 (978/979, modulus 10) check digit",
             _isbn),
    "isbn-10": ("ISBN-10 check digit (modulus 11, X for 10)", lambda n: _isbn10(_digits(n))),
    "isbn-13": ("ISBN-13 check digit (978/979, modulus 10)", lambda n: _isbn13(_digits(n))),
    "issn": ("ISSN check digit (modulus 11, X for 10)", _issn),
    "luhn": ("Luhn check digit (IMEI and other ISO/IEC 7812 numbers)", _luhn),
    "eidr": ("EIDR check character of a 10.5240 suffix (ISO 7064 MOD 37,36 over its twenty "
             "hexadecimal digits)", _eidr),
}


# --- equivalence steps --------------------------------------------------------

_PCT = re.compile(r"%[0-9A-Fa-f]{2}")


def _outside_pct(nss: str, fn: Callable[[str], str]) -> str:
    """Apply ``fn`` to the NSS but not to its percent-encodings (kept upper case)."""
    if "%" not in nss:
        return fn(nss)
    parts = []
    last = 0
    for m in _PCT.finditer(nss):
        parts.append(fn(nss[last:m.start()]))
        parts.append(m.group().upper())
        last = m.end()
    parts.append(fn(nss[last:]))
    return "".join(parts)


_HEX_LOWER = str.maketrans("ABCDEF", "abcdef")


def _upper_match(m: re.Match[str]) -> str:
    return m.group().upper()


def _lower_up_to(separator: str) -> Callable[[str], str]:
    """The step that lower-cases the NSS up to its first ``separator`` (a prefix, a
    first part), outside its percent-encodings."""
    def step(nss: str) -> str:
        head, sep, tail = nss.partition(separator)
        return _outside_pct(head, str.lower) + sep + tail
    return step


_VERS_0 = re.compile(r";vers=0(?=;|$)", re.IGNORECASE)
# RFC 3085: "... RevisionId Update", Update = 0*1("A" / "U"), last in the NSS
_UPDATE_FLAG = re.compile(r"(:[1-9][0-9]*)[AaUu]$")


def _lower(nss: str) -> str:
    return nss.lower() if "%" not in nss else _outside_pct(nss, str.lower)


_HEX_LOWER_BYTES = bytes.maketrans(b"ABCDEF", b"abcdef")


def _translate_hex(text: str) -> str:
    # bytes.translate is one table look-up per byte; str.translate a dict look-up per character
    if text.isascii():
        return text.encode("ascii").translate(_HEX_LOWER_BYTES).decode("ascii")
    return text.translate(_HEX_LOWER)


def _lower_hex(nss: str) -> str:
    return _translate_hex(nss) if "%" not in nss else _outside_pct(nss, _translate_hex)


# name -> (what it does, the function on the NSS; the scheme and NID are already lower case).
# A percent-encoding's hex digits stay upper case (RFC 8141 section 3.1); "-" and "x" are
# never inside one, so their steps apply to the whole NSS.
STEPS: dict[str, tuple[str, Callable[[str], str]]] = {
    "case-insensitive-nss": ("compare the NSS case-insensitively (lower-case it)", _lower),
    "case-insensitive-urn": ("compare the whole URN case-insensitively (lower-case it)",
                             _lower),
    "case-insensitive-prefix": (
        "compare the NSS up to its first hyphen (a prefix such as a country code) "
        "case-insensitively", _lower_up_to("-")),
    "remove-hyphens": ("remove every hyphen from the NSS", methodcaller("replace", "-", "")),
    "uppercase-x": ("upper-case the letter x (a check character) in the NSS",
                    methodcaller("replace", "x", "X")),
    "lowercase-hex": ("lower-case the hexadecimal digits A-F in the NSS", _lower_hex),
    "case-insensitive-first-part": (
        "compare the NSS up to its first colon (a provider, a standard's or a category's "
        "name) case-insensitively", _lower_up_to(":")),
    "ignore-vers-0": ("ignore a \";vers=0\" parameter, the default version",
                      lambda nss: _VERS_0.sub("", nss)),
    "ignore-update-flag": ("ignore a final update flag (A or U) after the revision number that "
                           "ends the NSS (\":\" and digits)",
                           lambda nss: _UPDATE_FLAG.sub(r"\1", nss)),
}

# The steps urn8141/_speedups.c applies itself, by its numbers (its enum): the
# same functions as above, on the ASCII NSS of a URN. A profile with another step is
# checked on the Python path.
TABLE_STEPS: dict[str, int] = {
    "case-insensitive-nss": 1,
    "case-insensitive-urn": 1,
    "case-insensitive-prefix": 2,
    "remove-hyphens": 3,
    "uppercase-x": 4,
    "lowercase-hex": 5,
    "case-insensitive-first-part": 6,
}

# --- resolvers ----------------------------------------------------------------

RESOLVER_VARIABLES = {
    "urn": "the URN, urn:NID:NSS (RFC 8141 normal form, no r-, q- or f-component)",
    "nss": "the NSS",
    "rest": "the NSS after the resolver's nss_prefix",
}
_VARIABLE = re.compile(r"\{([a-z_]+)\}")
_HOST = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
                   r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+(?::[0-9]{1,5})?")
# Inserted values are percent-encoded: "/" and "%" always, so a value can never leave
# the path segment or the query value it is put in, nor change the host.
_SAFE = "!$&'()*+,;=:@-._~"


def _url_problem(template: str) -> str | None:
    if not isinstance(template, str) or not template:
        return "a resolver needs a URL template"
    if len(template) > MAX_URL:
        return f"a resolver URL is at most {MAX_URL} characters"
    if not template.startswith("https://"):
        return "a resolver URL starts with https://"
    if re.search(r"[\s<>\"\\^`|]", template):
        return "a resolver URL cannot contain spaces or <>\"\\^`|"
    authority = template[len("https://"):].split("/", 1)[0].split("?", 1)[0].split("#", 1)[0]
    if "{" in authority or "}" in authority:
        return ("a variable cannot be part of the host: write the host in full and the "
                "variable after it, as in https://resolver.example.org/{nss}")
    if not _HOST.fullmatch(authority):
        return f'"{authority}" is not a host name'
    unknown = [v for v in _VARIABLE.findall(template) if v not in RESOLVER_VARIABLES]
    if unknown:
        return (f"unknown variable {{{unknown[0]}}}; use "
                + ", ".join(f"{{{v}}}" for v in RESOLVER_VARIABLES))
    if _VARIABLE.sub("", template).count("{") or _VARIABLE.sub("", template).count("}"):
        return "braces in a resolver URL surround a variable name"
    if not _VARIABLE.search(template):
        return "a resolver URL inserts the URN: use {urn}, {nss} or {rest}"
    return None


@dataclass(frozen=True, slots=True)
class Resolver:
    url: str
    name: str
    nss_prefix: str
    cite: str

    def applies(self, nss: str) -> bool:
        return nss[:len(self.nss_prefix)].lower() == self.nss_prefix.lower()

    def url_for(self, urn: URN) -> str:
        nss = urn.nss
        values = {"urn": f"urn:{urn.nid.lower()}:{nss}", "nss": nss,
                  "rest": nss[len(self.nss_prefix):]}
        return _VARIABLE.sub(lambda m: quote(values[m.group(1)], safe=_SAFE), self.url)


# --- the profile ----------------------------------------------------------------


@dataclass(frozen=True)
class Profile:
    data: dict[str, Any]
    grammar: Grammar | None
    syntax_kind: str
    syntax_cite: str
    validators: tuple[tuple[str, str], ...]  # (name, cite)
    steps: tuple[tuple[str, str], ...]       # (name, cite)
    resolvers: tuple[Resolver, ...]
    # Derived once, for the checks of every URN: the syntax's verdict alone, the
    # validators' and the steps' functions.
    _fullmatch: Callable[[str], object] | None = field(init=False, repr=False, compare=False)
    _validate: tuple[Callable[[str], str | None], ...] = field(init=False, repr=False,
                                                              compare=False)
    _step_fns: tuple[Callable[[str], str], ...] = field(init=False, repr=False, compare=False)
    # (rules, expected, inside the NSS) -> (rule, message after the character)
    _messages: dict[tuple[tuple[str, ...], frozenset[int], bool], tuple[str, str]] = field(
        init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        setattr_ = object.__setattr__
        setattr_(self, "_fullmatch", self.grammar.fullmatch if self.grammar else None)
        setattr_(self, "_validate", tuple(VALIDATORS[name][1] for name, _ in self.validators))
        setattr_(self, "_step_fns", tuple(STEPS[name][1] for name, _ in self.steps))
        setattr_(self, "_messages", {})

    @cached_property
    def _machine(self) -> tuple[Any, ...] | None:
        """This profile as the tables urn8141/_speedups.c runs (read there, built
        on its first URN): the syntax's ASCII DFA, the steps' numbers, the validators;
        None when a step or the DFA's size is beyond the tables."""
        if any(name not in TABLE_STEPS for name, _ in self.steps):
            return None
        codes = [TABLE_STEPS[name] for name, _ in self.steps]
        table: tuple[Any, ...] = (None, b"", b"", 1)
        if self.grammar is not None:
            found = self.grammar.ascii_table()
            if found is None:
                return None
            table = found
        return (*table, bytes(codes), self._validate, self.judges_validity)

    @property
    def judges_validity(self) -> bool:
        return self.grammar is not None or bool(self.validators)

    def nss_ok(self, nss: str) -> bool:
        """Whether ``nss`` fits this profile: ``not check_nss(nss)``, without saying why."""
        if self._fullmatch is not None and not self._fullmatch(nss):
            return False
        return not self._validate or all(validate(nss) is None for validate in self._validate)

    def check_nss(self, nss: str) -> list[NSSError]:
        """What is wrong with ``nss`` by this profile ([] when it fits). The verdict
        comes first; only an NSS the syntax refuses is walked to say where and why."""
        if self.grammar is not None and (miss := self.grammar.diagnose(nss)) is not None:
            return [self._syntax_error(nss, miss)]
        errors = []
        for name, cite in self.validators:
            problem = VALIDATORS[name][1](nss)
            if problem:
                errors.append(NSSError(name, max(len(nss) - 1, 0), problem, cite))
        return errors

    def _syntax_error(self, nss: str, miss: Mismatch) -> NSSError:
        offset = miss.offset
        inside = offset < len(nss)
        key = (miss.rules, miss.expected, inside)
        known = self._messages.get(key)
        if known is None:
            if len(self._messages) >= 4 * MAX_DFA_STATES:
                self._messages.clear()
            known = self._messages[key] = self._message_parts(*key)
        rule, tail = known
        what = f"character {offset + 1} ({nss[offset]!r})" if inside else \
            "the NSS ends too early:"
        return _new(NSSError, (rule, offset, f"{what} {tail}", self.syntax_cite))

    def _message_parts(self, rules: tuple[str, ...], expected_codes: frozenset[int],
                       inside: bool) -> tuple[str, str]:
        """The rule an error names and what its message says after the character
        (the same for every NSS stuck in the same place)."""
        rule = rules[0] if rules else "nss"
        expected = describe_chars(expected_codes)
        where = " / ".join(f'"{r}"' for r in rules) or '"nss"'
        kind = self.syntax_kind.upper()
        if inside:
            return rule, f"does not fit the rule {where} of the {kind} syntax; expected {expected}"
        return rule, f"the rule {where} of the {kind} syntax expected {expected}"

    def normal_form(self, urn: URN) -> str:
        """RFC 8141 section 3.1 normalisation, then this namespace's own steps (3.2)."""
        nss = urn.nss
        if "%" in nss:
            nss = _PCT.sub(_upper_match, nss)
        for step in self._step_fns:
            nss = step(nss)
        return f"urn:{urn.nid.lower()}:{nss}"

    def equivalent(self, a: URN, b: URN) -> bool:
        """Whether two URNs are equivalent by this namespace's rules (RFC 8141 section
        3.2): equal after RFC 8141's normalisation and then the namespace's steps. The
        steps are lexical, as the registrations state them ("prior to comparing two ISBN
        URNs for equivalence ... remove all hyphens", RFC 3187): they apply whether or not
        the URNs fit the profile's syntax or check digits, so a comparison never depends
        on validation. Starting from RFC 8141's form, they never separate two URNs that
        RFC 8141 calls equivalent."""
        if a.nid.lower() != b.nid.lower():
            return False
        return self.normal_form(a) == self.normal_form(b)

    def resolve(self, urn: URN) -> list[tuple[str, str]]:
        """(name, URL) of each resolver that takes this URN."""
        return [(r.name, r.url_for(urn)) for r in self.resolvers if r.applies(urn.nss)]


class ProfileError(ValueError):
    def __init__(self, problems: list[tuple[str, str]]) -> None:
        super().__init__("; ".join(f"{field}: {message}" for field, message in problems))
        self.problems = problems


def _cite(entry: dict[str, Any], *, required: bool) -> str | None:
    cite = entry.get("cite", "")
    if not isinstance(cite, str) or len(cite) > MAX_CITE:
        return f"a citation is text of at most {MAX_CITE} characters"
    if required and not cite.strip():
        return "say where the registration says so (e.g. \"RFC 3187 section 2\")"
    return None


def _entries(data: dict[str, Any], key: str, limit: int,
             problems: list[tuple[str, str]]) -> list[dict[str, Any]]:
    value = data.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        problems.append((key, f"{key} is a list of objects"))
        return []
    if len(value) > limit:
        problems.append((key, f"at most {limit} {key}"))
        return []
    return value


def _build(data: object, nid: str | None) -> tuple[Profile | None, list[tuple[str, str]]]:
    """The profile ``data`` describes, or None, and every problem found, by key."""
    problems: list[tuple[str, str]] = []
    if not isinstance(data, dict):
        return None, [("profile", "a profile is a JSON object")]
    unknown = sorted(set(data) - set(PROFILE_KEYS))
    if unknown:
        problems.append(("profile", f"unknown key {unknown[0]!r}; a profile has "
                                    + ", ".join(PROFILE_KEYS)))
    grammar, kind, syntax_cite = _read_syntax(data.get("syntax"), problems)
    profile = Profile(data=data, grammar=grammar, syntax_kind=kind, syntax_cite=syntax_cite,
                      validators=_read_validators(data, problems),
                      steps=_read_steps(data, problems),
                      resolvers=_read_resolvers(data, problems))
    _read_examples(profile, data, nid, problems)
    return (None if problems else profile), problems


def _read_syntax(syntax: object,
                 problems: list[tuple[str, str]]) -> tuple[Grammar | None, str, str]:
    """The compiled grammar of ``syntax``, its kind ("abnf" or "regex") and its cite."""
    if syntax is None:
        return None, "", ""
    kinds = [k for k in ("abnf", "regex") if isinstance(syntax, dict) and k in syntax]
    if not isinstance(syntax, dict) or len(kinds) != 1 or not isinstance(syntax[kinds[0]], str):
        problems.append(("syntax", 'the syntax is {"abnf": "..."} or {"regex": "..."}, '
                                   'with a "cite"'))
        return None, "", ""
    kind = kinds[0]
    if (problem := _cite(syntax, required=True)):
        problems.append(("syntax", problem))
    try:
        grammar = compile_syntax(kind, syntax[kind])
    except GrammarError as exc:
        at = f" (at character {exc.offset + 1} of the {kind.upper()})" if exc.offset else ""
        problems.append(("syntax", f"{exc}{at}"))
        grammar = None
    return grammar, kind, str(syntax.get("cite", ""))


def _read_validators(data: dict[str, Any],
                     problems: list[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    validators = []
    for entry in _entries(data, "validators", MAX_VALIDATORS, problems):
        name = entry.get("name")
        if name not in VALIDATORS:
            problems.append(("validators", f"unknown validator {name!r}; the validators are "
                                           + ", ".join(VALIDATORS)))
        elif (problem := _cite(entry, required=False)):
            problems.append(("validators", problem))
        else:
            validators.append((str(name), str(entry.get("cite", ""))))
    return tuple(validators)


def _read_steps(data: dict[str, Any],
                problems: list[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    steps = []
    for entry in _entries(data, "equivalence", MAX_STEPS, problems):
        name = entry.get("step")
        if name not in STEPS:
            problems.append(("equivalence", f"unknown step {name!r}; the steps are "
                                            + ", ".join(STEPS)))
        elif (problem := _cite(entry, required=True)):
            problems.append(("equivalence", f"{name}: {problem}"))
        else:
            steps.append((str(name), str(entry.get("cite", ""))))
    return tuple(steps)


def _read_resolvers(data: dict[str, Any],
                    problems: list[tuple[str, str]]) -> tuple[Resolver, ...]:
    resolvers = []
    for entry in _entries(data, "resolvers", MAX_RESOLVERS, problems):
        url = entry.get("url", "")
        prefix = entry.get("nss_prefix", "")
        name = entry.get("name", "")
        if (problem := _url_problem(url)):
            problems.append(("resolvers", problem))
        elif not isinstance(prefix, str) or len(prefix) > 100 or not isinstance(name, str) \
                or len(name) > 200:
            problems.append(("resolvers", "a resolver's name and nss_prefix are short text"))
        elif (problem := _cite(entry, required=False)):
            problems.append(("resolvers", problem))
        else:
            resolvers.append(Resolver(url, name or (urlsplit(url).hostname or ""), prefix,
                                      str(entry.get("cite", ""))))
    return tuple(resolvers)


def _read_examples(profile: Profile, data: dict[str, Any], nid: str | None,
                   problems: list[tuple[str, str]]) -> None:
    """Each example must fit the profile, each counter-example fail it."""
    for key, must_fit in (("examples", True), ("counter_examples", False)):
        value = data.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            problems.append((key, f"{key} is a list of URNs"))
            continue
        if len(value) > MAX_EXAMPLES:
            problems.append((key, f"at most {MAX_EXAMPLES} {key.replace('_', '-')}"))
            continue
        for text in value:
            problems.extend((key, message) for message in
                            _example_problems(profile, text, nid, must_fit=must_fit))
    if "counter_examples" in data and data["counter_examples"] and not profile.judges_validity:
        problems.append(("counter_examples", "counter-examples need a syntax or a validator "
                                             "to fail"))


def _example_problems(profile: Profile, text: str, nid: str | None, *,
                      must_fit: bool) -> list[str]:
    label = "example" if must_fit else "counter-example"
    try:
        urn = parse(text)
    except URNSyntaxError as exc:
        return [f"the {label} {text!r} is not a URN: {exc}"]
    if nid is not None and urn.nid.lower() != nid.lower():
        return [f"the {label} {text!r} is not in the {nid} namespace"]
    if not profile.judges_validity:
        return []
    errors = profile.check_nss(urn.nss) if (profile.grammar or profile.validators) else []
    if must_fit and errors:
        return [f"the example {text!r} fails its own profile: {errors[0].message}"]
    if not must_fit and not errors:
        return [f"the counter-example {text!r} passes the profile; it should fail"]
    return []


_JSON_TOKEN = re.compile(r'\\.|["\[\]{}]', re.DOTALL)


def json_depth(text: str) -> int:
    """How deep arrays and objects nest in ``text``, found in one pass without
    recursion: Python's JSON parser recurses once per level and exhausts the stack on
    a few hundred (a RecursionError, not a ValueError). Strings are skipped as JSON
    reads them, so on any prefix the parser accepts the two agree."""
    depth = deepest = 0
    in_string = False
    for mark in _JSON_TOKEN.findall(text):
        if mark == '"':
            in_string = not in_string
        elif in_string or mark[0] == "\\":
            continue
        elif mark in "[{":
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth -= 1
    return deepest


def read_json(text: str, *, what: str = "The profile", max_chars: int = MAX_PROFILE_CHARS,
              max_depth: int = MAX_JSON_DEPTH) -> object:
    """``text`` parsed as JSON, or :class:`ProfileError` (on "profile") saying why not:
    longer than ``max_chars``, nested deeper than ``max_depth``, or not JSON."""
    if len(text) > max_chars:
        raise ProfileError([("profile", f"{what} is longer than {max_chars:,} characters.")])
    if json_depth(text) > max_depth:
        raise ProfileError([("profile", f"{what} nests arrays and objects more than "
                                        f"{max_depth} deep.")])
    try:
        return json.loads(text)
    except ValueError as exc:
        raise ProfileError([("profile", f"{what} is not JSON: {exc}")]) from None


def profile_problems(data: object, nid: str | None = None) -> list[tuple[str, str]]:
    """(field, message) for each thing wrong with ``data`` as a profile of ``nid``."""
    return _build(data, nid)[1]


_CACHE: OrderedDict[str, Profile] = OrderedDict()
_CACHE_SIZE = 512


def canonical(data: object) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def compile_profile(data: object, nid: str | None = None) -> Profile:
    """A sound profile, compiled (kept compiled per distinct content); raises
    :class:`ProfileError` naming each problem."""
    key = f"{(nid or '').lower()}\0{canonical(data)}"
    cached = _CACHE.get(key)
    if cached is not None:
        _CACHE.move_to_end(key)
        return cached
    profile, problems = _build(data, nid)
    if profile is None:
        raise ProfileError(problems)
    _CACHE[key] = profile
    if len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return profile
