// sphinx-tensorviz: progressive enhancement only; every figure reads fine without this file.
// The guided-tour stepper, the checkpoint selector, deep links and print; traced graphs are
// tensorviz-graph.js, opening modules tensorviz-compose.js (both loaded first).
(function () {
  "use strict";

  var motionQuery = window.matchMedia ? window.matchMedia("(prefers-reduced-motion: reduce)") : null;
  function reducedMotion() { return !!(motionQuery && motionQuery.matches); }

  function openAncestors(node) {
    for (var d = node && node.closest ? node.closest("details") : null; d; d = d.parentElement && d.parentElement.closest("details")) {
      if (!d.open) { d.open = true; }
    }
  }

  var tv = window.tensorviz;
  var all = tv.all;
  var el = tv.el;
  var say = tv.say;
  var graphs = tv.graphs;
  var graphFor = tv.graphFor;

  // ------------------------------------------------------------------------------------------------
  // Guided tours

  var steppers = [];

  function Stepper(section) {
    var self = this;
    this.section = section;
    this.list = section.querySelector("ol.tv-step-list") || section.querySelector("ol");
    this.steps = this.list ? all(this.list, "li.tv-step") : [];
    if (!this.steps.length) { return; }
    this.index = -1;
    this.timer = null;
    section.classList.add("tv-steps-enhanced");

    var bar = el("div", { "class": "tv-step-controls" });
    this.prev = el("button", { type: "button", "class": "tv-step-prev", "aria-label": say("Previous step") },
      "\u2190 " + say("Previous"));
    this.next = el("button", { type: "button", "class": "tv-step-next", "aria-label": say("Next step") },
      say("Next") + " \u2192");
    this.status = el("p", { "class": "tv-step-status", "aria-live": "polite", "aria-atomic": "true" });
    if (this.list.id) {
      this.prev.setAttribute("aria-controls", this.list.id);
      this.next.setAttribute("aria-controls", this.list.id);
    }
    bar.appendChild(this.prev);
    bar.appendChild(this.status);
    bar.appendChild(this.next);
    this.list.parentNode.insertBefore(bar, this.list.nextSibling);
    bar.appendChild(el("span", { "class": "tv-step-hint" }, say("Left and right arrow keys also move between steps.")));

    this.prev.addEventListener("click", function () { self.go(self.index - 1, true); });
    this.next.addEventListener("click", function () { self.go(self.index + 1, true); });
    section.addEventListener("keydown", function (e) {
      if (e.altKey || e.ctrlKey || e.metaKey || e.shiftKey) { return; }
      var t = e.target;
      if (t && (t.isContentEditable || /^(INPUT|SELECT|TEXTAREA)$/.test(t.tagName))) { return; }
      var to = { ArrowRight: self.index + 1, ArrowLeft: self.index - 1, Home: 0, End: self.steps.length - 1 }[e.key];
      if (to === undefined) { return; }
      e.preventDefault();
      self.go(to, true);
    });
  }

  Stepper.prototype.indexOfHash = function (hash) {
    var id = decodeURIComponent((hash || "").replace(/^#/, ""));
    if (!id) { return -1; }
    for (var i = 0; i < this.steps.length; i++) { if (this.steps[i].id === id) { return i; } }
    return -1;
  };

  Stepper.prototype.opening = function () {
    var want = this.section.getAttribute("data-opening");
    for (var i = 0; i < this.steps.length; i++) {
      if (this.steps[i].getAttribute("data-step") === want) { return i; }
    }
    return 0;
  };

  // user: a person moved (button, key, link) - update the URL and open the figure.
  Stepper.prototype.go = function (i, user, fromHash) {
    if (i < 0 || i >= this.steps.length) { return; }
    var self = this;
    var changed = i !== this.index;
    this.index = i;
    this.steps.forEach(function (li, k) {
      li.hidden = k !== i;
      if (k === i) { li.setAttribute("aria-current", "step"); } else { li.removeAttribute("aria-current"); }
    });
    var li = this.steps[i];
    var title = li.querySelector(".tv-step-title");
    this.status.textContent = "";
    var count = say("Step {number} of {count}", { number: i + 1, count: this.steps.length });
    this.status.appendChild(el("span", { "class": "tv-step-count" }, count));
    if (title) { this.status.appendChild(el("span", { "class": "tv-visually-hidden" }, ": " + title.textContent.trim())); }
    this.prev.setAttribute("aria-disabled", String(i === 0));
    this.next.setAttribute("aria-disabled", String(i === this.steps.length - 1));
    if (user && changed && !fromHash && window.history && history.replaceState) {
      try { history.replaceState(history.state, "", "#" + li.id); } catch (err) { /* file:// in some browsers */ }
    }
    // Text first, then the highlight.
    if (this.timer) { clearTimeout(this.timer); this.timer = null; }
    var apply = function () {
      self.timer = null;
      var graph = graphFor(self.section.getAttribute("data-graph"));
      if (!graph) { return; }
      if (user) {
        var reveal = graph.figure.querySelector("details.tv-reveal");
        if (reveal && !reveal.open) { reveal.open = true; }
      }
      // the node itself once a reader has opened its module, else the box that holds it
      var target = li.getAttribute("data-target");
      graph.stepTarget(target && graph.items[target] ? target : li.getAttribute("data-visible") || target);
    };
    if (reducedMotion() || !user) { apply(); } else { this.timer = setTimeout(apply, 150); }
  };

  // ------------------------------------------------------------------------------------------------
  // Activation checkpoints

  var pickers = [];

  function Picker(box) {
    var self = this;
    this.box = box;
    this.items = all(box, ".tv-checkpoint").filter(function (c) { return c.parentNode.closest(".tv-activations") === box; });
    if (this.items.length < 2) { return; }
    box.classList.add("tv-activations-enhanced");
    var base = box.id || "tv-activations-" + pickers.length;
    var row = el("div", { "class": "tv-checkpoint-picker" });
    var label = el("label", { "for": base + "-select" }, say("Checkpoint: "));
    var select = el("select", { id: base + "-select", "class": "tv-checkpoint-select" });
    this.items.forEach(function (c, k) {
      var l = c.querySelector(".tv-checkpoint-label");
      var option = el("option", { value: c.id || String(k) }, (l ? l.textContent : c.getAttribute("data-checkpoint") || "Checkpoint " + (k + 1)).trim());
      select.appendChild(option);
    });
    row.appendChild(label);
    row.appendChild(select);
    box.insertBefore(row, this.items[0]);
    this.select = select;
    select.addEventListener("change", function () { self.show(select.selectedIndex); });
    this.show(0);
  }

  Picker.prototype.show = function (k) {
    this.items.forEach(function (c, j) { c.hidden = j !== k; });
    if (this.select.selectedIndex !== k) { this.select.selectedIndex = k; }
  };

  Picker.prototype.showHash = function (hash) {
    var id = decodeURIComponent((hash || "").replace(/^#/, ""));
    if (!id) { return false; }
    for (var k = 0; k < this.items.length; k++) {
      if (this.items[k].id === id || this.items[k].contains(document.getElementById(id))) { this.show(k); return true; }
    }
    return false;
  };

  // ------------------------------------------------------------------------------------------------
  // Fragments: a deep link to a step or checkpoint selects it; one into a closed figure opens it.

  function followHash(initial) {
    var hash = location.hash;
    if (!hash || hash.length < 2) { return; }
    var handled = false;
    steppers.forEach(function (s) {
      var i = s.indexOfHash(hash);
      if (i >= 0) { s.go(i, true, true); handled = true; }
    });
    pickers.forEach(function (p) { if (p.showHash(hash)) { handled = true; } });
    var target = null;
    try { target = document.getElementById(decodeURIComponent(hash.slice(1))); } catch (err) { target = null; }
    if (target && target.closest && target.closest("details:not([open])")) {
      openAncestors(target);
      handled = true;
    }
    if (handled && target && target.scrollIntoView) {
      target.scrollIntoView({ block: initial ? "start" : "nearest", behavior: "auto" });
    }
  }

  // ------------------------------------------------------------------------------------------------
  // Print: every revealed figure, every step and every checkpoint, at full size.

  window.addEventListener("beforeprint", function () {
    document.querySelectorAll("details.tv-reveal").forEach(function (d) {
      if (!d.open) { d.dataset.tvPrintOpened = "1"; d.open = true; }
    });
    Object.keys(graphs).forEach(function (k) {
      var g = graphs[k];
      if (g.home && g.zoomed()) { g.printView = g.view; g.reset(); }
    });
  });
  window.addEventListener("afterprint", function () {
    document.querySelectorAll("details.tv-reveal[data-tv-print-opened]").forEach(function (d) {
      d.open = false; delete d.dataset.tvPrintOpened;
    });
    Object.keys(graphs).forEach(function (k) {
      var g = graphs[k];
      if (g.printView) { g.set(g.printView.x, g.printView.y, g.printView.w, g.printView.h); g.printView = null; }
    });
  });

  function init() {
    // a figure's frameworks' tabs (sphinx-design's) become tabs only now: without this script each
    // framework's code shows, in order (tensorviz.css)
    all(document, ".tv-frameworks-tabs").forEach(function (set) { set.classList.add("tv-scripted"); });
    all(document, "figure.tv-figure").forEach(function (figure, k) {
      if (!figure.querySelector("svg.tv-graph")) { return; }
      graphs[figure.id || "tv-figure-" + k] = new tv.Graph(figure);
      var data = figure.querySelector(".tv-graph-data[data-src]");
      if (figure.id && data) { new tv.Composer(figure, data); }
    });
    all(document, "section.tv-steps, div.tv-steps").forEach(function (section) {
      // on slides, reveal.js steps through a tour's fragments (tensorviz-slides.js)
      if (section.classList.contains("tv-steps-fragments")) { return; }
      var s = new Stepper(section);
      if (s.steps.length) { steppers.push(s); }
    });
    all(document, ".tv-activations").forEach(function (box) {
      var p = new Picker(box);
      if (p.select) { pickers.push(p); }
    });
    steppers.forEach(function (s) {
      var i = s.indexOfHash(location.hash);
      s.go(i >= 0 ? i : s.opening(), false);
    });
    followHash(true);
    window.addEventListener("hashchange", function () { followHash(false); });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
