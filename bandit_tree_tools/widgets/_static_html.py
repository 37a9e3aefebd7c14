"""Script-free HTML for the panels' static fallback (``_repr_mimebundle_``).

Where widgets do not run (nbconvert HTML without widget state, GitHub's
notebook viewer, a kernel-less viewer), the front end picks ``text/html``
instead of the widget view; these functions render what the panel shows as
plain HTML and inline SVG, without any script, so the page stays readable
offline and in untrusted notebooks.
"""

from __future__ import annotations

import html

import numpy as np

from ..tree import TREE_LEAF, TreeArrays
from ._payload import MARK_PRUNED, MARK_REMOVED, MARK_RESPLIT

PALETTE = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac")
SLOT, LEVEL, BOX_W, BOX_H = 92.0, 64.0, 84.0, 30.0


def escape(value) -> str:
    return html.escape(str(value), quote=True)


def number(value, digits: int = 4) -> str:
    value = float(value)
    if np.isnan(value):
        return "n/a"
    if value.is_integer() and abs(value) < 1e9:  # whole numbers in full (a count, a year, an ID), as bttFormat
        return str(int(value))
    return f"{value:.{digits}g}"


def feature_label(feature_names, index: int) -> str:
    if feature_names is not None and 0 <= index < len(feature_names):
        return str(feature_names[index])
    return f"x[{index}]"


def node_label(tree: TreeArrays, node: int, feature_names, class_names, value_kind: str) -> str:
    if tree.children_left[node] != TREE_LEAF:
        name = feature_label(feature_names, int(tree.feature[node]))
        if tree.is_categorical[node]:
            words = tree.category_left[node]
            left = [32 * w + b for w in range(words.shape[0]) for b in range(32) if (int(words[w]) >> b) & 1]
            shown = ", ".join(str(c) for c in left[:8]) + (", …" if len(left) > 8 else "")
            return f"{name} in {{{shown}}}"
        return f"{name} <= {number(tree.threshold[node], 5)}"
    value = tree.value[node]
    if value_kind == "fractions" and value.shape[0] > 1:
        best = int(np.argmax(value))
        return str(class_names[best]) if class_names is not None and best < len(class_names) else f"class {best}"
    return f"value {number(value[0], 3)}"


def _fill(tree: TreeArrays, node: int, value_kind: str, limit: float) -> str:
    value = tree.value[node]
    if value_kind == "fractions" and value.shape[0] > 1:
        best = int(np.argmax(value))
        chance = 1.0 / value.shape[0]
        strength = 0.2 + 0.8 * (value[best] - chance) / (1 - chance)
        return _tint(PALETTE[best % len(PALETTE)], strength)
    if limit <= 0 or not np.isfinite(value[0]):
        return "#eeeeee"
    t = float(np.clip(value[0] / limit, -1, 1))
    return _tint("#3b6fb6", 0.15 + 0.85 * -t) if t < 0 else _tint("#c8453b", 0.15 + 0.85 * t)


def _luminance(rgb) -> float:
    linear = [(c / 255) / 12.92 if c / 255 <= 0.03928 else ((c / 255 + 0.055) / 1.055) ** 2.4 for c in rgb]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def readable_fill(hex_colour: str) -> str:
    """The fill blended towards white until #111 text on it reaches 4.6:1
    (WCAG AA with a margin), as the browser view does."""
    rgb = [int(hex_colour[k : k + 2], 16) for k in (1, 3, 5)]
    for _ in range(12):
        if (_luminance(rgb) + 0.05) / (_luminance((17, 17, 17)) + 0.05) >= 4.6:
            break
        rgb = [round(c + (255 - c) * 0.12) for c in rgb]
    return "#" + "".join(f"{c:02x}" for c in rgb)


def _tint(hex_colour: str, strength: float) -> str:
    strength = float(np.clip(strength, 0, 1))
    rgb = [int(hex_colour[k : k + 2], 16) for k in (1, 3, 5)]
    mixed = [round(255 - (255 - c) * strength) for c in rgb]
    return "#" + "".join(f"{c:02x}" for c in mixed)


