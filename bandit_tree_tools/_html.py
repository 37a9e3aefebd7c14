"""Jupyter's view of a result (``_repr_html_``): the first line of its repr,
then its tables."""

import html

MAX_ROWS = 50  # rows of a table shown; a note says how many more the table has


def html_view(head: str, tables, *, index: bool = True, float_format=None, rows: str = "rows") -> str:
    """``head`` as preformatted text, then each DataFrame of ``tables`` as an
    HTML table of its first ``MAX_ROWS`` rows, with a line saying how many
    ``rows`` (the word for them) it leaves out."""
    parts = [f"<pre>{html.escape(head)}</pre>"]
    for table in tables:
        parts.append(table.head(MAX_ROWS).to_html(index=index, float_format=float_format))
        if len(table) > MAX_ROWS:
            parts.append(f"<p>... {len(table) - MAX_ROWS} more {rows} (to_frame() has them all)</p>")
    return "".join(parts)
