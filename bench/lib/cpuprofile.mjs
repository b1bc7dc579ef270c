// Summarises a V8 .cpuprofile (from `node --cpu-prof`): self time and inclusive time per
// function, with dist/*.js positions mapped back to the TypeScript sources through the
// workspaces' source maps, and self time per package/area.
import { existsSync, readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { dirname, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

const mapCache = new Map();
function sourceMapFor(file) {
  if (mapCache.has(file)) return mapCache.get(file);
  let map = null;
  try {
    const mapFile = `${file}.map`;
    if (existsSync(mapFile)) {
      const payload = JSON.parse(readFileSync(mapFile, 'utf8'));
      map = { sm: new SourceMap(payload), dir: dirname(mapFile), payload };
    }
  } catch {
    map = null;
  }
  mapCache.set(file, map);
  return map;
}

/** "file:line" for a call frame (1-based line), mapped to the .ts source when a map exists. */
export function locate(callFrame) {
  const { url, lineNumber, columnNumber } = callFrame;
  if (!url) return '';
  let file = url.startsWith('file://') ? fileURLToPath(url) : url;
  let line = lineNumber + 1;
  if (file.startsWith('/') && !file.includes('/node_modules/') && lineNumber >= 0) {
    const m = sourceMapFor(file);
    if (m) {
      const e = m.sm.findEntry(lineNumber, Math.max(0, columnNumber));
      if (e?.originalSource) {
        const src = e.originalSource.startsWith('file://') ? fileURLToPath(e.originalSource) : resolve(m.dir, e.originalSource);
        file = src;
        line = e.originalLine + 1;
      }
    }
  }
  if (file.startsWith(repoRoot)) file = relative(repoRoot, file);
  return `${file}:${line}`;
}

/** A coarse area for a call frame: a workspace package, an npm package, node internals or V8. */
export function areaOf(callFrame) {
  const { url, functionName } = callFrame;
  if (!url) {
    if (functionName === '(garbage collector)') return '(garbage collector)';
    if (functionName === '(idle)') return '(idle)';
    if (functionName === '(program)') return '(program: native/V8 outside JS)';
    if (functionName === '(root)') return '(root)';
    return '(native)';
  }
  if (url.startsWith('node:')) return 'node internals';
  const path = url.startsWith('file://') ? fileURLToPath(url) : url;
  const nm = path.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const rest = path.slice(nm + '/node_modules/'.length).split('/');
    return `npm:${rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]}`;
  }
  const rel = path.startsWith(repoRoot) ? relative(repoRoot, path) : path;
  const m = /^(packages|apps)\/([^/]+)\//.exec(rel);
  return m ? `${m[1]}/${m[2]}` : rel;
}

/**
 * Summarises a profile: { totalMs, top: [...self], inclusive: [...], areas: [...] }.
 * Self time per sample comes from `timeDeltas`; a function's inclusive time counts each sample
 * once even under recursion.
 */
export function summarizeProfile(profile, { top = 15, inclusiveFilter, windowUs } = {}) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const selfUs = new Map();
  const { samples, timeDeltas } = profile;
  // Sample i was taken at startTime + sum(timeDeltas[0..i]); it stands for the time until the next
  // sample. `windowUs` = [from, to] in the same monotonic microseconds keeps only that stretch.
  let t = profile.startTime;
  let kept = 0;
  for (let i = 0; i < samples.length; i++) {
    t += timeDeltas[i] ?? 0;
    if (windowUs && (t < windowUs[0] || t > windowUs[1])) continue;
    const dt = timeDeltas[i + 1] ?? 0;
    selfUs.set(samples[i], (selfUs.get(samples[i]) ?? 0) + Math.max(0, dt));
    kept++;
  }
  const keyOf = (cf) => `${cf.functionName || '(anonymous)'}\u0000${cf.url}\u0000${cf.lineNumber}\u0000${cf.columnNumber}`;
  const fns = new Map();
  const fnOf = (node) => {
    const k = keyOf(node.callFrame);
    let f = fns.get(k);
    if (!f) fns.set(k, (f = { name: node.callFrame.functionName || '(anonymous)', callFrame: node.callFrame, selfUs: 0, totalUs: 0 }));
    return f;
  };
  const areas = new Map();
  let totalUs = 0;
  let idleUs = 0;
  for (const [id, us] of selfUs) {
    const node = byId.get(id);
    if (!node) continue;
    totalUs += us;
    if (node.callFrame.functionName === '(idle)') idleUs += us;
    const self = fnOf(node);
    self.selfUs += us;
    // "via": the nearest project (workspace) frame below this sample, e.g. the gateway line that
    // called into a library or native function. For workspace functions: their caller.
    let via;
    for (let cur = parent.get(id); cur !== undefined; cur = parent.get(cur)) {
      const cf = byId.get(cur)?.callFrame;
      if (cf && isWorkspaceFrame(cf)) {
        via = cf;
        break;
      }
    }
    if (via) {
      self.via ??= new Map();
      const vk = keyOf(via);
      const v = self.via.get(vk) ?? { callFrame: via, us: 0 };
      v.us += us;
      self.via.set(vk, v);
    }
    const area = areaOf(node.callFrame);
    areas.set(area, (areas.get(area) ?? 0) + us);
    // inclusive: every distinct function on the stack
    const seen = new Set();
    for (let cur = id; cur !== undefined; cur = parent.get(cur)) {
      const n = byId.get(cur);
      const f = fnOf(n);
      if (seen.has(f)) continue;
      seen.add(f);
      f.totalUs += us;
    }
  }
  const busyUs = totalUs - idleUs;
  const pct = (us) => (busyUs > 0 ? (100 * us) / busyUs : 0);
  const row = (f) => ({
    function: f.name,
    location: locate(f.callFrame),
    area: areaOf(f.callFrame),
    selfMs: f.selfUs / 1000,
    selfPct: pct(f.selfUs),
    totalMs: f.totalUs / 1000,
    totalPct: pct(f.totalUs),
    via: [...(f.via?.values() ?? [])]
      .sort((a, b) => b.us - a.us)
      .slice(0, 3)
      .map((v) => ({ function: v.callFrame.functionName || '(anonymous)', location: locate(v.callFrame), pct: f.selfUs > 0 ? (100 * v.us) / f.selfUs : 0 })),
  });
  const all = [...fns.values()].filter((f) => f.name !== '(idle)' && f.name !== '(root)');
  const topSelf = all
    .sort((a, b) => b.selfUs - a.selfUs)
    .slice(0, top)
    .map(row);
  const inclusive = [...fns.values()]
    .filter((f) => f.name !== '(root)' && f.name !== '(idle)' && (inclusiveFilter ? inclusiveFilter(f.callFrame) : true))
    .sort((a, b) => b.totalUs - a.totalUs)
    .slice(0, top)
    .map(row);
  const areaRows = [...areas.entries()]
    .filter(([a]) => a !== '(idle)')
    .sort((a, b) => b[1] - a[1])
    .map(([area, us]) => ({ area, selfMs: us / 1000, selfPct: pct(us) }));
  return { samples: kept, totalMs: totalUs / 1000, idleMs: idleUs / 1000, busyMs: busyUs / 1000, top: topSelf, inclusive, areas: areaRows };
}

