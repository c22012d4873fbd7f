/* sphinx-tensorviz: exploring figures (sweeps) and committed predictions (choices).
   Without this script every sweep point shows as a small multiple and choices stay a list inside
   the reveal; with it, a slider (or select) swaps the picture, and the reader commits to a choice
   before the figure is revealed. Nothing leaves the browser: picks live in localStorage. */
(function () {
  "use strict";

  /* ---- sweeps: one point at a time, chosen by one control per parameter ---- */
  function pointsOf(sweep) {
    /* its own points only: a point's figure may hold a sweep of its own */
    return Array.prototype.slice.call(sweep.querySelectorAll(".tv-sweep-point")).filter(function (point) {
      return point.parentElement.closest(".tv-sweep") === sweep;
    });
  }

  function setUpSweep(sweep) {
    var controls = Array.prototype.filter.call(sweep.querySelectorAll(".tv-sweep-controls"), function (c) {
      return c.closest(".tv-sweep") === sweep;
    })[0];
    var points = pointsOf(sweep);
    if (!controls || !points.length) return;
    /* activation strips of a swept graph follow its controls */
    var followers = sweep.id
      ? Array.prototype.slice.call(document.querySelectorAll('[data-tv-follows="' + sweep.id + '"]')) : [];
    followers.forEach(function (follower) { follower.classList.add("tv-sweep-live"); });
    points = points.concat.apply(points, followers.map(pointsOf));
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

  /* ---- committed predictions: pick, commit, then reveal and compare ---- */
  var STORE_PREFIX = "tensorviz-choice:";

  function remembered(key) {
    try { return window.localStorage.getItem(key); } catch (e) { return null; }
  }

  function remember(key, value) {
    try { window.localStorage.setItem(key, value); } catch (e) { /* private mode: not kept */ }
  }

  function setUpChoices(form) {
    var figure = form.closest("figure, .tv-sweep-figures");
    if (!figure) return;
    var reveal = figure.querySelector("details.tv-reveal");
    var list = figure.querySelector(".tv-choice-list");
    var result = form.querySelector(".tv-choice-result");
    var button = form.querySelector(".tv-commit");
    var radios = Array.prototype.slice.call(form.querySelectorAll('input[type="radio"]'));
    var answer = Number(form.getAttribute("data-tv-answer"));
    var key = STORE_PREFIX + figure.id;
    var summary = reveal ? reveal.querySelector("summary") : null;

    function labelOf(index) {
      var label = form.querySelector('label[for="' + radios[index].id + '"]');
      return label ? label.textContent : String(index + 1);
    }

    function commit(index, focus) {
      radios[index].checked = true;
      var matched = index === answer;
      var say = window.tensorviz.say;
      result.textContent = matched
        ? say("You predicted {choice}. That matches the recorded result.", { choice: labelOf(index) })
        : say("You predicted {choice}. The recorded result supports {answer} instead.",
              { choice: labelOf(index), answer: labelOf(answer) });
      result.classList.toggle("tv-choice-matched", matched);
      result.classList.toggle("tv-choice-missed", !matched);
      figure.querySelectorAll(".tv-choice-why").forEach(function (item, k) {
        item.classList.toggle("tv-choice-picked", k === index);
      });
      if (summary) summary.hidden = false;
      if (reveal) reveal.open = true;
      button.textContent = say("Prediction committed: figure revealed");
      if (focus && summary) summary.focus();
    }

    function update() {
      button.disabled = !radios.some(function (radio) { return radio.checked; });
    }

    radios.forEach(function (radio) { radio.addEventListener("change", update); });
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      var picked = radios.findIndex(function (radio) { return radio.checked; });
      if (picked < 0) return;
      remember(key, String(picked));
      commit(picked, false);
    });
    if (list) list.hidden = true;
    form.hidden = false;
    if (summary && reveal && !reveal.open) summary.hidden = true;  /* commit first, then see */
    var stored = remembered(key);
    if (stored !== null && radios[Number(stored)]) commit(Number(stored), false);
    else update();
  }

  function init() {
    Array.prototype.forEach.call(document.querySelectorAll(".tv-sweep:not([data-tv-follows])"), setUpSweep);
    Array.prototype.forEach.call(document.querySelectorAll("form.tv-choices"), setUpChoices);
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
