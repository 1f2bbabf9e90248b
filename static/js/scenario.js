// Drag and drop for the what-if planner, with pointer events (mouse, pen and touch alike).
//
// Draggables carry data-drag="pod|group|node|template"; drop zones data-drop="node|queue|
// bin|canvas". A drop becomes the same form fields the planner's buttons post, sent with
// htmx so the answer (the re-rendered body, or the engine's refusal) is swapped in the
// same way. Every drag has a button or form equivalent in the page for keyboard users.
(function () {
  "use strict";

  const THRESHOLD = 4; // pixels before a press becomes a drag (so clicks still work)

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

  function send(root, values) {
    htmx.ajax("POST", root.dataset.changeUrl, {
      values: values, target: "#scenario-body", swap: "outerHTML", headers: csrfHeaders(),
    });
  }

  let drag = null;

  function clearHover() {
    document.querySelectorAll(".drop-hover").forEach((el) => el.classList.remove("drop-hover"));
  }

  document.addEventListener("pointerdown", (event) => {
    const root = planner();
    if (!root || event.button !== 0) return;
    const source = event.target.closest("[data-drag]");
    if (!source || !root.contains(source)) return;
    if (event.target.closest("button, input, select, textarea, a")) return;
    drag = { root, source, x: event.clientX, y: event.clientY, ghost: null };
  });

  document.addEventListener("pointermove", (event) => {
    if (!drag) return;
    if (!drag.ghost) {
      if (Math.abs(event.clientX - drag.x) + Math.abs(event.clientY - drag.y) < THRESHOLD) return;
      drag.ghost = drag.source.cloneNode(true);
      drag.ghost.classList.add("drag-ghost");
      drag.ghost.querySelectorAll("form").forEach((f) => f.remove());
      document.body.appendChild(drag.ghost);
      drag.source.classList.add("dragging");
    }
    drag.ghost.style.left = event.clientX + 8 + "px";
    drag.ghost.style.top = event.clientY + 8 + "px";
    clearHover();
    const zone = zoneAt(event.clientX, event.clientY, drag.source);
    if (zone && changeFor(drag.source, zone)) zone.classList.add("drop-hover");
    event.preventDefault();
  });

  document.addEventListener("pointerup", (event) => {
    if (!drag) return;
    const current = drag;
    drag = null;
    clearHover();
    if (!current.ghost) return; // a click, not a drag
    current.ghost.remove();
    current.source.classList.remove("dragging");
    const zone = zoneAt(event.clientX, event.clientY, current.source);
    const values = zone && changeFor(current.source, zone);
    if (values) send(current.root, values);
  });

  // Keyboard: Enter on a focused pod fills the toolbar's Move form and focuses its node
  // field; Enter on a node card focuses its Remove button; on a group or template, its form.
  document.addEventListener("keydown", (event) => {
    if (event.key !== "Enter") return;
    const source = event.target.closest && event.target.closest("[data-drag]");
    if (!source || event.target !== source) return;
    if (source.dataset.drag === "pod") {
      const form = document.querySelector(".move-form");
      if (!form) return;
      form.elements.pod.value = source.dataset.pod;
      form.elements.node.focus();
    } else {
      const control = source.querySelector("input[type=number], button");
      if (control) control.focus();
    }
    event.preventDefault();
  });
})();
