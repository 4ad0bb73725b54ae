// Live check of the proposed NID against RFC 8141 sections 2.1 and 5.1, while typing.
// The form works without this script: the same rules run again on save.
(function () {
  "use strict";
  var script = document.currentScript;
  var input = document.querySelector("[data-nid-check]");
  var status = document.getElementById("nid-status");
  if (!input || !status || !script) { return; }
  var url = script.dataset.url;
  // The message is part of the field's description, and a polite live region announces it.
  var described = (input.getAttribute("aria-describedby") || "").split(/\s+/).filter(Boolean);
  if (described.indexOf(status.id) === -1) {
    described.push(status.id);
    input.setAttribute("aria-describedby", described.join(" "));
  }
  var timer = null;
  var serial = 0;

  function kind() {
    var checked = document.querySelector("input[name=kind]:checked");
    return checked ? checked.value : "formal";
  }

  // The server's own errors for the field, if the form came back refused: the live
  // check says the same, so only one of the two is shown at a time.
  var served = document.getElementById(input.id + "_error");

  function show(data) {
    if (served) { served.remove(); served = null; }
    status.textContent = "";
    input.classList.remove("is-valid", "is-invalid");
    input.removeAttribute("aria-invalid");
    if (!data.nid) { return; }
    input.setAttribute("aria-invalid", data.acceptable ? "false" : "true");
    var list = document.createElement("ul");
    list.className = "list-unstyled mb-0";
    if (data.acceptable) {
      input.classList.add("is-valid");
      var ok = document.createElement("li");
      ok.className = "text-success";
      ok.textContent = "\u2713 \"" + data.nid + "\" is an acceptable formal NID.";
      list.appendChild(ok);
    } else {
      input.classList.add("is-invalid");
      data.problems.forEach(function (p) {
        var li = document.createElement("li");
        li.className = "text-danger";
        li.textContent = "\u2717 " + p.message;
        list.appendChild(li);
      });
    }
    (data.warnings || []).forEach(function (w) {
      // Each warning with its reason, what it matched and the rule, as links.
      var li = document.createElement("li");
      li.className = "nid-warning text-warning-emphasis";
      li.dataset.code = w.code;
      var icon = document.createElement("span");
      icon.setAttribute("aria-hidden", "true");
      icon.textContent = "\u26A0\uFE0E ";
      var hidden = document.createElement("span");
      hidden.className = "visually-hidden";
      hidden.textContent = "Warning: ";
      li.appendChild(icon);
      li.appendChild(hidden);
      li.appendChild(document.createTextNode(w.message + " "));
      var refs = document.createElement("span");
      refs.className = "text-body-secondary small";
      refs.appendChild(document.createTextNode("("));
      if (w.link) {
        var matched = document.createElement("a");
        matched.href = w.link;
        matched.textContent = w.matched;
        refs.appendChild(matched);
        refs.appendChild(document.createTextNode("; "));
      }
      var rule = document.createElement("a");
      rule.href = w.rule_link;
      rule.textContent = w.rule;
      refs.appendChild(rule);
      refs.appendChild(document.createTextNode(")"));
      li.appendChild(refs);
      list.appendChild(li);
    });
    status.appendChild(list);
  }

  function check() {
    var group = document.getElementById("nid-group");
    if (kind() !== "formal") { if (group) { group.hidden = true; } return; }
    if (group) { group.hidden = false; }
    var mine = ++serial;
    var q = "?kind=formal&nid=" + encodeURIComponent(input.value.trim());
    var org = document.getElementById("id_registrant_organisation");
    if (org && org.value.trim()) { q += "&organisation=" + encodeURIComponent(org.value.trim()); }
    if (script.dataset.registration) {
      q += "&registration=" + encodeURIComponent(script.dataset.registration);
    }
    fetch(url + q, { headers: { "Accept": "application/json" } })
      .then(function (r) { return r.json(); })
      .then(function (data) { if (mine === serial) { show(data); } })
      .catch(function () { status.textContent = ""; });
  }

  input.addEventListener("input", function () { clearTimeout(timer); timer = setTimeout(check, 200); });
  document.querySelectorAll("input[name=kind]").forEach(function (r) { r.addEventListener("change", check); });
  var orgInput = document.getElementById("id_registrant_organisation");
  if (orgInput) { orgInput.addEventListener("change", function () { if (input.value) { check(); } }); }
  if ((input.value && !served) || kind() !== "formal") { check(); }
})();
