"""sphinx-tensorviz against MyST-NB (with jupyter-cache) on the same lessons, cold and warm.

Bench-only dependency: ``pip install myst-nb`` (1.4; it brings jupyter-cache, nbclient and
ipykernel, and registers the ``python3`` kernel of this interpreter). It is not a dependency of
sphinx-tensorviz.

Scenarios, each built with ``python -m sphinx -b html -q`` in a fresh process:

* **seed lessons**: ``lessons/transformers-03.md`` and ``lessons/llama-decoder.md`` as they
  are, against the same pages written as MyST-NB notebooks: the prose kept, every ``tv-*``
  block replaced by code cells that compute the same things (the pre-LN block's delta as a
  Matplotlib heatmap with its two checks; TinyLlama built from its config, its module tree
  printed, run once with forward hooks at the five checkpoints, its four checks, the
  activations plotted);
* **20 heatmaps**: one page with 20 ``tv-heatmap`` figures of ``torch.randn(4, 8)`` against a
  notebook with 20 cells that plot the same matrices (one kernel imports torch once).

*Cold* means an empty artifact store (tensorviz) or jupyter cache (MyST-NB) and a fresh output
folder; machine-local compilation caches stay warm from the earlier runs, as for an author who
edits and rebuilds (issue 14's definition). *Warm* means everything cached, fresh output. The
first tensorviz build of the seed lessons runs with an empty JAX compilation cache (a temporary
``XDG_CACHE_HOME``) and is reported as the first build on a fresh machine. Runs alternate between
the tools, so other load on the machine falls on both alike. Prints medians and the ratios
tensorviz/MyST-NB (issue 14 targets: seed lessons cold <= 0.4, first build on a fresh machine
<= 0.7; 20 heatmaps cold <= 0.5).

Usage: ``python bench/bench_vs_mystnb.py [--reps 3]``; a few minutes per rep on two cores.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import tempfile
from pathlib import Path

from projects import DIRECTIVE_BLOCK, build, fresh, heatmaps_project, seed_lessons

FRONT = "---\nfile_format: mystnb\nkernelspec:\n  name: python3\n  display_name: Python 3\n---\n"
NB_CONF = '''\
project = "bench"
extensions = ["myst_nb"]
myst_enable_extensions = ["dollarmath", "colon_fence", "deflist"]
exclude_patterns = ["_build", ".jupyter_cache", "tensorviz_artifacts", "README.md"]
nb_execution_mode = "cache"
nb_execution_cache_path = __import__("os").path.join(__import__("os").path.dirname(__file__), ".jupyter_cache")
nb_execution_timeout = 300
nb_execution_raise_on_error = True
'''

#: the notebook cells that stand for each lesson's executing directives
CELLS = {
    "transformers-03": [
        "import matplotlib.pyplot as plt\nimport numpy as np\n"
        "from models.pre_ln_block import check_not_identity, check_rows_identical, zero_projection_delta",
        "delta = np.asarray(zero_projection_delta(0))\n"
        "print(check_rows_identical(delta), check_not_identity(delta))\n"
        "limit = abs(delta).max()\n"
        "plt.imshow(delta, cmap='RdBu_r', vmin=-limit, vmax=limit)\n"
        "plt.title('The actual single-head pre-LN block'); plt.colorbar(label='output minus input'); plt.show()",
    ],
    "llama-decoder": [
        "import matplotlib.pyplot as plt\nimport torch\n"
        "from models.tiny_llama import CHECKS, TinyLlama",
        "torch.manual_seed(0)\nmodel = TinyLlama(vocab=32, width=16, heads=4, hidden=40).eval()\n"
        "print(model)  # the module tree (torch.fx cannot trace its data-dependent mask)",
        "names = ['embedding', 'block.attention_norm', 'block.attention', 'block.ffn_norm', 'block.ffn']\n"
        "modules = dict(model.named_modules())\nseen = {}\n"
        "hooks = [modules[n].register_forward_hook(lambda m, i, o, n=n: seen.__setitem__(n, o.detach())) "
        "for n in names]\n"
        "with torch.no_grad():\n    logits = model(torch.ones(1, 6, dtype=torch.int64))\n"
        "for hook in hooks:\n    hook.remove()\nprint(logits.shape)",
        "for check in CHECKS:\n    print(check(model))",
        "fig, axes = plt.subplots(len(names), 1, figsize=(6, 4))\n"
        "for axis, name in zip(axes, names):\n"
        "    axis.imshow(seen[name][0, -1:].numpy(), cmap='RdBu_r'); axis.set_ylabel(name, rotation=0, ha='right')\n"
        "plt.show()",
    ],
}


def cell(code: str) -> str:
    return f"```{{code-cell}} ipython3\n{code}\n```\n"


def notebook_lessons(dest: Path) -> Path:
    """The seed lessons as MyST-NB notebooks: same prose, code cells where the figures were."""
    seed_lessons(dest)
    (dest / "conf.py").write_text(NB_CONF, "utf-8")
    for page, cells in CELLS.items():
        path = dest / f"{page}.md"
        placed = False

        def replace(match, cells=cells):  # noqa: ANN001, ANN202 - re.sub callback
            nonlocal placed
            block = match.group(0)
            executes = "{tv-heatmap}" in block or ":model:" in block
            if executes and not placed:
                placed = True
                return "\n".join(cell(c) for c in cells)
            return ""

        text = DIRECTIVE_BLOCK.sub(replace, path.read_text("utf-8"))
        assert placed and "{tv-" not in text, page
        path.write_text(FRONT + text, "utf-8")
    return dest


def notebook_heatmaps(dest: Path, count: int = 20) -> Path:
    dest.mkdir(parents=True)
    (dest / "conf.py").write_text(NB_CONF, "utf-8")
    cells = [cell("import matplotlib.pyplot as plt\nimport torch")]
    cells += [cell(f"torch.manual_seed({n})\nplt.imshow(torch.randn(4, 8).numpy(), cmap='viridis')\n"
                   f"plt.title('Random matrix {n}'); plt.colorbar(); plt.show()") for n in range(count)]
    (dest / "index.md").write_text(FRONT + f"# {count} heatmaps\n\n" + "\n".join(cells), "utf-8")
    return dest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    if importlib.util.find_spec("myst_nb") is None:
        raise SystemExit("myst-nb is not installed: pip install myst-nb (a bench-only dependency)")
    with tempfile.TemporaryDirectory(prefix="tv-bench-mystnb-") as tmp:
        root = Path(tmp)
        env = {"XDG_CACHE_HOME": str(root / "xdg-cache")}  # a fresh machine's empty JAX cache, at first
        scenarios = {
            "seed lessons": (seed_lessons(root / "tv-seed"), notebook_lessons(root / "nb-seed")),
            "20 heatmaps": (heatmaps_project(root / "tv-20"), notebook_heatmaps(root / "nb-20")),
        }
        caches = {"tensorviz": "tensorviz_artifacts", "MyST-NB": ".jupyter_cache"}
        times: dict[tuple[str, str, str], list[float]] = {}
        first_fresh_machine = None
        for rep in range(args.reps):
            for scenario, projects in scenarios.items():
                for tool, project in zip(caches, projects):
                    out = root / "out"
                    fresh(project / caches[tool], out)
                    cold = build(project, out, env)
                    if tool == "tensorviz" and scenario == "seed lessons" and first_fresh_machine is None:
                        first_fresh_machine = cold
                    else:
                        times.setdefault((scenario, tool, "cold"), []).append(cold)
                    fresh(out)
                    times.setdefault((scenario, tool, "warm"), []).append(build(project, out, env))
                    print(f"rep {rep + 1}: {scenario:12s} {tool:9s} cold {cold:6.2f} s, "
                          f"warm {times[(scenario, tool, 'warm')][-1]:6.2f} s", flush=True)
    print(f"\nmedians of {args.reps} runs (tensorviz seed-lessons cold: of {args.reps - 1}, the first run "
          "being the first build on a fresh machine)")
    print(f"{'scenario':14s} {'state':5s} {'tensorviz':>10s} {'MyST-NB':>10s} {'ratio':>7s}")
    for scenario in scenarios:
        for state in ("cold", "warm"):
            tv = times.get((scenario, "tensorviz", state))
            nb = statistics.median(times[(scenario, "MyST-NB", state)])
            if tv:
                ours = statistics.median(tv)
                print(f"{scenario:14s} {state:5s} {ours:9.2f}s {nb:9.2f}s {ours / nb:7.2f}")
    nb_cold = statistics.median(times[("seed lessons", "MyST-NB", "cold")])
    print(f"{'seed lessons':14s} first build on a fresh machine: {first_fresh_machine:.2f}s, "
          f"ratio {first_fresh_machine / nb_cold:.2f}")


if __name__ == "__main__":
    main()
