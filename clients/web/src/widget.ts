// The widget: a launcher button and a non-modal dialog in a shadow root (the docs site's CSS cannot
// reach in), a conversation kept across pages, "Ask about this" on a text selection, answers
// streamed from AskStream through the edge.
import { Code, ConnectError } from "@connectrpc/connect";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { Rating as WireRating, type AskRequestSchema, type Turn } from "./gen/glossator/v1/agent_pb.js";
import { agentClient, type AgentClient } from "./client.js";
import { answerIsVoid, describeError } from "./errors.js";
import { ConversationStore, type Conversation } from "./session.js";
import { SelectionWatcher } from "./selection.js";
import { STYLES } from "./styles.js";
import { TurnView, type RateAnswer } from "./turn.js";

export interface WidgetOptions {
  /** The edge's URL, e.g. https://ask.example.com (Envoy in front of the agent). */
  endpoint: string;
  /** The book to answer from; empty means "default". */
  collection?: string;
  /** The public widget key the edge checks (bound to this site's origins). */
  widgetKey?: string;
  /** The dialog's heading. */
  title?: string;
  /** Where the widget is added; document.body by default. */
  container?: HTMLElement;
}

export interface Widget {
  /** Opens the dialog, optionally about a passage of the page. */
  open(selectedText?: string): void;
  close(): void;
  /** Removes the widget and its listeners (a Docusaurus page unmounting, a test). */
  destroy(): void;
}

const ANSWER_TIMEOUT_MS = 120_000;
const MAX_SELECTION_CHARS = 5000;
const SELECTION_QUESTION = "What does this passage mean?";

type AskInit = MessageInitShape<typeof AskRequestSchema>;

function make<K extends keyof HTMLElementTagNameMap>(tag: K, attributes: Record<string, string> = {}, text = ""): HTMLElementTagNameMap[K] {
  const made = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) made.setAttribute(name, value);
  if (text) made.textContent = text;
  return made;
}

class GlossatorWidget implements Widget {
  private readonly client: AgentClient;
  private readonly store: ConversationStore;
  private readonly host = make("div", { class: "glossator-widget" });
  private readonly launcher = make("button", {
    type: "button",
    class: "g-launcher",
    "aria-expanded": "false",
    "aria-controls": "g-panel",
    "aria-keyshortcuts": "Alt+Shift+A",
    title: "Ask the docs (Alt+Shift+A asks about the selected text)",
  }, "Ask the docs");
  private readonly panel = make("section", { id: "g-panel", class: "g-panel", role: "dialog", "aria-labelledby": "g-title" });
  private readonly log = make("div", { class: "g-log", role: "log", "aria-live": "polite", "aria-relevant": "additions text" });
  private readonly input = make("textarea", { id: "g-input", rows: "2", maxlength: "1000", placeholder: "Ask a question about these docs" });
  private readonly submit = make("button", { type: "submit", class: "g-ask" }, "Ask");
  private readonly quote = make("div", { class: "g-selected" });
  private readonly quoteText = make("blockquote");
  private readonly selection: SelectionWatcher;
  private selectedText = "";
  private running: AbortController | undefined;
  private restored = false;
  private returnFocus: HTMLElement | null = null;

