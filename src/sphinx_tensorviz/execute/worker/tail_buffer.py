"""Printed output of lesson code, bounded: only the end of it is kept."""

from __future__ import annotations

import io


class TailBuffer(io.TextIOBase):
    """A text sink that keeps only the last ``limit`` characters written to it.

    Used for the lesson's ``stdout``, so printing 50 MB costs neither memory in the
    worker nor space in the artifact; :meth:`getvalue` says how much was dropped.
    """

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.limit = max(0, limit)
        self.dropped = 0
        self._parts: list[str] = []
        self._size = 0

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        self._parts.append(text)
        self._size += len(text)
        if self._size > 2 * self.limit + 4096:  # compact now and then, not on every write
            self._compact()
        return len(text)

    def _compact(self) -> None:
        joined = "".join(self._parts)
        keep = joined[max(0, len(joined) - self.limit):]
        self.dropped += len(joined) - len(keep)
        self._parts, self._size = [keep], len(keep)

    def getvalue(self) -> str:
        self._compact()
        kept = self._parts[0] if self._parts else ""
        if not self.dropped:
            return kept
        return (f"[... {self.dropped:,} earlier characters of printed output were truncated "
                f"(tensorviz_max_stdout_kb = {self.limit // 1024}); the last part follows ...]\n" + kept)

    def truncation_note(self) -> str | None:
        if not self.dropped:
            return None
        return (f"the code printed {self.dropped + self._size:,} characters; only the last "
                f"{self.limit // 1024} KB are kept (tensorviz_max_stdout_kb); print less, or raise the limit")