def threshold_text(value: float, split_rule: str = "le", max_digits: int = 6) -> str:
    """The shortest decimal that reads as the float32 the library compares
    inputs with (as the browser view writes it: 16.82, not 16.81999969)."""
    value = float(value)
    if not np.isfinite(value):
        return str(value)
    target = np.float32(value)
    if split_rule == "lt" and target < value:
        target = np.nextafter(target, np.float32(np.inf))
    if split_rule != "lt" and target > value:
        target = np.nextafter(target, np.float32(-np.inf))
    for digits in range(1, max_digits + 1):
        shown = float(f"{value:.{digits}g}")
        if shown == value or np.float32(shown) == target:
            return f"{shown:.{digits}g}"
    return f"{value:.{max_digits}g}"


def node_lines(
    tree: TreeArrays, node: int, feature_names, class_names, value_kind: str, split_rule: str = "le", data_count=None
) -> list[str]:
    """What a node's box says, line by line (the browser view's wording)."""
    lines = []
    if tree.children_left[node] != TREE_LEAF:
        label = node_label(tree, node, feature_names, class_names, value_kind)
        name = feature_label(feature_names, int(tree.feature[node]))
        if tree.is_categorical[node]:
            lines += [name, label[len(name) + 1 :]]
        else:
            lines += [name, f"{'<' if split_rule == 'lt' else '≤'} {threshold_text(tree.threshold[node], split_rule)}"]
    else:
        value = tree.value[node]
        if value_kind == "fractions" and value.shape[0] > 1:
            best = int(np.argmax(value))
            lines.append(
                f"{node_label(tree, node, feature_names, class_names, value_kind)} {round(100 * float(value[best]))}%"
            )
        elif value_kind == "margin":
            lines.append(f"margin {'+' if value[0] > 0 else ''}{number(value[0], 4)}")
        else:
            lines.append(f"value {number(value[0], 4)}")
    counts = []
    if tree.n_node_samples[node] >= 0:
        counts.append(f"train {int(tree.n_node_samples[node])}")
    elif np.isfinite(tree.weighted_n_node_samples[node]):
        counts.append(f"cover {number(tree.weighted_n_node_samples[node], 3)}")
    if data_count is not None:
        counts.append(f"X {int(data_count[node])}")
    lines.append(" · ".join(counts) if counts else f"#{node}")
    return lines


CHAR_W, LINE_H, PAD = 6.2, 13.0, 8.0  # font-size 10 sans-serif: a wide average glyph


