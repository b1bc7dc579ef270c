#!/usr/bin/env node
// Prints the hot spots of a V8 .cpuprofile: node bench/summarize-profile.mjs <file.cpuprofile> [--top N] [--json]
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { formatSummary, isWorkspaceFrame, summarizeProfile } from './lib/cpuprofile.mjs';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { top: { type: 'string', default: '15' }, json: { type: 'boolean', default: false } },
});
if (positionals.length !== 1) {
  process.stderr.write('usage: node bench/summarize-profile.mjs <file.cpuprofile> [--top N] [--json]\n');
  process.exit(2);
}
const summary = summarizeProfile(JSON.parse(readFileSync(positionals[0], 'utf8')), { top: Number(values.top), inclusiveFilter: isWorkspaceFrame });
process.stdout.write(values.json ? `${JSON.stringify(summary, null, 2)}\n` : `${formatSummary(summary, { title: positionals[0] })}\n`);
