import type { ServerResponse } from 'node:http';
import { completionId } from './answers.js';
import { answerError } from './answers.js';
import type { Answer, Listener } from './live-turns.js';
import { chunkObject, errorBody, SSE_DONE, sseData } from './wire.js';

/** One streaming answer on an HTTP response (`text/event-stream`). */
export class SseAnswer implements Listener {
  private timer: NodeJS.Timeout | null = null;
  private ended = false;
  private lastWrite = Date.now();
  private readonly created = Math.floor(Date.now() / 1000);
  private readonly onClose: () => void;

  constructor(
    private readonly res: ServerResponse,
    private readonly o: { turnId: string; model: string; includeUsage: boolean; pingIntervalMs: number; onDone(): void },
  ) {
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    this.write(sseData(this.chunk({ role: 'assistant', content: '' })));
    this.timer = setInterval(
      () => {
        if (Date.now() - this.lastWrite >= this.o.pingIntervalMs) this.write(': ping\n\n');
      },
      Math.max(50, Math.floor(o.pingIntervalMs / 2)),
    );
    this.onClose = () => this.finish();
    res.on('close', this.onClose);
  }

  private chunk(delta?: { role?: 'assistant'; content?: string }, finishReason?: 'stop' | 'length' | null, usage?: Answer['usage'] | null) {
    return chunkObject({
      id: completionId(this.o.turnId),
      created: this.created,
      model: this.o.model,
      ...(delta ? { delta } : {}),
      ...(finishReason !== undefined ? { finishReason } : {}),
      ...(this.o.includeUsage ? { usage: usage ?? null } : {}),
    });
  }

  private write(s: string): void {
    if (this.ended || this.res.writableEnded || this.res.destroyed) return;
    this.lastWrite = Date.now();
    this.res.write(s);
  }

  text(delta: string): void {
    if (delta) this.write(sseData(this.chunk({ content: delta })));
  }

  comment(line: string): void {
    this.write(`: ${line}\n\n`);
  }

  end(a: Answer): void {
    const err = answerError(a);
    if (err) this.write(sseData(errorBody(err)));
    else {
      this.write(sseData(this.chunk({}, a.reason === 'max_turns' ? 'length' : 'stop')));
      if (this.o.includeUsage)
        this.write(sseData({ ...this.chunk(undefined, undefined, a.usage ?? { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 }) }));
      this.write(SSE_DONE);
    }
    this.finish();
  }

  /** Ends the response with an error event (a revoked token, a shutdown). */
  fail(error: Parameters<typeof errorBody>[0]): void {
    this.write(sseData(errorBody(error)));
    this.finish();
  }

  private finish(): void {
    if (this.ended) return;
    this.ended = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.res.off('close', this.onClose);
    if (!this.res.writableEnded) this.res.end();
    this.o.onDone();
  }
}