def tree_svg(
    tree: TreeArrays,
    *,
    feature_names=None,
    class_names=None,
    value_kind: str = "mean",
    marks: np.ndarray | None = None,
    max_depth: int = 3,
    path=None,
    split_rule: str = "le",
    data_count=None,
    histograms: dict | None = None,
    row_values: dict | None = None,
    multiway: bool = False,
) -> str:
    """Depths 0..``max_depth`` of a tree as an inline SVG; boxes are as wide
    as their longest line, so no label is cut or clipped.

    With ``histograms`` (the columns of ``_payload.split_histograms``) each
    split node shows its split feature's histogram above its text, as the
    live view draws it large: bars stacked by class, the threshold dashed,
    and ``row_values[feature]`` (the chosen row's values) in pink on the
    nodes of ``path``. Leaves show their class mix as a bar as long as their
    share of the largest leaf's training rows. With ``multiway``, chains of
    category splits on one feature (TSDT's multiway splits) are drawn as one
    node with a child per category, as the live view draws them."""
    left, right = tree.children_left, tree.children_right
    groups = multiway_groups(tree, data_count) if multiway else {}

    def kids(node: int) -> list:
        if node in groups:
            return groups[node][0]
        return [int(left[node]), int(right[node])]

    def edge_words(node: int) -> list:
        if node in groups:
            return groups[node][1]
        return ["in", "not in"] if tree.is_categorical[node] else ["yes", "no"]

    depth = {0: 0}
    order = []
    stack = [0]
    while stack:  # preorder, down to max_depth
        node = stack.pop()
        order.append(node)
        if left[node] != TREE_LEAF and depth[node] < max_depth:
            for child in reversed(kids(node)):
                depth[child] = depth[node] + 1
                stack.append(child)
    lines = {
        node: node_lines(tree, node, feature_names, class_names, value_kind, split_rule, data_count) for node in order
    }
    for node in order:
        if node in groups:  # the head of a multiway split: its feature and its number of branches
            name = feature_label(feature_names, int(tree.feature[node]))
            lines[node] = [name, f"{len(groups[node][0])} branches", lines[node][-1]]
    box_w = max(84.0, max(len(line) for text in lines.values() for line in text) * CHAR_W + 12)
    n_lines = max(len(text) for text in lines.values())
    text_h = n_lines * LINE_H + 6
    hist_h = HIST_H if histograms else 0.0
    box_h = text_h + hist_h
    slot, level = box_w + 14, box_h + 30
    x = {}
    count = 0
    for node in order:  # leaves and cut nodes take consecutive slots
        if not (left[node] != TREE_LEAF and depth[node] < max_depth):
            x[node] = PAD + count * slot + slot / 2
            count += 1
    for node in reversed(order):
        if node not in x:
            x[node] = (x[kids(node)[0]] + x[kids(node)[-1]]) / 2
    leaf_values = tree.value[left == TREE_LEAF, 0]
    limit = float(np.max(np.abs(leaf_values))) if leaf_values.size else 0.0
    on_path = set(int(node) for node in (path or ()))
    width = count * slot + 2 * PAD
    height = max(depth.values()) * level + box_h + 2 * PAD + 12
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
        f'viewBox="0 0 {width:.0f} {height:.0f}" font-family="sans-serif" font-size="10" '
        'style="background:#ffffff;color:#111111">'
    ]
    top_of = {node: PAD + depth[node] * level for node in order}
    for node in order:
        if left[node] != TREE_LEAF and depth[node] < max_depth:
            for child, word in zip(kids(node), edge_words(node)):
                colour = "#1f5fbf" if node in on_path and child in on_path else "#8a8a8a"
                y1, y2 = top_of[node] + box_h, top_of[child]
                parts.append(
                    f'<line x1="{x[node]:.1f}" y1="{y1:.1f}" x2="{x[child]:.1f}" y2="{y2:.1f}" stroke="{colour}"/>'
                    f'<text x="{(x[node] + x[child]) / 2:.1f}" y="{(y1 + y2) / 2 + 3:.1f}" text-anchor="middle" '
                    f'fill="#333333" stroke="#ffffff" stroke-width="3" paint-order="stroke">{word}</text>'
                )
    for node in order:
        mark = int(marks[node]) if marks is not None else 0
        stroke, dash, opacity = "#666666", "", "1"
        if mark == MARK_PRUNED:
            stroke, dash = "#c62828", ' stroke-dasharray="5,3"'
        elif mark == MARK_RESPLIT:
            stroke = "#e08a00"
        elif mark == MARK_REMOVED:
            opacity = "0.45"
        if node in on_path:
            stroke = "#1f5fbf"
        cut = left[node] != TREE_LEAF and depth[node] >= max_depth
        top = top_of[node]
        text = list(lines[node])
        is_leaf = left[node] == TREE_LEAF
        height_here = box_h - hist_h if is_leaf else box_h
        parts.append(
            f'<g opacity="{opacity}"><rect x="{x[node] - box_w / 2:.1f}" y="{top:.1f}" width="{box_w:.0f}" '
            f'height="{height_here:.0f}" fill="{readable_fill(_fill(tree, node, value_kind, limit))}" '
            f'stroke="{stroke}"{dash}/>'
        )
        text_top = top
        if histograms and not is_leaf:
            row_value = None
            if row_values is not None and node in on_path:
                row_value = row_values.get(int(tree.feature[node]))
            box = (x[node] - box_w / 2, top, box_w, hist_h)
            parts.append(_histogram_svg(tree, node, histograms, *box, row_value, multiway=node in groups))
            text_top = top + hist_h
        elif histograms is not None and is_leaf:
            parts.append(_leaf_mix_svg(tree, node, value_kind, x[node] - box_w / 2, top + height_here, box_w))
        first = text_top + text_h / 2 - (len(text) - 1) * LINE_H / 2 + 3.5
        for k, line in enumerate(text):
            parts.append(
                f'<text x="{x[node]:.1f}" y="{first + k * LINE_H:.1f}" text-anchor="middle" fill="#111111">{escape(line)}</text>'
            )
        if cut:
            parts.append(
                f'<text x="{x[node]:.1f}" y="{top + box_h + 11:.1f}" text-anchor="middle" fill="#444444">▾ more</text>'
            )
        parts.append("</g>")
    parts.append("</svg>")
    return "".join(parts)


