"""The admin: manifests through the services, CEL compiled on save, staff only."""

import pytest
from django.contrib.auth.models import User

from allocation import models
from allocation.engine.writer import dump
from allocation.services.manifests import import_texts
from tests import factories as f

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(client):
    client.force_login(User.objects.create_user("admin", is_staff=True))
    return client


@pytest.fixture
def params():
    import_texts([("a.yaml", f.to_yaml([
        f.class_parameters("filters", 'attributes["model"].string == "a100"')]))])
    return models.ResourceClassParameters.objects.get()


URL = "/admin/allocation/resourceclassparameters/"


def test_non_staff_cannot_use_the_admin(client, params):
    client.force_login(User.objects.create_user("alice"))
    response = client.get(f"{URL}{params.pk}/change/")
    assert response.status_code == 302 and "/admin/login/" in response["Location"]
    response = client.post(f"{URL}{params.pk}/change/", {"manifest": "x"})
    assert response.status_code == 302
    assert models.ResourceClassParameters.objects.get().document == params.document


def test_the_list_names_the_drivers_in_words(staff, params):
    html = staff.get(URL).content.decode()
    assert f'<td class="field-driver_list">{params.drivers.strip(",")}</td>' in html
    assert f">{params.drivers}<" not in html  # not the stored ",driver," column


def test_change_form_shows_the_manifest_and_each_selector(staff, params):
    html = staff.get(f"{URL}{params.pk}/change/").content.decode()
    assert "filters[0].namedResourcesWithAttributes.selector" in html
    assert "kind: ResourceClassParameters" in html


def test_a_broken_selector_is_shown_at_its_field_with_the_position(staff, params):
    page = staff.get(f"{URL}{params.pk}/change/")
    form = page.context["adminform"].form
    data = {"manifest": form["manifest"].initial, "cel_0": 'attributes["model"].string =='}
    response = staff.post(f"{URL}{params.pk}/change/", data)
    assert response.status_code == 200
    errors = response.context["adminform"].form.errors
    assert "cel_0" in errors and "line 1, column" in errors["cel_0"][0]
    assert models.ResourceClassParameters.objects.get().document == params.document
    data["cel_0"] = 'attributes["model"].string == "t4"'
    fixed = staff.post(f"{URL}{params.pk}/change/", data)
    assert fixed.status_code == 302
    saved = models.ResourceClassParameters.objects.get().manifest
    assert saved["filters"][0]["namedResourcesWithAttributes"]["selector"].endswith('"t4"')


def test_an_expensive_selector_is_shown_at_its_field_with_the_estimate(staff, params):
    page = staff.get(f"{URL}{params.pk}/change/")
    bomb = "['" + "a" * 1000 + "']"
    for level in range(7):
        bomb += f".map(v{level}, {'+'.join([f'v{level}'] * 8)})"
    data = {"manifest": page.context["adminform"].form["manifest"].initial,
            "cel_0": bomb + ".all(z, size(z) > 0)"}
    response = staff.post(f"{URL}{params.pk}/change/", data)
    assert response.status_code == 200
    assert response.context["adminform"].form.errors["cel_0"] == [
        "CEL expression too expensive: estimated cost 1,048,575,734 exceeds the limit of "
        "1,000,000"]
    assert models.ResourceClassParameters.objects.get().document == params.document


def test_add_validates_through_the_engine(staff):
    bad = f.resource_class("new")
    bad["driverNam"] = "x"
    response = staff.post("/admin/allocation/resourceclass/add/", {"manifest": dump(bad)})
    assert response.status_code == 200
    message = response.context["adminform"].form.errors["manifest"][0]
    assert message.startswith("line 2: admin:1 (ResourceClass new): driverNam:")  # its line
    good = staff.post("/admin/allocation/resourceclass/add/",
                      {"manifest": dump(f.resource_class("new"))})
    assert good.status_code == 302
    assert models.ResourceClass.objects.get().name == "new"


def test_a_numeric_template_is_compiled(staff):
    cls = f.resource_class("counter")
    del cls["structuredParameters"]
    cls["numericParameters"] = [{"apiVersion": "c.example.com/v1", "kind": "Params",
                                 "celTemplate": "required: {{ object.count + }}\n"}]
    response = staff.post("/admin/allocation/resourceclass/add/", {"manifest": dump(cls)})
    assert response.status_code == 200
    message = response.context["adminform"].form.errors["manifest"][0]
    assert message.startswith("numericParameters[0].celTemplate: template line 1, expression 1")
    assert not models.ResourceClass.objects.exists()


