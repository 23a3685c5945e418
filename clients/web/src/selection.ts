// "Ask about this": when the reader selects text on the page (not in the widget), a button appears
// just below the selection; it hands the selected text to the widget. Keyboard users get the same
// through the widget's shortcut (Alt+Shift+A), which reads current().
const MIN_CHARS = 3;

export class SelectionWatcher {
  readonly button: HTMLButtonElement;
  private pending = 0;
  private text = "";

  constructor(
    private readonly host: HTMLElement,
    ask: (text: string) => void,
  ) {
    this.button = document.createElement("button");
    this.button.type = "button";
    this.button.className = "g-ask-selection";
    this.button.textContent = "Ask about this";
    this.button.hidden = true;
    // mousedown would clear the page's selection before the click: keep it.
    this.button.addEventListener("mousedown", (event) => event.preventDefault());
    this.button.addEventListener("click", () => {
      this.button.hidden = true;
      ask(this.text);
    });
    document.addEventListener("selectionchange", this.onChange);
  }

  stop(): void {
    document.removeEventListener("selectionchange", this.onChange);
    clearTimeout(this.pending);
  }

  /** The page's selected text, or "" (nothing selected, or the selection is in the widget). */
  current(): string {
    const selection = document.getSelection();
    if (!selection || selection.isCollapsed || selection.rangeCount === 0) return "";
    const node = selection.anchorNode;
    if (node && (this.host === node || this.host.contains(node))) return "";
    const text = selection.toString().trim();
    return text.length >= MIN_CHARS ? text : "";
  }

  // Selections change on every keystroke or drag step: place the button when they settle.
  private readonly onChange = (): void => {
    clearTimeout(this.pending);
    this.pending = window.setTimeout(() => this.place(), 150);
  };

  private place(): void {
    const text = this.current();
    const rects = text ? document.getSelection()?.getRangeAt(0).getClientRects() : undefined;
    const rect = rects?.[rects.length - 1]; // the selection's last line, where the reader stopped
    if (!text || !rect || (rect.width === 0 && rect.height === 0)) {
      this.button.hidden = true;
      return;
    }
    this.text = text;
    // Below the end of the selection (a phone's own selection menu sits above it), in the viewport.
    const top = Math.min(rect.bottom + 8, window.innerHeight - 52);
    const left = Math.max(8, Math.min(rect.right - 120, window.innerWidth - 160));
    this.button.style.top = `${top}px`;
    this.button.style.left = `${left}px`;
    this.button.hidden = false;
  }
}
