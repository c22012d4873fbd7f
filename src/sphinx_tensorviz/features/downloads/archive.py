"""One archive of the files ``run.py`` needs, laid out as it needs them.

``run.py`` imports the lesson's entry file from the path the build recorded (``models/mlp.py``)
and puts the script's own folder on ``sys.path`` for the project modules it imports. Saved one
by one from a list of links, the files land side by side and the script cannot find them; an
archive keeps the folders. The archive is written the same, byte for byte, on every build
(:func:`~...render.outputs.stable_zip`), so its sha256 on the page is stable and a kept figure's
files stay those of a new one.
"""

from __future__ import annotations

from ...render.outputs import stable_zip

#: files a reader needs to run the script; the preview and the artifact are listed, not archived
LEFT_OUT = ("preview.svg", "artifact.json")


def archive_name(content_hash: str) -> str:
    """The archive's file name, which is also the folder it unpacks into (without ``.zip``)."""
    return f"reproduce-{content_hash[:16]}.zip"


def reproduce_zip(folder: str, files: dict[str, bytes]) -> bytes:
    """A zip of ``files`` (name -> content, names relative) under ``folder/``, in name order."""
    return stable_zip(folder, {name: content for name, content in files.items() if name not in LEFT_OUT})


def instructions(name: str) -> str:
    """The commands that unpack the archive ``name`` and run the script, one a line, as the page shows them."""
    folder = name.removesuffix(".zip")
    return "\n".join([f"python -m zipfile -e {name} .", f"cd {folder}",
                      "python -m pip install -r requirements.txt", "python run.py --check"])
