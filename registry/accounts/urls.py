from django.urls import path

from registry.accounts import views

app_name = "accounts"

urlpatterns = [
    path("", views.accounts, name="list"),
    path("<int:pk>/", views.account, name="account"),
]
