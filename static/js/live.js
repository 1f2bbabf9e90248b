/* Live pages: mirror the WebSocket's state on the .live wrapper (data-socket = connecting |
   open | reconnecting | closed) and say it in words next to the dot: "Live" while the socket
   is open, "reconnecting" while the ws extension is about to try again (it does so, with
   back-off, after an abnormal close), "offline" when the socket is closed for good or the
   browser is offline; so a person (and the tests) can tell a live view from a stale one. */
(function () {
  "use strict";
  var WORDS = { connecting: "connecting…", open: "Live", reconnecting: "reconnecting",
                closed: "offline" };
  var RETRIED = [1006, 1011, 1012, 1013]; // the close codes the ws extension reconnects after

  function show(live, state) {
    live.dataset.socket = state;
    var said = live.querySelector(".socket-state");
    if (said) { said.textContent = WORDS[state]; }
  }
  function liveOf(event) {
    return event.target.closest ? event.target.closest(".live") : null;
  }
  function mark(event, state) {
    var live = liveOf(event);
    if (live) { show(live, navigator.onLine === false && state !== "open" ? "closed" : state); }
  }
  document.addEventListener("htmx:wsConnecting", function (e) {
    var live = liveOf(e);
    // The first attempt is "connecting"; any later one is a reconnection.
    if (live) { mark(e, live.dataset.socket === "connecting" ? "connecting" : "reconnecting"); }
  });
  document.addEventListener("htmx:wsOpen", function (e) { mark(e, "open"); });
  document.addEventListener("htmx:wsClose", function (e) {
    var code = e.detail && e.detail.event ? e.detail.event.code : 0;
    mark(e, RETRIED.indexOf(code) >= 0 ? "reconnecting" : "closed");
  });
  document.addEventListener("htmx:wsError", function (e) { mark(e, "closed"); });
  // The live status line is re-rendered by every push: say the state again in the new one.
  document.addEventListener("htmx:oobAfterSwap", function (e) {
    var live = liveOf(e);
    if (live && live.dataset.socket) { show(live, live.dataset.socket); }
  });
  // A push re-renders a section whole: a group the person opened (a details element with
  // data-open-key) is open in the new section too, rather than closing under their eyes.
  document.addEventListener("htmx:oobBeforeSwap", function (e) {
    var fragment = e.detail && e.detail.fragment;
    var target = e.detail && e.detail.target;
    if (!fragment || !fragment.querySelectorAll || !target || !target.querySelectorAll) {
      return;
    }
    var opened = {};
    target.querySelectorAll("details[open][data-open-key]").forEach(function (d) {
      opened[d.dataset.openKey] = true;
    });
    fragment.querySelectorAll("details[data-open-key]").forEach(function (d) {
      if (opened[d.dataset.openKey] === true) { d.open = true; }
    });
  });
  window.addEventListener("offline", function () {
    document.querySelectorAll(".live").forEach(function (live) { show(live, "closed"); });
  });
  window.addEventListener("online", function () {
    document.querySelectorAll(".live").forEach(function (live) {
      if (live.dataset.socket !== "open") { show(live, "reconnecting"); }
    });
  });
})();
