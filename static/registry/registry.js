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
  // A published address (templatetags/contact.py): the page holds no "user@host"
  // for harvesters; for people it becomes a mailto link, with a button that copies it.
  document.querySelectorAll(".email-address[data-email-user]").forEach(function (span) {
    var address = span.dataset.emailUser + "@" + span.dataset.emailDomain;
    var link = document.createElement("a");
    link.href = "mailto:" + address;
    link.textContent = address;
    span.replaceChildren(link);
    var button = span.nextElementSibling;
    if (!button || !button.classList.contains("copy-email") || !navigator.clipboard) { return; }
    button.hidden = false;
    button.setAttribute("aria-label", "Copy address " + address);
    button.addEventListener("click", function () {
      navigator.clipboard.writeText(address).then(function () {
        button.textContent = "Copied";
      });
    });
  });
})();
