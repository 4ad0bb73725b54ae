"""Reading one RFC 5322 message: who sent it, when, in answer to what, and its text.

Everything here reads text from outside, so every step is bounded and linear:
``limit_problem`` checks the raw bytes first (total size, header section, the length
and number of header fields, how many MIME parts and how deep), in one pass each;
a message past a limit is not parsed further and is kept for staff with the reason.
Header values are read raw (``raw_items``) and decoded by hand, so a malformed or
hostile header (an encoded CR/LF in a display name, nested comments) becomes text
or nothing, never an exception. The standard library's ``email`` package does the
MIME work of a message within the limits. Nothing here touches the database;
``actions.inbound_mail_receive`` decides.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import email
import email.header
import email.utils
import hashlib
import re
from dataclasses import dataclass, field
from email import policy
from email.message import EmailMessage, Message

from registry.review.mailtext import html_to_text, unflow

TICKET = re.compile(r"\[URN #(\d{1,12})\]", re.IGNORECASE)
_MSGID = re.compile(r"<[^<>\s]+>")
_BOUNCE_SENDERS = ("mailer-daemon", "postmaster", "mail-daemon")
_BOUNCE_SUBJECT = re.compile(
    r"undeliver|delivery status notification|returned mail|failure notice|"
    r"mail delivery (failed|system)|delivery failure|non-delivery", re.IGNORECASE)

# The bounds on what is read (the MTA should refuse larger mail before it gets here:
# docs/operations.md). Past any of them the message is kept whole, unparsed, for staff.
MAX_BYTES = 25 * 1024 * 1024  # the whole message
MAX_HEADER_BYTES = 256 * 1024  # the header section
MAX_FIELD_CHARS = 64 * 1024  # one header field, unfolded (a long References included)
MAX_FIELDS = 1000  # header fields
MAX_PARTS = 100  # MIME parts, all levels
MAX_DEPTH = 8  # multipart and message/rfc822 nesting
MAX_MIME_FIELD_CHARS = 4096  # a Content-Type or Content-Disposition field, of any part
MAX_MIME_PARAMS = 64  # its parameters
MAX_DISPLAY_CHARS = 2000  # a From or Subject value decoded for display
MAX_HTML_CHARS = 1024 * 1024  # HTML reduced to text beyond this is cut
_BOUNDARY_PARAM = re.compile(rb"boundary[ \t]*=", re.IGNORECASE)
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]+")


def limit_problem(raw: bytes) -> str:
    """Why ``raw`` is past the bounds this module reads ('' when it is within them).
    Each check is one linear pass over the bytes."""
    if len(raw) > MAX_BYTES:
        return f"The message is larger than {MAX_BYTES} bytes."
    end = _header_end(raw)
    if end is None:
        return f"The header section is longer than {MAX_HEADER_BYTES} bytes."
    fields = 0
    length = 0
    name = b""
    for line in raw[:end].split(b"\n"):
        if line[:1] in (b" ", b"\t"):
            length += len(line)
        else:
            fields += 1
            length = len(line)
            name = line.split(b":", 1)[0][:60]
        if length > MAX_FIELD_CHARS:
            return (f"A header field ({display_text(name.decode('latin-1'))}) is longer "
                    f"than {MAX_FIELD_CHARS} characters.")
    if fields > MAX_FIELDS:
        return f"The message has more than {MAX_FIELDS} header fields."
    # Every MIME part starts at a line beginning with "--", every multipart names a
    # boundary: counting them bounds the parser's work before it starts.
    mime = _mime_field_problem(raw)
    if mime:
        return mime
    if raw.count(b"\n--") > 2 * MAX_PARTS + 10:
        return f"The message has more than {MAX_PARTS} MIME parts."
    if sum(1 for _ in _BOUNDARY_PARAM.finditer(raw)) > MAX_PARTS // 2:
        return f"The message nests more than {MAX_PARTS // 2} multipart containers."
    return ""


_MIME_FIELD = re.compile(rb"^content-(?:type|disposition)[ \t]*:", re.IGNORECASE | re.MULTILINE)


def _mime_field_problem(raw: bytes) -> str:
    """Content-Type and Content-Disposition fields, of every part, are parsed for their
    parameters by the standard library in more than linear time: each is bounded."""
    for match in _MIME_FIELD.finditer(raw):
        end = match.end()
        while True:  # the field goes on over continuation lines
            newline = raw.find(b"\n", end)
            if newline < 0 or raw[newline + 1:newline + 2] not in (b" ", b"\t"):
                end = len(raw) if newline < 0 else newline
                break
            end = newline + 1
            if end - match.start() > MAX_MIME_FIELD_CHARS:
                break
        field = raw[match.start():end]
        if len(field) > MAX_MIME_FIELD_CHARS or field.count(b";") > MAX_MIME_PARAMS:
            return (f"A Content-Type or Content-Disposition field is longer than "
                    f"{MAX_MIME_FIELD_CHARS} characters or has more than {MAX_MIME_PARAMS} "
                    "parameters.")
    return ""


def _header_end(raw: bytes) -> int | None:
    """Where the header section ends (the first empty line), if within the bound."""
    window = raw[:MAX_HEADER_BYTES + 4]
    ends = [i for i in (window.find(b"\n\n"), window.find(b"\n\r\n")) if i >= 0]
    if ends:
        return min(ends) + 1
    return len(raw) if len(raw) <= MAX_HEADER_BYTES else None


def display_text(value: str, limit: int = MAX_DISPLAY_CHARS) -> str:
    """A header value as one line of text: RFC 2047 encoded words decoded, every
    control character (CR and LF included, encoded or not) a space, runs of
    whitespace one space. Never raises."""
    value = value[:limit]
    if "=?" in value:
        # An undecodable encoded word stays as it was written.
        with contextlib.suppress(Exception):
            value = str(email.header.make_header(email.header.decode_header(value)))
    return " ".join(_CONTROL.sub(" ", value).split())[:limit]


@dataclass
class Bounce:
    """What a delivery status report says about one of our messages."""

    original_message_id: str = ""
    failed: bool = False  # some recipient failed for good (Action: failed), not just delayed
    detail: str = ""


@dataclass
class ParsedMail:
    message_id: str
    from_name: str = ""
    from_address: str = ""
    to: list[str] = field(default_factory=list)
    # Every address the message says it was delivered to: To and Cc, and what the
    # MTA adds (Delivered-To, X-Original-To, Envelope-To) or receive_mail was told.
    recipients: list[str] = field(default_factory=list)
    subject: str = ""
    sent_at: dt.datetime | None = None
    in_reply_to: list[str] = field(default_factory=list)
    references: list[str] = field(default_factory=list)
    list_id: str = ""
    text: str = ""
    attachments: list[str] = field(default_factory=list)
    auto_reply: bool = False
    bounce: Bounce | None = None
    authentication: str = ""  # the receiving MTA's DKIM/DMARC verdict, for people
    problem: str = ""  # set when the message could not be read properly
    malformed: bool = False  # past a bound or unreadable: kept, never placed

    @property
    def ticket(self) -> int | None:
        match = TICKET.search(self.subject)
        return int(match.group(1)) if match else None

    @property
    def thread_ids(self) -> list[str]:
        """The messages this one answers, nearest first."""
        seen: list[str] = []
        for message_id in [*self.in_reply_to, *reversed(self.references)]:
            if message_id not in seen:
                seen.append(message_id)
        return seen


_RECIPIENT_HEADERS = ("To", "Cc", "Delivered-To", "X-Original-To", "Envelope-To")


def parse(raw: bytes, *, envelope_recipients: tuple[str, ...] = (),
          authserv_id: str = "") -> ParsedMail:
    """Read ``raw``; never raises (what cannot be read is said in ``problem``, and a
    message past the bounds is ``malformed``, its headers read as far as is safe)."""
    fallback_id = "<sha256-" + hashlib.sha256(raw).hexdigest()[:32] + "@no-message-id>"
    problem = limit_problem(raw)
    if problem:
        parsed = _headers_only(raw, fallback_id, authserv_id)
        parsed.problem, parsed.malformed = problem, True
        return _without_nul(parsed)
    try:
        message = email.message_from_bytes(raw, policy=policy.default)
        assert isinstance(message, EmailMessage)
        parsed = _read_headers(message, fallback_id, authserv_id)
    except Exception as exc:  # the parser is lenient; this is the last resort
        return ParsedMail(message_id=fallback_id, problem=f"Unreadable message: {exc}",
                          malformed=True)
    parsed.recipients = _unique([*parsed.recipients, *(a.strip().lower()
                                                       for a in envelope_recipients)])
    shape = _shape_problem(message)
    if shape:
        parsed.problem, parsed.malformed = shape, True
        return _without_nul(parsed)
    try:
        parsed.auto_reply = _is_auto_reply(message)
        parsed.bounce = _bounce(message, parsed)
        parsed.text = body_text(message)
        parsed.attachments = attachments(message)
    except Exception as exc:  # a broken part must not lose the message
        parsed.problem = f"The body could not be decoded: {exc}"
    return _without_nul(parsed)


def _headers_only(raw: bytes, fallback_id: str, authserv_id: str) -> ParsedMail:
    """What can be read safely of a message past the bounds: the fields of its
    header section that are within the field bound, for staff to recognise it (no
    Content-* field: those are what the standard library parses slowly)."""
    end = _header_end(raw) or MAX_HEADER_BYTES
    kept = b"\n".join(field for field in re.split(rb"\n(?![ \t])", raw[:end])
                      if len(field) <= MAX_FIELD_CHARS
                      and not field[:8].lower().startswith(b"content-"))
    try:
        message = email.message_from_bytes(kept + b"\n\n", policy=policy.default)
        return _read_headers(message, fallback_id, authserv_id)
    except Exception:
        return ParsedMail(message_id=fallback_id)


def _read_headers(message: Message, fallback_id: str, authserv_id: str = "") -> ParsedMail:
    parsed = ParsedMail(message_id=_first_id(_header(message, "Message-ID")) or fallback_id)
    parsed.from_name, parsed.from_address = _address(_header(message, "From"))
    parsed.to = _addresses(message, "To", "Cc")
    parsed.recipients = _addresses(message, *_RECIPIENT_HEADERS)
    parsed.subject = display_text(_header(message, "Subject"))
    parsed.sent_at = _date(message)
    parsed.in_reply_to = _MSGID.findall(_header(message, "In-Reply-To"))
    parsed.references = _MSGID.findall(_header(message, "References"))
    parsed.list_id = _list_id(_header(message, "List-Id"))
    parsed.authentication = authentication_verdict(
        [value for name, value in _raw_items(message) if name == "authentication-results"],
        authserv_id)
    return parsed


_AUTH_RESULT = re.compile(r"\b(dkim|dmarc|spf)[ \t]*=[ \t]*([a-z]{1,20})", re.IGNORECASE)


def authentication_verdict(values: list[str], authserv_id: str = "") -> str:
    """The DKIM, DMARC and SPF results of the receiving MTA's Authentication-Results
    field (RFC 8601), e.g. ``dmarc=pass dkim=pass spf=pass (mx.example.org)``.

    Anyone can write such a field into a message, with any server's name. A verdict
    is read only from the registry's own MTA: ``authserv_id`` (MAIL_AUTHSERV_ID) set,
    and the topmost field (the last one added, by the server that delivered it here)
    naming exactly that server; fields below it came with the message. Without
    ``authserv_id`` nothing is read. Informational: never the basis of attribution."""
    if not authserv_id:
        return ""
    for value in values[:1]:
        value = value[:MAX_DISPLAY_CHARS]
        server = value.split(";", 1)[0].strip().split(" ", 1)[0]
        if server.lower() != authserv_id.lower():
            return ""
        results: dict[str, str] = {}
        for method, result in _AUTH_RESULT.findall(value):
            results.setdefault(method.lower(), result.lower())
        if not results:
            return ""
        verdict = " ".join(f"{m}={results[m]}" for m in ("dmarc", "dkim", "spf") if m in results)
        return f"{verdict} ({display_text(server, 200)})" if server else verdict
    return ""


def _shape_problem(message: Message) -> str:
    """Too many MIME parts or too deep, counted on the parsed tree."""
    count = 0
    stack: list[tuple[Message, int]] = [(message, 0)]
    while stack:
        part, depth = stack.pop()
        count += 1
        if count > MAX_PARTS:
            return f"The message has more than {MAX_PARTS} MIME parts."
        if depth > MAX_DEPTH:
            return f"The message nests MIME parts more than {MAX_DEPTH} deep."
        payload = part.get_payload()
        if isinstance(payload, list):
            stack.extend((child, depth + 1) for child in payload if isinstance(child, Message))
    return ""


def _unique(values: list[str]) -> list[str]:
    return list(dict.fromkeys(v for v in values if v))


def _without_nul(parsed: ParsedMail) -> ParsedMail:
    """NUL has no place in text (and PostgreSQL refuses it); the raw bytes keep it."""
    for name in ("message_id", "from_name", "from_address", "subject", "list_id", "text",
                 "authentication"):
        setattr(parsed, name, getattr(parsed, name).replace("\x00", ""))
    parsed.in_reply_to = [i.replace("\x00", "") for i in parsed.in_reply_to]
    parsed.references = [i.replace("\x00", "") for i in parsed.references]
    return parsed


def attachments(message: Message) -> list[str]:
    """What is attached, as "name (type)": the page says so; the files stay with
    the raw message, for staff."""
    assert isinstance(message, EmailMessage)
    found = []
    for part in message.iter_attachments():
        name = part.get_filename()
        if not name and (part.get_content_maintype() == "text"
                         or part.get_content_disposition() != "attachment"):
            continue  # a list footer or an inline text part, not a file
        found.append(f"{name or 'unnamed'} ({part.get_content_type()})")
    return found


def _raw_items(message: Message) -> list[tuple[str, str]]:
    """The header fields as written, unfolded, names lower-case: no header object is
    made, so no header can make reading fail."""
    items = []
    for name, value in message.raw_items():
        text = value if isinstance(value, str) else str(value)
        if _ESCAPED.search(text):  # 8-bit bytes the parser kept as lone surrogates
            text = text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
        items.append((name.strip().lower(), re.sub(r"\r?\n(?=[ \t])", "", text)))
    return items


_ESCAPED = re.compile("[\udc80-\udcff]")


def _header(message: Message, name: str) -> str:
    """The first ``name`` field's raw value ('' when absent)."""
    wanted = name.lower()
    return next((value.strip() for key, value in _raw_items(message) if key == wanted), "")


