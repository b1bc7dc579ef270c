#!/usr/bin/env node
// The `switchboard` command. Committed (and executable) so that `npm ci` can link it into
// node_modules/.bin before `prepare` has built dist/; it only loads the built CLI.
import '../dist/cli.js';
