#!/usr/bin/env node
/**
 * Entry point run by `npm test` after vitest:
 * `node packages/testkit/dist/canary-scan-cli.js [--log <path>] [--seen <path>] [--extra <value>]`.
 */
import { runCanaryScanCli } from './canary-scan.js';

process.exitCode = runCanaryScanCli(process.argv.slice(2));
