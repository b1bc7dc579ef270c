/**
 * Side-effect entry: installs the no-egress guard in this process and passes it on to every child
 * process started with this process's environment. Loaded by vitest's `setupFiles` and by
 * `node --import` in every process the harness spawns.
 */
import { installNoEgressGuard, noEgressNodeOptions } from './no-egress.js';

installNoEgressGuard();
process.env.NODE_OPTIONS = noEgressNodeOptions(process.env.NODE_OPTIONS ?? '');
