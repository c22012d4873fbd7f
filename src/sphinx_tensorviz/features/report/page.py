"""``_tensorviz/execution-times.html``: the build's execution report (like sphinx-gallery's).

A plain, standalone HTML page (no theme, so it never depends on one): a table of every
executed figure of the project, slowest first, with its wall time, peak memory and a link
to the page that shows it. Written after each HTML build that has such figures (artifacts
recorded before execution facts existed have none); ``tensorviz status --times`` prints
the same table.
"""

from __future__ import annotations

from collections.abc import Callable
from html import escape
from pathlib import Path

from sphinx.application import Sphinx

from ...config import settings
from ...core.state import all_requests
from ...render.outputs import OUTPUT_FOLDER, write_if_changed
from ...store.build import local_store
from ...store.timings import Timing, megabytes, timings

PAGE = f"{OUTPUT_FOLDER}/execution-times.html"


def write_execution_times(app: Sphinx, exception: BaseException | None) -> None:
    """``build-finished``: write the report next to the HTML (only when its content changed)."""
    if exception is not None or app.builder.format != "html" or app.builder.name.startswith("epub"):
        return  # an e-book is packed before this event: the page would only be left in its folder
    requests = all_requests(app.env)
    # the build's trusted-file cache: artifacts validated this build (or unchanged since) are not
    # validated again just to read their execution facts
    rows = timings(requests, local_store(app.env, settings(app))) if requests else []
    target = Path(app.outdir) / PAGE
    if not rows:  # nothing executed has recorded times: no page (nor an outdated one)
        target.unlink(missing_ok=True)
        return
    text = render_page(rows, lambda docname: "../" + app.builder.get_target_uri(docname),
                       str(app.config.project or ""))
    write_if_changed(target, text.encode("utf-8"))


def render_page(rows: list[Timing], link: Callable[[str], str], project: str) -> str:
    """The page's HTML; ``link(docname)`` is the page's URL relative to this one."""
    total = sum(r.seconds for r in rows)
    body = "\n".join(
        f'<tr><td><a href="{escape(link(r.docname))}">{escape(r.docname)}</a>, line {r.lineno}</td>'
        f"<td>{escape(r.directive)}</td><td>{escape(r.backend)}</td>"
        f'<td class="num">{r.seconds:.2f}</td><td class="num">{megabytes(r.peak_memory_mb)}</td>'
        f"<td><code>{r.content_hash[:12]}</code></td></tr>"
        for r in rows)
    title = f"Execution times{' of ' + escape(project) if project else ''}"
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2rem; max-width: 60rem; color: #1a1a1a; }}
table {{ border-collapse: collapse; }}
th, td {{ border: 1px solid #767676; padding: 0.3rem 0.6rem; text-align: left; }}
.num {{ text-align: right; font-variant-numeric: tabular-nums; }}
</style>
</head>
<body>
<main>
<h1>{title}</h1>
<p>{len(rows)} executed figure{'s' if len(rows) != 1 else ''}, {total:.2f} s in all, slowest first.
Times are wall seconds of the last execution of each figure; memory is the peak resident
memory of its worker process in MiB. Cached figures keep the facts of the run that recorded them.</p>
<table>
<caption>Execution time and peak memory of each figure</caption>
<thead><tr><th scope="col">Figure</th><th scope="col">Directive</th><th scope="col">Framework</th>
<th scope="col" class="num">Seconds</th><th scope="col" class="num">Peak memory (MiB)</th>
<th scope="col">Artifact</th></tr></thead>
<tbody>
{body}
</tbody>
</table>
</main>
</body>
</html>
"""
