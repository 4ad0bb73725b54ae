"""Reading one RFC 5322 message: who sent it, when, in answer to what, and its text.

The standard library's ``email`` package (``policy.default``) does the MIME work:
multipart, quoted-printable and base64 transfer encodings, RFC 2047 encoded
words, charsets. What is left here is choosing the text to keep, reducing
HTML-only mail to text (``mailtext.html_to_text``), and recognising the
messages that are not somebody writing: bounces and automatic replies.
Nothing here touches the database; ``actions.inbound_mail_receive`` decides.
"""

from __future__ import annotations

import datetime as dt
import email
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
    subject: str = ""
    sent_at: dt.datetime | None = None
    in_reply_to: list[str] = field(default_factory=list)
    references: list[str] = field(default_factory=list)
    list_id: str = ""
    text: str = ""
    attachments: list[str] = field(default_factory=list)
    auto_reply: bool = False
    bounce: Bounce | None = None
    problem: str = ""  # set when the message could not be read properly

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


def parse(raw: bytes) -> ParsedMail:
    """Read ``raw``; never raises (what cannot be read is said in ``problem``)."""
    fallback_id = "<sha256-" + hashlib.sha256(raw).hexdigest()[:32] + "@no-message-id>"
    try:
        message = email.message_from_bytes(raw, policy=policy.default)
    except Exception as exc:  # the parser is lenient; this is the last resort
        return ParsedMail(message_id=fallback_id, problem=f"Unreadable message: {exc}")
    assert isinstance(message, EmailMessage)
    parsed = ParsedMail(message_id=_first_id(_header(message, "Message-ID")) or fallback_id)
    parsed.from_name, parsed.from_address = _address(message)
    parsed.to = [addr.lower() for _name, addr in email.utils.getaddresses(
        [_header(message, "To"), _header(message, "Cc")]) if addr]
    parsed.subject = " ".join(_header(message, "Subject").split())
    parsed.sent_at = _date(message)
    parsed.in_reply_to = _MSGID.findall(_header(message, "In-Reply-To"))
    parsed.references = _MSGID.findall(_header(message, "References"))
    parsed.list_id = _list_id(_header(message, "List-Id"))
    parsed.auto_reply = _is_auto_reply(message)
    parsed.bounce = _bounce(message, parsed)
    try:
        parsed.text = body_text(message)
        parsed.attachments = attachments(message)
    except Exception as exc:  # a broken part must not lose the message
        parsed.problem = f"The body could not be decoded: {exc}"
    return _without_nul(parsed)


def _without_nul(parsed: ParsedMail) -> ParsedMail:
    """NUL has no place in text (and PostgreSQL refuses it); the raw bytes keep it."""
    for name in ("message_id", "from_name", "from_address", "subject", "list_id", "text"):
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


def _header(message: Message, name: str) -> str:
    try:
        value = message.get(name)
    except Exception:  # a malformed header the parser cannot make an object of
        value = message.get_all(name, failobj=[""])[0] if name in message else ""
    return str(value or "").strip()


def _first_id(value: str) -> str:
    found = _MSGID.findall(value)
    return found[0][:998] if found else ""


def _address(message: Message) -> tuple[str, str]:
    name, address = email.utils.parseaddr(_header(message, "From"))
    return name.strip()[:200], address.strip().lower()[:320]


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
    return (match.group(1) if match else value).strip().lower()[:300]


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
        for key, value in block.items():
            fields.append((key.lower(), " ".join(str(value).split())))
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
        text = html_to_text(text)
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