def _first_id(value: str) -> str:
    found = _MSGID.search(value)
    return found.group(0)[:998] if found else ""


_ANGLE_ADDR = re.compile(r"<([^<>]*)>\s*$")


def _address(value: str) -> tuple[str, str]:
    """(display name, address) of a From value; nothing that is not one address.
    The common ``Name <address>`` shape is cut at its angle brackets first, so an
    encoded word in the name (which may hide "@", ":" or CR/LF) stays in the name."""
    value = value[:MAX_DISPLAY_CHARS]
    angle = _ANGLE_ADDR.search(value)
    if angle:
        name = value[:angle.start()].strip()
        if len(name) >= 2 and name[0] == name[-1] == '"':
            name = name[1:-1].replace('\\"', '"').replace("\\\\", "\\")
        return display_text(name)[:200], _clean_address(angle.group(1))
    try:
        name, address = email.utils.parseaddr(value)
    except Exception:  # deeply nested comments and other shapes the parser refuses
        return "", ""
    return display_text(name)[:200], _clean_address(address)


def _clean_address(address: str) -> str:
    address = address.strip().lower()
    if not address or len(address) > 320 or _CONTROL.search(address) or " " in address:
        return ""
    return address


def _addresses(message: Message, *names: str) -> list[str]:
    wanted = {n.lower() for n in names}
    values = [value for key, value in _raw_items(message) if key in wanted]
    try:
        pairs = email.utils.getaddresses(values)
    except Exception:
        return []
    return _unique([_clean_address(addr) for _name, addr in pairs][:500])


