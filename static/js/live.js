/* Live pages: mirror the WebSocket's state on the .live wrapper (data-socket = open |
   closed | connecting), so the page (and tests) can tell a live view from a stale one. */
(function () {
  "use strict";
  function mark(event, state) {
    var live = event.target.closest ? event.target.closest(".live") : null;
    if (live) { live.dataset.socket = state; }
  }
  document.addEventListener("htmx:wsOpen", function (e) { mark(e, "open"); });
  document.addEventListener("htmx:wsClose", function (e) { mark(e, "closed"); });
  document.addEventListener("htmx:wsError", function (e) { mark(e, "closed"); });
})();
