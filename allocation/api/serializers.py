"""Serializers, renderers and parsers of the REST API.

Objects travel as the manifests themselves (``apiVersion``, ``kind``, ``metadata`` and the
kind's own fields), lists as ``v1 List``. Request bodies are kept as text: the engine's
loader reads them, so a POSTed manifest is validated exactly like a file.
"""

from __future__ import annotations

from dataclasses import dataclass

from rest_framework import exceptions, parsers, renderers, serializers

from allocation.engine.manifests.reader import DocumentError, read_json_value
from allocation.engine.writer import dump
from console.limits import RequestTooLarge, read_bounded

__all__ = ["ManifestSerializer", "ManifestListSerializer", "ProblemsSerializer",
           "ManifestText", "BoundedJSONParser", "YAMLManifestParser", "JSONManifestParser",
           "YAMLRenderer"]


class ManifestSerializer(serializers.Serializer):
    """One Kubernetes-style object: the stored document as it is."""

    apiVersion = serializers.CharField()  # noqa: N815 - the manifest's own field names
    kind = serializers.CharField()
    metadata = serializers.DictField()

    def to_representation(self, instance) -> dict:
        return instance.manifest


class ManifestListSerializer(serializers.Serializer):
    """A ``v1 List`` of objects."""

    apiVersion = serializers.CharField(default="v1")  # noqa: N815
    kind = serializers.CharField(default="List")
    items = ManifestSerializer(many=True)


class ProblemsSerializer(serializers.Serializer):
    """Why a write was refused: every problem, ``FILE:DOC (Kind ns/name): path: message``."""

    problems = serializers.ListField(child=serializers.CharField())


@dataclass(frozen=True)
class ManifestText:
    """A request body, undecoded: the loader parses it (and reports its problems)."""

    text: str
    file: str


class BodyTooLarge(exceptions.APIException):
    status_code = 413
    default_code = "request_too_large"


class _TextParser(parsers.BaseParser):
    file = "request.yaml"

    def parse(self, stream, media_type=None, parser_context=None) -> ManifestText:
        try:  # a body without Content-Length (larger ones never get here: console.limits)
            raw = read_bounded(stream)
        except RequestTooLarge as exc:
            raise BodyTooLarge(str(exc)) from None
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise parsers.ParseError(f"the body is not UTF-8: {exc}") from None
        return ManifestText(text, self.file)


class YAMLManifestParser(_TextParser):
    media_type = "application/yaml"


class YAMLAliasParser(_TextParser):
    media_type = "application/x-yaml"


class TextYAMLParser(_TextParser):
    media_type = "text/yaml"


class JSONManifestParser(_TextParser):
    media_type = "application/json"
    file = "request.json"


class BoundedJSONParser(parsers.JSONParser):
    """JSON bodies of the other endpoints (scenario changes, ...), read within the manifest
    bounds: the depth, number range and duplicate-key checks of the engine's reader.

    DRF's own parser recurses through ``json.loads`` and lets the last duplicate key win.
    """

    def parse(self, stream, media_type=None, parser_context=None):
        raw = stream.read() if stream is not None else b""
        try:
            value, problems = read_json_value(raw.decode("utf-8"))
        except UnicodeDecodeError as exc:
            raise parsers.ParseError(f"the body is not UTF-8: {exc}") from None
        except DocumentError as exc:
            where = f"{exc.path}: " if exc.path else ""
            raise parsers.ParseError(f"{where}{exc.message}") from None
        if problems:
            raise parsers.ParseError("; ".join(f"{path}: {message}"
                                               for path, message in problems))
        return value


PARSERS = [JSONManifestParser, YAMLManifestParser, YAMLAliasParser, TextYAMLParser]


class YAMLRenderer(renderers.BaseRenderer):
    """Block-style YAML through the engine's deterministic writer (``?format=yaml``)."""

    media_type = "application/yaml"
    format = "yaml"
    charset = "utf-8"

    def render(self, data, accepted_media_type=None, renderer_context=None) -> bytes:
        if data is None:
            return b""
        return dump(data, "yaml").encode("utf-8")
