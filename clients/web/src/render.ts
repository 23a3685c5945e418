// An answer's text as DOM nodes: [n] markers become links to the cited section (its anchor URL),
// **bold** and `code` keep their look; nothing from the answer is ever parsed as HTML.
import type { Source } from "./gen/glossator/v1/agent_pb.js";

const MARKUP = /\[(\d+)\]|\*\*([^*\n]+)\*\*|`([^`\n]+)`/g;

/** Only web links: an ingested page cannot smuggle a javascript: URL into the reader's page. */
export function safeUrl(url: string): string | undefined {
  try {
    const parsed = new URL(url, location.href);
    return parsed.protocol === "https:" || parsed.protocol === "http:" ? parsed.href : undefined;
  } catch {
    return undefined;
  }
}

export function sourceLabel(source: Source): string {
  const path = source.sectionPath.length ? source.sectionPath.join(" › ") : source.sectionTitle;
  return path || source.title || source.sourceUrl;
}

function link(url: string | undefined, text: string, className: string): HTMLElement {
  const element = document.createElement(url ? "a" : "span");
  if (url) (element as HTMLAnchorElement).href = url;
  element.className = className;
  element.textContent = text;
  return element;
}

export function citationLink(source: Source): HTMLElement {
  const element = link(safeUrl(source.sourceUrl), `[${source.index}]`, "g-cite");
  element.setAttribute("aria-label", `source ${source.index}: ${sourceLabel(source)}`);
  return element;
}

/** Replaces `target`'s content with `text` rendered; a marker whose source is not known yet stays text. */
export function renderAnswer(target: HTMLElement, text: string, sources: ReadonlyMap<number, Source>): void {
  const nodes: (Node | string)[] = [];
  let last = 0;
  for (const match of text.matchAll(MARKUP)) {
    nodes.push(text.slice(last, match.index));
    const [whole, index, bold, code] = match;
    const source = index === undefined ? undefined : sources.get(Number(index));
    if (source) nodes.push(citationLink(source));
    else if (bold !== undefined) nodes.push(Object.assign(document.createElement("strong"), { textContent: bold }));
    else if (code !== undefined) nodes.push(Object.assign(document.createElement("code"), { textContent: code }));
    else nodes.push(whole);
    last = (match.index ?? 0) + whole.length;
  }
  nodes.push(text.slice(last));
  target.replaceChildren(...nodes);
}

/** The numbered list of cited sections under an answer. */
export function renderSources(target: HTMLOListElement, sources: Iterable<Source>): void {
  const items = [...sources]
    .sort((a, b) => a.index - b.index)
    .map((source) => {
      const item = document.createElement("li");
      item.value = source.index;
      item.append(link(safeUrl(source.sourceUrl), sourceLabel(source), "g-source"));
      return item;
    });
  target.replaceChildren(...items);
  target.hidden = items.length === 0;
}
