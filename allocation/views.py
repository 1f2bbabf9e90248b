from django.http import HttpRequest, HttpResponse
from django.shortcuts import render


def home(request: HttpRequest) -> HttpResponse:
    """Landing page of the console. (Public for now; it will require login later.)"""
    return render(
        request,
        "allocation/home.html",
        {"simulate_command": "python manage.py simulate examples/quickstart.yaml"},
    )
