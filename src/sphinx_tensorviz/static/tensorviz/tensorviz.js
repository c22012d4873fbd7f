// sphinx-tensorviz: progressive enhancement only; every figure reads fine without this file.
// Graph highlighting, pan and zoom, the guided-tour stepper and the checkpoint selector.
(function () {
  "use strict";

  var motionQuery = window.matchMedia ? window.matchMedia("(prefers-reduced-motion: reduce)") : null;
  function reducedMotion() { return !!(motionQuery && motionQuery.matches); }

  function all(root, selector) { return Array.prototype.slice.call(root.querySelectorAll(selector)); }

  function el(tag, attrs, text) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    if (text) { node.textContent = text; }
    return node;
  }

  // "58-60,62" -> [[58, 60], [62, 62]]
  function parseRanges(spec) {
    var out = [];
    (spec || "").split(/[,\s]+/).forEach(function (part) {
      var m = /^(\d+)(?:\s*[-\u2013]\s*(\d+))?$/.exec(part);
      if (m) { out.push([+m[1], +(m[2] || m[1])]); }
    });
    return out;
  }

  function openAncestors(node) {
    for (var d = node && node.closest ? node.closest("details") : null; d; d = d.parentElement && d.parentElement.closest("details")) {
      if (!d.open) { d.open = true; }
    }
  }

  // ------------------------------------------------------------------------------------------------
  // Traced graphs

  var graphs = {}; // figure id -> graph controller

  function Graph(figure) {
    var svg = figure.querySelector("svg.tv-graph");
    this.figure = figure;
    this.svg = svg;
    this.lines = {};   // line number -> <span class="tv-line">
    this.hovered = null;
    var self = this;
    this.collect();
    all(figure, ".tv-line[data-line]").forEach(function (span) {
      self.lines[span.getAttribute("data-line")] = span;
    });
    this.bindHighlight();
    this.addZoom();
    this.addMinimap();
  }

  // data-node -> <g> (node or cluster), and the edges: again whenever modules open or close.
  Graph.prototype.collect = function () {
    var self = this;
    this.items = {};
    this.edges = all(this.svg, "path.tv-edge");
    all(this.svg, "g.tv-node[data-node], g.tv-cluster[data-node]").forEach(function (g) {
      var id = g.getAttribute("data-node");
      if (!self.items[id] || g.classList.contains("tv-node")) { self.items[id] = g; }
    });
  };

  // The picture changed size (a module opened or closed): new items, new home view, same zoom bar.
  Graph.prototype.refresh = function () {
    this.hovered = null;
    this.stepped = null;
    this.collect();
    var vb = this.svg.viewBox.baseVal;
    this.home = { x: vb.x, y: vb.y, w: vb.width, h: vb.height };
    this.set(vb.x, vb.y, vb.width, vb.height);
    this.drawMinimap();
    this.fitWidth();
  };

  // The <g> a pointer or focus event is about: a node anywhere, a cluster only through its label link.
  Graph.prototype.itemFor = function (target) {
    if (!target || !target.closest) { return null; }
    var node = target.closest("g.tv-node");
    if (node && this.svg.contains(node)) { return node; }
    var link = target.closest("a");
    var cluster = link && link.closest("g.tv-cluster");
    return cluster && this.svg.contains(cluster) ? cluster : null;
  };

  // Add (or remove) one set of classes for a node: itself, incident edges, neighbours, source lines.
  Graph.prototype.mark = function (g, classes, on) {
    if (!g) { return; }
    var id = g.getAttribute("data-node");
    var self = this;
    g.classList.toggle(classes.node, on);
    this.edges.forEach(function (edge) {
      var src = edge.getAttribute("data-source");
      var dst = edge.getAttribute("data-target");
      if (src !== id && dst !== id) { return; }
      edge.classList.toggle(classes.edge, on);
      var other = self.items[src === id ? dst : src];
      if (other && other !== g && classes.neighbour) { other.classList.toggle(classes.neighbour, on); }
    });
    this.linesOf(g).forEach(function (span) { span.classList.toggle(classes.line, on); });
  };

  Graph.prototype.linesOf = function (g) {
    var out = [];
    var self = this;
    parseRanges(g && g.getAttribute("data-source-lines")).forEach(function (r) {
      for (var n = r[0]; n <= r[1] && n - r[0] < 2000; n++) {
        if (self.lines[n]) { out.push(self.lines[n]); }
      }
    });
    return out;
  };

  var HOVER = { node: "tv-hl", edge: "tv-hl-edge", neighbour: "tv-hl-neighbour", line: "tv-hl-line" };
  var STEP = { node: "tv-step-target", edge: "tv-step-edge", neighbour: "tv-step-neighbour", line: "tv-step-line" };

  Graph.prototype.highlight = function (g) {
    if (g === this.hovered) { return; }
    if (this.hovered) { this.mark(this.hovered, HOVER, false); }
    this.hovered = g;
    if (g) { this.mark(g, HOVER, true); }
    this.svg.classList.toggle("tv-hl-active", !!g);
  };

  Graph.prototype.focusedItem = function () {
    return this.svg.contains(document.activeElement) ? this.itemFor(document.activeElement) : null;
  };

  Graph.prototype.bindHighlight = function () {
    var self = this;
    this.svg.addEventListener("mouseover", function (e) {
      self.highlight(self.itemFor(e.target) || self.focusedItem());
    });
    this.svg.addEventListener("mouseleave", function () { self.highlight(self.focusedItem()); });
    this.svg.addEventListener("focusin", function (e) {
      var g = self.itemFor(e.target);
      self.highlight(g);
      if (!g) { return; }
      self.reveal(g);
      // keep the focused node on screen (the sticky zoom bar covers the top few pixels)
      var r = e.target.getBoundingClientRect();
      var h = window.innerHeight || document.documentElement.clientHeight;
      if (r.top < 56 || r.bottom > h) { e.target.scrollIntoView({ block: "center", inline: "nearest" }); }
    });
    this.svg.addEventListener("focusout", function (e) {
      if (!self.itemFor(e.relatedTarget)) { self.highlight(null); }
    });
  };

  // ---- pan and zoom: the svg's viewBox changes, its size on the page does not.

  Graph.prototype.addZoom = function () {
    var svg = this.svg;
    var vb = svg.viewBox && svg.viewBox.baseVal;
    if (!vb || !vb.width || !vb.height) { return; }
    var self = this;
    this.home = { x: vb.x, y: vb.y, w: vb.width, h: vb.height };
    this.view = { x: vb.x, y: vb.y, w: vb.width, h: vb.height };
    var label = svg.querySelector("title");
    var name = label ? label.textContent : "the graph";
    var bar = el("div", { "class": "tv-zoom", role: "toolbar", "aria-label": "Zoom: " + name });
    function button(cls, text, aria, action) {
      var b = el("button", { type: "button", "class": "tv-zoom-" + cls, "aria-label": aria, title: aria }, text);
      if (svg.id) { b.setAttribute("aria-controls", svg.id); }
      b.addEventListener("click", action);
      bar.appendChild(b);
      return b;
    }
    button("in", "+", "Zoom in", function () { self.zoom(1.25); });
    button("out", "\u2212", "Zoom out", function () { self.zoom(1 / 1.25); });
    button("reset", "Reset", "Reset zoom", function () { self.reset(); });
    this.zoomLevel = el("span", { "class": "tv-zoom-level", "aria-live": "polite" }, "100%");
    bar.appendChild(this.zoomLevel);
    // A graph is drawn at its natural size (text stays readable) and scrolls; these two trade that
    // for an overview (fit the column) or for room (the window's full width).
    this.fitButton = button("fit", "Fit", "Fit the graph to the column", function () {
      self.fit = !self.fit;
      self.fitWidth();
    });
    this.fullButton = button("full", "Full width", "Use the full window width", function () {
      self.full = !self.full;
      self.fitWidth();
    });
    bar.appendChild(el("span", { "class": "tv-zoom-hint" }, "Ctrl + wheel zooms; drag or arrow keys pan"));
    var box = svg.closest(".tv-scroll") || svg.parentNode;
    box.parentNode.insertBefore(bar, box);
    this.box = box;
    this.bar = bar;
    this.fitWidth();
    window.addEventListener("resize", function () { self.fitWidth(); });

    svg.addEventListener("wheel", function (e) {
      if (!e.ctrlKey) { return; }
      e.preventDefault();
      self.zoom(e.deltaY < 0 ? 1.15 : 1 / 1.15, self.toSvg(e.clientX, e.clientY));
    }, { passive: false });

    var drag = null;
    svg.addEventListener("pointerdown", function (e) {
      if (e.pointerType !== "mouse" || e.button !== 0 || !self.zoomed()) { return; }
      drag = { x: e.clientX, y: e.clientY, view: { x: self.view.x, y: self.view.y }, moved: false };
    });
    window.addEventListener("pointermove", function (e) {
      if (!drag) { return; }
      var scale = self.view.w / (svg.getBoundingClientRect().width || 1);
      var dx = e.clientX - drag.x;
      var dy = e.clientY - drag.y;
      if (Math.abs(dx) + Math.abs(dy) > 3) { drag.moved = true; svg.classList.add("tv-panning"); }
      self.set(drag.view.x - dx * scale, drag.view.y - dy * scale, self.view.w, self.view.h);
    });
    window.addEventListener("pointerup", function () {
      if (drag && drag.moved) {
        // swallow the click that ends a drag, so a drag over a node link does not follow it
        svg.addEventListener("click", function stop(ev) { ev.preventDefault(); ev.stopPropagation(); }, { capture: true, once: true });
        setTimeout(function () { svg.classList.remove("tv-panning"); }, 0);
      }
      drag = null;
    });

    // Arrow keys pan while the figure's scroll region itself has focus and the graph is zoomed.
    box.addEventListener("keydown", function (e) {
      if (e.target !== box || !self.zoomed() || e.altKey || e.ctrlKey || e.metaKey) { return; }
      var step = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] }[e.key];
      if (!step) { return; }
      e.preventDefault();
      self.set(self.view.x + step[0] * self.view.w * 0.15, self.view.y + step[1] * self.view.h * 0.15, self.view.w, self.view.h);
    });
  };

  // Fit / full width: the buttons show only when the graph is wider than its column.
  Graph.prototype.fitWidth = function () {
    if (!this.fitButton) { return; }
    var box = this.box;
    var natural = +this.svg.getAttribute("width") || 0;
    box.style.marginLeft = "";
    box.style.width = "";
    box.style.maxWidth = "";
    var column = box.clientWidth || natural;
    var wide = natural > column + 1;
    this.fitButton.hidden = !wide;
    this.fullButton.hidden = !wide;
    if (!wide) { this.fit = false; this.full = false; }
    this.svg.classList.toggle("tv-fit", !!this.fit);
    this.fitButton.setAttribute("aria-pressed", String(!!this.fit));
    this.fullButton.setAttribute("aria-pressed", String(!!this.full));
    this.figure.classList.toggle("tv-full-width", !!this.full);
    if (this.full) {
      var left = box.getBoundingClientRect().left;
      var width = Math.min(natural + 24, (document.documentElement.clientWidth || window.innerWidth) - 16);
      box.style.maxWidth = "none";
      box.style.width = width + "px";
      box.style.marginLeft = Math.min(0, 8 - left) + "px";
    }
    this.drawMinimap();
  };

  // ---- minimap: a tall graph gets a small overview in its toolbar; the frame shows what is on
  // screen, a click scrolls there. Pointer only (aria-hidden): keyboard users have Tab and the outline.
  Graph.prototype.addMinimap = function () {
    if (!this.bar) { return; }
    var self = this;
    var map = document.createElementNS("http://www.w3.org/2000/svg", "svg");
    map.setAttribute("class", "tv-minimap");
    map.setAttribute("aria-hidden", "true");
    map.setAttribute("focusable", "false");
    this.bar.appendChild(map);
    this.minimap = map;
    map.addEventListener("click", function (e) {
      var r = map.getBoundingClientRect();
      var vb = map.viewBox.baseVal;
      if (!r.width || !vb.width) { return; }
      var x = vb.x + (e.clientX - r.left) / r.width * vb.width;
      var y = vb.y + (e.clientY - r.top) / r.height * vb.height;
      var s = self.svg.getBoundingClientRect();
      var scale = s.width / self.view.w;
      var px = s.left + (x - self.view.x) * scale;
      var py = s.top + (y - self.view.y) * scale;
      self.box.scrollLeft += px - (self.box.getBoundingClientRect().left + self.box.clientWidth / 2);
      window.scrollBy(0, py - window.innerHeight / 2);
    });
    var pending = false;
    function update() {
      if (pending) { return; }
      pending = true;
      window.requestAnimationFrame(function () { pending = false; self.frameMinimap(); });
    }
    window.addEventListener("scroll", update, { passive: true });
    this.box.addEventListener("scroll", update, { passive: true });
    this.drawMinimap();
  };

  Graph.prototype.drawMinimap = function () {
    var map = this.minimap;
    if (!map) { return; }
    var vb = this.svg.viewBox.baseVal;
    var natural = +this.svg.getAttribute("height") || vb.height;
    map.hidden = this.fit || natural < (window.innerHeight || 800) * 1.2;
    if (map.hidden) { return; }
    var home = this.home;
    map.setAttribute("viewBox", [home.x, home.y, home.w, home.h].join(" "));
    map.setAttribute("width", String(Math.max(24, Math.round(120 * home.w / home.h))));
    map.setAttribute("height", "120");
    var body = this.svg.querySelector("g.tv-body");
    var offset = /translate\(\s*[-\d.]+[ ,]+([-\d.]+)/.exec(body ? body.getAttribute("transform") || "" : "");
    var top = offset ? +offset[1] : 0;
    var out = [];
    all(this.svg, "g.tv-cluster > rect:first-of-type, g.tv-node rect.tv-shape").forEach(function (r) {
      var g = r.closest("g.tv-node, g.tv-cluster");
      var t = /translate\(([-\d.]+)[ ,]+([-\d.]+)\)/.exec(g.getAttribute("transform") || "") || [0, 0, 0];
      out.push('<rect class="' + (g.classList.contains("tv-cluster") ? "tv-mini-cluster" : "tv-mini-node") + '" x="' +
        (+r.getAttribute("x") + +t[1]) + '" y="' + (+r.getAttribute("y") + +t[2] + top) + '" width="' +
        r.getAttribute("width") + '" height="' + r.getAttribute("height") + '"/>');
    });
    map.innerHTML = out.join("") + '<rect class="tv-mini-view"/>';
    this.frameMinimap();
  };

  Graph.prototype.frameMinimap = function () {
    var map = this.minimap;
    if (!map || map.hidden) { return; }
    var frame = map.querySelector(".tv-mini-view");
    var s = this.svg.getBoundingClientRect();
    var b = this.box.getBoundingClientRect();
    if (!s.width) { return; }
    var scale = this.view.w / s.width;
    var left = Math.max(s.left, b.left);
    var right = Math.min(s.right, b.right);
    var top = Math.max(s.top, 0);
    var bottom = Math.min(s.bottom, window.innerHeight);
    frame.setAttribute("x", String(this.view.x + (left - s.left) * scale));
    frame.setAttribute("y", String(this.view.y + (top - s.top) * scale));
    frame.setAttribute("width", String(Math.max(0, right - left) * scale));
    frame.setAttribute("height", String(Math.max(0, bottom - top) * scale));
  };

  Graph.prototype.zoomed = function () { return this.home && this.view.w < this.home.w - 1e-6; };

  Graph.prototype.toSvg = function (cx, cy) {
    var r = this.svg.getBoundingClientRect();
    if (!r.width || !r.height) { return null; }
    return { x: this.view.x + (cx - r.left) / r.width * this.view.w, y: this.view.y + (cy - r.top) / r.height * this.view.h };
  };

  Graph.prototype.zoom = function (factor, at) {
    if (!this.home) { return; }
    var v = this.view;
    var w = Math.min(this.home.w, Math.max(this.home.w / 8, v.w / factor));
    var h = w * this.home.h / this.home.w;
    var p = at || { x: v.x + v.w / 2, y: v.y + v.h / 2 };
    var fx = (p.x - v.x) / v.w;
    var fy = (p.y - v.y) / v.h;
    this.set(p.x - fx * w, p.y - fy * h, w, h);
  };

  Graph.prototype.reset = function () {
    if (this.home) { this.set(this.home.x, this.home.y, this.home.w, this.home.h); }
  };

  Graph.prototype.set = function (x, y, w, h) {
    var home = this.home;
    x = Math.min(Math.max(x, home.x), home.x + home.w - w);
    y = Math.min(Math.max(y, home.y), home.y + home.h - h);
    this.view = { x: x, y: y, w: w, h: h };
    this.svg.setAttribute("viewBox", [x, y, w, h].map(function (n) { return +n.toFixed(2); }).join(" "));
    var zoomed = this.zoomed();
    this.svg.classList.toggle("tv-zoomed", zoomed);
    if (this.zoomLevel) { this.zoomLevel.textContent = Math.round(home.w / w * 100) + "%"; }
  };

  // Pan a zoomed graph so that a node (focused by Tab, or a step target) is in view.
  Graph.prototype.reveal = function (g) {
    if (!this.zoomed() || !g.getBBox) { return; }
    var b;
    try { b = g.getBBox(); } catch (err) { return; }
    var m = g.getScreenCTM && g.getScreenCTM();
    var root = this.svg.getScreenCTM && this.svg.getScreenCTM();
    if (m && root) { // the bbox in the root's viewBox coordinates
      var t = root.inverse().multiply(m);
      b = { x: b.x * t.a + b.y * t.c + t.e, y: b.x * t.b + b.y * t.d + t.f, width: b.width * t.a, height: b.height * t.d };
    }
    var v = this.view;
    if (b.x >= v.x && b.y >= v.y && b.x + b.width <= v.x + v.w && b.y + b.height <= v.y + v.h) { return; }
    this.set(b.x + b.width / 2 - v.w / 2, b.y + b.height / 2 - v.h / 2, v.w, v.h);
  };

  Graph.prototype.stepTarget = function (nodeId) {
    var self = this;
    if (this.stepped) { this.mark(this.stepped, STEP, false); }
    var g = nodeId != null ? this.items[nodeId] || null : null;
    this.stepped = g;
    if (!g) { return null; }
    this.mark(g, STEP, true);
    this.reveal(g);
    // Bring the first source line into view inside its own scroll box only (never scroll the page).
    var first = this.linesOf(g)[0];
    var scroller = first && first.closest(".tv-scroll");
    if (scroller && first.closest("details") && first.closest("details").open) {
      var top = first.getBoundingClientRect().top - scroller.getBoundingClientRect().top + scroller.scrollTop;
      if (top < scroller.scrollTop || top > scroller.scrollTop + scroller.clientHeight - 24) {
        scroller.scrollTop = Math.max(0, top - scroller.clientHeight / 3);
      }
    }
    return self.items[nodeId];
  };

  function graphFor(fid) {
    if (!fid) { return null; }
    if (graphs[fid]) { return graphs[fid]; }
    var node = document.getElementById(fid);
    var figure = node && (node.tagName.toLowerCase() === "figure" ? node : node.closest("figure.tv-figure"));
    if (!figure) { return null; }
    return figure.id && graphs[figure.id] ? graphs[figure.id] : null;
  }

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
    this.prev = el("button", { type: "button", "class": "tv-step-prev", "aria-label": "Previous step" }, "\u2190 Previous");
    this.next = el("button", { type: "button", "class": "tv-step-next", "aria-label": "Next step" }, "Next \u2192");
    this.status = el("p", { "class": "tv-step-status", "aria-live": "polite", "aria-atomic": "true" });
    if (this.list.id) {
      this.prev.setAttribute("aria-controls", this.list.id);
      this.next.setAttribute("aria-controls", this.list.id);
    }
    bar.appendChild(this.prev);
    bar.appendChild(this.status);
    bar.appendChild(this.next);
    this.list.parentNode.insertBefore(bar, this.list.nextSibling);
    bar.appendChild(el("span", { "class": "tv-step-hint" }, "Left and right arrow keys also move between steps."));

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
    this.status.appendChild(el("span", { "class": "tv-step-count" }, "Step " + (i + 1) + " of " + this.steps.length));
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
      graph.stepTarget(li.getAttribute("data-visible") || li.getAttribute("data-target"));
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
    var label = el("label", { "for": base + "-select" }, "Checkpoint: ");
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

  // ------------------------------------------------------------------------------------------------
  // Open and close modules in place, any number at once, nested too (tensorviz-compose.js does the
  // geometry; this part keeps the state, the controls, the keyboard and the focus).

  function Composer(figure, data) {
    var self = this;
    this.figure = figure;
    this.svg = figure.querySelector("svg.tv-graph");
    this.base = data.getAttribute("data-src");
    this.key = data.getAttribute("data-key");
    this.pristine = this.svg.querySelector("g.tv-body").innerHTML;
    this.defaults = all(this.svg, "g.tv-cluster[data-node]").map(function (g) { return g.getAttribute("data-node"); });
    this.open = {};
    this.defaults.forEach(function (id) { self.open[id] = true; });
    this.status = el("p", { "class": "tv-visually-hidden", "aria-live": "polite" });
    figure.appendChild(this.status);
    this.decorate();
    figure.addEventListener("click", function (e) {
      var control = e.target.closest ? e.target.closest("[data-tv-toggle]") : null;
      if (!control || !figure.contains(control)) { return; }
      e.preventDefault();
      self.toggle(control.getAttribute("data-tv-toggle"));
    });
    figure.addEventListener("keydown", function (e) {
      var control = e.target.closest ? e.target.closest("[data-tv-toggle]") : null;
      if (!control || (e.key !== " " && !(e.key === "Enter" && control.tagName.toLowerCase() !== "a"))) { return; }
      e.preventDefault();
      self.toggle(control.getAttribute("data-tv-toggle"));
    });
  }

  // Module boxes become buttons whose name starts with what they show (axe: label-in-name).
  Composer.prototype.decorate = function () {
    // An open module's control is its title only: its box holds other controls.
    function control(g, id, expanded) {
      var target = g.querySelector("a") || (expanded ? g.querySelector("text") : g);
      if (target.tagName.toLowerCase() !== "a") { target.setAttribute("tabindex", "0"); }
      var shown = all(target, "text").concat(target.tagName.toLowerCase() === "text" ? [target] : [])
        .map(function (t) { return t.textContent; }).join(" ");
      target.setAttribute("role", "button");
      target.setAttribute("aria-expanded", expanded ? "true" : "false");
      target.setAttribute("aria-label", shown + (expanded ? ": collapse module " : ": expand module ") + id);
      target.setAttribute("data-tv-toggle", id);
    }
    all(this.svg, "g.tv-node.tv-collapsed[data-node]").forEach(function (g) {
      if (+g.getAttribute("data-hidden-count") > 0) { control(g, g.getAttribute("data-node"), false); }
    });
    all(this.svg, "g.tv-cluster[data-node]").forEach(function (g) { control(g, g.getAttribute("data-node"), true); });
  };

  Composer.prototype.toggle = function (id) {
    var self = this;
    if (this.busy) { return; }
    if (this.open[id]) { delete this.open[id]; } else { this.open[id] = true; }
    this.busy = true;
    this.compose().then(function () {
      self.busy = false;
      var again = self.figure.querySelector('[data-tv-toggle="' + cssEscape(id) + '"]');
      if (again) { again.focus(); }
      self.status.textContent = (self.open[id] ? "Opened module " : "Closed module ") + id;
    }, function (err) {
      self.busy = false;
      if (self.open[id]) { delete self.open[id]; } else { self.open[id] = true; }
      self.status.textContent = "Could not open module " + id + ": " + err.message;
    });
  };

  Composer.prototype.data = function (name) {
    var C = window.tensorvizCompose;
    var self = this;
    return C.load(this.base, this.key, "index.js", "index.js").then(function (index) {
      self.index = index;
      var entry = name === "" ? [null, index.root] : index.modules[name];
      if (!entry) { return Promise.reject(new Error("no layout data for " + name)); }
      return C.load(self.base, self.key, entry[1], name);
    });
  };

  // Draw the current set of open modules: from the build's picture when it keeps every module the
  // build opened, else from the top-level frame; then open the rest, parents first.
  Composer.prototype.compose = function () {
    var C = window.tensorvizCompose;
    var self = this;
    var fromBuild = this.defaults.every(function (id) { return self.open[id]; });
    var start = fromBuild ? Promise.resolve(null) : this.data("");
    return start.then(function (rootFrame) {
      var body = self.svg.querySelector("g.tv-body");
      body.innerHTML = self.pristine;
      var model = fromBuild ? C.fromSvg(self.svg) : C.fromFrame(rootFrame, "tvidtoken0", self.figure.id);
      return self.openAll(model).then(function () {
        C.render(self.svg, model);
        self.decorate();
        var graph = graphs[self.figure.id];
        if (graph) { graph.refresh(); }
      });
    });
  };

  Composer.prototype.openAll = function (model) {
    var C = window.tensorvizCompose;
    var self = this;
    var next = model.order.filter(function (id) { return self.open[id] && !model.items[id].cluster; })[0];
    if (next === undefined) { return Promise.resolve(); }
    return this.data(next).then(function (frame) {
      C.open(model, next, frame, "tvidtoken0", self.figure.id);
      return self.openAll(model);
    });
  };

  function cssEscape(text) {
    return window.CSS && CSS.escape ? CSS.escape(text) : String(text).replace(/["\\]/g, "\\$&");
  }

  function init() {
    all(document, "figure.tv-figure").forEach(function (figure, k) {
      if (!figure.querySelector("svg.tv-graph")) { return; }
      graphs[figure.id || "tv-figure-" + k] = new Graph(figure);
      var data = figure.querySelector(".tv-graph-data[data-src]");
      if (figure.id && data && window.tensorvizCompose) { new Composer(figure, data); }
    });
    all(document, "section.tv-steps, div.tv-steps").forEach(function (section) {
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
