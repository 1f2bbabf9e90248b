"""allocation.views.manifests: YAML pages and the YAML editor, through the real services."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from allocation.models import DeviceClass, Node
from allocation.services.manifests import import_texts
from tests import factories as f
from tests import v1_cluster as v1


@pytest.fixture
def stored(db):
    import_texts([("c.yaml", f.to_yaml(v1.cluster()))])


def _edit_url(kind: str, name: str) -> str:
    return reverse("allocation:yaml_edit", args=[kind, name])


def _fingerprint(html: str) -> str:
    return re.search(r'name="fingerprint" value="([0-9a-f]+)"', html).group(1)


@pytest.mark.django_db
def test_every_object_page_shows_its_manifest_highlighted(stored, client, django_user_model):
    client.force_login(django_user_model.objects.create_user("u"))
    for url in ("/nodes/n1/", "/deviceclasses/gpu/", "/resourceslices/n1-gpus/",
                "/claims/default/c1/", "/pods/default/p1/"):
        html = client.get(url).content.decode()
        assert 'id="manifest-yaml"' in html, url
        assert 'class="highlight"' in html and "Copy YAML" in html, url
    node_page = client.get("/nodes/n1/").content.decode()
    assert '<span class="nt">apiVersion</span>' in node_page
    assert "Edit YAML" not in node_page  # not staff


@pytest.mark.django_db
def test_yaml_page_writes_multiline_selectors_as_blocks(client, admin_user):
    cls = v1.device_class("gpu", 'device.driver == "gpu.example.com" &&\n'
                          '  device.attributes["gpu.example.com"].model == "a100"')
    import_texts([("c.yaml", f.to_yaml([cls]))])
    client.force_login(admin_user)

    response = client.get(reverse("allocation:yaml", args=["deviceclass", "gpu"]))

    html = response.content.decode()
    assert "expression: |" in re.sub(r"<[^>]+>", "", html)
    assert "Edit YAML" in html


@pytest.mark.django_db
def test_editor_keeps_comments_of_a_refused_text_and_shows_problems_at_their_lines(
        stored, admin_client):
    page = admin_client.get(_edit_url("deviceclass", "gpu")).content.decode()
    text = ("# our GPUs\napiVersion: resource.k8s.io/v1\nkind: DeviceClass\n"
            "metadata:\n  name: gpu\nspec:\n  selectors:\n  - cel:\n"
            "      expression: device.driver ==\n")

    response = admin_client.post(_edit_url("deviceclass", "gpu"),
                                 {"text": text, "fingerprint": _fingerprint(page)})

    assert response.status_code == 400
    html = response.content.decode()
    assert "# our GPUs" in html  # the text as typed, comment and all
    assert re.search(r'<li id="yaml-line-9" data-line="9" class="has-problem">', html)
    assert '<a href="#yaml-line-9">line 9</a>' in html
    assert "spec.selectors[0].cel.expression" in html
    assert DeviceClass.objects.get(name="gpu").manifest == v1.cluster()[1]


@pytest.mark.django_db
def test_editor_saves_through_the_services_and_warns_of_unknown_attributes(
        stored, admin_client):
    page = admin_client.get(_edit_url("deviceclass", "gpu")).content.decode()
    text = ("apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata:\n  name: gpu\n"
            "spec:\n  selectors:\n  - cel:\n      expression: >-\n"
            "        device.attributes[\"gpu.example.com\"].modl == \"a100\"\n")

    response = admin_client.post(_edit_url("deviceclass", "gpu"),
                                 {"text": text, "fingerprint": _fingerprint(page)}, follow=True)

    assert response.redirect_chain == [("/deviceclasses/gpu/", 302)]
    html = response.content.decode()
    assert "Saved DeviceClass gpu." in html
    assert ("Warning: line 8: editor.yaml:1 (DeviceClass gpu): spec.selectors[0].cel.expression:"
            " no device in the cluster has an attribute &#x27;gpu.example.com/modl&#x27; "
            "(did you mean gpu.example.com/model?)") in html
    stored_doc = DeviceClass.objects.get(name="gpu").manifest
    assert stored_doc["spec"]["selectors"][0]["cel"]["expression"] == \
        'device.attributes["gpu.example.com"].modl == "a100"'


@pytest.mark.django_db
def test_editor_refuses_a_text_older_than_the_stored_object(stored, admin_client):
    page = admin_client.get(_edit_url("node", "n1")).content.decode()
    import_texts([("n.yaml", f.to_yaml([f.node("n1", labels={"gpu": "yes"})]))])
    text = re.search(r'<textarea[^>]*>(.*?)</textarea>', page, re.S).group(1)

    response = admin_client.post(_edit_url("node", "n1"),
                                 {"text": text, "fingerprint": _fingerprint(page)})

    assert response.status_code == 400
    assert "changed since you opened the editor" in response.content.decode()
    assert Node.objects.get(name="n1").manifest["metadata"]["labels"] == {"gpu": "yes"}


@pytest.mark.django_db
def test_only_staff_edit_and_only_the_editable_kinds(stored, client, admin_client,
                                                     django_user_model):
    client.force_login(django_user_model.objects.create_user("u"))
    assert client.get(_edit_url("node", "n1")).status_code == 403
    assert admin_client.get(reverse("allocation:yaml_edit",
                                    args=["pod", "default", "p1"])).status_code == 403
    assert admin_client.get(_edit_url("node", "missing")).status_code == 404
    assert admin_client.get(_edit_url("nosuchkind", "n1")).status_code == 404


@pytest.mark.django_db
def test_index_lists_the_editable_objects(stored, admin_client):
    html = admin_client.get(reverse("allocation:yaml_index")).content.decode()

    assert 'href="/yaml/node/n1/"' in html and 'href="/edit/deviceclass/gpu/"' in html
    assert "/yaml/pod/" not in html
