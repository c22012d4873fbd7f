"""The training lesson's build times: cold (it trains, then runs the figures that use the trained model)
and a rebuild after a prose edit (which must run nothing), against a plain Sphinx build of the same page.

Copies ``lessons/`` without its artifacts, keeps only the lesson (``--lesson``, default
``induction-heads``), and builds it with ``python -m sphinx -b html -q`` in a fresh process:

* cold: an empty artifact store and fresh output (the training and every figure execute);
* prose edit: a sentence of the lesson changed, the same folders (nothing executes: the bench fails if
  the store changed);
* plain: the same page with every ``tv-*`` block replaced by a paragraph and without the extension,
  built, then rebuilt after the same kind of prose edit: the baseline the prose-edit rebuild is
  compared with.

Prints the median of ``--reps`` runs of each, the prose-edit/plain ratio with its spread (the lowest and
highest paired ratio), and the training's own wall time from its artifact. A difference smaller than the
spread is noise. Usage: ``python bench/bench_training_lesson.py [--reps 3]``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from projects import DIRECTIVE_BLOCK, LESSONS, build, fresh  # noqa: E402

PLACEHOLDER = "A figure stood here; this paragraph replaces it in the plain baseline.\n"


def lesson_project(dest: Path, lesson: str) -> Path:
    """The lesson alone, with its models, an empty store and execution on."""
    shutil.copytree(LESSONS, dest, ignore=shutil.ignore_patterns("_build", "tensorviz_artifacts", "__pycache__"))
    for page in dest.glob("*.md"):
        if page.stem != lesson:
            page.unlink()
    (dest / "index.md").write_text(f"# Bench\n\n```{{toctree}}\n{lesson}\n```\n", "utf-8")
    with open(dest / "conf.py", "a", encoding="utf-8") as conf:
        conf.write("\ntensorviz_execution_mode = 'auto'\n")
    return dest


def plain_project(source: Path, dest: Path) -> Path:
    shutil.copytree(source, dest)
    for page in dest.glob("*.md"):
        page.write_text(DIRECTIVE_BLOCK.sub(PLACEHOLDER, page.read_text("utf-8")), "utf-8")
    conf = dest / "conf.py"
    conf.write_text(conf.read_text("utf-8").replace('"sphinx_tensorviz",', "").replace("'sphinx_tensorviz',", ""),
                    "utf-8")
    return dest


def store_files(project: Path) -> dict[str, bytes]:
    store = project / "tensorviz_artifacts"
    return {p.relative_to(store).as_posix(): p.read_bytes() for p in sorted(store.rglob("*")) if p.is_file()}


def training_seconds(project: Path) -> list[float]:
    """Wall time of each recorded training run (``execution.seconds`` of ``train`` artifacts)."""
    found = []
    for path in sorted((project / "tensorviz_artifacts").glob("*.json")):
        artifact = json.loads(path.read_text("utf-8"))
        if artifact.get("data", {}).get("kind") == "train":
            found.append(float(artifact.get("execution", {}).get("seconds", 0.0)))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--lesson", default="induction-heads")
    args = parser.parse_args()
    if not (LESSONS / f"{args.lesson}.md").exists():
        raise SystemExit(f"no lesson {args.lesson}.md in {LESSONS}")
    cold, edited, plain, trainings = [], [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for rep in range(args.reps):
            project, out = root / f"tv{rep}", root / f"out{rep}"
            lesson_project(project, args.lesson)
            cold.append(build(project, out))
            trainings += training_seconds(project)
            before = store_files(project)
            page = project / f"{args.lesson}.md"
            page.write_text(page.read_text("utf-8") + "\nA sentence added by the bench.\n", "utf-8")
            edited.append(build(project, out))
            if store_files(project) != before:
                raise SystemExit("the prose edit changed the store: something executed")
            baseline = plain_project(project, root / f"plain{rep}")
            build(baseline, root / f"plain-out{rep}")  # then the same prose edit, rebuilt
            plain_page = baseline / f"{args.lesson}.md"
            plain_page.write_text(plain_page.read_text("utf-8") + "\nAnother sentence.\n", "utf-8")
            plain.append(build(baseline, root / f"plain-out{rep}"))
            fresh(project, out, baseline, root / f"plain-out{rep}")
    ratios = [e / p for e, p in zip(edited, plain)]
    print(f"{args.lesson}: {args.reps} runs each, medians")
    print(f"cold build (trains and executes every figure): {statistics.median(cold):.2f} s "
          f"(runs {min(cold):.2f}..{max(cold):.2f})")
    if trainings:
        print(f"  of which training (the tv-train jobs' wall time): {statistics.median(trainings):.2f} s")
    print(f"rebuild after a prose edit: {statistics.median(edited):.2f} s; plain Sphinx, the same edit "
          f"{statistics.median(plain):.2f} s; ratio {statistics.median(ratios):.2f} "
          f"(paired {min(ratios):.2f}..{max(ratios):.2f}); nothing executed: True")


if __name__ == "__main__":
    main()
