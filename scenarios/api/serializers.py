"""Serializers of the scenarios API."""

from __future__ import annotations

from rest_framework import serializers

from scenarios.models import Scenario

__all__ = ["ScenarioSerializer", "ChangeSerializer"]


class ScenarioSerializer(serializers.ModelSerializer):
    owner = serializers.CharField(source="owner.get_username", read_only=True)
    changes_in_effect = serializers.SerializerMethodField()

    class Meta:
        model = Scenario
        fields = ["id", "name", "owner", "created_at", "updated_at", "base_revision",
                  "forked_at", "changes", "position", "changes_in_effect", "shared",
                  "outcome", "evaluated_revision", "evaluation_error", "promoted_at"]
        read_only_fields = [f for f in fields if f != "name"]

    def get_changes_in_effect(self, scenario: Scenario) -> list[dict]:
        return scenario.active_changes


class ChangeSerializer(serializers.Serializer):
    """One change (see ``allocation.engine.scenarios.changes`` for the operations)."""

    op = serializers.CharField()

    def to_internal_value(self, data):
        if not isinstance(data, dict):
            raise serializers.ValidationError("a change must be an object with an op")
        return dict(data)