  constructor(private readonly options: WidgetOptions) {
    this.client = agentClient(options.endpoint.replace(/\/+$/, ""), options.widgetKey ?? "");
    this.store = new ConversationStore(options.endpoint, options.collection ?? "");
    const root = this.host.attachShadow({ mode: "open" });
    const style = make("style");
    style.textContent = STYLES;
    const header = make("header");
    const title = make("h2", { id: "g-title" }, options.title ?? "Ask about these docs");
    const restart = make("button", { type: "button", class: "g-restart" }, "New conversation");
    const close = make("button", { type: "button", class: "g-close", "aria-label": "Close" }, "×");
    header.append(title, restart, close);
    const drop = make("button", { type: "button", class: "g-drop", "aria-label": "Do not ask about the selected text" }, "×");
    this.quote.append(make("span", {}, "About the selected text:"), this.quoteText, drop);
    this.quote.hidden = true;
    const form = make("form", { class: "g-form" });
    form.append(this.quote, make("label", { for: "g-input", class: "g-hidden" }, "Your question"), this.input, this.submit);
    this.panel.append(header, this.log, form);
    this.panel.hidden = true;
    this.selection = new SelectionWatcher(this.host, (text) => this.open(text));
    root.append(style, this.launcher, this.panel, this.selection.button);

    this.launcher.addEventListener("click", () => (this.panel.hidden ? this.open() : this.close()));
    close.addEventListener("click", () => this.close());
    restart.addEventListener("click", () => this.restart());
    drop.addEventListener("click", () => this.useSelection(""));
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      if (this.running) this.running.abort();
      else this.ask();
    });
    this.input.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.shiftKey) {
        event.preventDefault();
        form.requestSubmit();
      }
    });
    this.panel.addEventListener("keydown", (event) => {
      if (event.key === "Escape") this.close();
    });
    document.addEventListener("keydown", this.onShortcut);
    (options.container ?? document.body).append(this.host);
  }

  private readonly onShortcut = (event: KeyboardEvent): void => {
    if (event.altKey && event.shiftKey && event.code === "KeyA") {
      event.preventDefault();
      this.open(this.selection.current());
    }
  };

  open(selectedText?: string): void {
    if (selectedText !== undefined && selectedText !== "") this.useSelection(selectedText);
    if (this.panel.hidden) {
      // Back to where the reader was on close; from the launcher (the shadow host has the focus), to it.
      const active = document.activeElement;
      this.returnFocus = active instanceof HTMLElement && active !== this.host ? active : null;
      this.panel.hidden = false;
      this.launcher.setAttribute("aria-expanded", "true");
      this.host.classList.add("g-open");
      void this.restore();
    }
    this.input.focus();
  }

  close(): void {
    this.panel.hidden = true;
    this.launcher.setAttribute("aria-expanded", "false");
    this.host.classList.remove("g-open");
    (this.returnFocus ?? this.launcher).focus();
  }

  destroy(): void {
    this.running?.abort();
    this.selection.stop();
    document.removeEventListener("keydown", this.onShortcut);
    this.host.remove();
  }

  private useSelection(text: string): void {
    this.selectedText = text.trim().slice(0, MAX_SELECTION_CHARS);
    this.quoteText.textContent = this.selectedText;
    this.quote.hidden = !this.selectedText;
    this.input.placeholder = this.selectedText ? SELECTION_QUESTION : "Ask a question about these docs";
  }

  private restart(): void {
    this.running?.abort();
    this.store.clear();
    this.log.replaceChildren();
    this.useSelection("");
    this.input.focus();
  }

  /** Shows the conversation so far (this tab's session, from an earlier page) once per page. */
  private async restore(): Promise<void> {
    const conversation = this.store.load();
    if (this.restored || !conversation) return;
    this.restored = true;
    try {
      const { session } = await this.client.getSession(conversation, { timeoutMs: 10_000 });
      for (const turn of session?.turns ?? []) this.log.append(this.restoredTurn(turn).element);
      this.log.scrollTop = this.log.scrollHeight;
    } catch (error) {
      // Ended, expired or unknown: the next question starts a new conversation.
      if (ConnectError.from(error).code === Code.NotFound) this.store.clear();
    }
  }

  private restoredTurn(turn: Turn): TurnView {
    const view = new TurnView(turn.query, turn.selectedText);
    view.restore(turn, this.rater());
    return view;
  }

  private rater(): RateAnswer {
    return async (queryId, rating, comment) => {
      const conversation = this.store.load();
      if (!conversation) throw new Error("This conversation has ended.");
      try {
        await this.client.submitFeedback(
          { ...conversation, queryId, comment, rating: rating === "up" ? WireRating.UP : WireRating.DOWN },
          { timeoutMs: 10_000 },
        );
      } catch (error) {
        throw new Error(describeError(error));
      }
    };
  }

  private ask(): void {
    const selectedText = this.selectedText;
    const query = this.input.value.trim() || (selectedText ? SELECTION_QUESTION : "");
    if (!query) {
      this.input.focus();
      return;
    }
    this.input.value = "";
    this.useSelection("");
    const turn = new TurnView(query, selectedText);
    this.log.append(turn.element);
    turn.element.scrollIntoView({ block: "nearest" });
    const request: AskInit = {
      query,
      selectedText,
      collection: this.options.collection ?? "",
      userContext: { page_url: location.href, page_title: document.title },
      includeSources: true,
    };
    void this.stream(turn, request, this.store.load());
  }

  private async stream(turn: TurnView, request: AskInit, conversation: Conversation | undefined): Promise<void> {
    const running = new AbortController();
    this.running = running;
    this.submit.textContent = "Stop";
    let started = false;
    let firstDelta = true;
    performance.mark("glossator:ask");
    try {
      const call = this.client.askStream(
        { ...request, ...conversation },
        { signal: running.signal, timeoutMs: ANSWER_TIMEOUT_MS },
      );
      for await (const { event } of call) {
        switch (event.case) {
          case "started":
            started = true;
            turn.queryId = event.value.queryId;
            this.store.save({
              sessionId: event.value.sessionId,
              sessionToken: event.value.sessionToken || conversation?.sessionToken || "",
            });
            break;
          case "answerDelta":
            if (firstDelta) {
              firstDelta = false;
              performance.measure("glossator:first-token", "glossator:ask");
            }
            turn.append(event.value.text);
            break;
          case "citation":
            turn.cite(event.value);
            break;
          case "completed":
            if (event.value.response) turn.finish(event.value.response, this.rater());
            break;
          default:
            break; // tool calls, retrieval and the full verdict: the completed response sums them up
        }
      }
    } catch (error) {
      const code = ConnectError.from(error).code;
      if (conversation && !started && (code === Code.NotFound || code === Code.FailedPrecondition)) {
        // The stored conversation ended or expired: this question starts a new one.
        this.store.clear();
        return this.stream(turn, request, undefined);
      }
      turn.fail(describeError(error), answerIsVoid(error));
    } finally {
      if (this.running === running) {
        this.running = undefined;
        this.submit.textContent = "Ask";
      }
    }
  }
}

export function mount(options: WidgetOptions): Widget {
  if (!options.endpoint) throw new Error("glossator widget: an endpoint is required");
  return new GlossatorWidget(options);
}

