import { createRequire } from 'node:module';
import { Language, Parser } from 'web-tree-sitter';
import { type ScriptStep, scriptSteps } from './shell-script.js';

/**
 * The shell parser behind the exec checks: tree-sitter-bash's shipped WebAssembly grammar run by
 * `web-tree-sitter` (no native build at install). The WASM is loaded once per process
 * ({@link loadShellParser}); parsing after that is synchronous.
 */
export interface ShellParser {
  /** Parses one command line into the steps the checks judge; `undefined` when the grammar rejects it. */
  parse(command: string): ScriptStep[] | undefined;
}

let loading: Promise<ShellParser> | undefined;

/** Loads the bash grammar once (later calls share the same promise). Rejects if the WASM cannot load. */
export function loadShellParser(): Promise<ShellParser> {
  loading ??= createParser().catch((err: unknown) => {
    loading = undefined;
    throw err;
  });
  return loading;
}

async function createParser(): Promise<ShellParser> {
  const require = createRequire(import.meta.url);
  await Parser.init();
  const bash = await Language.load(require.resolve('tree-sitter-bash/tree-sitter-bash.wasm'));
  const parser = new Parser();
  parser.setLanguage(bash);
  return {
    parse(command: string): ScriptStep[] | undefined {
      const tree = parser.parse(command);
      if (!tree) return undefined;
      try {
        return tree.rootNode.hasError ? undefined : scriptSteps(tree.rootNode);
      } finally {
        tree.delete();
      }
    },
  };
}
