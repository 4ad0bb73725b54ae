// Small behaviours of the registry's pages, here rather than in inline handlers so that the
// Content-Security-Policy can refuse every inline script. Each page works without them.
(function () {
  "use strict";
  // <select data-autosubmit>: submit its form when the choice changes.
  document.querySelectorAll("select[data-autosubmit]").forEach(function (select) {
    select.addEventListener("change", function () { select.form.submit(); });
  });
  // <button data-confirm="question">: ask before an action that cannot be undone.
  document.querySelectorAll("[data-confirm]").forEach(function (button) {
    button.addEventListener("click", function (event) {
      if (!window.confirm(button.dataset.confirm)) { event.preventDefault(); }
    });
  });
})();
