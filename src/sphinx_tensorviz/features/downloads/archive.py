"""One archive of the files ``run.py`` needs, laid out as it needs them.

``run.py`` imports the lesson's entry file from the path the build recorded (``models/mlp.py``)
and puts the script's own folder on ``sys.path`` for the project modules it imports. Saved one
by one from a list of links, the files land side by side and the script cannot find them; an
archive keeps the folders. The archive is written the same, byte for byte, on every build (fixed
time stamps and modes, no compression whose bytes depend on the zlib version), so its sha256 on
the page is stable and a kept figure's files stay those of a new one.
"""

from __future__ import annotations

import io
import zipfile

#: files a reader needs to run the script; the preview and the artifact are listed, not archived
LEFT_OUT = ("preview.svg", "artifact.json")
_EPOCH = (1980, 1, 1, 0, 0, 0)  # the earliest time a zip entry can hold


def archive_name(content_hash: str) -> str:
    """The archive's file name, which is also the folder it unpacks into (without ``.zip``)."""
    return f"reproduce-{content_hash[:16]}.zip"


def reproduce_zip(folder: str, files: dict[str, bytes]) -> bytes:
    """A zip of ``files`` (name -> content, names relative) under ``folder/``, in name order."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        for name in sorted(files):
            if name in LEFT_OUT:
                continue
            entry = zipfile.ZipInfo(f"{folder}/{name}", date_time=_EPOCH)
            entry.external_attr = 0o644 << 16  # rw-r--r--, whatever the build's umask
            entry.create_system = 3  # Unix, so the mode above is read back
            archive.writestr(entry, files[name])
    return buffer.getvalue()


def instructions(name: str) -> str:
    """The commands that unpack the archive ``name`` and run the script, one a line, as the page shows them."""
    folder = name.removesuffix(".zip")
    return "\n".join([f"python -m zipfile -e {name} .", f"cd {folder}",
                      "python -m pip install -r requirements.txt", "python run.py --check"])