def multiway_groups(tree: TreeArrays, data_count=None) -> dict:
    """TSDT's multiway splits, held as chains of binary category splits on
    one feature (each link sends one category left, the last right child
    takes the others): ``{head: (children, edge labels)}``, the chain drawn
    as one node with a child per category and an "other" child unless that
    is a leaf no training row (and no row of X) reached. As the live view's
    ``groupMultiway`` (tree_model.js)."""
    left, right = tree.children_left, tree.children_right
    groups, hidden = {}, set()
    for node in range(tree.n_nodes):
        if left[node] == TREE_LEAF or not tree.is_categorical[node] or node in hidden:
            continue
        members, last = [node], node
        while True:
            following = int(right[last])
            if (
                left[following] == TREE_LEAF
                or not tree.is_categorical[following]
                or tree.feature[following] != tree.feature[node]
            ):
                break
            members.append(following)
            hidden.add(following)
            last = following
        if len(members) < 2:
            continue
        children = [int(left[member]) for member in members]
        words = [f"= {_categories(tree, member, 4)}" for member in members]
        other = int(right[last])
        empty = (
            left[other] == TREE_LEAF
            and tree.n_node_samples[other] == 0
            and (data_count is None or data_count[other] == 0)
        )
        if not empty:
            children.append(other)
            words.append("other")
        groups[node] = (children, words)
    return groups


def _categories(tree: TreeArrays, node: int, limit: int) -> str:
    words = tree.category_left[node]
    found = [32 * w + b for w in range(words.shape[0]) for b in range(32) if (int(words[w]) >> b) & 1]
    return ", ".join(str(c) for c in found[:limit]) + (", …" if len(found) > limit else "")


HIST_H = 40.0  # the height of a split node's histogram above its text


