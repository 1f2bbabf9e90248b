"""allocation.views.upload: manifests in through the services; problems listed, all or nothing."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from allocation.services import cluster
from allocation.services.manifests import export_documents
from tests.factories import node, pod, to_yaml

URL = "/upload/"


def test_upload_url():
    assert reverse("allocation:upload") == URL


@pytest.mark.django_db
def test_form_renders(admin_client):
    html = admin_client.get(URL).content.decode()

    assert 'enctype="multipart/form-data"' in html
    assert 'name="files"' in html and 'name="text"' in html


@pytest.mark.django_db
def test_files_and_pasted_text_are_imported_together(admin_client):
    files = [SimpleUploadedFile("nodes.yaml", to_yaml([node("n1")]).encode())]

    response = admin_client.post(URL, {"files": files, "text": to_yaml([pod("p")])},
                                 follow=True)

    assert response.redirect_chain == [("/dashboard/", 302)]
    assert "Imported: 2 created" in response.content.decode()
    assert [(d["kind"], d["metadata"]["name"]) for d in export_documents()] == [
        ("Node", "n1"), ("Pod", "p")]


@pytest.mark.django_db
def test_invalid_input_lists_every_problem_and_changes_nothing(admin_client):
    admin_client.post(URL, {"text": to_yaml([node("kept")])})
    before = (cluster.revision(), export_documents())
    bad = "apiVersion: v1\nkind: Node\nmetadata: {name: Bad_Name}\n---\nkind: Pod\n"

    response = admin_client.post(URL, {"files": [SimpleUploadedFile("bad.yaml", bad.encode())],
                                       "text": to_yaml([node("new")])})

    assert response.status_code == 400
    html = response.content.decode()
    assert "Nothing was imported" in html
    assert "bad.yaml:1 (Node Bad_Name): metadata.name:" in html
    assert "bad.yaml:2" in html  # the second document's problem too
    assert (cluster.revision(), export_documents()) == before


@pytest.mark.django_db
def test_binary_file_and_empty_form_are_refused(admin_client):
    response = admin_client.post(URL, {"files": [SimpleUploadedFile("x.yaml", b"\xff\xfe")]})
    assert response.status_code == 400
    assert "x.yaml: not UTF-8 text" in response.content.decode()

    response = admin_client.post(URL, {"text": "   "})
    assert "Choose at least one file or paste some YAML." in response.content.decode()


@pytest.mark.django_db
def test_a_non_staff_user_is_refused_the_page_and_imports_nothing(client, django_user_model):
    """The Upload link is hidden from them (docs/console-pages.md), so is the page itself:
    even kinds they may write through the API (a pod) are refused here."""
    user = django_user_model.objects.create_user("ada", password="pw-analytical-1843")
    client.force_login(user)

    refused = client.get(URL)
    assert refused.status_code == 403
    assert "Only staff upload manifests; scripts use the REST API." in refused.content.decode()
    for docs in ([node("n1")], [pod("p1")]):
        response = client.post(URL, {"text": to_yaml(docs)})
        assert response.status_code == 403
    assert export_documents() == []


@pytest.mark.django_db
def test_a_non_staff_upload_over_the_limit_is_refused_as_well(client, django_user_model,
                                                              settings):
    settings.DRA_MAX_UPLOAD_BYTES = 100
    user = django_user_model.objects.create_user("ada", password="pw-analytical-1843")
    client.force_login(user)

    response = client.post(URL, {"text": to_yaml([pod("p1")]) * 5})

    assert response.status_code == 403
    assert export_documents() == []


@pytest.mark.django_db
def test_upload_requires_login(client):
    response = client.post(URL, {"text": to_yaml([node("n1")])})
    assert response.status_code == 302
    assert export_documents() == []


@pytest.mark.django_db
def test_an_upload_over_the_limit_is_a_form_error_naming_it(admin_client, settings,
                                                            monkeypatch):
    """Refused before the body is parsed: the multipart parser is never called."""
    from django.http.multipartparser import MultiPartParser

    settings.DRA_MAX_UPLOAD_BYTES = 4096
    monkeypatch.setattr(MultiPartParser, "parse", lambda self: pytest.fail("body was read"))
    big = to_yaml([node(f"n{i}") for i in range(100)]).encode()
    assert len(big) > 4096

    response = admin_client.post(URL, {"files": [SimpleUploadedFile("big.yaml", big)]})

    assert response.status_code == 413
    html = response.content.decode()
    assert "Nothing was imported" in html
    assert "the limit is 4 KiB per request (DRA_MAX_UPLOAD_BYTES)" in html
    assert 'name="files"' in html  # the form, to try again
    assert export_documents() == []


@pytest.mark.django_db
def test_files_and_text_count_together_against_the_limit(admin_client, settings):
    settings.DRA_MAX_UPLOAD_BYTES = 4096
    half = to_yaml([node(f"n{i}") for i in range(25)])
    assert 2048 < len(half) < 4096

    response = admin_client.post(URL, {"files": [SimpleUploadedFile("a.yaml", half.encode())],
                                       "text": half.replace("name: n", "name: m")})

    assert response.status_code == 413
    assert "(DRA_MAX_UPLOAD_BYTES)" in response.content.decode()
    assert export_documents() == []


@pytest.mark.django_db
def test_an_anonymous_upload_over_the_limit_goes_to_the_login_page(client, settings):
    settings.DRA_MAX_UPLOAD_BYTES = 100

    response = client.post(URL, {"text": to_yaml([node("n1")]) * 5})

    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


@pytest.mark.django_db
def test_an_upload_with_an_unknown_selector_attribute_is_imported_with_a_warning(admin_client):
    from tests import factories as f

    text = to_yaml([node("n1"), f.named_slice("n1", [f.device("d0", model=("string", "t4"))]),
                    f.class_parameters("p", 'strings["modl"] == "t4"')])

    response = admin_client.post(URL, {"text": text}, follow=True)

    html = response.content.decode()
    assert response.redirect_chain == [("/dashboard/", 302)]
    assert "Imported: 3 created" in html
    assert ("Warning: pasted.yaml:3 (ResourceClassParameters p): filters[0]."
            "namedResourcesWithAttributes.selector: no device in the cluster has an attribute "
            "&#x27;modl&#x27; (did you mean model?)") in html
