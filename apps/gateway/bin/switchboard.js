#!/usr/bin/env node
// The `switchboard` command. Committed (and executable) so that `npm ci` can link it into
// node_modules/.bin before `prepare` has built dist/; it only loads the built CLI.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const cli = new URL('../dist/cli.js', import.meta.url);
if (!existsSync(fileURLToPath(cli))) {
  process.stderr.write(`switchboard: the CLI is not built yet (${fileURLToPath(cli)} is missing): run \`npm run build\` in the checkout\n`);
  process.exit(1);
}
await import(cli.href);
