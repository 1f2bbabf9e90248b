from django.urls import path

from allocation import views

app_name = "allocation"

urlpatterns = [
    path("", views.home, name="home"),
]
