// SIGTERM with every platform unreachable (issue 11): how long from the signal to the exit.

/** Telegram and Slack accounts whose API roots are a closed port and a port that accepts and never answers. */
function unreachableChannels(dead, silent, withTelegram) {
  const slack = (mode, root) => ({
    botToken: 'xoxb-bench-0000000000-unreachable',
    mode,
    ...(mode === 'http' ? { signingSecret: 'bench-signing-secret-unreachable' } : { appToken: 'xapp-bench-0000000000-unreachable' }),
    apiUrl: `${root}/api/`,
    dmPolicy: 'open',
    allowFrom: ['*'],
    maxRetries: 1,
    apiTimeout: '500ms',
  });
  const telegram = (root) => ({ token: '123456:bench-unreachable-token', apiRoot: root, pollTimeout: '1s', pollStallTimeout: '2s', maxRetryAttempts: 1 });
  return {
    slack: { accounts: { closed: slack('http', dead), silent: slack('socket', silent) } },
    ...(withTelegram ? { telegram: { accounts: { closed: telegram(dead), silent: telegram(silent) } } } : {}),
  };
}

/**
 * Starts a gateway (shutdownGrace 2 s) whose platforms are all unreachable, waits until a Slack
 * call to the silent port has timed out (so start-up is over and requests are in flight), sends
 * SIGTERM and measures signal → exit. A gateway still running `capMs` after the signal is killed
 * and reported as timed out.
 */
export async function measureUnreachableStop(tk, modelUrl, { withTelegram, capMs = 15_000 }) {
  const hole = await tk.startBlackhole();
  const closed = await tk.closedPort();
  const dead = `http://127.0.0.1:${closed}`;
  const silent = `http://127.0.0.1:${hole.port}`;
  try {
    const gw = await tk.startGateway({
      modelUrl,
      startTimeoutMs: 20_000,
      config: { log: { level: 'warn' }, limits: { shutdownGrace: '2s' }, channels: unreachableChannels(dead, silent, withTelegram) },
    });
    await gw.waitForLog((l) => l.includes('"slack unreachable"') && l.includes(`127.0.0.1:${hole.port}`), 15_000);
    const t0 = performance.now();
    gw.child.kill('SIGTERM');
    let timer;
    const exit = await Promise.race([gw.exited, new Promise((r) => (timer = setTimeout(() => r(null), capMs)))]);
    clearTimeout(timer);
    const ms = performance.now() - t0;
    if (exit === null) {
      gw.child.kill('SIGKILL');
      await gw.exited;
      return { ms: null, timedOut: true, capMs, withTelegram, shutdownGraceMs: 2000 };
    }
    const stopped = gw.logs().some((l) => l.includes('"event":"stopped"'));
    return { ms: Math.round(ms), exitCode: exit.code, stoppedLine: stopped, timedOut: false, withTelegram, shutdownGraceMs: 2000 };
  } finally {
    await hole.close();
  }
}
