"""``:collapse:`` and ``:hide:``: fold or drop function groups before the graph is stored.

Applied in the worker right after capture, so the artifact, the figure, the outline
and ``:target:`` all see the same graph. A pattern (``fnmatch``: ``*mask*``,
``repeat_kv``) matches a group's function name, its label or its id.

* **collapse**: the group becomes one box (a ``layer`` named ``repeat_kv()``) that
  takes over every edge into and out of it; its ops are no longer stored.
* **hide**: the group and its ops disappear; edges are bridged, so whatever fed the
  group now feeds what the group fed (a mask input drawn straight into attention).

A pattern that matches no group is an error that lists the groups there are.
"""

from __future__ import annotations

from collections.abc import Iterable
from fnmatch import fnmatchcase
from typing import Any

__all__ = ["fold_groups", "is_group"]


def is_group(node: dict[str, Any]) -> bool:
    return node.get("group") == "function"


def fold_groups(graph: dict[str, Any], *, collapse: Iterable[str] = (), hide: Iterable[str] = ()) -> dict[str, Any]:
    """A copy of ``graph`` with the matching groups collapsed or hidden (``graph`` if none asked)."""
    collapse, hide = list(collapse), list(hide)
    if not collapse and not hide:
        return graph
    layers = [dict(node) for node in graph["layers"]]
    groups = [node for node in layers if is_group(node)]
    to_hide = _matching(groups, hide, "hide")
    to_collapse = _matching(groups, collapse, "collapse") - to_hide
    children: dict[str | None, list[str]] = {}
    for node in layers:
        children.setdefault(node.get("parent"), []).append(node["id"])
    inside = {gid: _descendants(gid, children) for gid in to_hide | to_collapse}
    owner: dict[str, str] = {}  # node -> the collapsed group that absorbs it
    hidden: set[str] = set()
    for gid in sorted(to_hide):
        hidden |= inside[gid] | {gid}
    for gid in sorted(to_collapse, key=lambda g: len(inside[g]), reverse=True):  # outer groups win
        if gid in hidden or gid in owner:
            continue
        for node_id in inside[gid]:
            owner.setdefault(node_id, gid)
    edges = _rewire(graph["connections"], hidden, owner)
    kept = []
    for node in layers:
        if node["id"] in hidden or node["id"] in owner:
            continue
        if node["id"] in to_collapse:
            node.update(kind="layer", op="Function", params={"ops": sum(
                1 for n in inside[node["id"]] if not _is_container(layers, n))}, collapsed=True)
            node["outputs"] = _group_outputs(node["id"], edges, layers, owner)
        kept.append(node)
    return {**graph, "layers": kept, "connections": edges}


def _matching(groups: list[dict[str, Any]], patterns: list[str], option: str) -> set[str]:
    found: set[str] = set()
    for pattern in patterns:
        hits = {g["id"] for g in groups
                if any(fnmatchcase(str(g.get(key) or ""), pattern) for key in ("function", "label", "id"))}
        if not hits:
            names = sorted({str(g.get("function")) for g in groups}) or ["(none: this graph has no function groups)"]
            raise ValueError(f":{option}: {pattern!r} matches no function group; the groups are "
                             f"{', '.join(names)}")
        found |= hits
    return found


def _descendants(root: str, children: dict[str | None, list[str]]) -> set[str]:
    found: set[str] = set()
    todo = list(children.get(root, ()))
    while todo:
        node_id = todo.pop()
        if node_id not in found:
            found.add(node_id)
            todo.extend(children.get(node_id, ()))
    return found


def _is_container(layers: list[dict[str, Any]], node_id: str) -> bool:
    return any(n["id"] == node_id and n.get("kind") == "module" for n in layers)


def _rewire(connections: list[dict[str, Any]], hidden: set[str], owner: dict[str, str]) -> list[dict[str, Any]]:
    """Edges with collapsed members replaced by their group and hidden nodes bridged over."""
    feeds: dict[str, list[str]] = {}
    for edge in connections:
        feeds.setdefault(edge["target"], []).append(edge["source"])

    def visible_sources(node_id: str, seen: set[str]) -> list[str]:
        if node_id not in hidden:
            return [owner.get(node_id, node_id)]
        out: list[str] = []
        for source in feeds.get(node_id, ()):
            if source not in seen:
                seen.add(source)
                out.extend(visible_sources(source, seen))
        return out

    result: list[dict[str, Any]] = []
    keys: set[tuple[str, str]] = set()
    for edge in connections:
        if edge["target"] in hidden:
            continue
        target = owner.get(edge["target"], edge["target"])
        for source in visible_sources(edge["source"], set()):
            if source == target or (source, target) in keys:
                continue
            keys.add((source, target))
            result.append({**edge, "id": f"edge-{len(result) + 1}", "source": source, "target": target})
    return result


def _group_outputs(group: str, edges: list[dict[str, Any]], layers: list[dict[str, Any]],
                   owner: dict[str, str]) -> list[dict[str, Any]]:
    """The shapes leaving a collapsed group: the outputs of its last member that feeds outside it."""
    members = [n for n in layers if owner.get(n["id"]) == group and n.get("outputs")]
    return members[-1]["outputs"] if members else []
