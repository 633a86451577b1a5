"""The login page with its "Sign in with …" button, and the two ends of the single sign-on flow:
the start, which sends the browser to the provider, and the callback it comes back to
(dashboard/signon.py does the checking). Every refusal is a page that says why, never a 500."""

from __future__ import annotations

import logging

import requests
from django.conf import settings
from django.contrib.auth import views as auth_views
from django.core.exceptions import SuspiciousOperation
from django.http import Http404
from django.shortcuts import render
from django.views.generic import View
from mozilla_django_oidc.views import OIDCAuthenticationCallbackView, OIDCAuthenticationRequestView

from dashboard.signon import REFUSAL_ATTRIBUTE, ProviderUnavailable, provider_endpoint, signon_enabled

logger = logging.getLogger(__name__)

REFUSED_TEMPLATE = "dashboard/signon_refused.html"
TAMPERED = (
    "This sign-in did not come back as it left: the answer from {provider} does not belong to a "
    "sign-in this browser started (its state or nonce differs), or it was used already. Start again."
)
PROVIDER_ERROR = "{provider} did not sign you in ({error}). Start again, or ask your administrator."
UNREACHABLE = "{provider} could not be reached. Try again in a moment, or log in with a local account."
GENERIC = "The sign-in with {provider} did not complete. Start again."


def refused(request, message: str, *, status: int = 403):
    provider = settings.OIDC_PROVIDER_NAME
    context = {
        "message": message.format(provider=provider, error=request.GET.get("error", "")),
        "provider": provider,
    }
    return render(request, REFUSED_TEMPLATE, context, status=status)


class SignInView(auth_views.LoginView):
    """Django's login form, with the provider's button beside it when single sign-on is on."""

    template_name = "dashboard/login.html"
    redirect_authenticated_user = True

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context["signon_provider"] = settings.OIDC_PROVIDER_NAME if signon_enabled() else None
        return context


class SignOnStartView(OIDCAuthenticationRequestView):
    """Send the browser to the provider, with a new state, nonce and PKCE challenge in its session."""

    def __init__(self, **kwargs) -> None:
        # Not the parent's __init__, which reads the endpoint before the view knows SSO is on.
        View.__init__(self, **kwargs)

    def get(self, request):
        if not signon_enabled():
            raise Http404("Single sign-on is off.")
        try:
            self.OIDC_OP_AUTH_ENDPOINT = provider_endpoint("authorization_endpoint")
        except ProviderUnavailable as exc:
            logger.warning("signon: %s", exc)
            return refused(request, UNREACHABLE, status=502)
        self.OIDC_RP_CLIENT_ID = settings.OIDC_RP_CLIENT_ID
        return super().get(request)


class SignOnCallbackView(OIDCAuthenticationCallbackView):
    """Where the provider sends the browser back: the code is exchanged and checked, the person
    matched and their teams mapped (dashboard.signon.SignOnBackend), or the sign-in refused."""

    def get(self, request):
        if not signon_enabled():
            raise Http404("Single sign-on is off.")
        try:
            return super().get(request)
        except SuspiciousOperation as exc:
            # A state this session never issued, a nonce that is not the one sent, a bad signature.
            logger.warning("signon: refused a callback: %s", exc)
            return refused(request, getattr(request, REFUSAL_ATTRIBUTE, None) or TAMPERED)
        except (requests.RequestException, ProviderUnavailable) as exc:
            logger.warning("signon: the provider failed during a callback: %s", exc)
            return refused(request, UNREACHABLE, status=502)

    def login_failure(self):
        if self.request.GET.get("error"):
            return refused(self.request, PROVIDER_ERROR)
        if reason := getattr(self.request, REFUSAL_ATTRIBUTE, None):
            return refused(self.request, reason)
        # A code and state, but this session started no sign-in (or the same answer came twice).
        return refused(self.request, TAMPERED if "state" in self.request.GET else GENERIC)
