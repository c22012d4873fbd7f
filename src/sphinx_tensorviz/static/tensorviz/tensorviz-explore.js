/* sphinx-tensorviz: exploring figures (sweeps) and committed predictions (choices).
   Without this script every sweep point shows as a small multiple and choices stay a list inside
   the reveal; with it, a slider (or select) swaps the picture, and the reader commits to a choice
   before the figure is revealed. Nothing leaves the browser: picks live in localStorage. */
(function () {
  "use strict";

  /* ---- sweeps: one point at a time, chosen by one control per parameter ---- */
  function setUpSweep(sweep) {
    var controls = sweep.querySelector(".tv-sweep-controls");
    var points = Array.prototype.slice.call(sweep.querySelectorAll(".tv-sweep-point"));
    if (!controls || !points.length) return;
    var inputs = Array.prototype.slice.call(controls.querySelectorAll("[data-tv-param]"));
    function show() {
      var wanted = inputs.map(function (input) { return String(input.value); }).join(" ");
      points.forEach(function (point) {
        var current = point.getAttribute("data-tv-coords") === wanted;
        point.classList.toggle("tv-current", current);
        point.hidden = !current;
      });
      inputs.forEach(function (input) {
        if (input.type !== "range") return;
        var texts = JSON.parse(input.getAttribute("data-tv-values"));
        var text = texts[Number(input.value)];
        var label = controls.querySelector('label[for="' + input.id + '"]');
        input.setAttribute("aria-valuetext", (label ? label.textContent + " = " : "") + text);
        var output = controls.querySelector('output[for="' + input.id + '"]');
        if (output) output.textContent = text;
      });
    }
    inputs.forEach(function (input) {
      input.addEventListener("input", show);
      input.addEventListener("change", show);
    });
    controls.hidden = false;
    sweep.classList.add("tv-sweep-live");
    show();
  }

  function init() {
    Array.prototype.forEach.call(document.querySelectorAll(".tv-sweep"), setUpSweep);
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
