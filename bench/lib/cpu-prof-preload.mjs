// Preloaded into the gateway by bench/profile.mjs (NODE_OPTIONS=--import=<this file>), because
// Node 20 refuses --cpu-prof in NODE_OPTIONS. Starts V8's sampling CPU profiler at once and
// writes <BENCH_CPU_PROF_DIR>/gateway-<pid>.cpuprofile when the process exits (the in-process
// inspector session answers synchronously, so this works inside the 'exit' handler).
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { join } from 'node:path';

const dir = process.env.BENCH_CPU_PROF_DIR;
if (dir) {
  const session = new Session();
  session.connect();
  session.post('Profiler.enable');
  session.post('Profiler.setSamplingInterval', { interval: Number(process.env.BENCH_CPU_PROF_INTERVAL_US) || 1000 });
  session.post('Profiler.start');
  process.once('exit', () => {
    session.post('Profiler.stop', (err, res) => {
      if (!err && res?.profile) writeFileSync(join(dir, `gateway-${process.pid}.cpuprofile`), JSON.stringify(res.profile));
    });
  });
}