def _date(message: Message) -> dt.datetime | None:
    value = _header(message, "Date")
    if not value:
        return None
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return when


def _list_id(value: str) -> str:
    """``List-Id: Uniform Resource Names <urn.ietf.org>`` -> ``urn.ietf.org``."""
    match = re.search(r"<([^<>]+)>", value)
    return display_text(match.group(1) if match else value).lower()[:300]


def _is_auto_reply(message: Message) -> bool:
    """RFC 3834's Auto-Submitted, and the older signs vacation responders leave."""
    auto = _header(message, "Auto-Submitted").lower()
    if auto and not auto.startswith("no"):
        return True
    if _header(message, "Precedence").lower() in ("junk", "auto_reply"):
        return True
    return any(_header(message, name) for name in ("X-Autoreply", "X-Autorespond",
                                                    "X-Autogenerated"))


def _bounce(message: Message, parsed: ParsedMail) -> Bounce | None:
    """A delivery status notification (RFC 3464), or what looks like one."""
    report = (message.get_content_type() == "multipart/report"
              and _param(message, "report-type") == "delivery-status")
    local = parsed.from_address.split("@")[0]
    looks = local in _BOUNCE_SENDERS and bool(_BOUNCE_SUBJECT.search(parsed.subject))
    if not (report or looks):
        return None
    bounce = Bounce()
    details: list[str] = []
    for part in message.walk():
        content_type = part.get_content_type()
        if content_type == "message/delivery-status":
            fields = _status_fields(part)
            actions = [v.lower() for k, v in fields if k == "action"]
            bounce.failed = bounce.failed or "failed" in actions
            details += [f"{k}: {v}" for k, v in fields if k in ("final-recipient", "action",
                                                                   "status", "diagnostic-code")]
        elif content_type in ("message/rfc822", "text/rfc822-headers"):
            original = _embedded_headers(part)
            if original is not None and not bounce.original_message_id:
                bounce.original_message_id = _first_id(_header(original, "Message-ID"))
    if not report:
        bounce.failed = True  # a non-standard bounce: treat as final
        if not bounce.original_message_id:
            found = re.search(r"^Message-ID:\s*(<[^<>\s]+>)", _safe_text(message),
                              re.IGNORECASE | re.MULTILINE)
            bounce.original_message_id = found.group(1) if found else ""
    bounce.detail = "; ".join(details)[:2000]
    return bounce


