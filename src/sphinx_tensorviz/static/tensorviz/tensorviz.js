// sphinx-tensorviz: progressive enhancement only; every figure reads fine without this file.
(function () {
  "use strict";
  // Printing or saving as PDF shows every revealed figure.
  window.addEventListener("beforeprint", function () {
    document.querySelectorAll("details.tv-reveal").forEach(function (d) {
      if (!d.open) { d.dataset.tvPrintOpened = "1"; d.open = true; }
    });
  });
  window.addEventListener("afterprint", function () {
    document.querySelectorAll("details.tv-reveal[data-tv-print-opened]").forEach(function (d) {
      d.open = false; delete d.dataset.tvPrintOpened;
    });
  });
})();
