"""Console flows in a real browser: a claim created through the REST API turns allocated on
open pages without reload, and a broken CEL selector is fixed in the admin after its error."""

from __future__ import annotations

import json
import re

import pytest
from playwright.sync_api import expect

from allocation import models
from tests.allocation.presenters.docs import cluster_docs
from tests.factories import claim, class_parameters, pod, resource_class, to_yaml

pytestmark = pytest.mark.browser


def _stored(services, docs: list[dict]) -> None:
    services.import_texts([("cluster.yaml", to_yaml(docs))])
    services.reconcile()


def _open_live(page, path: str) -> None:
    page.goto(path)
    expect(page.locator(".live")).to_have_attribute("data-socket", "open")
    page.evaluate("window.loadedOnce = true")  # gone if the page reloads


def _api_post(page, path: str, doc: dict, csrf: bool = True):
    """POST a manifest to the live server's API with the page's session (and CSRF token)."""
    headers = {"Content-Type": "application/json"}
    if csrf:
        token = next(c["value"] for c in page.context.cookies() if c["name"] == "csrftoken")
        headers["X-CSRFToken"] = token
    return page.request.post(path, data=json.dumps(doc), headers=headers)


def test_a_claim_created_through_the_api_turns_allocated_on_the_open_node_page(asgi_page,
                                                                                services):
    _stored(services, cluster_docs())
    _open_live(asgi_page, "/nodes/gpu-node/")
    leaf = asgi_page.locator('.box.instance[data-id="gpu-0/halves/half-1"]')
    expect(leaf).to_have_attribute("data-status", "free")
    new_claim = claim("half-b", "mig", params="half")

    refused = _api_post(asgi_page, "/api/resourceclaims/", new_claim, csrf=False)
    assert refused.status == 403  # session authentication wants the CSRF token
    created = _api_post(asgi_page, "/api/resourceclaims/", new_claim)
    assert created.status == 201, created.text()
    user = _api_post(asgi_page, "/api/pods/", pod("second-half-user", claims={"gpu": "half-b"}))
    assert user.status == 201, user.text()
    expect(leaf).to_have_attribute("data-status", "free")  # stored, not yet reconciled

    services.reconcile()

    expect(leaf).to_have_attribute("data-status", "allocated")
    expect(leaf.locator("a.claim")).to_have_text("default/half-b")
    assert asgi_page.evaluate("window.loadedOnce") is True
    assert asgi_page.js_errors == []


def test_an_api_claim_turns_allocated_on_its_open_claim_page(asgi_page, services):
    _stored(services, cluster_docs())
    created = _api_post(asgi_page, "/api/resourceclaims/", claim("half-b", "mig", params="half"))
    assert created.status == 201, created.text()
    _open_live(asgi_page, "/claims/default/half-b/")
    state = asgi_page.locator("[data-claim-state]")
    expect(state).to_have_text("pending")

    user = _api_post(asgi_page, "/api/pods/", pod("second-half-user", claims={"gpu": "half-b"}))
    assert user.status == 201, user.text()
    services.reconcile()

    expect(state).to_have_text("reserved")  # allocated, and reserved for the pod
    detail = asgi_page.locator("#claim-detail")
    expect(detail.get_by_role("link", name="gpu-node")).to_be_visible()
    expect(detail.locator("code", has_text="gpu-0/halves/half-1")).to_be_visible()
    assert asgi_page.evaluate("window.loadedOnce") is True
    assert asgi_page.js_errors == []


def test_a_broken_selector_is_shown_in_the_admin_and_fixed(asgi_page, services):
    _stored(services, [resource_class("cards", params="filters"),
                       class_parameters("filters", 'attributes["model"].string == "a100"')])
    params = models.ResourceClassParameters.objects.get(name="filters")
    asgi_page.goto(f"/admin/allocation/resourceclassparameters/{params.pk}/change/")
    selector = asgi_page.locator('textarea[name="cel_0"]')
    expect(selector).to_have_value('attributes["model"].string == "a100"')
    row = asgi_page.locator(".form-row.field-cel_0")
    expect(row).to_contain_text("filters[0].namedResourcesWithAttributes.selector")

    selector.fill('attributes["model"].string ==')
    asgi_page.get_by_role("button", name="Save", exact=True).click()

    error = row.locator(".errorlist")
    expect(error).to_contain_text(re.compile(r"line 1, column 30: the expression ends too early"))
    expect(selector).to_have_value('attributes["model"].string ==')  # kept for fixing
    assert models.ResourceClassParameters.objects.get().document == params.document

    selector.fill('attributes["model"].string == "t4"')
    asgi_page.get_by_role("button", name="Save", exact=True).click()

    expect(asgi_page.locator(".messagelist .success")).to_contain_text("changed successfully")
    assert asgi_page.locator(".errorlist").count() == 0
    saved = models.ResourceClassParameters.objects.get().manifest
    assert saved["filters"][0]["namedResourcesWithAttributes"]["selector"] == \
        'attributes["model"].string == "t4"'
