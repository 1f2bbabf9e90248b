"""The signed-in user's page: who they are and their API token.

Creating shows the new key once, on this response (it is not kept anywhere the page can
show again); revoking deletes the token. Both go through
:mod:`allocation.services.accounts`; the view only reads.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from allocation.services import accounts
from allocation.views.common import HtmxHttpRequest

__all__ = ["account"]


@login_required
@require_http_methods(["GET", "POST"])
def account(request: HtmxHttpRequest) -> HttpResponse:
    """GET: the user and their token. POST ``action=create``: a new token, shown once;
    ``action=revoke``: delete it."""
    context = {"new_key": None, "api_root": request.build_absolute_uri(reverse("api:api-root"))}
    if request.method == "POST":
        action = request.POST.get("action")
        if action == "create":
            context["new_key"] = accounts.create_token(request.user)
        elif action == "revoke":
            if accounts.revoke_token(request.user):
                messages.success(request, "Your API token was revoked.")
            return redirect("allocation:account")
        else:
            return HttpResponse("unknown action", status=400)
    context["token"] = accounts.token_info(request.user)
    return render(request, "allocation/account.html", context)
