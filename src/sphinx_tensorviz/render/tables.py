"""Data tables as plain docutils nodes, so every builder (HTML, LaTeX, text, man) can show them."""

from __future__ import annotations

from docutils import nodes

MAX_CELLS = 1024  # beyond this a table stops helping; the figure's description summarises instead


def data_table(caption: str, corner: str, rows: list[str], columns: list[str], cells: list[list[str]]) -> nodes.table:
    """A table with a header row and a stub column of row labels."""
    # the numbers stay out of the search index: a reader searches a lesson for words, not values
    table = nodes.table(classes=["tv-data-table", "no-search"])
    table += nodes.title("", caption)
    group = nodes.tgroup(cols=len(columns) + 1)
    table += group
    # text and LaTeX builders size columns by colwidth: give each its longest cell
    for index, header in enumerate([corner, *columns]):
        longest = max([len(header), *(len((label if index == 0 else row[index - 1])) for label, row in zip(rows, cells))])
        group += nodes.colspec(colwidth=max(longest, 1))
    group[0]["stub"] = 1
    head = nodes.thead()
    head += _row([corner, *columns])
    group += head
    body = nodes.tbody()
    for label, row in zip(rows, cells):
        body += _row([label, *row])
    group += body
    return table


def _row(texts: list[str]) -> nodes.row:
    row = nodes.row()
    for value in texts:
        entry = nodes.entry()
        entry += nodes.paragraph("", value)
        row += entry
    return row


def captions_before_tables(tree: nodes.Node) -> None:
    """Put each data table's caption in a paragraph before it (for the man builder).

    docutils' man page writer takes a table's title for a heading: the first one becomes the page's
    NAME line, the others ``.SH`` sections. A bold paragraph reads the same and stays in place.
    """
    for table in list(tree.findall(nodes.table)):
        if "tv-data-table" not in table["classes"] or not table.children or not isinstance(table[0], nodes.title):
            continue
        title = table[0]
        table.remove(title)
        table.parent.insert(table.parent.index(table), nodes.paragraph("", "", nodes.strong("", title.astext()),
                                                                       classes=["tv-table-caption"]))
