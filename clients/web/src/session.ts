// The conversation survives page changes within the tab: its session id and the anonymous
// session's token (the proof of access the agent asks for) are kept in sessionStorage, one entry
// per endpoint and collection, and forgotten when the tab closes.

export interface Conversation {
  sessionId: string;
  sessionToken: string;
}

export class ConversationStore {
  private readonly key: string;

  constructor(endpoint: string, collection: string) {
    this.key = `glossator:${endpoint}|${collection}`;
  }

  load(): Conversation | undefined {
    try {
      const saved = JSON.parse(sessionStorage.getItem(this.key) ?? "null");
      return saved && typeof saved.sessionId === "string" ? saved : undefined;
    } catch {
      return undefined; // storage disabled or a foreign value: start afresh
    }
  }

  save(conversation: Conversation): void {
    try {
      sessionStorage.setItem(this.key, JSON.stringify(conversation));
    } catch {
      // storage disabled (private mode, quota): the conversation lasts as long as the page
    }
  }

  clear(): void {
    try {
      sessionStorage.removeItem(this.key);
    } catch {
      // as above
    }
  }
}
