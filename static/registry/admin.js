// The Django admin, for IANA staff: an inline table (a person's account events, a
// request's rounds) scrolls sideways inside its box on a narrow screen; the box is made
// a named region the keyboard reaches, so its columns can be scrolled without a mouse
// (WCAG 2.1.1; axe's scrollable-region-focusable).
(function () {
  "use strict";
  document.querySelectorAll(".inline-group").forEach(function (group) {
    if (group.hasAttribute("tabindex")) { return; }
    var heading = group.querySelector("h2");
    group.setAttribute("tabindex", "0");
    group.setAttribute("role", "region");
    if (heading) {
      if (!heading.id) { heading.id = group.id + "-heading"; }
      group.setAttribute("aria-labelledby", heading.id);
    }
  });
})();
