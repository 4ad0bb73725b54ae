"""Registration templates read from text: RFC 8141 Appendix A, RFC 3406 and RFC
2611 layouts, as plain RFC text, markdown, kramdown or xml2rfc XML.

Pure Python, no Django import: ``parse_templates(data)`` returns one
:class:`ParsedTemplate` per template the text holds (``parse_template``: the
first). Each one's ``fields`` are the app's Appendix A fields
(registry.namespaces.template.TEXT_FIELDS), with NID, version, date,
organisation and contact email, what could not be mapped, and the problems
found (placeholders such as TBD, YYYY-MM-DD or RFCXXXX among them).
"""

from registry.templates_text.formats import MAX_BYTES, TemplateTextError
from registry.templates_text.parse import (
    MAX_TEMPLATES,
    TEXT_FIELDS,
    ParsedTemplate,
    parse_template,
    parse_templates,
    several_templates,
)

__all__ = ["MAX_BYTES", "MAX_TEMPLATES", "TEXT_FIELDS", "ParsedTemplate", "TemplateTextError",
           "parse_template", "parse_templates", "several_templates"]
