import type { Message, SystemBlock, ToolUseBlock, Usage } from './messages.js';
import type { ToolSpec } from './model.js';

/** Characters per token before anything was measured: English prose and JSON average about 4 for Claude's tokenizer; 3.5 errs towards counting more. */
export const DEFAULT_CHARS_PER_TOKEN = 3.5;

/**
 * What one image block counts as, in characters: the API bills an image by its pixels (about
 * width × height / 750 tokens, at most about 1 600 for an image it scales down), never by its
 * base64 length; 1 600 tokens at the default ratio.
 */
export const IMAGE_CHARS = 1600 * DEFAULT_CHARS_PER_TOKEN;

/**
 * The request's size in characters as the token estimate counts it: the system text, the tool
 * schemas as JSON and every content block (text, tool input as JSON, tool result content).
 */
export function requestChars(system: readonly SystemBlock[], tools: readonly ToolSpec[], messages: readonly Message[]): number {
  let chars = 0;
  for (const block of system) chars += block.text.length;
  for (const tool of tools) chars += toolChars(tool);
  return chars + messagesChars(messages);
}

/** Characters of each tool spec, by spec object: specs are built once per tool (`toolSpec`), and their schema's JSON is the costly part. */
const toolCharsCache = new WeakMap<ToolSpec, number>();

function toolChars(tool: ToolSpec): number {
  let chars = toolCharsCache.get(tool);
  if (chars === undefined) {
    chars = tool.name.length + tool.description.length + JSON.stringify(tool.input_schema).length;
    toolCharsCache.set(tool, chars);
  }
  return chars;
}

/** The characters of the messages alone (see {@link requestChars}). */
export function messagesChars(messages: readonly Message[]): number {
  let chars = 0;
  for (const message of messages) {
    for (const block of message.content) {
      if (block.type === 'text') chars += block.text.length;
      else if (block.type === 'tool_use') chars += toolUseChars(block);
      else if (block.type === 'image') chars += IMAGE_CHARS;
      else chars += block.content.length;
      // Every block costs a few tokens of framing.
      chars += 12;
    }
  }
  return chars;
}

// A tool call's input as JSON, measured once per block: every shaper measures every call's whole history.
const toolUseCharsCache = new WeakMap<ToolUseBlock, number>();

function toolUseChars(block: ToolUseBlock): number {
  let chars = toolUseCharsCache.get(block);
  if (chars === undefined) {
    chars = block.name.length + jsonLength(block.input);
    toolUseCharsCache.set(block, chars);
  }
  return chars;
}

function jsonLength(value: unknown): number {
  try {
    return JSON.stringify(value)?.length ?? 0;
  } catch {
    return 0;
  }
}

/** The tokens the API counted for a request: uncached input plus cache reads and writes (`input_tokens` alone excludes cached tokens). */
export function countedInputTokens(usage: Usage): number {
  return usage.inputTokens + usage.cacheReadInputTokens + usage.cacheCreationInputTokens;
}

/**
 * A calibrated chars-per-token estimate. Starts at {@link DEFAULT_CHARS_PER_TOKEN}; every
 * response corrects it from the request's characters and the tokens the API counted
 * ({@link countedInputTokens}), as a moving average, so a model, language or content mix that
 * tokenizes differently is tracked within a few calls. Pure apart from its own ratio.
 */
export class TokenEstimator {
  private ratio: number;
  /** Moving average of the relative error of the estimate just before each observation; undefined before the first. */
  private error: number | undefined;

  constructor(
    initial = DEFAULT_CHARS_PER_TOKEN,
    /** Weight of each new observation (0–1). */
    private readonly weight = 0.3,
  ) {
    this.ratio = initial;
  }

  /** Characters per token as calibrated so far. */
  get charsPerToken(): number {
    return this.ratio;
  }

  /**
   * How far off the estimate has recently been, as a fraction of the true count (a moving
   * average over the observations, each measured before it corrected the ratio); undefined
   * until something was observed. A meter narrows its "near a threshold" band to this.
   */
  get relativeError(): number | undefined {
    return this.error;
  }

  /** Estimated tokens of `chars` characters. */
  tokens(chars: number): number {
    return Math.ceil(chars / this.ratio);
  }

  /** Corrects the ratio from a request of `chars` characters the API counted as `tokens`; nonsense observations are ignored. */
  observe(chars: number, tokens: number): void {
    if (!Number.isFinite(chars) || !Number.isFinite(tokens) || chars <= 0 || tokens <= 0) return;
    const measured = chars / tokens;
    // A measurement far outside any real tokenizer's range (an empty fake usage, a proxy's zero) is noise.
    if (measured < 0.5 || measured > 20) return;
    const miss = Math.abs(this.tokens(chars) - tokens) / tokens;
    this.error = this.error === undefined ? miss : this.error * (1 - this.weight) + miss * this.weight;
    this.ratio = this.ratio * (1 - this.weight) + measured * this.weight;
  }
}
