"""The widget as a reader uses it: the suite and the edge (Envoy) on loopback, a docs site that
embeds the widget with its <script> tag, and headless Chromium (clients/web/test/reader.mjs) asking,
following a citation, going on with the conversation on another page, asking about a selected
passage, asking what the docs do not cover and one question too many, rating an answer; then a site
whose origin the edge does not allow and a page with a wrong widget key. Auth is on: the pages carry
a widget key bound to the site's origin, as a real site's do. One browser session for the module; each test checks one part of what the reader saw, and the stored turns and
rating through the RPC."""

from __future__ import annotations

import json
import os
import re
import uuid

import httpx
import pytest

from bench.browser_rig import DOCS_DIR, DocsSite, build_widget, docs_pages, edge, run_driver, widget_tag
from bench.harness import start_services
from glossator.v1 import agent_pb2, agent_pb2_grpc, retrieval_pb2, retrieval_pb2_grpc
from services.commands.ingest import ingest_folder
from services.common.clients import ChannelSecurity, make_channel

pytestmark = pytest.mark.browser

QUESTION = "How does Glossator check that an answer is grounded?"
FOLLOW_UP = "Which services does it have?"
PASSAGE = "A claim that mentions the year 1846 is not supported by a chunk that never mentions 1846"
KEYBOARD_PASSAGE = "A citation is only useful if it is true."
OFF_TOPIC = "What is the boiling point of mercury?"
ONE_TOO_MANY = "How long is a chunk?"
COMMENT = "It did not say which model checks the claims."
SERVICE_TOKEN = "service-token-" + uuid.uuid4().hex
WIDGET_KEY = "wk-" + uuid.uuid4().hex
# A session's questions a minute: the reader's first four get through, then it asks until refused.
QUESTIONS_PER_MINUTE = 4


@pytest.fixture(scope="module")
async def reading(browser_tools, tmp_path_factory):
    """Runs the reader once; yields its report, its config, the edge's URL and an agent stub (with
    the service token, which reaches an anonymous session with its session token)."""
    bundle = build_widget()
    with DocsSite(bundle).serving() as site:
        services = await start_services(
            tmp_path_factory.mktemp("browser-suite"),
            ["agent", "retrieval", "validation"],
            {
                "GLOSSATOR_AUTH_TOKEN": SERVICE_TOKEN,
                "GLOSSATOR_AUTH_WIDGET_KEYS": json.dumps({WIDGET_KEY: [site.url("")]}),
                "GLOSSATOR_AGENT_QUESTIONS_PER_MINUTE_PER_SESSION": str(QUESTIONS_PER_MINUTE),
            },
        )
        admin = ChannelSecurity(token=lambda: SERVICE_TOKEN)
        try:
            base_url = site.url("/docs/")
            async with make_channel(f"127.0.0.1:{services.ports['retrieval']}", security=admin) as channel:
                options = retrieval_pb2.IngestOptions(base_url=base_url)
                await ingest_folder(
                    retrieval_pb2_grpc.RetrievalServiceStub(channel), DOCS_DIR, options, timeout=120
                )
            async with edge(services.ports["agent"], [site.url("")]) as endpoint:
                site.widget_tag = widget_tag(endpoint, widget_key=WIDGET_KEY)
                site.pages.update(docs_pages(base_url))
                site.pages["/wrong-key/"] = site.pages["/docs/"]
                site.page_tags["/wrong-key/"] = widget_tag(endpoint, widget_key="wk-" + "0" * 32)
                config = {
                    "firstPage": base_url,
                    "secondPage": site.url("/docs/reference/validation"),
                    "refusedPage": site.url("/docs/", host="localhost"),
                    "wrongKeyPage": site.url("/wrong-key/"),
                    "question": QUESTION,
                    "followUp": FOLLOW_UP,
                    "passage": PASSAGE,
                    "keyboardPassage": KEYBOARD_PASSAGE,
                    "offTopic": OFF_TOPIC,
                    "oneTooMany": ONE_TOO_MANY,
                    "questionsPerMinute": QUESTIONS_PER_MINUTE,
                    "comment": COMMENT,
                    # GLOSSATOR_WIDGET_SCREENSHOTS=docs/images retakes the README's screenshots.
                    "screenshots": os.environ.get("GLOSSATOR_WIDGET_SCREENSHOTS", ""),
                }
                report = await run_driver("reader.mjs", config)
                async with make_channel(f"127.0.0.1:{services.ports['agent']}", security=admin) as channel:
                    yield report, config, endpoint, agent_pb2_grpc.AgentServiceStub(channel)
        finally:
            services.stop()


async def stored_session(reading) -> agent_pb2.Session:
    report, _, _, agent = reading
    (conversation,) = report["conversation"].values()
    saved = json.loads(conversation)
    reply = await agent.GetSession(
        agent_pb2.GetSessionRequest(session_id=saved["sessionId"], session_token=saved["sessionToken"]),
        timeout=10,
    )
    return reply.session


