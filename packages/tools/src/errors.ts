import { SwbError, SwbErrorCode } from '@switchboard/agent';

/** Tells the model what the confinement allows. */
export const PATH_ESCAPE_HINT = 'paths must stay inside the workspace; use a relative path like notes/todo.md';

/** A path that would leave the agent's workspace (or is otherwise unusable as a path). */
export class PathEscapeError extends SwbError {
  constructor(detail: string) {
    super(SwbErrorCode.PathEscape, `${detail}: ${PATH_ESCAPE_HINT}`);
    this.name = 'PathEscapeError';
  }
}

/** Stable codes for file tool failures other than path escapes. */
export type FileToolErrorCode = (typeof SwbErrorCode)[
  | 'FileNotFound'
  | 'FileKind'
  | 'FileTooLarge'
  | 'FileBinary'
  | 'HardLink'
  | 'EditNoMatch'
  | 'EditAmbiguous'
  | 'ToolInput'
  | 'Workspace'
  | 'Aborted'
  | 'Fs'];

/** A file tool failure whose message is written for the model and names only workspace-relative paths. */
export class FileToolError extends SwbError {
  declare readonly code: FileToolErrorCode;
  constructor(code: FileToolErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
    this.name = 'FileToolError';
  }
}

/**
 * Refuses a write through a file that has more than one hard link: the same content is also
 * reachable under another name (perhaps one the rules or safety checks protect), so what the
 * write really changes cannot be told from its path.
 */
export function hardLinkError(rel: string, links: number): FileToolError {
  return new FileToolError(
    SwbErrorCode.HardLink,
    `${rel} has ${links} hard links (the same file is also reachable under another name), so it cannot be written; reading it is fine. Write a new file instead`,
  );
}

/** The errno code of a Node fs error, if any. */
export function errnoCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * Turns an fs failure into a FileToolError naming `rel`. Node's own messages carry absolute
 * host paths, so they are never passed on; the original error is kept as `cause`.
 */
export function fsError(err: unknown, rel: string): SwbError {
  if (err instanceof SwbError) return err;
  const code = errnoCode(err);
  const make = (c: FileToolErrorCode, message: string) => new FileToolError(c, message, { cause: err });
  switch (code) {
    case 'ENOENT':
      return make(SwbErrorCode.FileNotFound, `${rel} does not exist`);
    case 'ENOTDIR':
      return make(SwbErrorCode.FileKind, `part of the path ${rel} is a file, not a directory`);
    case 'EEXIST':
      // mkdir -p reports EEXIST when a component of the path is an existing file.
      return make(SwbErrorCode.FileKind, `part of the path ${rel} is a file, not a directory`);
    case 'EISDIR':
      return make(SwbErrorCode.FileKind, `${rel} is a directory`);
    case 'EACCES':
    case 'EPERM':
      return make(SwbErrorCode.Fs, `permission denied for ${rel}`);
    case 'ELOOP':
      return make(SwbErrorCode.Fs, `${rel} has too many levels of symbolic links`);
    case 'ENOSPC':
    case 'EDQUOT':
      return make(SwbErrorCode.Fs, `no space left to write ${rel}`);
    case 'ENAMETOOLONG':
      return make(SwbErrorCode.ToolInput, `the path ${rel} is too long`);
    default:
      return make(SwbErrorCode.Fs, `could not access ${rel} (${code ?? 'unexpected error'})`);
  }
}

/** Throws when the turn was stopped; file tools call it between files and directories. */
export function throwIfAborted(signal: AbortSignal, toolName: string): void {
  if (signal.aborted) throw new FileToolError(SwbErrorCode.Aborted, `${toolName} was stopped before it finished`);
}
