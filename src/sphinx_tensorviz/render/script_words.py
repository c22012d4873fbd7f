"""The words the page scripts write (``static/tensorviz/*.js``), for the package's catalogue.

A script says each through ``tensorviz.say("English message", {field: value})``; on a translated
page :func:`words_script` sets ``tensorviz.words`` (message -> translation) before the scripts run,
so the buttons, the tour's status and the prediction's result read in the page's language.
``tests/test_i18n.py`` checks this list against the scripts.
"""

from __future__ import annotations

import json

from ..core.i18n import N_, _

SCRIPT_WORDS = (
    N_("Checkpoint: "), N_("Closed module {id}"), N_("Could not open module {id}: {error}"),
    N_("Ctrl + wheel zooms; drag or arrow keys pan"), N_("Fit"), N_("Fit the graph to the column"),
    N_("Full width"), N_("Left and right arrow keys also move between steps."), N_("Next"), N_("Next step"),
    N_("Opened module {id}"), N_("Prediction committed: figure revealed"), N_("Previous"), N_("Previous step"),
    N_("Reset"), N_("Reset zoom"), N_("Step {number} of {count}"), N_("Use the full window width"),
    N_("You predicted {choice}. That matches the recorded result."),
    N_("You predicted {choice}. The recorded result supports {answer} instead."),
    N_("Zoom in"), N_("Zoom out"), N_("Zoom: {graph}"), N_("the graph"),
    N_("{name}: collapse module {id}"), N_("{name}: expand module {id}"),
)


def words_script() -> str:
    """The inline script that gives the page scripts their words in the build's language."""
    words = {message: _(message) for message in SCRIPT_WORDS if _(message) != message}
    # "</" cannot end the script element early, whatever a translation holds
    table = json.dumps(words, ensure_ascii=False, sort_keys=True).replace("</", "<\\/")
    return f"window.tensorviz = window.tensorviz || {{}}; window.tensorviz.words = {table};"
