"""One read-only connection to an API server, through the ``kubernetes`` package.

The ``kubernetes`` package loads the kubeconfig (a path, ``KUBECONFIG``, or the in-cluster
service account), authenticates and speaks TLS; this module only ever sends ``GET``
(get, list and watch: docs/live-cluster.md, "Permissions"), and reads the answers as plain
JSON so every object keeps the exact shape the API server gave it.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import urllib3
from kubernetes import client as k8s_client
from kubernetes import config as k8s_config

__all__ = ["Connection", "SourceError", "AccessDenied", "Gone", "NotServed", "connect",
           "parse_json", "part_at", "IN_CLUSTER"]

IN_CLUSTER = "in-cluster"
"""The context name shown for the service account of the pod the planner runs in."""

_TIMEOUT = (10.0, 60.0)
"""(connect, read) seconds for a list page; a watch reads without a read timeout."""


class SourceError(Exception):
    """The cluster could not be read; the message says what and why, for a person."""


class AccessDenied(SourceError):
    """403: the credentials lack a permission; the message names verb and resource."""


class NotServed(SourceError):
    """404: the API server does not serve this path (an API group or version)."""


class Gone(SourceError):
    """410 Gone: the resourceVersion asked for is too old; list again."""


@dataclass
class Connection:
    """A loaded configuration: the API client, the context's name and the server URL."""

    api: k8s_client.ApiClient
    context: str
    server: str

    def get_json(self, path: str, query: dict[str, Any] | None = None,
                 verb: str = "get") -> dict:
        """GET ``path`` and return the JSON body.

        Raises:
            AccessDenied, NotServed, Gone, SourceError: the server refused or was unreachable,
            or the answer is not JSON.
        """
        return parse_json(self.get_body(path, query, verb), path)

    def get_body(self, path: str, query: dict[str, Any] | None = None,
                 verb: str = "get") -> bytes:
        """GET ``path`` and return the body as sent (a list page's bytes can go to another
        process whole: ``clusters/prechecks.py``).

        Raises:
            AccessDenied, NotServed, Gone, SourceError: the server refused or was unreachable.
        """
        response = self._get(path, query, _TIMEOUT, verb)
        try:
            return response.data
        finally:
            response.release_conn()

    def stream_lines(self, path: str, query: dict[str, Any],
                     read_timeout: float | None = None) -> Iterator[bytes]:
        """GET ``path`` as a stream (a watch): yield each non-empty line as it arrives.

        Raises:
            AccessDenied, NotServed, Gone, SourceError: the server refused or was unreachable
            (also while streaming: a dropped connection is a SourceError).
        """
        response = self._get(path, query, (_TIMEOUT[0], read_timeout), "watch")
        buffer = b""
        try:
            for chunk in response.stream(amt=None, decode_content=False):
                buffer += chunk
                while b"\n" in buffer:
                    line, buffer = buffer.split(b"\n", 1)
                    if line.strip():
                        yield line
            if buffer.strip():
                yield buffer
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            raise SourceError(f"watch {path}: connection lost: {exc}") from None
        finally:
            response.release_conn()

    def _get(self, path: str, query: dict[str, Any] | None, timeout, verb: str):
        url = path + ("?" + urlencode(query) if query else "")
        method, full_url, headers, _body, _post = self.api.param_serialize(
            "GET", url, header_params={"Accept": "application/json"},
            auth_settings=["BearerToken"])
        try:
            response = self.api.rest_client.pool_manager.request(
                "GET", full_url, headers=headers, preload_content=False,
                timeout=urllib3.Timeout(connect=timeout[0], read=timeout[1]), retries=False)
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            raise SourceError(f"GET {self.server}{path}: cannot reach the API server: "
                              f"{exc}") from None
        if response.status == 200:
            return response
        body = response.data.decode("utf-8", "replace")
        response.release_conn()
        raise _refusal(response.status, verb, path, body)


def parse_json(body: bytes, path: str) -> dict:
    """The JSON object of an answer to GET ``path`` (every answer of the Kubernetes API is
    one: a list, a discovery document, a status).

    Raises:
        SourceError: the answer is not JSON, or not an object.
    """
    try:
        document = json.loads(body)
    except ValueError as exc:
        raise SourceError(f"GET {path}: the answer is not JSON: {exc}") from None
    if not isinstance(document, dict):
        raise SourceError(f"GET {path}: the answer is not a JSON object: {body[:200]!r}")
    return document


def part_at(document: dict, key: str, path: str, expected: type[dict] | type[list]
            ) -> dict | list:
    """``document[key]`` of an answer to GET ``path``: of the ``expected`` type (an object
    or a list), or an empty one when absent or null.

    Raises:
        SourceError: it is something else.
    """
    value = document.get(key)
    if value is None:
        return expected()
    if not isinstance(value, expected):
        said = "an object" if expected is dict else "a list"
        raise SourceError(f"GET {path}: {key} is not {said}: {str(value)[:200]}")
    return value


def _refusal(status: int, verb: str, path: str, body: str) -> SourceError:
    message = body
    with contextlib.suppress(ValueError, AttributeError):
        message = json.loads(body).get("message", body)
    if status == 403:
        return AccessDenied(f"{verb} {_resource(path)}: forbidden: the credentials lack the "
                            f"permission to {verb} {_resource(path)} (the ClusterRole in "
                            f"docs/rbac/draplanner-mirror.yaml grants it): {message}")
    if status == 404:
        return NotServed(f"GET {path}: not served by this API server")
    if status == 410:
        return Gone(f"{verb} {path}: 410 Gone: {message}")
    return SourceError(f"{verb} {path}: HTTP {status}: {message}")


def _resource(path: str) -> str:
    """``resourceclaims.resource.k8s.io`` for ``/apis/resource.k8s.io/v1/resourceclaims``."""
    parts = [p for p in path.split("?")[0].split("/") if p]
    if parts[:1] == ["api"] and len(parts) >= 3:
        return parts[-1] if len(parts) == 3 else parts[3]
    if parts[:1] == ["apis"] and len(parts) >= 4:
        return f"{parts[3]}.{parts[1]}"
    return path


def connect(kubeconfig: str | None = None, context: str | None = None) -> Connection:
    """Load credentials from ``kubeconfig`` (else ``KUBECONFIG``, else the in-cluster service
    account, else ``~/.kube/config``); nothing is kept but the in-memory client.

    Raises:
        SourceError: no usable configuration, or the context does not exist.
    """
    configuration = k8s_client.Configuration()
    in_cluster = (kubeconfig is None and not os.environ.get("KUBECONFIG")
                  and bool(os.environ.get("KUBERNETES_SERVICE_HOST")))
    try:
        if in_cluster:
            k8s_config.load_incluster_config(client_configuration=configuration)
            name = IN_CLUSTER
        else:
            # Read here, not at import time as the package's default does.
            kubeconfig = kubeconfig or os.environ.get("KUBECONFIG") or os.path.expanduser(
                "~/.kube/config")
            k8s_config.load_kube_config(config_file=kubeconfig, context=context,
                                        client_configuration=configuration,
                                        persist_config=False)
            contexts, active = k8s_config.list_kube_config_contexts(config_file=kubeconfig)
            name = context or (active or {}).get("name", "")
    except (k8s_config.ConfigException, OSError, TypeError, ValueError) as exc:
        raise SourceError(f"kubeconfig {kubeconfig or 'in-cluster'}: {exc}") from None
    return Connection(k8s_client.ApiClient(configuration), name, configuration.host)
