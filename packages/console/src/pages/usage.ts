import { useState } from 'preact/hooks';
import { UsageChart } from '../components/chart';
import { ErrorNote, Loading, Page } from '../components/ui';
import { api } from '../context';
import { formatCount, formatUsd } from '../format';
import { html } from '../html';
import { useAsync } from '../hooks';
import { type ConsoleSession, hasScope } from '../session';
import type { Budgets, Principal, UsageAnswer } from '../types';
import { alignDays, dailyLimit, lastDays, type Metric, tokensOf } from '../usage-data';

type GroupBy = 'total' | 'person' | 'agent' | 'model';
const GROUP_PARAM: Record<Exclude<GroupBy, 'total'>, string> = { person: 'principal', agent: 'agent', model: 'model' };

interface Group {
  key: string;
  label: string;
  answer: UsageAnswer;
  budget: number | null;
}

/** Usage: tokens and cost per day — in total, per person, per agent or per model — with the budgets drawn in. */
export function UsagePage(props: { session: ConsoleSession }) {
  const canRead = hasScope(props.session, 'read');
  const [metric, setMetric] = useState<Metric>('usd');
  const [groupBy, setGroupBy] = useState<GroupBy>('total');
  const [span, setSpan] = useState(30);
  const range = lastDays(new Date(), span);
  const data = useAsync(async (): Promise<{ groupBy: GroupBy; groups: Group[]; budgets: Budgets } | null> => {
    if (!canRead) return null;
    const budgets = await api.get<Budgets>('/budgets');
    const q = { from: range.from, to: range.to };
    let keys: Array<{ key: string; label: string; budget: Budgets['gateway'] | undefined }>;
    if (groupBy === 'total') keys = [{ key: '', label: 'Gateway', budget: budgets.gateway }];
    else if (groupBy === 'person') {
      const people = (await api.get<{ principals: Principal[] }>('/principals', { limit: 500 })).principals;
      keys = people.map((p) => ({ key: p.id, label: p.name, budget: budgets.principals[p.id] }));
    } else if (groupBy === 'agent') {
      const agents = Object.keys((await api.get<{ agents: Record<string, unknown> }>('/capabilities', { kind: 'model' })).agents ?? {});
      keys = agents.map((a) => ({ key: a, label: a, budget: budgets.agents[a] }));
    } else {
      const models = (await api.get<{ models: Array<{ name: string }> }>('/models')).models;
      keys = models.map((m) => ({ key: m.name, label: m.name, budget: undefined }));
    }
    const groups = await Promise.all(
      keys.map(async (k) => {
        const answer = await api.get<UsageAnswer>('/usage', groupBy === 'total' ? q : { ...q, [GROUP_PARAM[groupBy]]: k.key });
        return { key: k.key, label: k.label, answer, budget: null as number | null, limits: k.budget };
      }),
    );
    return { groupBy, groups: groups.map((g) => ({ key: g.key, label: g.label, answer: g.answer, budget: dailyLimit(g.limits, metric) })), budgets };
  }, [canRead, groupBy, span, metric, range.to]);

  if (!canRead) return html`<${Page} name="usage" title="Usage"><p>This page needs the "read" scope.</p><//>`;
  // While another grouping loads, the last one's rows would carry the new heading: show none.
  const current = data.data?.groupBy === groupBy ? data.data : null;
  const groups = (current?.groups ?? []).filter((g) => groupBy === 'total' || g.answer.totals.calls > 0 || g.budget !== null);
  const series = groups.map((g) => ({ label: g.label, values: alignDays(range.days, g.answer.days, metric) }));
  const budgetLines = groups.flatMap((g) => (g.budget === null ? [] : [{ label: g.label, value: g.budget }]));
  const title = `${metric === 'usd' ? 'Cost (USD)' : 'Tokens'} per day${groupBy === 'total' ? '' : ` per ${groupBy}`}, last ${span} days`;

  return html`<${Page} name="usage" title="Usage">
    <div class="filters">
      <label class="field">
        <span>Show</span>
        <select value=${metric} onChange=${(e: Event) => setMetric((e.target as HTMLSelectElement).value as Metric)} data-testid="usage-metric">
          <option value="usd">cost (USD)</option>
          <option value="tokens">tokens</option>
        </select>
      </label>
      <label class="field">
        <span>Per</span>
        <select value=${groupBy} onChange=${(e: Event) => setGroupBy((e.target as HTMLSelectElement).value as GroupBy)} data-testid="usage-group">
          <option value="total">day (whole gateway)</option>
          <option value="person">person</option>
          <option value="agent">agent</option>
          <option value="model">model</option>
        </select>
      </label>
      <label class="field">
        <span>Days</span>
        <select value=${String(span)} onChange=${(e: Event) => setSpan(Number((e.target as HTMLSelectElement).value))} data-testid="usage-span">
          <option value="7">7</option>
          <option value="30">30</option>
          <option value="90">90</option>
        </select>
      </label>
    </div>
    <${Loading} when=${data.loading && !current} />
    <${ErrorNote} error=${data.error} />
    ${
      current
        ? html`<${UsageChart} title=${title} days=${range.days} series=${series} budgets=${budgetLines} metric=${metric} testid="usage-chart" />
            <p class="legend-note">Dashed red lines are daily budgets. Days are UTC.</p>`
        : null
    }
    <h2>Totals</h2>
    <div class="table-wrap">
      <table data-testid="usage-totals">
        <thead><tr><th>${groupBy === 'total' ? 'Scope' : groupBy}</th><th>Calls</th><th>Input</th><th>Output</th><th>Cache read</th><th>Cache write</th><th>Tokens</th><th>Cost</th></tr></thead>
        <tbody>
          ${groups.map(
            (g) => html`<tr key=${g.key || 'total'} data-testid=${`usage-row-${g.key || 'total'}`}>
              <td>${g.label}</td>
              <td>${formatCount(g.answer.totals.calls)}</td>
              <td>${formatCount(g.answer.totals.inputTokens)}</td>
              <td>${formatCount(g.answer.totals.outputTokens)}</td>
              <td>${formatCount(g.answer.totals.cacheReadInputTokens)}</td>
              <td>${formatCount(g.answer.totals.cacheCreationInputTokens)}</td>
              <td data-testid=${`usage-tokens-${g.key || 'total'}`}>${formatCount(tokensOf(g.answer.totals))}</td>
              <td data-testid=${`usage-cost-${g.key || 'total'}`}>${formatUsd(g.answer.totals.costUsd)}</td>
            </tr>`,
          )}
        </tbody>
      </table>
    </div>
  <//>`;
}