def test_delete_goes_through_the_services(staff, params):
    response = staff.post(f"{URL}{params.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302
    assert not models.ResourceClassParameters.objects.exists()
    assert models.Cluster.objects.get().revision == 2


DEVICE_CLASSES = "/admin/allocation/deviceclass/"


def test_a_device_class_selector_is_compiled_as_the_v1_cel_at_its_field(staff):
    from tests import v1_cluster as v1

    import_texts([("v1.yaml", f.to_yaml([v1.device_class()]))])
    stored = models.DeviceClass.objects.get()
    page = staff.get(f"{DEVICE_CLASSES}{stored.pk}/change/")
    form = page.context["adminform"].form
    assert form.fields["cel_0"].label == "spec.selectors[0].cel.expression"
    data = {"manifest": form["manifest"].initial, "cel_0": 'device.driver == '}
    response = staff.post(f"{DEVICE_CLASSES}{stored.pk}/change/", data)
    assert response.status_code == 200
    [error] = response.context["adminform"].form.errors["cel_0"]
    assert error.startswith("line 1, column")
    # A seed-dialect selector is not v1 CEL: the v1 compiler is the one used.
    data["cel_0"] = 'attributes["model"].string == "a100"'
    response = staff.post(f"{DEVICE_CLASSES}{stored.pk}/change/", data)
    assert "cel_0" in response.context["adminform"].form.errors
    assert models.DeviceClass.objects.get().document == stored.document
    data["cel_0"] = 'device.driver == "other.example.com"'
    assert staff.post(f"{DEVICE_CLASSES}{stored.pk}/change/", data).status_code == 302
    saved = models.DeviceClass.objects.get().manifest
    assert saved["spec"]["selectors"][0]["cel"]["expression"] == data["cel_0"]


def test_adding_a_device_class_with_a_bad_selector_names_the_field(staff):
    from tests import v1_cluster as v1

    bad = v1.device_class("new", 'device.capacity["gpu.example.com"].memory >= "8Gi"')
    response = staff.post(f"{DEVICE_CLASSES}add/", {"manifest": dump(bad)})
    assert response.status_code == 200
    [message] = response.context["adminform"].form.errors["manifest"]
    assert message.startswith("spec.selectors[0].cel.expression: ")
    assert not models.DeviceClass.objects.exists()
    good = staff.post(f"{DEVICE_CLASSES}add/", {"manifest": dump(v1.device_class("new"))})
    assert good.status_code == 302 and models.DeviceClass.objects.get().name == "new"


def test_a_device_class_selector_is_compiled_under_the_consoles_feature_gates(staff, settings):
    from tests import v1_cluster as v1

    gated = v1.device_class("new", "device.allowMultipleAllocations")
    settings.DRA_FEATURE_GATES = "DRAConsumableCapacity=false"
    response = staff.post(f"{DEVICE_CLASSES}add/", {"manifest": dump(gated)})
    assert response.status_code == 200
    [message] = response.context["adminform"].form.errors["manifest"]
    assert "allowMultipleAllocations" in message
    settings.DRA_FEATURE_GATES = ""  # the 1.36 default: the gate is on
    assert staff.post(f"{DEVICE_CLASSES}add/", {"manifest": dump(gated)}).status_code == 302


def test_the_manifest_is_yaml_as_people_write_it_not_sorted_json(staff):
    from tests import v1_cluster as v1

    cls = v1.device_class("gpu", 'device.driver == "gpu.example.com" &&\n'
                          '  device.attributes["gpu.example.com"].model == "a100"')
    import_texts([("v1.yaml", f.to_yaml([cls]))])
    stored = models.DeviceClass.objects.get()
    form = staff.get(f"{DEVICE_CLASSES}{stored.pk}/change/").context["adminform"].form
    assert form["manifest"].initial.splitlines()[:4] == [
        "apiVersion: resource.k8s.io/v1", "kind: DeviceClass", "metadata:", "  name: gpu"]
    assert "      expression: |-\n        device.driver == \"gpu.example.com\" &&\n" \
        in form["manifest"].initial


def test_an_unknown_attribute_is_a_warning_and_the_object_is_saved(staff):
    import_texts([("s.yaml", f.to_yaml([
        f.node("n1"), f.named_slice("n1", [f.device("d0", productName=("string", "T4"))])]))])
    doc = f.class_parameters("filters", 'strings["prodName"] == "T4"')
    text = "# filters for T4 cards\n" + dump(doc)

    response = staff.post("/admin/allocation/resourceclassparameters/add/",
                          {"manifest": text}, follow=True)

    assert response.status_code == 200
    assert models.ResourceClassParameters.objects.get().name == "filters"
    [warning] = [str(m) for m in response.context["messages"] if m.level_tag == "warning"]
    assert warning == ("Warning: line 6: admin:1 (ResourceClassParameters filters): "
                       "filters[0].namedResourcesWithAttributes.selector: no device in the "
                       "cluster has an attribute 'prodName' (did you mean productName?)")


def test_a_refused_change_keeps_the_typed_text(staff, params):
    page = staff.get(f"{URL}{params.pk}/change/")
    text = "# keep me\n" + page.context["adminform"].form["manifest"].initial.replace(
        "kind: ResourceClassParameters", "kind: ResourceClassParameters\nbogus: 1")

    response = staff.post(f"{URL}{params.pk}/change/", {"manifest": text,
                                                        "cel_0": params.manifest["filters"][0][
                                                            "namedResourcesWithAttributes"][
                                                            "selector"]})

    form = response.context["adminform"].form
    assert form.errors["manifest"] == [
        "line 4: admin:1 (ResourceClassParameters filters): bogus: unknown field"]
    assert "# keep me" in response.content.decode()


def test_a_device_class_selector_is_checked_as_new_by_the_consoles_release(staff, settings):
    """The save goes through the loader's rules (v1_rules): under the console's profile a
    changed selector is a new one for that release's API server (docs/cel.md)."""
    from tests import v1_cluster as v1

    listed = v1.device_class("new", "[3, 1].sort()[0] == 1 && device.driver != ''")
    settings.DRA_KUBERNETES_VERSION = "1.34"  # compatibility 1.33: no lists extension
    response = staff.post(f"{DEVICE_CLASSES}add/", {"manifest": dump(listed)})
    assert response.status_code == 200
    [message] = response.context["adminform"].form.errors["manifest"]
    assert "undeclared reference to 'sort'" in message
    assert "from compatibility version 1.34 on, not at 1.33" in message
    assert not models.DeviceClass.objects.exists()
    settings.DRA_KUBERNETES_VERSION = "1.35"
    assert staff.post(f"{DEVICE_CLASSES}add/", {"manifest": dump(listed)}).status_code == 302
