// Drag and drop for the what-if planner, with pointer events (mouse, pen and touch alike).
//
// Draggables carry data-drag="pod|group|node|template"; drop zones data-drop="node|queue|
// bin|canvas". A drop becomes the same form fields the planner's buttons post, sent with
// htmx so the answer (the re-rendered body, or the engine's refusal) is swapped in the
// same way. Every drag has a button or form equivalent in the page for keyboard users
// (docs/scenarios.md, "Changes").
//
// What a person sees (docs/scenarios.md, "Drag and drop"):
// - the answer to a change appears where it was asked: a refusal at the drop target (or
//   beside the button or form), and it goes with the next success, which re-renders the
//   body (the answers live inside it);
// - the page stays where it was: the scroll position is restored after every swap;
// - nothing is selected while dragging (body.dragging-active sets user-select: none);
// - near the window's top or bottom edge the page scrolls while dragging;
// - the drop target says "evaluating" while the change is evaluated;
// - Ctrl+Z / Ctrl+Shift+Z (or Ctrl+Y) press Undo / Redo outside text fields;
// - after a change the keyboard's focus is where it was (docs/scenarios.md, "Changes").
// - a large cluster's first view says the planner is being prepared, or that it could
//   not be and how to try again (docs/scenarios.md, "The baseline").
//
// The page has an id of its own: its requests name it (X-Scenario-Page) and it tells its
// socket once open, so the server's push of a change skips the page that asked for it (the
// answer to its request already carries the new body; scenarios/consumers.py).
(function () {
  "use strict";

  const PAGE_ID = (window.crypto && crypto.randomUUID) ? crypto.randomUUID()
    : `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;

  document.addEventListener("htmx:configRequest", (event) => {
    const elt = event.detail.elt;
    if (elt && elt.closest && elt.closest(".scenario")) event.detail.headers["X-Scenario-Page"] = PAGE_ID;
  });
  document.addEventListener("htmx:wsOpen", (event) => {
    if (event.target.matches && event.target.matches(".scenario")) {
      event.detail.socketWrapper.send(JSON.stringify({ page: PAGE_ID }));
      event.target.dataset.pageSaid = "true"; // the socket now skips this page's own changes
    }
  });

  // A large cluster's first view is a placeholder that asks for the planner
  // (scenarios/htmx/body_pending.html): when that request fails, it says so and how to try
  // again, instead of saying for good that the baseline is being prepared.
  function planFailed(event) {
    const body = event.detail.elt;
    if (!body || body.id !== "scenario-body" || !body.hasAttribute("aria-busy")) return;
    const status = body.querySelector('[role="status"]');
    const code = event.detail.xhr && event.detail.xhr.status;
    if (status) {
      status.textContent = `The planner could not be prepared${code ? ` (HTTP ${code})` : ""}. ` +
        "Reload the page to try again.";
    }
    body.removeAttribute("aria-busy");
  }
  document.addEventListener("htmx:responseError", planFailed);
  document.addEventListener("htmx:sendError", planFailed);

  const THRESHOLD = 4; // pixels before a press becomes a drag (so clicks still work)
  const EDGE = 48; // pixels from the window's edge where auto-scroll starts
  const MAX_STEP = 18; // pixels scrolled per frame at the very edge

  function planner() { return document.querySelector(".scenario[data-editable='true']"); }

  function changeFor(source, zone) {
    const kind = source.dataset.drag;
    const target = zone.dataset.drop;
    if (kind === "pod" && target === "node") {
      return { op: "pin-pod", pod: source.dataset.pod, node: zone.dataset.node };
    }
    if (kind === "pod" && target === "queue") return { op: "unpin-pod", pod: source.dataset.pod };
    if (kind === "group" && (target === "canvas" || target === "node")) {
      return { op: "add-nodes", group: source.dataset.group, count: "1" };
    }
    if (kind === "node" && target === "bin") return { op: "remove-node", node: source.dataset.node };
    if (kind === "template" && (target === "canvas" || target === "node")) {
      const form = source.querySelector(".template-form");
      return {
        op: "try-request", template: source.dataset.template,
        count: form ? form.elements.count.value : "1",
        pr_class: form ? form.elements.pr_class.value : "",
      };
    }
    return null;
  }

  function zoneAt(x, y, source) {
    let el = document.elementFromPoint(x, y);
    while (el && el !== document.body) {
      // A node card is both draggable and a drop zone: never drop a node on itself.
      if (el.dataset && el.dataset.drop && el !== source) return el;
      el = el.parentElement;
    }
    return null;
  }

  function csrfHeaders() {
    try { return JSON.parse(document.body.getAttribute("hx-headers") || "{}"); } catch (e) { return {}; }
  }

  // -- where answers go --------------------------------------------------------------------

  // A selector that finds "the same" element again after the body was re-rendered.
  function keyOf(el) {
    if (el.dataset.drop === "node") return `[data-drop="node"][data-node="${CSS.escape(el.dataset.node)}"]`;
    if (el.dataset.drop) return `[data-drop="${el.dataset.drop}"]`;
    return null;
  }

  // The element a request's answer belongs to: the drop zone (a drop is sent from the
  // planner itself, which is never replaced, so its events always reach the page), else the
  // chip, node card or card holding the form or button that sent it.
  function answerHome(elt) {
    if (!elt || !elt.closest) return null;
    if (elt.matches(".scenario")) {
      return lastDrop && lastDrop.key ? document.querySelector(`#scenario-body ${lastDrop.key}`) : null;
    }
    return elt.closest("[data-drop], .chip, .node-card, .card, .toolbar");
  }

  function answerSpot(home) {
    let spot = home.querySelector(":scope > .answer");
    if (!spot) {
      spot = document.createElement("div");
      spot.className = "answer";
      spot.setAttribute("aria-live", "assertive");
      const heading = home.querySelector(":scope > h2, :scope > h3");
      if (heading) heading.after(spot);
      else if (home.matches(".chip")) home.append(spot);
      else home.prepend(spot);
    }
    return spot;
  }

  // The last successful drop: its zone (found again after each re-render) and what was done,
  // said there until the next request. It is placed after every swap of the body: the
  // answer, and any push that follows (a change of another page, or a refresh).
  const DONE_SHOWN_MS = 6000;
  let lastDrop = null; // {key, text, until}

  function placeDone() {
    if (!lastDrop || !lastDrop.key) return;
    if (!lastDrop.text) {
      const notice = document.querySelector("#scenario-body [data-last-change]");
      if (!notice) return;
      lastDrop.text = notice.textContent;
      lastDrop.until = Date.now() + DONE_SHOWN_MS;
    }
    if (Date.now() > lastDrop.until) { lastDrop = null; return; }
    const zone = document.querySelector(`#scenario-body ${lastDrop.key}`);
    if (!zone || zone.querySelector(":scope > .answer [data-done]")) return;
    const spot = answerSpot(zone);
    const said = document.createElement("p");
    said.className = "notice";
    said.dataset.done = "true";
    said.textContent = lastDrop.text;
    spot.replaceChildren(said);
  }

  // -- keyboard focus across re-renders --------------------------------------------------

  // A change re-renders the body, which would drop the focus to the page's start: a keyboard
  // user would tab through the whole page again. The focused control is remembered when a
  // request starts (where it lives: the chip, card or form holding it, and its place there)
  // and focused again in the new body; if it is gone, its chip or card, else Undo.
  const FOCUSABLE = "button, input:not([type=hidden]), select, summary, a[href], [tabindex]";
  let focusPlace = null; // {holder: () => Element|null, index}

  function holderFinder(el) {
    const chip = el.closest("[data-drag]");
    if (chip) {
      const key = ["pod", "group", "template", "node"].find((k) => chip.dataset[k] !== undefined);
      const selector = `[data-drag="${chip.dataset.drag}"][data-${key}="${CSS.escape(chip.dataset[key])}"]`;
      return () => document.querySelector(`#scenario-body ${selector}`);
    }
    const form = el.closest(".selector-form");
    if (form) {
      const object = form.elements.object.value, path = form.elements.path.value;
      return () => Array.from(document.querySelectorAll("#scenario-body .selector-form")).find(
        (f) => f.elements.object.value === object && f.elements.path.value === path) || null;
    }
    if (el.closest(".toolbar")) return () => document.querySelector("#scenario-body .toolbar");
    return null;
  }

  function rememberFocus() {
    const el = document.activeElement;
    const root = planner();
    focusPlace = null;
    if (!el || !root || !root.contains(el) || el.matches(".scenario")) return;
    const holder = holderFinder(el);
    if (!holder) return;
    const home = holder();
    const index = el === home ? -1 : Array.from(home.querySelectorAll(FOCUSABLE)).indexOf(el);
    focusPlace = { holder, index };
  }

  function restoreFocus() {
    if (!focusPlace) return;
    const active = document.activeElement;
    if (active && active !== document.body && active.isConnected) return; // not lost
    const home = focusPlace.holder();
    const tries = [];
    if (home) {
      if (focusPlace.index >= 0) tries.push(home.querySelectorAll(FOCUSABLE)[focusPlace.index]);
      tries.push(home);
    }
    tries.push(...document.querySelectorAll("#scenario-body [data-action]"));
    for (const el of tries) {
      if (!el || el.disabled) continue;
      el.focus({ preventScroll: true });
      if (document.activeElement === el) return; // not focusable (say, in a closed form): next
    }
  }
  // A person who moves on (a click, a drag) is not pulled back by a later re-render.
  document.addEventListener("pointerdown", () => { focusPlace = null; }, true);

  document.addEventListener("htmx:beforeRequest", (event) => {
    const root = planner();
    if (!root || !root.contains(event.target)) return;
    if (!event.target.matches(".scenario")) lastDrop = null;
    rememberFocus();
    root.dataset.busy = "true";
    const home = answerHome(event.target);
    if (home) {
      home.classList.add("busy");
      home.setAttribute("aria-busy", "true");
    }
  });

  document.addEventListener("htmx:afterRequest", (event) => {
    const root = planner();
    if (!root) return;
    delete root.dataset.busy;
    document.querySelectorAll(".scenario .busy").forEach((el) => {
      el.classList.remove("busy");
      el.removeAttribute("aria-busy");
    });
  });

  // Swaps keep the page where it is: a re-rendered body of another height, or focus moving
  // to a new element, would otherwise move it. Saved before each swap (the answer to a
  // request, or the socket's push), restored after.
  let savedScroll = null;
  function saveScroll() { savedScroll = { x: window.scrollX, y: window.scrollY }; }
  function restoreScroll() {
    if (savedScroll && (window.scrollX !== savedScroll.x || window.scrollY !== savedScroll.y)) {
      window.scrollTo(savedScroll.x, savedScroll.y);
    }
  }
  document.addEventListener("htmx:oobBeforeSwap", saveScroll);
  document.addEventListener("htmx:oobAfterSwap", restoreScroll);
  document.addEventListener("htmx:afterSwap", restoreScroll);

  // A push (another page's change, a refresh) may arrive before the answer and replace the
  // body the request aimed at: aim the answer at the body in the page now (beforeOnLoad is
  // fired on the request's source; a drop's is the planner, which stays).
  document.addEventListener("htmx:beforeOnLoad", (event) => {
    const target = event.detail.target;
    if (target && !target.isConnected && target.id && document.getElementById(target.id)) {
      event.detail.target = document.getElementById(target.id);
    }
  });

  document.addEventListener("htmx:beforeSwap", (event) => {
    saveScroll();
    const root = planner();
    const target = event.detail.target;
    if (!root || !target || target.id !== "scenario-message") return;
    // A refusal: show it where the change was asked, not at the top of the page.
    const elt = event.detail.requestConfig && event.detail.requestConfig.elt;
    const home = answerHome(elt);
    lastDrop = null;
    if (home && root.contains(home)) event.detail.target = answerSpot(home);
  });

  // The body is replaced by the answer to a request and by the socket's push; the events
  // of the first may fire on elements no longer in the page, so watch the page itself.
  function watchBody() {
    const root = document.querySelector(".scenario");
    if (!root) return;
    new MutationObserver(() => { restoreScroll(); placeDone(); restoreFocus(); })
      .observe(root, { childList: true });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", watchBody);
  else watchBody();

  function send(root, zone, values) {
    lastDrop = { key: keyOf(zone) };
    htmx.ajax("POST", root.dataset.changeUrl, {
      source: root, values: values, target: "#scenario-body", swap: "outerHTML",
      headers: csrfHeaders(),
    });
  }

  // -- dragging ----------------------------------------------------------------------------

  let drag = null;

  function clearHover() {
    document.querySelectorAll(".drop-hover").forEach((el) => el.classList.remove("drop-hover"));
  }

  function hover(x, y) {
    clearHover();
    const zone = zoneAt(x, y, drag.source);
    if (zone && changeFor(drag.source, zone)) zone.classList.add("drop-hover");
  }

  // Scroll while the pointer rests near the window's top or bottom edge.
  function autoScroll() {
    if (!drag || !drag.ghost) return;
    const y = drag.lastY;
    let step = 0;
    if (y < EDGE) step = -Math.ceil(MAX_STEP * (EDGE - y) / EDGE);
    else if (y > window.innerHeight - EDGE) step = Math.ceil(MAX_STEP * (y - (window.innerHeight - EDGE)) / EDGE);
    if (step) {
      window.scrollBy(0, step);
      hover(drag.lastX, drag.lastY);
    }
    drag.frame = requestAnimationFrame(autoScroll);
  }

  function endDrag(current) {
    document.body.classList.remove("dragging-active");
    if (current.frame) cancelAnimationFrame(current.frame);
    if (current.ghost) current.ghost.remove();
    current.source.classList.remove("dragging");
    clearHover();
  }

  document.addEventListener("pointerdown", (event) => {
    const root = planner();
    if (!root || event.button !== 0) return;
    const source = event.target.closest("[data-drag]");
    if (!source || !root.contains(source)) return;
    // a press on a control of the dragged element (its Move… form, a button) is not a drag;
    // the element may itself sit in a <details> (a queue group), which does not count
    const control = event.target.closest("button, input, select, textarea, a, summary, details, label");
    if (control && source.contains(control)) return;
    drag = { root, source, x: event.clientX, y: event.clientY, ghost: null, frame: 0 };
  });

  document.addEventListener("pointermove", (event) => {
    if (!drag) return;
    drag.lastX = event.clientX;
    drag.lastY = event.clientY;
    if (!drag.ghost) {
      if (Math.abs(event.clientX - drag.x) + Math.abs(event.clientY - drag.y) < THRESHOLD) return;
      document.body.classList.add("dragging-active");
      const selection = window.getSelection();
      if (selection) selection.removeAllRanges();
      drag.ghost = drag.source.cloneNode(true);
      drag.ghost.classList.add("drag-ghost");
      drag.ghost.removeAttribute("tabindex");
      drag.ghost.querySelectorAll("form, details, .answer").forEach((f) => f.remove());
      document.body.appendChild(drag.ghost);
      drag.source.classList.add("dragging");
      drag.frame = requestAnimationFrame(autoScroll);
    }
    drag.ghost.style.left = event.clientX + 8 + "px";
    drag.ghost.style.top = event.clientY + 8 + "px";
    hover(event.clientX, event.clientY);
    event.preventDefault();
  });

  // No text selection starts inside the planner while a press may become a drag.
  document.addEventListener("selectstart", (event) => {
    if (drag || document.body.classList.contains("dragging-active")) event.preventDefault();
  });

  document.addEventListener("pointerup", (event) => {
    if (!drag) return;
    const current = drag;
    drag = null;
    endDrag(current);
    if (!current.ghost) return; // a click, not a drag
    const zone = zoneAt(event.clientX, event.clientY, current.source);
    const values = zone && changeFor(current.source, zone);
    if (values) send(current.root, zone, values);
  });

  document.addEventListener("pointercancel", () => {
    if (!drag) return;
    const current = drag;
    drag = null;
    endDrag(current);
  });

  // -- keyboard ----------------------------------------------------------------------------

  function editing(el) {
    return el && (el.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName));
  }

  // Ctrl+Z undoes the last change, Ctrl+Shift+Z (or Ctrl+Y) redoes it, as in an editor;
  // inside a text field the field's own undo wins.
  document.addEventListener("keydown", (event) => {
    const root = planner();
    if (!root || !(event.ctrlKey || event.metaKey) || event.altKey) return;
    if (editing(event.target)) return;
    const key = event.key.toLowerCase();
    let action = null;
    if (key === "z") action = event.shiftKey ? "redo" : "undo";
    else if (key === "y" && !event.shiftKey) action = "redo";
    if (!action) return;
    event.preventDefault();
    const button = root.querySelector(`[data-action="${action}"]`);
    if (!button || button.disabled) return;
    // htmx wires a swapped-in body's buttons only when the swap settles (20 ms later): a key
    // pressed in between would click a dead button. Processing twice is a no-op.
    htmx.process(button);
    button.click();
  });

  // Enter on a focused pod opens its "Move to node" form; Enter on a node card focuses its
  // Remove button; on a group or template, its form.
  document.addEventListener("keydown", (event) => {
    if (event.key !== "Enter") return;
    const source = event.target.closest && event.target.closest("[data-drag]");
    if (!source || event.target !== source) return;
    if (source.dataset.drag === "pod") {
      const move = source.querySelector("details.move");
      if (move) {
        move.open = true;
        move.querySelector("input[name=node]").focus();
      } else {
        const form = document.querySelector(".move-form");
        if (!form) return;
        form.elements.pod.value = source.dataset.pod;
        form.elements.node.focus();
      }
    } else if (source.dataset.drag === "node") {
      // The card's own Remove button, not the buttons of the pods drawn in it.
      const remove = source.querySelector(":scope > form button");
      if (remove) remove.focus();
    } else {
      const control = source.querySelector("input[type=number], button");
      if (control) control.focus();
    }
    event.preventDefault();
  });
})();
