"""PNG pictures of the panels' SVG drawings, without a browser.

The static pictures (``_static_html.tree_svg``) use a small part of SVG:
``line``, ``rect`` and ``text`` elements, some inside a ``g`` with an
``opacity``. This module draws those with matplotlib's Agg backend, so
``TreeView.save("tree.png")`` needs no SVG rasteriser.
"""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree

_NS = "{http://www.w3.org/2000/svg}"


def _number(element, name: str, default: float = 0.0) -> float:
    value = element.get(name)
    return float(value) if value is not None else default


def svg_to_png(svg: str, path, *, dpi: int = 150) -> None:
    """Draw an SVG of lines, rectangles and text into a PNG file."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.patches import Rectangle

    root = ElementTree.fromstring(svg)
    width, height = _number(root, "width", 400), _number(root, "height", 300)
    font_px = _number(root, "font-size", 10)
    points = 72.0 / 96.0  # CSS px -> typographic points
    figure = Figure(figsize=(width / 96.0, height / 96.0), dpi=dpi)
    FigureCanvasAgg(figure)
    axes = figure.add_axes((0, 0, 1, 1))
    axes.set_xlim(0, width)
    axes.set_ylim(height, 0)
    axes.axis("off")
    figure.patch.set_facecolor("#ffffff")

    def draw(element, opacity: float) -> None:
        tag = element.tag.replace(_NS, "")
        if tag == "g":
            inner = opacity * _number(element, "opacity", 1.0)
            for child in element:
                draw(child, inner)
        elif tag == "line":
            axes.plot(
                [_number(element, "x1"), _number(element, "x2")],
                [_number(element, "y1"), _number(element, "y2")],
                color=element.get("stroke", "#888888"),
                linewidth=1 * points * 1.3,
                alpha=opacity,
                linestyle="--" if element.get("stroke-dasharray") else "-",
            )
        elif tag == "rect":
            dashed = element.get("stroke-dasharray")
            axes.add_patch(
                Rectangle(
                    (_number(element, "x"), _number(element, "y")),
                    _number(element, "width"),
                    _number(element, "height"),
                    facecolor=element.get("fill", "none"),
                    edgecolor=element.get("stroke", "none"),
                    alpha=opacity,
                    linewidth=1.0,
                    linestyle="--" if dashed else "-",
                )
            )
        elif tag == "text":
            anchor = {"middle": "center", "end": "right"}.get(element.get("text-anchor", "start"), "left")
            halo = element.get("stroke")
            text = axes.text(
                _number(element, "x"),
                _number(element, "y"),
                element.text or "",
                ha=anchor,
                va="baseline",
                fontsize=font_px * points,
                color=element.get("fill", "#111111"),
                alpha=opacity,
                family="DejaVu Sans",
            )
            if halo:
                from matplotlib import patheffects

                text.set_path_effects([patheffects.withStroke(linewidth=2.5, foreground=halo)])

    for element in root:
        draw(element, 1.0)
    figure.savefig(str(path), dpi=dpi, facecolor="#ffffff")
