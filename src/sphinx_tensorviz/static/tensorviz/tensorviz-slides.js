// sphinx-tensorviz on reveal.js slides (sphinx-revealjs): a tour's steps are fragments, shown one at a
// time as the lecturer advances; this marks the current step's node on its graph, as the page's stepper
// does, and zooms a graph drawn smaller than its natural size (a deep model fitted to a slide) in on
// that node, so its box can be read from the back of the room. Loaded after tensorviz.js, which has
// made the page's graphs.
(function () {
  "use strict";

  var tv = window.tensorviz;
  var Reveal = window.Reveal;

  // How much smaller than its natural size the graph is drawn (1: not at all), as a fraction.
  function shrink(graph) {
    var natural = +graph.svg.getAttribute("height") || 0;
    var scale = typeof Reveal.getScale === "function" ? Reveal.getScale() || 1 : 1;
    var drawn = graph.svg.getBoundingClientRect().height / scale;
    return natural && drawn ? Math.min(1, drawn / natural) : 1;
  }

  // A node's box in the graph's viewBox coordinates.
  function boxOf(graph, g) {
    var b = g.getBBox();
    var t = graph.svg.getScreenCTM().inverse().multiply(g.getScreenCTM());
    return { x: b.x * t.a + b.y * t.c + t.e, y: b.x * t.b + b.y * t.d + t.f, w: b.width * t.a, h: b.height * t.d };
  }

  function focus(graph, g) {
    if (!graph.home) { return; }
    var k = Math.max(0.25, shrink(graph));  // the share of the graph a window at natural size shows
    if (!g || k > 0.9) { graph.reset(); return; }
    var b = boxOf(graph, g);
    var w = graph.home.w * k, h = graph.home.h * k;
    graph.set(b.x + b.w / 2 - w / 2, b.y + b.h / 2 - h / 2, w, h);
  }

  function follow() {
    tv.all(document, "section.tv-steps-fragments").forEach(function (tour) {
      var graph = tv.graphFor(tour.getAttribute("data-graph"));
      if (!graph) { return; }
      var li = tour.querySelector("li.tv-step.current-fragment");
      // the node itself once its module is open, else the box that holds it
      var target = li && li.getAttribute("data-target");
      var g = li ? graph.stepTarget(target && graph.items[target] ? target : li.getAttribute("data-visible") || target) : null;
      if (!li) { graph.stepTarget(null); }
      if (graph.svg.getBoundingClientRect().height) { focus(graph, g); }  // only a graph on screen
    });
  }

  if (!tv || !Reveal || typeof Reveal.on !== "function") { return; }
  ["ready", "slidechanged", "fragmentshown", "fragmenthidden"].forEach(function (name) { Reveal.on(name, follow); });
  follow();
})();
