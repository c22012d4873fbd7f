// sphinx-tensorviz on reveal.js slides (sphinx-revealjs): a tour's steps are fragments, shown one at a
// time as the lecturer advances; this marks the current step's node on its graph, as the page's stepper
// does. Loaded after tensorviz.js, which has made the page's graphs.
(function () {
  "use strict";

  var tv = window.tensorviz;

  function follow() {
    tv.all(document, "section.tv-steps-fragments").forEach(function (tour) {
      var graph = tv.graphFor(tour.getAttribute("data-graph"));
      if (!graph) { return; }
      var li = tour.querySelector("li.tv-step.current-fragment");
      if (!li) { graph.stepTarget(null); return; }
      // the node itself once its module is open, else the box that holds it
      var target = li.getAttribute("data-target");
      graph.stepTarget(target && graph.items[target] ? target : li.getAttribute("data-visible") || target);
    });
  }

  if (!tv || !window.Reveal || typeof window.Reveal.on !== "function") { return; }
  ["ready", "slidechanged", "fragmentshown", "fragmenthidden"].forEach(function (name) {
    window.Reveal.on(name, follow);
  });
  follow();
})();
