// sphinx-tensorviz: one traced graph on the page: hover and focus highlight (node, edges,
// neighbours, source lines), pan and zoom, fit / full width, the minimap, and the tour's target.
// Progressive enhancement only: the graph reads fine without it. Loaded before tensorviz.js.
(function () {
  "use strict";

  var tv = window.tensorviz = window.tensorviz || {};

  var all = tv.all;
  var el = tv.el;
  var say = tv.say;

  // "58-60,62" -> [[58, 60], [62, 62]]
  function parseRanges(spec) {
    var out = [];
    (spec || "").split(/[,\s]+/).forEach(function (part) {
      var m = /^(\d+)(?:\s*[-\u2013]\s*(\d+))?$/.exec(part);
      if (m) { out.push([+m[1], +(m[2] || m[1])]); }
    });
    return out;
  }

  // ------------------------------------------------------------------------------------------------
  // Traced graphs

  var graphs = {}; // figure id -> graph controller

  function Graph(figure) {
    var svg = figure.querySelector("svg.tv-graph");
    this.figure = figure;
    this.svg = svg;
    this.lines = {};   // "<file>:<line number>" -> <span class="tv-line"> ("" is the model file)
    this.hovered = null;
    var self = this;
    this.collect();
    all(figure, ".tv-line[data-line]").forEach(function (span) {
      var panel = span.closest("[data-file]");
      self.lines[(panel ? panel.getAttribute("data-file") : "") + ":" + span.getAttribute("data-line")] = span;
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
    var file = (g && g.getAttribute("data-source-file")) || "";
    parseRanges(g && g.getAttribute("data-source-lines")).forEach(function (r) {
      for (var n = r[0]; n <= r[1] && n - r[0] < 2000; n++) {
        if (self.lines[file + ":" + n]) { out.push(self.lines[file + ":" + n]); }
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
    var name = label ? label.textContent : say("the graph");
    var bar = el("div", { "class": "tv-zoom", role: "toolbar", "aria-label": say("Zoom: {graph}", { graph: name }) });
    function button(cls, text, aria, action) {
      var b = el("button", { type: "button", "class": "tv-zoom-" + cls, "aria-label": aria, title: aria }, text);
      if (svg.id) { b.setAttribute("aria-controls", svg.id); }
      b.addEventListener("click", action);
      bar.appendChild(b);
      return b;
    }
    button("in", "+", say("Zoom in"), function () { self.zoom(1.25); });
    button("out", "\u2212", say("Zoom out"), function () { self.zoom(1 / 1.25); });
    button("reset", say("Reset"), say("Reset zoom"), function () { self.reset(); });
    this.zoomLevel = el("span", { "class": "tv-zoom-level", "aria-live": "polite" }, "100%");
    bar.appendChild(this.zoomLevel);
    // A graph is drawn at its natural size (text stays readable) and scrolls; these two trade that
    // for an overview (fit the column) or for room (the window's full width).
    this.fitButton = button("fit", say("Fit"), say("Fit the graph to the column"), function () {
      self.fit = !self.fit;
      self.fitWidth();
    });
    this.fullButton = button("full", say("Full width"), say("Use the full window width"), function () {
      self.full = !self.full;
      self.fitWidth();
    });
    bar.appendChild(el("span", { "class": "tv-zoom-hint" }, say("Ctrl + wheel zooms; drag or arrow keys pan")));
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
    // an SVG element has no `hidden` property (setting it does nothing): the attribute, hidden by
    // the stylesheet, keeps a short graph's toolbar free of an empty 300x150 box
    var shown = !this.fit && natural >= (window.innerHeight || 800) * 1.2;
    map.toggleAttribute("hidden", !shown);
    if (!shown) { return; }
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
    if (!map || map.hasAttribute("hidden")) { return; }
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

  tv.graphs = graphs;
  tv.Graph = Graph;
  tv.graphFor = graphFor;
})();
