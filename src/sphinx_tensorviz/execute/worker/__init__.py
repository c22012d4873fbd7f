"""What runs in the worker process, never in the build: the job's entry (:mod:`.job`), the lesson-code
loader, result conversion, claim checks, the cross-sweep check's entry and the warm pool's parent.

Nothing here imports Sphinx or docutils: a worker starts with only the framework it needs. The build
side of execution (deciding what runs, starting and watching workers) is the rest of ``execute/``.
"""
