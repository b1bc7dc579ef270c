/** Where an approval request was posted. */
export interface PostedApproval {
  channel: string;
  ts: string;
  tool: string;
}

/**
 * What the renderer and the button handler share about approval messages in this process:
 * where each request was posted, which ones a button press is answering (so only one of them
 * edits the message), and the Slack user behind each principal that pressed a button.
 */
export class ApprovalBoard {
  /** principal id → Slack user id, for naming who decided. */
  readonly deciders = new Map<string, string>();
  private readonly posted = new Map<string, PostedApproval>();
  private readonly pressing = new Set<string>();

  remember(approvalId: string, at: PostedApproval): void {
    this.posted.set(approvalId, at);
    // Bounded: approvals are short-lived, and a forgotten one only loses a cosmetic edit.
    if (this.posted.size > 1000) this.posted.delete(this.posted.keys().next().value!);
  }

  get(approvalId: string): PostedApproval | undefined {
    return this.posted.get(approvalId);
  }

  /** Marks a press in progress; the renderer leaves the message to the press handler. */
  pressStarted(approvalId: string, principalId: string, slackUser: string): void {
    this.pressing.add(approvalId);
    this.deciders.set(principalId, slackUser);
    if (this.deciders.size > 10_000) this.deciders.delete(this.deciders.keys().next().value!);
  }

  /** Ends a press; `decided` keeps the mark (the press handler has edited the message). */
  pressEnded(approvalId: string, decided: boolean): void {
    if (!decided) this.pressing.delete(approvalId);
  }

  /** Whether a button press owns this approval's message edit. */
  pressedHere(approvalId: string): boolean {
    return this.pressing.has(approvalId);
  }

  forget(approvalId: string): void {
    this.posted.delete(approvalId);
    this.pressing.delete(approvalId);
  }
}