def _status_fields(part: Message) -> list[tuple[str, str]]:
    """The per-message and per-recipient fields of a message/delivery-status part."""
    payload = part.get_payload()
    blocks = payload if isinstance(payload, list) else []
    if not blocks and isinstance(payload, str):
        blocks = [email.message_from_string(chunk, policy=policy.default)
                  for chunk in re.split(r"\n\s*\n", payload) if chunk.strip()]
    fields: list[tuple[str, str]] = []
    for block in blocks:
        if not isinstance(block, Message):
            continue
        for key, value in _raw_items(block):
            fields.append((key, " ".join(value.split())[:MAX_DISPLAY_CHARS]))
    return fields


def _embedded_headers(part: Message) -> Message | None:
    payload = part.get_payload()
    if isinstance(payload, list) and payload and isinstance(payload[0], Message):
        return payload[0]
    if isinstance(payload, str):
        return email.message_from_string(payload, policy=policy.default)
    return None


def _safe_text(message: Message) -> str:
    try:
        return body_text(message)
    except Exception:
        return ""


def body_text(message: Message) -> str:
    """The text a person wrote: the text/plain alternative if there is one, else
    the HTML reduced to text; format=flowed undone; newlines normalised."""
    assert isinstance(message, EmailMessage)
    part = message.get_body(preferencelist=("plain", "html"))
    if not isinstance(part, EmailMessage):
        return ""
    text = _decode(part)
    if part.get_content_subtype() == "html":
        text = html_to_text(text[:MAX_HTML_CHARS])
    elif _param(part, "format") == "flowed":
        text = unflow(text.replace("\r\n", "\n"), delsp=_param(part, "delsp") == "yes")
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return "\n".join(line.rstrip() for line in text.split("\n")).strip("\n")


def _param(part: Message, name: str) -> str:
    """A Content-Type parameter as lower-case text ('' when absent)."""
    value = part.get_param(name, "")
    return (value if isinstance(value, str) else email.utils.collapse_rfc2231_value(value)
            ).lower()


def _decode(part: EmailMessage) -> str:
    """A text part as str, whatever its charset says (an unknown or wrong charset
    falls back to UTF-8, then Latin-1, rather than losing the text)."""
    try:
        content = part.get_content()
        if isinstance(content, str) and "\ufffd" not in content:
            return content
    except (LookupError, UnicodeError, AssertionError, KeyError):
        pass
    data = part.get_payload(decode=True) or b""
    if not isinstance(data, bytes):
        return str(data)
    # A declared charset that does not fit the bytes (Outlook's "us-ascii" over
    # Windows-1252) is tried after UTF-8.
    for charset in ("utf-8", part.get_content_charset() or "", "cp1252"):
        if not charset:
            continue
        try:
            return data.decode(charset)
        except (LookupError, UnicodeError):
            continue
    return data.decode("latin-1")