async def test_the_answer_streams_in_and_cites_the_exact_section(reading):
    report, config, _, _ = reading
    first = report["first"]
    assert first["question"] == QUESTION
    assert "grounded" in first["answer"]
    # The text was on screen before the answer was complete (validation still running).
    assert any(state["length"] > 0 and state["busy"] == "true" for state in report["states"])
    assert first["busy"] == "false"
    assert "g-grounded" in first["classes"] and first["state"].startswith("Checked against the docs")
    # [n] markers are links to the cited section's anchor on the site; the source list says which.
    assert first["citations"] and all(c["href"].startswith(config["firstPage"]) for c in first["citations"])
    assert all("#" in c["href"] for c in first["citations"])
    assert {c["href"] for c in first["citations"]} <= {s["href"] for s in first["sources"]}
    # Clicking one goes there: the heading with that anchor exists on the page.
    assert report["cited"]["url"] == report["citationHref"]
    assert report["cited"]["target"]
    assert report["pageErrors"] == []


async def test_the_conversation_follows_the_reader_to_another_page_and_goes_on(reading):
    report, config, _, _ = reading
    assert report["restored"] == 1
    assert report["restoredFirst"]["answer"] == report["first"]["answer"]
    assert report["restoredFirst"]["citations"] == report["first"]["citations"]
    session = await stored_session(reading)
    assert [turn.query for turn in session.turns][:2] == [QUESTION, FOLLOW_UP]
    assert session.turns[1].user_context["page_url"] == config["secondPage"]
    assert report["second"]["answer"] and "g-failed" not in report["second"]["classes"]


async def test_asking_about_a_selected_passage_sends_it_with_the_page(reading):
    report, config, _, _ = reading
    assert report["quoted"] == PASSAGE
    assert report["focusAfterSelection"] == "g-input"
    third = report["third"]
    assert third["quote"] == PASSAGE
    assert "1846" in third["answer"]
    assert any(source["href"].startswith(config["secondPage"] + "#") for source in third["sources"])
    session = await stored_session(reading)
    assert session.turns[2].selected_text == PASSAGE
    assert session.turns[2].user_context["page_url"] == config["secondPage"]


async def test_a_question_the_docs_do_not_cover_looks_declined(reading):
    report, config, _, _ = reading
    declined = report["declined"]
    assert "g-not-covered" in declined["classes"] and "g-grounded" not in declined["classes"]
    assert declined["state"] == "Not covered by these docs"
    assert declined["answer"].startswith("The book does not cover this question")
    # It may name the sections of the docs nearby (issue 27): each citation links to one of them.
    site = config["firstPage"].rsplit("/docs/", 1)[0]
    assert all(c["href"].startswith(site) and "#" in c["href"] for c in declined["citations"])
    assert len(declined["sources"]) == len({c["text"] for c in declined["citations"]})
    session = await stored_session(reading)
    assert session.turns[3].query == OFF_TOPIC and session.turns[3].not_covered


async def test_one_question_too_many_says_when_to_try_again(reading):
    report, _, _, _ = reading
    assert re.fullmatch(r"Too many questions right now: try again in \d+ s\.", report["rateLimited"])
    assert report["answeredBeforeLimit"] < QUESTIONS_PER_MINUTE
    session = await stored_session(reading)
    # The refused question is not a turn.
    assert [turn.query for turn in session.turns].count(ONE_TOO_MANY) == report["answeredBeforeLimit"]


async def test_a_wrong_widget_key_is_a_sentence_not_a_stack_trace(reading):
    report, _, _, _ = reading
    assert report["wrongKeyError"] == (
        "This site's widget key was refused: the site's owner must check its configuration."
    )


async def test_a_rating_with_its_comment_is_stored_with_the_turn(reading):
    report, _, _, _ = reading
    assert report["feedbackNote"] == "Thank you for your feedback."
    assert report["ratingShownAgain"] == "true"  # the page reloaded: the thumb stays pressed
    session = await stored_session(reading)
    feedback = session.turns[0].feedback
    assert feedback.rating == agent_pb2.RATING_DOWN
    assert feedback.comment == COMMENT
    assert not session.turns[1].HasField("feedback")


async def test_keyboard_and_phone(reading):
    report, _, _, _ = reading
    assert report["focusAfterOpen"] == "g-input"  # Enter on the launcher opens, focus in the question
    assert report["panelHiddenAfterEscape"] is True
    assert report["focusAfterClose"] == "g-launcher"  # Escape gives the focus back to the launcher
    assert report["keyboardQuote"] == KEYBOARD_PASSAGE  # Alt+Shift+A: "Ask about this" without a mouse
    assert report["phonePanel"] == {"x": 0, "y": 0, "width": 390, "height": 844}


async def test_a_site_the_edge_does_not_allow_is_refused_by_cors(reading):
    report, config, endpoint, _ = reading
    assert report["refusedError"].startswith("Could not reach the answer service")
    assert "g-failed" in report["refusedTurn"]
    assert any("blocked by CORS policy" in line for line in report["refusedConsole"])
    # The refusal is the edge's: the preflight names no allowed origin for the foreign site, and
    # names the site's own.
    async with httpx.AsyncClient() as client:
        preflight = {
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "content-type,connect-protocol-version",
        }
        url = f"{endpoint}/glossator.v1.AgentService/AskStream"
        refused = await client.options(
            url, headers={"Origin": config["refusedPage"].rsplit("/docs/", 1)[0], **preflight}
        )
        allowed = await client.options(
            url, headers={"Origin": config["firstPage"].rsplit("/docs/", 1)[0], **preflight}
        )
    assert "access-control-allow-origin" not in refused.headers
    assert allowed.headers["access-control-allow-origin"] == config["firstPage"].rsplit("/docs/", 1)[0]
