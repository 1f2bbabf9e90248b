"""The YAML views and editor in a real browser: each object's page shows its manifest
highlighted with a copy button; a refused edit shows the problem under its line with the text
kept as typed; a valid edit is saved and appears, live, on another open page."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import log_in
from tests.factories import to_yaml
from tests.v1_cluster import cluster

pytestmark = pytest.mark.browser

BROKEN = """\
# the GPU class: keep this comment
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: gpu
spec:
  selectors:
  - cel:
      expression: device.driver == "gpu.example.com" &&
"""

VALID = """\
# the GPU class: keep this comment
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: gpu
spec:
  selectors:
  - cel:
      expression: |
        device.driver == "gpu.example.com" &&
          device.attributes["gpu.example.com"].model == "h100"
"""


def test_an_error_is_shown_at_its_line_and_a_valid_edit_is_saved_and_live_elsewhere(
        asgi_page, services):
    services.import_texts([("c.yaml", to_yaml(cluster()))])
    watcher = asgi_page.open_another()
    log_in(watcher)
    watcher.goto("/deviceclasses/gpu/")
    expect(watcher.locator(".live")).to_have_attribute("data-socket", "open")
    watcher.evaluate("window.loadedOnce = true")

    asgi_page.goto("/deviceclasses/gpu/")
    asgi_page.get_by_role("link", name="Edit YAML").click()
    asgi_page.wait_for_url("**/edit/deviceclass/gpu/")
    editor = asgi_page.get_by_label("Manifest (YAML)")
    assert "kind: DeviceClass" in editor.input_value()
    editor.fill(BROKEN)
    asgi_page.get_by_role("button", name="Save").click()

    expect(asgi_page.get_by_role("heading", name="Not saved: 1 problem")).to_be_visible()
    line = asgi_page.locator("#yaml-line-9")
    expect(line).to_have_class("has-problem")
    expect(line).to_contain_text('expression: device.driver == "gpu.example.com" &&')
    expect(line.locator(".note.problem")).to_contain_text(
        "spec.selectors[0].cel.expression: invalid CEL selector")
    expect(asgi_page.locator(".yaml-lines li.has-problem")).to_have_count(1)
    expect(asgi_page.get_by_role("link", name="line 9")).to_be_visible()
    assert asgi_page.get_by_label("Manifest (YAML)").input_value().startswith(
        "# the GPU class: keep this comment\n")

    asgi_page.get_by_label("Manifest (YAML)").fill(VALID)
    asgi_page.get_by_role("button", name="Save").click()
    asgi_page.wait_for_url("**/deviceclasses/gpu/")
    expect(asgi_page.get_by_text("Saved DeviceClass gpu.")).to_be_visible()
    expect(asgi_page.locator(".message.warning")).to_have_count(0)  # "model" exists
    expect(watcher.locator("#device-class-detail")).to_contain_text('model == "h100"')
    expect(watcher.locator("#manifest-yaml")).to_contain_text('model == "h100"')
    assert watcher.evaluate("window.loadedOnce") is True
    # The refused save is an HTTP 400 by design; the browser logs that, nothing else.
    assert [e for e in asgi_page.js_errors if "status of 400" not in e] == []
    assert watcher.js_errors == []


def test_an_object_page_shows_its_yaml_highlighted_with_a_copy_button(asgi_page, services):
    services.import_texts([("c.yaml", to_yaml(cluster()))])

    asgi_page.goto("/nodes/n1/")

    block = asgi_page.locator("#manifest-yaml .highlight")
    expect(block).to_contain_text("kind: Node")
    expect(block.locator("span.nt").first).to_have_text("apiVersion")  # highlighted key
    asgi_page.get_by_role("button", name="Copy YAML").click()
    expect(asgi_page.locator("#manifest-yaml .copy-status")).to_have_text("Copied")
    asgi_page.get_by_role("link", name="YAML page").click()
    asgi_page.wait_for_url("**/yaml/node/n1/")
    expect(asgi_page.get_by_role("heading", name="Node n1")).to_be_visible()
    expect(asgi_page.locator("#manifest-yaml .highlight")).to_contain_text("name: n1")
    assert asgi_page.js_errors == []


# The lowest contrast between a piece of text and what is behind it, over every text node of
# the element (WCAG's ratio: 4.5 is the least for body text).
LOWEST_CONTRAST = """root => {
  const rgb = c => c.match(/[\\d.]+/g).map(Number);
  const lum = ([r, g, b]) => [r, g, b].map(v => { v /= 255;
    return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; })
    .reduce((s, v, i) => s + v * [0.2126, 0.7152, 0.0722][i], 0);
  const behind = el => { for (; el; el = el.parentElement) {
    const c = rgb(getComputedStyle(el).backgroundColor);
    if (c.length < 4 || c[3] > 0) return c; } return [255, 255, 255]; };
  let lowest = 99, where = "";
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    if (!n.textContent.trim()) continue;
    const a = lum(rgb(getComputedStyle(n.parentElement).color)), b = lum(behind(n.parentElement));
    const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
    if (ratio < lowest) { lowest = ratio; where = n.textContent.trim().slice(0, 40); }
  }
  return [Math.round(lowest * 100) / 100, where];
}"""


def test_yaml_and_its_problems_are_readable_in_dark_mode(asgi_page, services):
    services.import_texts([("c.yaml", to_yaml(cluster()))])
    asgi_page.emulate_media(color_scheme="dark")

    asgi_page.goto("/nodes/n1/")
    block = asgi_page.locator("#manifest-yaml .highlight pre")
    expect(block).to_contain_text("kind: Node")
    lowest, where = block.evaluate(LOWEST_CONTRAST)
    assert lowest >= 4.5, f"{where!r} has contrast {lowest} on its background"

    asgi_page.goto("/edit/deviceclass/gpu/")
    asgi_page.get_by_label("Manifest (YAML)").fill(BROKEN)
    asgi_page.get_by_role("button", name="Save").click()
    lines = asgi_page.locator(".yaml-lines")
    expect(lines.locator("li.has-problem")).to_have_count(1)
    lowest, where = lines.evaluate(LOWEST_CONTRAST)
    assert lowest >= 4.5, f"{where!r} has contrast {lowest} on its background"
