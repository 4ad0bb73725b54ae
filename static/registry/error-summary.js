// The error summary of a refused form: focused when the page loads, so a keyboard or
// screen-reader user starts at the list of problems; each link moves focus to its field
// (a plain fragment link would only scroll) and shows the field's label with it.
(function () {
  "use strict";
  var summary = document.querySelector("[data-error-summary]");
  if (!summary) { return; }
  summary.focus();
  summary.addEventListener("click", function (event) {
    var link = event.target.closest("a[href^='#']");
    if (!link) { return; }
    var field = document.getElementById(link.getAttribute("href").slice(1));
    if (!field) { return; }
    event.preventDefault();
    var holder = field.closest("fieldset, .mb-3") || field;
    var label = holder.querySelector("legend, label");
    (label || field).scrollIntoView({ block: "start" });
    field.focus({ preventScroll: true });
  });
})();
