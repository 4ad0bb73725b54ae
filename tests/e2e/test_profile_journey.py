"""Issue 24's acceptance, in a real browser: a registrant proposes a machine-readable
profile whose example fails its own syntax and is refused at the field with what was
typed kept; corrects it; experts see it checked against its own examples; the
namespace is registered and the URN checker and resolver use the profile at once."""

import json
import re

import pytest
from django.core import mail

from tests.e2e.test_registration_paths import (
    approve_early,
    complete_registration,
    fill_template,
    log_in,
    sign_up,
)
from tests.factories import complete_values

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

NID = "shelfmark"
PROFILE = {
    "syntax": {"abnf": 'nss = 2ALPHA "-" 1*DIGIT\n', "cite": "Syntax field of this template"},
    "equivalence": [{"step": "case-insensitive-nss", "cite": "Syntax field: letters "
                     "compare case-insensitively"}],
    "examples": [f"urn:{NID}:AB-12"],
    "counter_examples": [f"urn:{NID}:AB12"],
    "resolvers": [{"url": "https://shelves.example/item/{nss}", "name": "Shelves"}],
}


@pytest.fixture(autouse=True)
def _eager(settings):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    settings.REVIEW_MIN_DAYS = 14


def test_a_profile_refused_at_the_field_corrected_reviewed_published_and_used(
        new_page, expert, staff):
    registrant = new_page()
    sign_up(registrant, "rita@shelves.example")
    fill_template(registrant, NID, complete_values(None, contact_email="rita@shelves.example"))
    unsound = json.dumps({**PROFILE, "examples": [f"urn:{NID}:AB-1x"]}, indent=1)
    registrant.fill("textarea[name=profile]", unsound)
    registrant.click("button[name=submit]")

    # Refused at the field, with what was typed still there.
    field = registrant.wait_for_selector("textarea[name=profile][aria-invalid=true]")
    described = (field.get_attribute("aria-describedby") or "").split()
    errors = " ".join(registrant.inner_text(f"#{ident}") for ident in described)
    assert "fails its own profile" in errors and "character 5" in errors
    assert registrant.input_value("textarea[name=profile]") == unsound
    assert registrant.input_value("input[name=proposed_nid]") == NID

    registrant.fill("textarea[name=profile]", json.dumps(PROFILE, indent=1))
    registrant.click("button[name=submit]")
    registrant.wait_for_selector("text=Submitted: the template went to the review list")
    registration_url = registrant.url

    reviewer = new_page()
    log_in(reviewer, expert.email, lands_on=r"/requests/dashboard/$")
    reviewer.goto(registration_url)
    checked = [row.inner_text() for row in reviewer.query_selector_all("#profile tbody tr")]
    assert len(checked) == 2
    assert "passes" in checked[0] and "fails, as it should" in checked[1]
    approve_early(reviewer, "The profile matches the Syntax field.", "No objections on the list.")
    complete_registration(new_page, staff)
    assert any(NID in m.subject for m in mail.outbox)

    # The checker uses the profile at once: the page, for anyone.
    visitor = new_page()
    visitor.goto(f"/check/?urn=urn:{NID}:ab-12")
    body = visitor.inner_text("main")
    assert f"NSS valid by the profile of {NID}" in body
    assert "https://shelves.example/item/ab-12" in body

    answer = json.loads(visitor.goto(f"/api/check?urn=urn:{NID}:AB-1x").text())
    result = answer["results"][0] if "results" in answer else answer
    assert result["nss_valid"] is False and result["nss_errors"]
    answer = json.loads(visitor.goto(
        f"/api/equivalent?a=urn:{NID}:AB-12&b=URN:{NID.upper()}:ab-12").text())
    assert answer["equivalent"] is True and answer["rfc8141_equivalent"] is False

    # And the resolver: a 303 to the URL built from the published profile.
    response = visitor.request.get(f"/resolve/urn:{NID}:AB-12", max_redirects=0)
    assert response.status == 303
    assert response.headers["location"] == "https://shelves.example/item/AB-12"
    response = visitor.request.get("/resolve/urn:example:no-resolver", max_redirects=0)
    assert response.status == 404
    assert re.search(r"declares no resolver|no resolver", response.text())
