/** One mebibyte, the default size cap for reads and writes. */
export const MIB = 1024 * 1024;

/** Default largest file (bytes) that read_file, edit_file and search_files will open. */
export const DEFAULT_MAX_FILE_BYTES = MIB;
/** Default largest content (bytes) that write_file or an edit may produce. */
export const DEFAULT_MAX_WRITE_BYTES = MIB;
/** Default cut-off for a tool result shown to the model. */
export const DEFAULT_MAX_RESULT_CHARS = 50_000;
/** Default number of entries list_files shows before cutting. */
export const DEFAULT_MAX_LIST_ENTRIES = 1000;
/** Default number of matches search_files shows before stopping. */
export const DEFAULT_MAX_SEARCH_MATCHES = 200;
/** Default length at which search_files cuts a matching line. */
export const DEFAULT_MAX_LINE_CHARS = 300;

/** Limits for the built-in file tools; every field is optional and has a default. */
export interface FileToolsOptions {
  /** Largest file (bytes) read_file, edit_file and search_files will open. Default 1 MiB. */
  maxFileBytes?: number;
  /** Largest content (bytes) write_file will write, and the largest file an edit may produce. Default 1 MiB. */
  maxWriteBytes?: number;
  /** Results longer than this are cut for the model. Default 50 000 characters. */
  maxResultChars?: number;
  /** Entries list_files shows before cutting with a note. Default 1000. */
  maxListEntries?: number;
  /** Matches search_files shows before stopping with a note. Default 200. */
  maxSearchMatches?: number;
  /** Characters of a matching line search_files shows. Default 300. */
  maxLineChars?: number;
  /** Longest search_files pattern, in characters (config `limits.regexMaxLength`). Default 1000. */
  regexMaxLength?: number;
  /** Longest one file's matching may take in search_files' worker (config `limits.regexDeadline`). Default 1 s. */
  regexDeadlineMs?: number;
  /** Told when search_files terminates its regex worker (deadline, abort, crash). Must not throw. */
  onRegexWorkerTerminated?: (info: { why: 'deadline' | 'aborted' | 'crashed'; toolUseId: string }) => void;
  /**
   * The exec sandbox's shared group (set when the gateway runs as root and the sandbox drops to
   * uids of this group). Files write_file creates and folders it makes on the way get this group
   * with group read/write (folders also setgid); files edit_file or write_file replace keep their
   * owner, group and mode. Default: unset, ownership is left to the process.
   */
  sandboxGroup?: number;
}
