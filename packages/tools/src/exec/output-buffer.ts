/** Collects a command's output within a character budget, keeping the head and the tail. */
export class OutputBuffer {
  private head = '';
  private tail = '';
  private total = 0;
  private newlines = 0;
  private readonly headLimit: number;
  private readonly tailLimit: number;

  constructor(readonly budget: number) {
    if (!Number.isInteger(budget) || budget < 2) throw new Error(`output budget must be an integer >= 2, got ${budget}`);
    this.headLimit = Math.ceil(budget / 2);
    this.tailLimit = budget - this.headLimit;
  }

  /** Appends decoded text in arrival order. */
  push(text: string): void {
    this.total += text.length;
    for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) this.newlines++;
    let rest = text;
    if (this.head.length < this.headLimit) {
      const room = this.headLimit - this.head.length;
      this.head += rest.slice(0, room);
      rest = rest.slice(room);
    }
    if (rest.length === 0) return;
    this.tail += rest;
    if (this.tail.length > this.tailLimit * 2) this.tail = this.tail.slice(-this.tailLimit);
  }

  /** Lines seen so far (a final line without a newline counts). */
  get lines(): number {
    return this.newlines + (this.total > 0 && !this.endsWithNewline() ? 1 : 0);
  }

  /** Characters seen so far. */
  get chars(): number {
    return this.total;
  }

  /** Whether the output exceeded the budget. */
  get truncated(): boolean {
    return this.total > this.budget;
  }

  private endsWithNewline(): boolean {
    const last = this.tail.length > 0 ? this.tail : this.head;
    return last.endsWith('\n');
  }

  /** The kept text: everything, or head + an omission marker + tail. */
  text(): string {
    if (!this.truncated) return this.head + this.tail;
    const tail = this.tail.slice(-this.tailLimit);
    const omitted = this.total - this.head.length - tail.length;
    return `${this.head}\n… [${omitted} characters omitted] …\n${tail}`;
  }
}
