"""Server-rendered SVG charts for the statistics page, drawn by pygal and made to
live within the site's Content-Security-Policy: no script, no ``<style>`` element and
no ``style`` attribute is left in the SVG (style-src 'self' would refuse them); the
look comes from ``static/registry/charts.css``, which is pygal's own stylesheet for
the site's chart style with its per-chart id replaced by the ``pygal-chart`` class
(``stylesheet()`` makes it; a test keeps the file equal to it).

Each chart is inlined in the page as ``<svg role="img">`` labelled by its text
summary; the page shows its data table next to it (WCAG 1.1.1). No Django here."""

from __future__ import annotations

import html
import math
import re
from collections.abc import Sequence

import pygal
from lxml import etree
from pygal.style import Style

SVG_NS = "http://www.w3.org/2000/svg"


def _svg(tag: str) -> str:
    return f"{{{SVG_NS}}}{tag}"

CHART_CLASS = "pygal-chart"
FONT = 'system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif'

# Colours with at least 3:1 against the white plot (WCAG 1.4.11), text at 4.5:1.
STYLE = Style(
    background="#ffffff",
    plot_background="#ffffff",
    foreground="#212529",
    foreground_strong="#212529",
    foreground_subtle="#5c636a",
    opacity="1",
    opacity_hover=".85",
    transition="0ms",
    colors=("#0b5ed7", "#6f42c1", "#146c43", "#b02a37", "#8a4b00", "#087990"),
    font_family=FONT,
    label_font_family=FONT,
    major_label_font_family=FONT,
    value_font_family=FONT,
    value_label_font_family=FONT,
    title_font_family=FONT,
    legend_font_family=FONT,
    tooltip_font_family=FONT,
    label_font_size=13,
    major_label_font_size=13,
    value_font_size=13,
    legend_font_size=13,
    title_font_size=16,
)

_CONFIG = {
    "style": STYLE,
    "js": [],
    "disable_xml_declaration": True,
    "width": 720,
    "height": 320,
    "show_legend": False,
    "print_values": True,
    "print_values_position": "top",
    "margin": 12,
    "truncate_label": -1,
}

# What no page needs of pygal's output: its interactivity and its inline styles.
_DROPPED_CLASSES = {"tooltip-overlay"}


def bar(labels: Sequence[str], values: Sequence[float], *, horizontal: bool = False,
        x_title: str = "", y_title: str = "") -> str:
    """A bar chart: one bar per label."""
    kind = pygal.HorizontalBar if horizontal else pygal.Bar
    config = {**_CONFIG, "height": max(_CONFIG["height"], 40 * len(labels) + 80)
              if horizontal else _CONFIG["height"]}
    chart = kind(**config, x_title=x_title, y_title=y_title,
                 x_label_rotation=0 if horizontal or len(labels) < 12 else 45,
                 y_labels=whole_number_scale(max(values, default=0)))
    # pygal stacks horizontal bars from the bottom: reversed, they read top-down like
    # the data table beside them.
    order = slice(None, None, -1) if horizontal else slice(None)
    chart.x_labels = list(labels)[order]
    chart.add("", list(values)[order])
    return _safe(chart.render(is_unicode=True))


def whole_number_scale(top: float) -> list[int]:
    """The value axis of a chart of counts: whole numbers from 0, at most ~8 steps."""
    top = max(int(math.ceil(top)), 1)
    step = max(1, math.ceil(top / 8))
    return list(range(0, top + step, step))


class Box(pygal.Box):
    """pygal's box plot of five numbers computed elsewhere (the figures' own quartiles),
    drawn as given: pygal computes quartiles its own way, which is not the table's. (Its
    name is pygal's: the SVG's classes, which the stylesheet is written against, are
    made of it.)"""

    @staticmethod
    def _box_points(values, mode=None):
        low, q1, median, q3, high = values
        return (low, low, q1, median, q3, high, high), []


def box(series: Sequence[tuple[str, Sequence[float]]], *, y_title: str = "") -> str:
    """Box plots, one per labelled series of five numbers (fastest, first quartile,
    median, third quartile, slowest): the whiskers reach the extremes, the box spans
    the middle half, exactly the numbers given."""
    top = max((values[-1] for _, values in series), default=0)
    chart = Box(**{**_CONFIG, "print_values": False}, y_title=y_title,
                      box_mode="extremes", y_labels=whole_number_scale(top))
    chart.x_labels = [label for label, _ in series]
    for label, values in series:
        if len(values) != 5:
            raise ValueError(f"a box is five numbers, not {len(values)}")
        chart.add(label, list(values))
    return _safe(chart.render(is_unicode=True))


def _safe(svg: str) -> str:
    """``svg`` without what the CSP refuses or no page needs, its id traded for the
    class the stylesheet is written against."""
    root = etree.fromstring(svg.encode())
    for element in root.iter(_svg("style"), _svg("script"), etree.Comment):
        element.getparent().remove(element)
    for element in list(root.iter()):
        if not isinstance(element.tag, str):
            continue
        element.attrib.pop("style", None)
        if element.tag == _svg("rect"):
            # pygal leaves out the size of a bar of 0, which SVG requires.
            for size in ("width", "height"):
                if element.get(size) is None:
                    element.set(size, "0")
        if set(element.get("class", "").split()) & _DROPPED_CLASSES:
            element.getparent().remove(element)
        elif element.tag in (_svg("desc"), _svg("title")):
            # Tooltip data for pygal's script, and titles: the page labels the chart.
            element.getparent().remove(element)
    root.attrib.pop("id", None)
    root.set("class", CHART_CLASS)
    root.set("focusable", "false")
    return etree.tostring(root, encoding="unicode")


def stylesheet() -> str:
    """pygal's stylesheet for every kind of chart drawn here, for ``STYLE``, scoped by
    the ``pygal-chart`` class instead of each chart's own id."""
    rules: list[str] = []
    for chart in (pygal.Bar(**_CONFIG), pygal.HorizontalBar(**_CONFIG), pygal.Box(**_CONFIG)):
        chart.add("", [1, 2])
        svg = chart.render(is_unicode=True)
        root = etree.fromstring(svg.encode())
        chart_id = root.get("id")
        for element in root.iter(_svg("style")):
            text = html.unescape(element.text or "").replace(f"#{chart_id}", f".{CHART_CLASS}")
            for rule in re.findall(r"[^{}]+\{[^{}]*\}", text):
                rule = rule.strip()
                if rule and rule not in rules:
                    rules.append(rule)
    return ("/* Made by registry.review.charts.stylesheet() from pygal "
            f"{pygal.__version__}; do not edit. */\n" + "\n".join(rules) + "\n")
