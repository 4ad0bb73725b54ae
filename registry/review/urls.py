from django.urls import path

from registry.review import mail_views, views

app_name = "review"

urlpatterns = [
    path("", views.my_requests, name="my-requests"),
    path("new/", views.new_registration, name="new"),
    path("review/", views.public_review, name="public-review"),
    path("dashboard/", views.dashboard, name="dashboard"),
    path("availability/", views.availability, name="availability"),
    path("iana/", views.staff_queue, name="staff-queue"),
    path("iana/mail/", mail_views.quarantine, name="quarantine"),
    path("iana/mail/<int:message_pk>/attach/", mail_views.attach, name="quarantine-attach"),
    path("iana/mail/<int:message_pk>/message.eml", mail_views.raw_message,
         name="quarantine-raw"),
    path("<int:pk>/", views.registration_page, name="request"),
    path("<int:pk>/edit/", views.edit_registration, name="edit"),
    path("<int:pk>/rounds/<int:number>/template.txt", views.round_txt, name="round-txt"),
    path("<int:pk>/do/<str:name>/", views.transition, name="transition"),
    path("<int:pk>/comment/", views.comment, name="comment"),
    path("<int:pk>/assign/", views.assign, name="assign"),
    path("<int:pk>/standardisation/", views.standardisation, name="standardisation"),
    path("<int:pk>/mail/<int:message_pk>/resend/", views.resend_mail, name="resend-mail"),
]
