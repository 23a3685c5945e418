// One question and its answer in the conversation: the streamed text with live citation links, the
// validation state once the answer is complete, the cited sections, and the reader's rating.
import {
  Rating as WireRating,
  ValidationStatus,
  type Citation,
  type GroundingSummary,
  type Response,
  type Source,
  type Turn,
} from "./gen/glossator/v1/agent_pb.js";
import { renderAnswer, renderSources } from "./render.js";

export type Rating = "up" | "down";
/** Stores a rating (with an optional comment); rejects with the reason to show. */
export type RateAnswer = (queryId: string, rating: Rating, comment: string) => Promise<void>;

function element<K extends keyof HTMLElementTagNameMap>(tag: K, className: string, text = ""): HTMLElementTagNameMap[K] {
  const made = document.createElement(tag);
  made.className = className;
  if (text) made.textContent = text;
  return made;
}

/** How far the answer can be trusted, as the reader sees it: class and sentence. */
export function verdict(notCovered: boolean, grounding: GroundingSummary | undefined): [string, string] {
  if (notCovered) return ["g-not-covered", "Not covered by these docs"];
  switch (grounding?.status) {
    case ValidationStatus.VALIDATED:
      return grounding.isGrounded
        ? ["g-grounded", `Checked against the docs: ${grounding.supportedClaims} of ${grounding.claims} claims supported`]
        : ["g-ungrounded", "Only partly supported by the docs: check the sources"];
    case ValidationStatus.REPLACED:
      return ["g-replaced", "The first answer was not fully supported by the docs: this one keeps to what they say"];
    case ValidationStatus.UNAVAILABLE:
      return ["g-unchecked", "Not checked against the docs (the checker was unavailable)"];
    default:
      return ["g-unchecked", "Not checked against the docs"];
  }
}

export class TurnView {
  readonly element = element("article", "g-turn");
  private readonly answer = element("div", "g-answer");
  private readonly state = element("p", "g-state");
  private readonly sourceList = element("ol", "g-sources");
  private readonly cited = new Map<number, Source>();
  private text = "";
  queryId = "";

  constructor(question: string, selectedText: string) {
    const asked = element("div", "g-question");
    if (selectedText) asked.append(element("blockquote", "g-quote", selectedText));
    asked.append(element("p", "", question));
    this.answer.setAttribute("aria-busy", "true");
    this.sourceList.hidden = true;
    this.sourceList.setAttribute("aria-label", "Sources");
    this.state.hidden = true;
    this.element.append(asked, this.answer, this.state, this.sourceList);
  }

  append(delta: string): void {
    this.text += delta;
    renderAnswer(this.answer, this.text, this.cited);
  }

  cite(citation: Citation): void {
    if (!citation.source) return;
    this.cited.set(citation.index, { ...citation.source, index: citation.index });
    renderAnswer(this.answer, this.text, this.cited);
  }

  /** The complete answer replaces what was streamed (it may have been replaced by validation). */
  finish(response: Response, rate: RateAnswer): void {
    this.settle(response.answer, response.sources, response.queryId, verdict(response.notCovered, response.grounding), rate, undefined);
  }

  /** A turn of the session's history, shown again on a later page. */
  restore(turn: Turn, rate: RateAnswer): void {
    const rating = turn.feedback?.rating;
    const given = rating === WireRating.UP ? "up" : rating === WireRating.DOWN ? "down" : undefined;
    this.settle(turn.answer, turn.sources, turn.queryId, verdict(turn.notCovered, turn.grounding), rate, given);
  }

  private settle(
    answer: string,
    sources: Source[],
    queryId: string,
    [className, sentence]: [string, string],
    rate: RateAnswer,
    given: Rating | undefined,
  ): void {
    this.queryId = queryId;
    for (const source of sources) this.cited.set(source.index, source);
    this.text = answer;
    renderAnswer(this.answer, this.text, this.cited);
    renderSources(this.sourceList, this.cited.values());
    this.element.classList.add(className);
    this.state.textContent = sentence;
    this.state.hidden = false;
    this.answer.setAttribute("aria-busy", "false");
    if (queryId) this.element.append(feedbackForm(queryId, rate, given));
  }

  /** The call failed; a void answer's streamed text is taken away. */
  fail(message: string, discardAnswer: boolean): void {
    if (discardAnswer) this.answer.replaceChildren();
    this.answer.setAttribute("aria-busy", "false");
    this.element.classList.add("g-failed");
    const shown = element("p", "g-error", message);
    shown.setAttribute("role", "alert");
    this.element.append(shown);
  }
}

// A thumb drawn as SVG: emoji need a colour-emoji font, which many systems lack.
const THUMB = "M2 10h4v11H2zm6 11h9.2a2 2 0 0 0 2-1.6l1.7-8A2 2 0 0 0 19 9h-5.3l.8-4.3A1.9 1.9 0 0 0 11 3.6L8 8.6z";

function thumb(className: string): HTMLButtonElement {
  const button = element("button", className);
  const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
  svg.setAttribute("viewBox", "0 0 24 24");
  svg.setAttribute("aria-hidden", "true");
  const path = document.createElementNS("http://www.w3.org/2000/svg", "path");
  path.setAttribute("d", THUMB);
  svg.append(path);
  button.append(svg);
  return button;
}

/** Thumbs up/down; either opens an optional comment, sent with the rating by one SubmitFeedback.
 * An answer rated earlier (a turn shown again on another page) shows its rating, done. */
function feedbackForm(queryId: string, rate: RateAnswer, given: Rating | undefined): HTMLElement {
  const form = element("form", "g-feedback");
  form.setAttribute("aria-label", "Rate this answer");
  const prompt = element("span", "g-feedback-prompt", "Was this helpful?");
  const up = thumb("g-thumb");
  const down = thumb("g-thumb g-thumb-down");
  up.type = down.type = "button";
  up.setAttribute("aria-label", "Helpful");
  down.setAttribute("aria-label", "Not helpful");
  const comment = element("textarea", "g-comment");
  comment.rows = 2;
  comment.maxLength = 1000;
  comment.placeholder = "What was wrong or missing? (optional)";
  comment.setAttribute("aria-label", "Comment (optional)");
  const send = element("button", "g-send", "Send feedback");
  send.type = "submit";
  const note = element("span", "g-feedback-note");
  note.setAttribute("role", "status");
  const details = element("div", "g-feedback-details");
  details.hidden = true;
  details.append(comment, send);
  let rating: Rating | undefined;
  const press = (value: Rating | undefined) => {
    up.setAttribute("aria-pressed", String(value === "up"));
    down.setAttribute("aria-pressed", String(value === "down"));
  };
  const done = (text: string) => {
    details.remove();
    up.disabled = down.disabled = true;
    note.textContent = text;
  };
  press(given);
  for (const [button, value] of [[up, "up"], [down, "down"]] as const) {
    button.addEventListener("click", () => {
      rating = value;
      press(value);
      comment.placeholder = value === "up" ? "What helped? (optional)" : "What was wrong or missing? (optional)";
      details.hidden = false;
      comment.focus();
    });
  }
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (!rating) return;
    send.disabled = true;
    rate(queryId, rating, comment.value.trim()).then(
      () => done("Thank you for your feedback."),
      (reason: unknown) => {
        send.disabled = false;
        note.textContent = String(reason instanceof Error ? reason.message : reason);
      },
    );
  });
  comment.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey) {
      event.preventDefault();
      form.requestSubmit();
    }
  });
  form.append(prompt, up, down, details, note);
  if (given) done("You rated this answer.");
  return form;
}
