import { beforeAll, describe, expect, it } from 'vitest';
import { connectClient, collectTurn, isEnd, toolResultFor, useGateway } from './helpers.js';
import { alive, autoApprove, execCall, execLog, execWorkspace, GateFifo, processTree } from './exec-helpers.js';

// Acceptance 6 and 7 of issue 14 through the real gateway and real bubblewrap: progress frames
// during a long command, a WebSocket abort and a kill -9 of the gateway mid-run. The owner runs in
// bypassPermissions, so the commands only need to run (any ask that still comes is approved).
const env = useGateway({
  config: { agents: { default: { mode: 'bypassPermissions' } }, tools: { exec: { progressInterval: '200ms', killGrace: '500ms' } } },
});
let workspace: string;

beforeAll(() => {
  workspace = execWorkspace(env.gw);
});

describe('exec: progress reaches the WebSocket client (acceptance 7)', () => {
  it('sends tool frames with phase "progress", lines and elapsed time, before the end frame', async () => {
    const { fake } = env;
    const ws = await connectClient(env.gw);
    const approver = autoApprove(ws, 'pr1');
    const gate = new GateFifo(workspace, 'progress.fifo');
    try {
      fake.enqueue(execCall('toolu_pr1', 'echo one; echo two; read line < progress.fifo; echo "three $line"'), { text: 'Done.' });
      ws.send({ type: 'message', clientId: 'pr1', text: 'run something long' });
      const progress = await ws.next((f) => f.type === 'tool' && f.phase === 'progress' && f.toolUseId === 'toolu_pr1' && f.lines >= 2, 20_000);
      expect(progress).toMatchObject({ name: 'exec', clientId: 'pr1', lines: 2 });
      expect(progress.message).toMatch(/^2 lines so far, \d+(\.\d+)? s$/);
      expect(typeof progress.elapsedMs).toBe('number');
      expect(progress.elapsedMs).toBeGreaterThan(0);
      // the command is still blocked on the fifo: no end frame yet
      expect(ws.frames.some((f) => f.type === 'tool' && f.phase === 'end' && f.toolUseId === 'toolu_pr1')).toBe(false);
      gate.release('go');
      const turn = await collectTurn(ws, 'pr1', 30_000);
      expect(turn.end).toMatchObject({ type: 'final', text: 'Done.' });
      const frames = ws.frames.filter((f) => f.type === 'tool' && f.toolUseId === 'toolu_pr1');
      const endAt = frames.findIndex((f) => f.phase === 'end');
      expect(endAt).toBeGreaterThan(0);
      expect(frames[0]!.phase).toBe('start');
      expect(frames.slice(0, endAt).filter((f) => f.phase === 'progress').length).toBeGreaterThanOrEqual(1);
      expect(frames.slice(endAt + 1)).toHaveLength(0);
      const result = toolResultFor(fake, 'toolu_pr1');
      expect(result.is_error).toBeFalsy();
      expect(result.content).toMatch(/Exit code 0/);
      expect(result.content).toContain('three go');
    } finally {
      approver.stop();
      gate.close();
      ws.close();
    }
  });
});

describe('exec: an abort kills the whole process tree (acceptance 6)', () => {
  it('a WebSocket abort mid-run leaves no process of the command behind', async () => {
    const { fake } = env;
    const ws = await connectClient(env.gw);
    const approver = autoApprove(ws, 'ab1');
    try {
      fake.enqueue(execCall('toolu_ab1', 'sleep 300 & sleep 300 & echo ready; wait'));
      ws.send({ type: 'message', clientId: 'ab1', text: 'start and abort' });
      const started = await execLog(env.gw, 'exec started', 'toolu_ab1');
      const pid = started.pid as number;
      expect(pid).toBeGreaterThan(1);
      // "ready" is printed after both sleeps were forked: the progress frame that counts it
      await ws.next((f) => f.type === 'tool' && f.phase === 'progress' && f.toolUseId === 'toolu_ab1' && f.lines >= 1, 20_000);
      const tree = processTree(pid);
      // bwrap, its pid-1 child, the shell, two sleeps (at least)
      expect(tree.length).toBeGreaterThanOrEqual(4);
      expect(alive(tree)).toEqual(tree);
      const accepted = ws.frames.find((f) => f.type === 'accepted' && f.clientId === 'ab1');
      ws.send({ type: 'abort', turnId: accepted!.turnId });
      const finished = await execLog(env.gw, 'exec finished', 'toolu_ab1');
      expect(finished.pid).toBe(pid);
      expect(alive(tree)).toEqual([]);
      const end = await ws.next((f) => isEnd(f) && f.clientId === 'ab1', 20_000);
      expect(end).toMatchObject({ type: 'error', code: 'aborted' });
      expect(ws.frames.find((f) => f.type === 'tool' && f.phase === 'end' && f.toolUseId === 'toolu_ab1')).toMatchObject({ name: 'exec', isError: true });
    } finally {
      approver.stop();
      ws.close();
    }
  });

  it('a kill -9 of the gateway mid-run leaves no process behind, and the turn resumes with the interrupted result', async () => {
    const { fake } = env;
    const ws = await connectClient(env.gw);
    const approver = autoApprove(ws, 'k9');
    let tree: number[] = [];
    try {
      fake.enqueue(execCall('toolu_k9', 'sleep 300 & sleep 300 & echo ready; wait'), { text: 'Resumed after the restart.' });
      ws.send({ type: 'message', clientId: 'k9', text: 'start and crash' });
      const pid = (await execLog(env.gw, 'exec started', 'toolu_k9')).pid as number;
      await ws.next((f) => f.type === 'tool' && f.phase === 'progress' && f.toolUseId === 'toolu_k9' && f.lines >= 1, 20_000);
      tree = processTree(pid);
      expect(tree.length).toBeGreaterThanOrEqual(4);
      expect(alive(tree)).toEqual(tree);
      const requestsBefore = fake.requests.length;
      await env.gw.kill('SIGKILL');
      approver.stop();
      ws.close();
      env.gw = await env.gw.restart();
      // no process of that run is left once the new gateway is up
      expect(alive(tree)).toEqual([]);
      // the resumed turn's next model request carries the interrupted result for that tool_use id
      await fake.waitForRequests(requestsBefore + 1, 30_000);
      const result = toolResultFor(fake, 'toolu_k9');
      expect(result.is_error).toBe(true);
      expect(result.content).toMatch(/restarted while exec was running/);
      const ws2 = await connectClient(env.gw);
      ws2.send({ type: 'hello', cursor: 0 });
      const end = await ws2.next((f) => isEnd(f) && f.clientId === 'k9', 30_000);
      expect(end).toMatchObject({ type: 'final', text: 'Resumed after the restart.' });
      ws2.close();
    } finally {
      approver.stop();
      ws.close();
    }
  });
});