def _histogram_svg(
    tree: TreeArrays,
    node: int,
    histograms: dict,
    left: float,
    top: float,
    width: float,
    height: float,
    row_value,
    *,
    multiway: bool = False,
) -> str:
    """The split feature's histogram of ``node`` in the box area given: the
    live view's picture (tree_node_pictures.js) as SVG; one bar per category
    at a categorical node (:func:`_category_bars_svg`)."""
    from ._payload import decode_column

    k = int(decode_column(histograms, "hist_index", np.int32)[node])
    if k < 0:
        return ""
    if tree.is_categorical[node] and "hist_cat_start" in histograms:
        return _category_bars_svg(tree, node, k, histograms, left, top, width, height, row_value, multiway)
    bins, series = int(histograms["hist_bins"]), int(histograms["hist_series"])
    counts = decode_column(histograms, "hist_counts", np.uint32).reshape(-1, bins, series)[k].astype(np.float64)
    low = float(decode_column(histograms, "hist_low", np.float64)[k])
    high = float(decode_column(histograms, "hist_high", np.float64)[k])
    x0, x1, y0, y1 = left + 5, left + width - 5, top + 4, top + height - 3
    peak = float(counts.sum(axis=1).max()) or 1.0
    bar_w = (x1 - x0) / bins
    parts = [
        f'<rect x="{left + 1:.1f}" y="{top + 1:.1f}" width="{width - 2:.1f}" height="{height - 1:.1f}" fill="#ffffff"/>'
    ]
    for b in range(bins):
        stacked = 0.0
        for c in range(series):
            if counts[b, c] <= 0:
                continue
            bar_h = counts[b, c] / peak * (y1 - y0)
            fill = PALETTE[c % len(PALETTE)] if series > 1 else "#8a8a8a"
            parts.append(
                f'<rect x="{x0 + b * bar_w + 0.5:.2f}" y="{y1 - stacked - bar_h:.2f}" width="{max(1.0, bar_w - 1):.2f}" '
                f'height="{bar_h:.2f}" fill="{fill}"/>'
            )
            stacked += bar_h
    span = high - low or 1.0

    def px(value: float) -> float:
        return x0 + (min(max(value, low), high) - low) / span * (x1 - x0)

    if "hist_target" in histograms:
        means = decode_column(histograms, "hist_target", np.float32).reshape(-1, bins)[k]
        t_low, t_high = float(histograms["hist_target_low"]), float(histograms["hist_target_high"])
        for b, mean in enumerate(means):
            if np.isfinite(mean):
                y = y1 - (float(mean) - t_low) / ((t_high - t_low) or 1.0) * (y1 - y0)
                parts.append(
                    f'<rect x="{x0 + (b + 0.5) * bar_w - 1.5:.2f}" y="{y - 1.5:.2f}" width="3" height="3" fill="#1f5fbf"/>'
                )
    parts.append(f'<line x1="{x0:.1f}" y1="{y1 + 0.5:.1f}" x2="{x1:.1f}" y2="{y1 + 0.5:.1f}" stroke="#555555"/>')
    if not tree.is_categorical[node] and np.isfinite(tree.threshold[node]):
        tx = px(float(tree.threshold[node]))
        parts.append(
            f'<line class="btt-threshold" x1="{tx:.2f}" y1="{y0:.1f}" x2="{tx:.2f}" y2="{y1:.1f}" stroke="#111111" '
            'stroke-dasharray="3,2"/>'
            f'<rect x="{tx - 2:.2f}" y="{y1:.1f}" width="4" height="3" fill="#111111"/>'
        )
    if row_value is not None and np.isfinite(row_value):
        rx = px(float(row_value))
        parts.append(
            f'<line class="btt-row-value" x1="{rx:.2f}" y1="{y0 + 3:.1f}" x2="{rx:.2f}" y2="{y1:.1f}" stroke="#d81b60"/>'
            f'<rect x="{rx - 3:.2f}" y="{y0 - 1:.1f}" width="6" height="4" fill="#d81b60"/>'
        )
    return f'<g class="btt-histogram" data-node="{node}">{"".join(parts)}</g>'


