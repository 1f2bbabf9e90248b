/* YAML views: "Copy YAML" copies the manifest's text (the highlighted block's text content
   is exactly the YAML) and says so next to the button. Delegated, so it works on
   fragments a live update swapped in. */
(function () {
  "use strict";
  function say(button, text) {
    var status = button.parentNode.querySelector(".copy-status");
    if (status) { status.textContent = text; }
  }
  function fallback(text) {
    var area = document.createElement("textarea");
    area.value = text;
    area.setAttribute("readonly", "");
    area.style.position = "fixed";
    area.style.opacity = "0";
    document.body.appendChild(area);
    area.select();
    var ok = false;
    try { ok = document.execCommand("copy"); } catch (e) { ok = false; }
    document.body.removeChild(area);
    return ok;
  }
  document.addEventListener("click", function (event) {
    var button = event.target.closest ? event.target.closest(".copy-yaml") : null;
    if (!button) { return; }
    var source = document.querySelector(button.dataset.copy);
    if (!source) { return; }
    var text = source.textContent;
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(
        function () { say(button, "Copied"); },
        function () { say(button, fallback(text) ? "Copied" : "Copy failed: select the text"); });
    } else {
      say(button, fallback(text) ? "Copied" : "Copy failed: select the text");
    }
  });
})();
