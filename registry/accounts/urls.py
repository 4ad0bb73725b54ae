from django.urls import path

from registry.accounts import views

app_name = "people"

urlpatterns = [
    path("", views.people, name="people"),
    path("<int:pk>/", views.person, name="person"),
]
