import { stat } from 'node:fs/promises';
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path';
import type { AnyTool, Message } from '@switchboard/agent';
import { toolMatchKind } from '../permissions/matchers.js';
import type { InstructionFile, InstructionGate } from './agents-md.js';
import { defuse, PERSON_LAYER_NOTE } from './layers.js';

/**
 * Nested `AGENTS.md` files (docs/instructions.md, "Nested AGENTS.md"): the rules of a
 * subdirectory load lazily, the first time a tool touches that directory, as a separate
 * instruction note — a text block of its own next to the tool results, never inside a fenced
 * result (so text in tool output never becomes instructions, and microcompact, which clears only
 * result bodies, leaves it alone).
 */

const NOTE_PREFIX = '<instructions_note path="';

/** The note the model reads for one nested file. */
export function instructionNote(file: InstructionFile, maxBytes: number): string {
  const dir = file.path.slice(0, -'/AGENTS.md'.length);
  const cut = file.truncated ? `\n[AGENTS.md was cut at ${maxBytes} bytes]` : '';
  return `${NOTE_PREFIX}${file.path}">\nRules for work under ${dir}/, from the AGENTS.md there. ${PERSON_LAYER_NOTE}\n\n${defuse(file.text)}${cut}\n</instructions_note>`;
}

/** The paths of the instruction notes in a conversation's user messages (text blocks only, never tool results). */
export function notesIn(messages: readonly Message[]): Set<string> {
  const out = new Set<string>();
  for (const m of messages) {
    if (m.role !== 'user') continue;
    for (const b of m.content) {
      if (b.type !== 'text' || !b.text.startsWith(NOTE_PREFIX)) continue;
      const end = b.text.indexOf('"', NOTE_PREFIX.length);
      if (end > 0) out.add(b.text.slice(NOTE_PREFIX.length, end));
    }
  }
  return out;
}

/** The workspace-relative folders from the top down to `dir` (`a/b` → `a`, `a/b`); the root itself is not one. */
export function foldersDownTo(dir: string): string[] {
  const parts = dir.split('/').filter((p) => p !== '' && p !== '.');
  return parts.map((_, i) => parts.slice(0, i + 1).join('/'));
}

/** The workspace-relative folder a path-tool call touches (`''`: the root), or undefined when it is outside the workspace. */
export async function touchedFolder(workspace: string, path: string): Promise<string | undefined> {
  const abs = resolve(workspace, path);
  const rel = relative(resolve(workspace), abs);
  if (rel === '') return '';
  if (rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) return undefined;
  const isDir = await stat(abs).then(
    (s) => s.isDirectory(),
    () => false,
  );
  const folder = isDir ? rel : dirname(rel);
  return folder === '.' ? '' : folder.split(sep).join('/');
}

/** The nested instruction notes of one turn. */
export class NestedInstructions {
  /** Folders already looked at in this turn's view (their note is in it, or they have none). */
  private readonly seen = new Set<string>();
  private readonly pending: string[] = [];

  /**
   * `inView`: the notes already in the conversation the turn starts from (since the last
   * compaction boundary); `reload`: notes the session loaded before a boundary that the view no
   * longer holds — they are injected again once, at the turn's first model call.
   */
  constructor(
    private readonly gate: InstructionGate,
    private readonly workspace: string,
    private readonly maxBytes: number,
    inView: ReadonlySet<string>,
    private readonly loaded: Set<string>,
  ) {
    for (const path of inView) this.seen.add(path.slice(0, -'/AGENTS.md'.length));
  }

  /** Queues the notes lost at a compaction boundary (see the constructor). */
  async reinject(): Promise<void> {
    for (const path of [...this.loaded]) {
      const dir = path.slice(0, -'/AGENTS.md'.length);
      if (this.seen.has(dir)) continue;
      await this.loadFolder(dir);
    }
  }

  /** After a tool call ran: queues the notes of the folders it touched that this view has not seen. */
  async touched(tool: AnyTool, input: unknown): Promise<void> {
    if (toolMatchKind(tool.name) !== 'path' || !tool.ruleContent) return;
    let path: string;
    try {
      path = tool.ruleContent(input);
    } catch {
      return;
    }
    const folder = await touchedFolder(this.workspace, path);
    if (folder === undefined) return;
    for (const dir of foldersDownTo(folder)) await this.loadFolder(dir);
  }

  /** Takes the queued notes (each once). */
  drain(): string[] {
    return this.pending.splice(0);
  }

  private async loadFolder(dir: string): Promise<void> {
    if (this.seen.has(dir)) return;
    this.seen.add(dir);
    const file = await this.gate.load(dir);
    if (!file) return;
    this.loaded.add(file.path);
    this.pending.push(instructionNote(file, this.maxBytes));
  }
}
