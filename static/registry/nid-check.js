// Live check of the proposed NID against RFC 8141 sections 2.1 and 5.1, while typing.
// The form works without this script: the same rules run again on save.
(function () {
  "use strict";
  var script = document.currentScript;
  var input = document.querySelector("[data-nid-check]");
  var status = document.getElementById("nid-status");
  if (!input || !status || !script) { return; }
  var url = script.dataset.url;
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
    if (!data.nid) { return; }
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
      var li = document.createElement("li");
      li.className = "text-warning-emphasis";
      li.textContent = "\u26A0 " + w.message;
      list.appendChild(li);
    });
    if (data.other_open_requests > 0) {
      var warn = document.createElement("li");
      warn.className = "text-warning-emphasis";
      warn.textContent = "Another open request proposes this NID too; both will be flagged for the experts.";
      list.appendChild(warn);
    }
    status.appendChild(list);
  }

  function check() {
    var group = document.getElementById("nid-group");
    if (kind() !== "formal") { if (group) { group.hidden = true; } return; }
    if (group) { group.hidden = false; }
    var mine = ++serial;
    var q = "?kind=formal&nid=" + encodeURIComponent(input.value.trim());
    fetch(url + q, { headers: { "Accept": "application/json" } })
      .then(function (r) { return r.json(); })
      .then(function (data) { if (mine === serial) { show(data); } })
      .catch(function () { status.textContent = ""; });
  }

  input.addEventListener("input", function () { clearTimeout(timer); timer = setTimeout(check, 200); });
  document.querySelectorAll("input[name=kind]").forEach(function (r) { r.addEventListener("change", check); });
  if ((input.value && !served) || kind() !== "formal") { check(); }
})();
