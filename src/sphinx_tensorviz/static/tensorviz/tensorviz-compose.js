// sphinx-tensorviz: composed graph views. The build lays every module out on its own (its children,
// child modules collapsed) and writes that as data next to the page (render/graph_frames.py); this
// file loads a module's frame when a reader opens it and puts it in the picture: the module's box
// grows to the frame's size and everything else moves aside. No layout runs here, only moves.
//
// Moving aside: opening a box at (x, y, w, h) to (W, H) inserts a band of dW = W - w across x in
// [x, x + w] and one of dH = H - h across y in [y, y + h]. A point's displacement grows linearly
// from 0 before the band to dW (dH) after it, so it never decreases along an axis: leaf boxes move
// by the displacement of their centre, open modules stretch by that of their corners, and what
// did not overlap before does not overlap after. Closing re-composes from scratch, so only growth
// is ever applied.
(function () {
  "use strict";

  var NS = "http://www.w3.org/2000/svg";
  var tv = window.tensorviz = window.tensorviz || {};

  // The scripts' words in the page's language: a translated page sets tv.words (English message ->
  // translation, render/script_words.py) before the scripts run; {name} fields are filled in.
  tv.say = function (text, fields) {
    var said = (tv.words && tv.words[text]) || text;
    Object.keys(fields || {}).forEach(function (k) { said = said.split("{" + k + "}").join(fields[k]); });
    return said;
  };

  function all(root, selector) { return Array.prototype.slice.call(root.querySelectorAll(selector)); }

  function el(tag, attrs, text) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    if (text) { node.textContent = text; }
    return node;
  }
  tv.all = all;
  tv.el = el;

  function num(v) { return String(Math.round(v * 10) / 10); }

  // "M1,2L3,4C5,6 7,8 9,10" -> [[1,2],[3,4],[9,10]]: the route points (curve controls dropped)
  function routePoints(d) {
    var out = [];
    var re = /([MLC])([^MLC]*)/g;
    var m;
    while ((m = re.exec(d || ""))) {
      var pairs = m[2].trim().split(/\s+/);
      var last = pairs[pairs.length - 1].split(",");
      out.push([+last[0], +last[1]]);
    }
    return out;
  }

  // Vertical-tangent cubic curves between route points, as the build draws them (graph_svg._edge_path).
  function edgePath(pts) {
    var d = "M" + num(pts[0][0]) + "," + num(pts[0][1]);
    for (var i = 1; i < pts.length; i++) {
      var a = pts[i - 1];
      var b = pts[i];
      if (Math.abs(b[0] - a[0]) < 0.05) {
        d += "L" + num(b[0]) + "," + num(b[1]);
      } else {
        var my = (a[1] + b[1]) / 2;
        d += "C" + num(a[0]) + "," + num(my) + " " + num(b[0]) + "," + num(my) + " " + num(b[0]) + "," + num(b[1]);
      }
    }
    return d;
  }

  function parse(markup) {
    var g = document.createElementNS(NS, "g");
    g.innerHTML = markup;
    return g.firstElementChild;
  }

  function rectOf(el) {
    var r = el.querySelector("rect");
    return { x: +r.getAttribute("x"), y: +r.getAttribute("y"), w: +r.getAttribute("width"), h: +r.getAttribute("height") };
  }

  // The picture the build drew: boxes, open modules, edges, shape labels and tour markers.
  function fromSvg(svg) {
    var model = { items: {}, order: [], edges: [], labels: [], markers: [] };
    Array.prototype.forEach.call(svg.querySelectorAll("g.tv-cluster[data-node], g.tv-node[data-node]"), function (el) {
      var r = rectOf(el);
      add(model, { id: el.getAttribute("data-node"), cluster: el.classList.contains("tv-cluster"), el: el,
        x: r.x, y: r.y, w: r.w, h: r.h, ox: r.x, oy: r.y, ow: r.w });
    });
    Array.prototype.forEach.call(svg.querySelectorAll("path.tv-edge"), function (el) {
      model.edges.push({ s: el.getAttribute("data-source"), t: el.getAttribute("data-target"),
        pts: routePoints(el.getAttribute("d")), arrow: el.hasAttribute("marker-end") });
    });
    Array.prototype.forEach.call(svg.querySelectorAll("text.tv-edge-label[data-source]"), function (el) {
      model.labels.push({ id: el.getAttribute("data-source"), el: el });
    });
    Array.prototype.forEach.call(svg.querySelectorAll("g.tv-step-markers > g[data-node]"), function (el) {
      model.markers.push({ id: el.getAttribute("data-node"), el: el });
    });
    return model;
  }

  function add(model, item) {
    model.items[item.id] = item;
    model.order.push(item.id);
  }

  // A frame's contents placed with its top-left corner at (ox, oy); `token` is replaced by `prefix`.
  function addFrame(model, frame, ox, oy, token, prefix) {
    function own(markup) { return parse(markup.split(token).join(prefix)); }
    frame.boxes.forEach(function (b) {
      add(model, { id: b[0], cluster: false, el: own(b[5]), x: ox + b[1], y: oy + b[2], w: b[3], h: b[4], ox: b[1], oy: b[2], ow: b[3] });
    });
    frame.edges.forEach(function (e) {
      var pts = [];
      for (var i = 0; i < e[2].length; i += 2) { pts.push([ox + e[2][i], oy + e[2][i + 1]]); }
      model.edges.push({ s: e[0], t: e[1], pts: pts, arrow: true });
      if (e[3]) { model.labels.push({ id: e[0], el: own(e[3]) }); }
    });
  }

  function fromFrame(frame, token, prefix) {
    var model = { items: {}, order: [], edges: [], labels: [], markers: [] };
    addFrame(model, frame, 0, 0, token, prefix);
    return model;
  }

  function shift(lo, len, grow) {
    return function (v) {
      if (v <= lo || grow <= 0) { return 0; }
      if (v >= lo + len) { return grow; }
      return grow * (v - lo) / len;
    };
  }

  // Open module `id` (a collapsed box of `model`) with its frame; everything else moves aside.
  function open(model, id, frame, token, prefix) {
    var box = model.items[id];
    var W = Math.max(frame.w, box.w);
    var H = Math.max(frame.h, box.h);
    var fx = shift(box.x, box.w, W - box.w);
    var fy = shift(box.y, box.h, H - box.h);
    var moved = {};
    model.order.forEach(function (key) {
      var it = model.items[key];
      if (key === id) { return; }
      if (it.cluster) {
        var x2 = it.x + it.w + fx(it.x + it.w);
        var y2 = it.y + it.h + fy(it.y + it.h);
        it.x += fx(it.x);
        it.y += fy(it.y);
        it.w = x2 - it.x;
        it.h = y2 - it.y;
      } else {
        var dx = fx(it.x + it.w / 2);
        var dy = fy(it.y + it.h / 2);
        it.x += dx;
        it.y += dy;
        moved[key] = [dx, dy];
      }
    });
    var cx = box.x + (W - frame.w) / 2;
    model.edges.forEach(function (e) {
      var n = e.pts.length;
      e.pts = e.pts.map(function (p, i) {
        var end = i === 0 ? e.s : i === n - 1 ? e.t : null;
        var d = end !== null && moved[end] ? moved[end] : [fx(p[0]), fy(p[1])];
        return [p[0] + d[0], p[1] + d[1]];
      });
      if (e.t === id) { e.pts[n - 1] = [cx + frame["in"], box.y]; e.arrow = false; }
      if (e.s === id) { e.pts[0] = [cx + frame.out, box.y + H]; }
    });
    model.labels = model.labels.filter(function (l) { return l.id !== id; });
    box.cluster = true;
    box.el = parse(frame.cluster.split(token).join(prefix));
    box.w = W;
    box.h = H;
    addFrame(model, frame, cx, box.y, token, prefix);
  }

  // Put the model's elements into the SVG's layer groups and size the SVG to fit.
  function render(svg, model) {
    var body = svg.querySelector("g.tv-body");
    var layers = {};
    ["tv-clusters", "tv-edges", "tv-nodes", "tv-edge-labels", "tv-step-markers"].forEach(function (cls) {
      var g = body.querySelector("g." + cls);
      g.textContent = "";
      layers[cls] = g;
    });
    var marker = svg.querySelector("marker");
    var arrow = marker ? "url(#" + marker.id + ")" : null;
    var right = 0;
    var bottom = 0;
    model.order.forEach(function (key) {
      var it = model.items[key];
      right = Math.max(right, it.x + it.w);
      bottom = Math.max(bottom, it.y + it.h);
      if (it.cluster) {
        var rect = it.el.querySelector("rect");
        rect.setAttribute("x", num(it.x));
        rect.setAttribute("y", num(it.y));
        rect.setAttribute("width", num(it.w));
        rect.setAttribute("height", num(it.h));
        var head = it.el.querySelector("text");
        if (head) {
          head.setAttribute("x", num(head.getAttribute("text-anchor") === "end" ? it.x + it.w - 8 : it.x + 8));
          head.setAttribute("y", num(it.y + 18));
        }
        layers["tv-clusters"].appendChild(it.el);
      } else {
        it.el.setAttribute("transform", "translate(" + num(it.x - it.ox) + " " + num(it.y - it.oy) + ")");
        layers["tv-nodes"].appendChild(it.el);
      }
    });
    model.edges.forEach(function (e) {
      if (e.pts.length < 2) { return; }
      var path = document.createElementNS(NS, "path");
      path.setAttribute("class", "tv-edge");
      path.setAttribute("d", edgePath(e.pts));
      path.setAttribute("data-source", e.s);
      path.setAttribute("data-target", e.t);
      var into = model.items[e.t];
      if (e.arrow && arrow && !(into && into.cluster)) { path.setAttribute("marker-end", arrow); } // not at ports
      layers["tv-edges"].appendChild(path);
      e.pts.forEach(function (p) { right = Math.max(right, p[0]); bottom = Math.max(bottom, p[1]); });
    });
    model.labels.forEach(function (l) {
      var it = model.items[l.id];
      if (!it || it.cluster) { return; }
      l.el.setAttribute("transform", "translate(" + num(it.x - it.ox) + " " + num(it.y - it.oy) + ")");
      layers["tv-edge-labels"].appendChild(l.el);
    });
    model.markers.forEach(function (m) {
      var it = model.items[m.id];
      if (!it) { return; }
      m.el.setAttribute("transform", "translate(" + num(it.x + it.w - it.ox - it.ow) + " " + num(it.y - it.oy) + ")");
      layers["tv-step-markers"].appendChild(m.el);
    });
    var offset = /translate\(\s*[-\d.]+[ ,]+([-\d.]+)/.exec(body.getAttribute("transform") || "");
    var top = offset ? +offset[1] : 0;
    var width = Math.max(360, right + 8);
    var height = top + bottom + 8;
    svg.setAttribute("viewBox", "0 0 " + num(width) + " " + num(height));
    svg.setAttribute("width", num(width));
    svg.setAttribute("height", num(height));
  }

  // ---- data files: <script> elements (they load from file:// pages too, where fetch is refused)

  var store = {};   // key -> name -> payload
  var waiting = {}; // key + "\n" + name -> [callbacks]

  window.tensorvizData = function (key, name, payload) {
    (store[key] = store[key] || {})[name] = payload;
    var id = key + "\n" + name;
    (waiting[id] || []).forEach(function (done) { done(payload); });
    delete waiting[id];
  };

  // load(base, key, file, name) -> Promise of the payload that `file` registers under `name`
  function load(base, key, file, name) {
    if (store[key] && store[key][name]) { return Promise.resolve(store[key][name]); }
    return new Promise(function (resolve, reject) {
      var id = key + "\n" + name;
      var first = !waiting[id];
      (waiting[id] = waiting[id] || []).push(resolve);
      if (!first) { return; }
      var script = document.createElement("script");
      script.src = base + file;
      script.async = true;
      script.onerror = function () { delete waiting[id]; reject(new Error("could not load " + script.src)); };
      document.head.appendChild(script);
    });
  }

  var C = { fromSvg: fromSvg, fromFrame: fromFrame, open: open, render: render, load: load };

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
      var fields = { name: shown, id: id };
      target.setAttribute("aria-label", expanded ? tv.say("{name}: collapse module {id}", fields)
        : tv.say("{name}: expand module {id}", fields));
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
      self.status.textContent = self.open[id] ? tv.say("Opened module {id}", { id: id })
        : tv.say("Closed module {id}", { id: id });
    }, function (err) {
      self.busy = false;
      if (self.open[id]) { delete self.open[id]; } else { self.open[id] = true; }
      self.status.textContent = tv.say("Could not open module {id}: {error}", { id: id, error: err.message });
    });
  };

  Composer.prototype.data = function (name) {
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
        var graph = window.tensorviz.graphs[self.figure.id];
        if (graph) { graph.refresh(); }
      });
    });
  };

  Composer.prototype.openAll = function (model) {
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

  tv.compose = C;
  tv.Composer = Composer;
})();
