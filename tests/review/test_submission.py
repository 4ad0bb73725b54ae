"""What a request needs before it is submitted is one set of rules (workflow.submission):
the request form shows each problem at its field, and the transition that submits a
saved draft refuses with the same problems."""

import pytest
from django.urls import reverse

from registry.namespaces.actions import namespace_update_record
from registry.namespaces.models import Namespace
from registry.review import actions, workflow
from registry.review.models import RegistrationRequest, State
from tests.factories import approve, complete_values, make_registration
from tests.html import field_errors, page

# (label, the draft's kind, NID, fast track, template fields emptied)
SCENARIOS = [
    ("missing fields", "formal", "subnid", False, ("purpose", "resolution")),
    ("a formal namespace without a NID", "formal", "", False, ()),
    ("a NID section 5.1 refuses", "formal", "ab", False, ()),
    ("the fast track for a body not recognised, without documentation", "formal", "subft",
     True, ("documentation",)),
    ("an informal namespace, complete", "informal", "", False, ()),
]


@pytest.mark.parametrize(("kind", "nid", "fast_track", "emptied"),
                         [scenario[1:] for scenario in SCENARIOS],
                         ids=[scenario[0] for scenario in SCENARIOS])
def test_the_form_and_the_transition_find_the_same_problems(client, registrant, kind, nid,
                                                            fast_track, emptied):
    draft = make_registration(registrant, nid=nid, kind=kind, fast_track=fast_track,
                              submit=False, **dict.fromkeys(emptied, ""))
    problems = workflow.submission_problems(draft)

    client.force_login(registrant)
    response = client.post(reverse("review:edit", args=[draft.pk]), {
        "kind": kind, "proposed_nid": nid, "edit_version": draft.edit_version,
        **({"fast_track": "on"} if fast_track else {}),
        **complete_values(registrant, **dict.fromkeys(emptied, "")), "submit": "1"})
    if not problems:
        assert response.status_code == 302
        assert RegistrationRequest.objects.get(pk=draft.pk).state == State.IN_REVIEW
        return
    assert response.status_code == 400
    doc = page(response)
    shown = {name: field_errors(doc, name)
             for name in ("proposed_nid", "fast_track", "purpose", "resolution",
                          "documentation")}
    assert {name for name, errors in shown.items() if errors} == \
        {problem.field for problem in problems}
    for problem in problems:
        assert problem.message in shown[problem.field]
    with pytest.raises(workflow.TransitionRefused) as refused:
        actions.registration_transition(registration=draft, transition="submit",
                                        actor=registrant)
    for problem in problems:
        assert str(problem).rstrip(".") in str(refused.value)
    assert RegistrationRequest.objects.get(pk=draft.pk).state == State.DRAFT


def test_a_revision_whose_namespace_changed_holder_cannot_be_submitted(
        registrant, other_registrant, expert, staff):
    approve(make_registration(registrant, nid="heldnid"), expert, staff, register=True)
    namespace = Namespace.objects.by_nid("heldnid").get()
    revision = actions.registration_create(actor=registrant, revises=namespace)
    namespace_update_record(namespace=namespace, changes={"holder": other_registrant},
                            reason="The body handed it over.", actor=staff)
    revision.refresh_from_db()
    assert workflow.Problem(None, "Only the holder of a namespace can revise it.") in \
        workflow.submission_problems(revision)
