"use strict";
(function () {
  function copyFallback(text) {
    var area = document.createElement("textarea");
    area.value = text;
    area.setAttribute("readonly", "");
    area.className = "offscreen";
    document.body.appendChild(area);
    area.select();
    var ok = false;
    try { ok = document.execCommand("copy"); } catch (e) { ok = false; }
    document.body.removeChild(area);
    return ok;
  }
  function said(button, ok) {
    var label = button.getAttribute("data-label") || button.textContent;
    button.setAttribute("data-label", label);
    button.textContent = ok ? "Copied" : "Select and copy by hand";
    button.classList.toggle("copied", ok);
    window.setTimeout(function () { button.textContent = label; button.classList.remove("copied"); }, 2500);
  }
  // a rule wider than its box scrolls inside it: say so beside it, and again whenever the width changes
  function markScrolling() {
    document.querySelectorAll(".rule").forEach(function (box) {
      var pre = box.querySelector("pre");
      box.toggleAttribute("data-scrolls", !!pre && pre.scrollWidth > pre.clientWidth + 1);
    });
  }
  markScrolling();
  window.addEventListener("resize", markScrolling);
  document.addEventListener("toggle", markScrolling, true);
  document.addEventListener("click", function (event) {
    var target = event.target;
    if (!(target instanceof Element)) { return; }
    var copy = target.closest("button[data-copy]");
    if (copy) {
      var source = document.getElementById(copy.getAttribute("data-copy"));
      var text = source ? source.textContent : "";
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(text).then(
          function () { said(copy, true); },
          function () { said(copy, copyFallback(text)); });
      } else {
        said(copy, copyFallback(text));
      }
      return;
    }
    var all = target.closest("button[data-folds]");
    if (all) {
      var open = all.getAttribute("data-folds") === "open";
      document.querySelectorAll("details.fold").forEach(function (d) { d.open = open; });
    }
  });
})();