def _category_bars_svg(
    tree: TreeArrays, node: int, k: int, histograms: dict, left, top, width, height, row_value, multiway: bool
) -> str:
    """A categorical node's picture: one bar per category stacked by class,
    the categories sent left marked under the axis (not on a multiway node),
    the chosen row's category in pink (the live view's drawCategoryBars)."""
    from ._payload import decode_column

    series = int(histograms["hist_series"])
    start = decode_column(histograms, "hist_cat_start", np.int32)
    first, stop = int(start[k]), int(start[k + 1])
    categories = decode_column(histograms, "hist_cat_value", np.float64)[first:stop]
    counts = decode_column(histograms, "hist_cat_counts", np.uint32).reshape(-1, series)[first:stop].astype(np.float64)
    x0, x1, y0, y1 = left + 5, left + width - 5, top + 4, top + height - 3
    peak = float(counts.sum(axis=1).max()) if counts.size else 1.0
    slot = (x1 - x0) / max(1, categories.size)
    bar_w = max(1.0, 0.7 * slot)
    means = None
    if "hist_cat_target" in histograms:
        means = decode_column(histograms, "hist_cat_target", np.float32)[first:stop]
        t_low = float(histograms["hist_target_low"])
        t_span = float(histograms["hist_target_high"]) - t_low
    row_category = float(np.trunc(row_value)) if row_value is not None and np.isfinite(row_value) else None
    parts = [
        f'<rect x="{left + 1:.1f}" y="{top + 1:.1f}" width="{width - 2:.1f}" height="{height - 1:.1f}" fill="#ffffff"/>'
    ]
    for b, category in enumerate(categories):
        centre = x0 + (b + 0.5) * slot
        stacked = 0.0
        for c in range(series):
            if counts[b, c] <= 0:
                continue
            bar_h = counts[b, c] / (peak or 1.0) * (y1 - y0)
            fill = PALETTE[c % len(PALETTE)] if series > 1 else "#8a8a8a"
            parts.append(
                f'<rect class="btt-category-bar" x="{centre - bar_w / 2:.2f}" y="{y1 - stacked - bar_h:.2f}" '
                f'width="{bar_w:.2f}" height="{bar_h:.2f}" fill="{fill}"/>'
            )
            stacked += bar_h
        if means is not None and np.isfinite(means[b]):
            y = y1 - (float(means[b]) - t_low) / (t_span or 1.0) * (y1 - y0)
            parts.append(f'<rect x="{centre - 1.5:.2f}" y="{y - 1.5:.2f}" width="3" height="3" fill="#1f5fbf"/>')
        code = int(category)
        words = tree.category_left[node]
        if not multiway and 0 <= code < 32 * words.shape[0] and (int(words[code // 32]) >> (code % 32)) & 1:
            parts.append(f'<path class="btt-sent-left" d="M{centre:.2f},{y1:.1f} l-3,3 l6,0 z" fill="#111111"/>')
        if row_category is not None and category == row_category:
            parts.append(
                f'<path class="btt-row-value" d="M{centre - 3.5:.2f},{y0 - 1:.1f} l7,0 l-3.5,5 z" fill="#d81b60"/>'
            )
    parts.append(f'<line x1="{x0:.1f}" y1="{y1 + 0.5:.1f}" x2="{x1:.1f}" y2="{y1 + 0.5:.1f}" stroke="#555555"/>')
    return f'<g class="btt-histogram btt-categories" data-node="{node}">{"".join(parts)}</g>'


def _leaf_mix_svg(tree: TreeArrays, node: int, value_kind: str, left: float, bottom: float, width: float) -> str:
    """A leaf's class mix under its box, as long as its share of the largest
    leaf's training rows (the live view's bar)."""
    leaves = tree.children_left == TREE_LEAF
    largest = float(np.max(tree.n_node_samples[leaves])) if leaves.any() else 0.0
    share = float(tree.n_node_samples[node]) / largest if largest > 0 and tree.n_node_samples[node] >= 0 else 1.0
    length = max(2.0, width * share)
    y = bottom + 2
    parts = []
    value = tree.value[node]
    if value_kind == "fractions" and value.shape[0] > 1:
        at = left
        for c, part in enumerate(value):
            if part > 0:
                parts.append(
                    f'<rect x="{at:.2f}" y="{y:.1f}" width="{part * length:.2f}" height="5" fill="{PALETTE[c % len(PALETTE)]}"/>'
                )
                at += part * length
    parts.append(f'<rect x="{left:.2f}" y="{y:.1f}" width="{length:.2f}" height="5" fill="none" stroke="#bdbdbd"/>')
    return f'<g class="btt-leaf-mix" data-node="{node}">{"".join(parts)}</g>'


def table(rows, header=None, css_class: str = "") -> str:
    """A plain HTML table from a list of rows (values are escaped)."""
    out = [f'<table class="{escape(css_class)}" style="border-collapse:collapse">']
    if header:
        out.append(
            "<tr>" + "".join(f'<th style="text-align:right;padding:2px 8px">{escape(h)}</th>' for h in header) + "</tr>"
        )
    for row in rows:
        out.append(
            "<tr>" + "".join(f'<td style="text-align:right;padding:2px 8px">{escape(v)}</td>' for v in row) + "</tr>"
        )
    out.append("</table>")
    return "".join(out)


def _tick_texts(values, digits: int = 4) -> list:
    """Labels for tick values with as many significant digits as tell them apart."""
    for wanted in range(digits, 13):
        texts = [number(value, wanted) for value in values]
        if len(set(texts)) == len(texts):
            return texts
    return [repr(float(value)) for value in values]


def polyline_svg(
    series,
    *,
    width: int = 520,
    height: int = 140,
    colours=("#4e79a7", "#c8453b"),
    labels=(),
    x_label: str = "",
    y_label: str = "",
) -> str:
    """Line chart of one or more 1-D series as an inline SVG (no axes library),
    with its axes as the live charts draw them: the y range (low, middle,
    high) and the x range (1 .. the longest series), each axis named."""
    series = [np.asarray(values, dtype=np.float64) for values in series if len(values)]
    if not series:
        return ""
    low = min(float(np.nanmin(values)) for values in series)
    high = max(float(np.nanmax(values)) for values in series)
    span = high - low or 1.0
    length = max(len(values) for values in series)
    left, bottom = 62, 28  # room for the y ticks and title, the x ticks and title
    plot_w, plot_h = width - left - 6, height - 6
    # a picture of its own: white under the caption too, whatever the page's theme
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height + bottom + 16}" font-size="10" '
        'font-family="sans-serif" style="background:#ffffff">'
    ]
    parts.append(f'<rect x="{left}" y="3" width="{plot_w}" height="{plot_h}" fill="#ffffff" stroke="#bbbbbb"/>')

    def y_of(values):
        return 3 + plot_h - 2 - (values - low) / span * (plot_h - 4)

    for value, text in zip((low, (low + high) / 2, high), _tick_texts([low, (low + high) / 2, high])):
        y = float(y_of(np.float64(value)))
        parts.append(f'<line x1="{left - 3}" y1="{y:.1f}" x2="{left}" y2="{y:.1f}" stroke="#555555"/>')
        parts.append(f'<text x="{left - 5}" y="{y + 3:.1f}" text-anchor="end" fill="#333333">{escape(text)}</text>')
    base = 3 + plot_h
    for at, text in ((left, "1"), (left + plot_w, f"{length:,}")):
        parts.append(f'<line x1="{at}" y1="{base}" x2="{at}" y2="{base + 3}" stroke="#555555"/>')
        anchor = "start" if at == left else "end"
        parts.append(f'<text x="{at}" y="{base + 13}" text-anchor="{anchor}" fill="#333333">{escape(text)}</text>')
    if x_label:
        parts.append(
            f'<text x="{left + plot_w / 2:.1f}" y="{base + 24}" text-anchor="middle" fill="#333333">'
            f"{escape(x_label)}</text>"
        )
    if y_label:
        middle = 3 + plot_h / 2
        parts.append(
            f'<text x="10" y="{middle:.1f}" text-anchor="middle" fill="#333333" '
            f'transform="rotate(-90 10 {middle:.1f})">{escape(y_label)}</text>'
        )
    for index, values in enumerate(series):
        xs = (
            np.array([left + plot_w / 2])
            if length <= 1
            else left + 2 + (plot_w - 4) * np.arange(len(values)) / (length - 1)
        )
        ys = y_of(values)
        points = " ".join(f"{a:.1f},{b:.1f}" for a, b in zip(xs, ys) if np.isfinite(b))
        parts.append(
            f'<polyline fill="none" stroke="{colours[index % len(colours)]}" stroke-width="1.5" points="{points}"/>'
        )
    caption = f"min {number(low)} · max {number(high)} · {length} points"
    if labels:
        caption = " / ".join(f"{label}" for label in labels) + " · " + caption
    parts.append(f'<text x="2" y="{height + bottom + 12}" fill="#333333">{escape(caption)}</text></svg>')
    return "".join(parts)


def error_html(message: str) -> str:
    return (
        '<div class="btt-panel-error" style="padding:6px 10px;border-left:4px solid #c62828;'
        f'background:#fdecea;color:#8a1c1c;white-space:pre-wrap">{escape(message)}</div>'
    )


def section(title: str, body: str) -> str:
    return f'<div style="margin:6px 0"><div style="font-weight:600;margin-bottom:2px">{escape(title)}</div>{body}</div>'