/** Plain-text rendering of `summarizeProfile`'s result. */
export function formatSummary(s, { title = 'profile' } = {}) {
  const lines = [];
  lines.push(`${title}: ${s.totalMs.toFixed(0)} ms sampled, ${s.busyMs.toFixed(0)} ms busy (${s.idleMs.toFixed(0)} ms idle); percentages are of busy time`);
  lines.push('');
  lines.push('top self time:');
  s.top.forEach((r, i) => {
    lines.push(
      `${String(i + 1).padStart(3)}. ${r.selfPct.toFixed(1).padStart(5)}%  ${r.selfMs.toFixed(0).padStart(6)} ms  ${r.function}  ${r.location}  [${r.area}]`,
    );
    if (r.via.length > 0) lines.push(`        via ${r.via.map((v) => `${v.function} ${v.location} (${v.pct.toFixed(0)}%)`).join(', ')}`);
  });
  lines.push('');
  lines.push('inclusive time (workspace code):');
  s.inclusive.forEach((r, i) => {
    lines.push(`${String(i + 1).padStart(3)}. ${r.totalPct.toFixed(1).padStart(5)}%  ${r.totalMs.toFixed(0).padStart(6)} ms  ${r.function}  ${r.location}`);
  });
  lines.push('');
  lines.push('self time by area:');
  for (const a of s.areas.slice(0, 20)) lines.push(`  ${a.selfPct.toFixed(1).padStart(5)}%  ${a.selfMs.toFixed(0).padStart(6)} ms  ${a.area}`);
  return lines.join('\n');
}

/** Whether a call frame is the project's own code (packages/* or apps/*, outside node_modules). */
export function isWorkspaceFrame(cf) {
  const path = cf.url?.startsWith('file://') ? fileURLToPath(cf.url) : (cf.url ?? '');
  return path.startsWith(repoRoot) && !path.includes('/node_modules/') && /\/(packages|apps)\//.test(path);
}
